# XNNPACK + pthreadpool, built from Debian's source tarballs by
# scripts/build_xnnpack.sh and cached outside the clone, keyed by version and
# target. Configure builds the cache when it is missing (a few minutes, once).
set(TRACEGRAPH_XNNPACK_VERSION "0.0~git20241108.4ea82e5")
if(EMSCRIPTEN)
  set(_xnn_target wasm)
else()
  set(_xnn_target native)
endif()
if(DEFINED ENV{TRACEGRAPH_CACHE})
  set(_xnn_cache "$ENV{TRACEGRAPH_CACHE}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(_xnn_cache "$ENV{XDG_CACHE_HOME}/tracegraph")
elseif(DEFINED ENV{HOME})
  set(_xnn_cache "$ENV{HOME}/.cache/tracegraph")
else()
  set(_xnn_cache "/root/.cache/tracegraph")
endif()
set(TRACEGRAPH_XNNPACK_ROOT "${_xnn_cache}/xnnpack/${TRACEGRAPH_XNNPACK_VERSION}-${_xnn_target}"
    CACHE PATH "XNNPACK built by scripts/build_xnnpack.sh (include/ and lib/)")

if(NOT EXISTS "${TRACEGRAPH_XNNPACK_ROOT}/lib/libXNNPACK.a")
  message(STATUS "XNNPACK (${_xnn_target}) not built yet: running scripts/build_xnnpack.sh ${_xnn_target}")
  execute_process(COMMAND "${CMAKE_SOURCE_DIR}/scripts/build_xnnpack.sh" ${_xnn_target} RESULT_VARIABLE _xnn_rc)
  if(NOT _xnn_rc EQUAL 0 OR NOT EXISTS "${TRACEGRAPH_XNNPACK_ROOT}/lib/libXNNPACK.a")
    message(FATAL_ERROR "XNNPACK build failed; run scripts/bootstrap.sh (it fetches the sources), then scripts/build_xnnpack.sh ${_xnn_target}")
  endif()
endif()

add_library(tracegraph_xnnpack_deps INTERFACE)
target_include_directories(tracegraph_xnnpack_deps SYSTEM INTERFACE "${TRACEGRAPH_XNNPACK_ROOT}/include")
target_link_libraries(tracegraph_xnnpack_deps INTERFACE
  "${TRACEGRAPH_XNNPACK_ROOT}/lib/libXNNPACK.a"
  "${TRACEGRAPH_XNNPACK_ROOT}/lib/libmicrokernels-prod.a"
  "${TRACEGRAPH_XNNPACK_ROOT}/lib/libpthreadpool.a")
if(NOT EMSCRIPTEN)
  find_package(Threads REQUIRED)
  target_link_libraries(tracegraph_xnnpack_deps INTERFACE cpuinfo Threads::Threads)
endif()
