# Compiles through ccache where the machine has it (scripts/bootstrap.sh
# installs it): building the same sources again (the next CI run, a fresh
# clone, a preset reconfigured) compiles only what changed. Paths are hashed
# relative to the source tree (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so a clone
# in another folder hits the same entries. Not under Emscripten (em++ is a
# script ccache does not know). TRACEGRAPH_CCACHE=OFF turns it off.
option(TRACEGRAPH_CCACHE "Compile through ccache when it is installed" ON)
if(TRACEGRAPH_CCACHE AND NOT EMSCRIPTEN AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(TRACEGRAPH_CCACHE_PROGRAM ccache)
  if(TRACEGRAPH_CCACHE_PROGRAM)
    # The sloppiness lets ccache cache the sources that use a precompiled
    # header (cmake/torch_pch.cmake) and the header itself.
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1
        CCACHE_MAXSIZE=25G CCACHE_SLOPPINESS=pch_defines,time_macros ${TRACEGRAPH_CCACHE_PROGRAM})
  endif()
endif()
