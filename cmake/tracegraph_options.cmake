# Compiler flags shared by every target of the project.

add_library(tracegraph_warnings INTERFACE)
target_compile_options(tracegraph_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)

if(TRACEGRAPH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # The sanitizers' own advice: -O1, not the Debug build type's -O0 (our own
  # code's suites ran 1.7-3.5 times as long at -O0: docs/design.md), and line
  # tables for their reports. NDEBUG stays undefined: assert() checks too.
  add_compile_options(-O1 -g1)
endif()

# The test programs' own sources (tracegraph_add_gtest), natively: what they
# compute is in the libraries they test, compiled with the preset's flags;
# their own code (GoogleTest's macros, the cases, LibTorch's templates for the
# references) is compiled for debugging with line tables only, -Og -g1, which
# GCC compiles 2-3 times as fast as -O2 -g (docs/design.md, "The test
# command's time"). Line tables are what a failure's backtrace and the
# sanitizers' reports need. Emscripten's -Og is its -O1 and -g1 means
# something else there: -O1 alone (the preset's is -O3).
add_library(tracegraph_test_options INTERFACE)
if(EMSCRIPTEN)
  target_compile_options(tracegraph_test_options INTERFACE -O1)
else()
  target_compile_options(tracegraph_test_options INTERFACE -Og -g1)
endif()

if(EMSCRIPTEN)
  # The core reports errors with exceptions (docs/design.md); Emscripten's
  # prebuilt cache has the JS-based exception runtime.
  add_compile_options(-fexceptions)
  add_link_options(-fexceptions)
  # nlohmann/json is header-only; take Debian's copy without putting all of
  # /usr/include on Emscripten's include path.
  find_path(TRACEGRAPH_NLOHMANN_DIR nlohmann/json.hpp PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH NO_DEFAULT_PATH)
  if(NOT TRACEGRAPH_NLOHMANN_DIR)
    message(FATAL_ERROR "nlohmann/json.hpp not found: run scripts/bootstrap.sh (Debian package nlohmann-json3-dev)")
  endif()
  file(COPY ${TRACEGRAPH_NLOHMANN_DIR}/nlohmann DESTINATION ${CMAKE_BINARY_DIR}/third_party/include)
  add_library(tracegraph_json INTERFACE)
  target_include_directories(tracegraph_json SYSTEM INTERFACE ${CMAKE_BINARY_DIR}/third_party/include)
else()
  find_package(nlohmann_json 3.10 REQUIRED)
  add_library(tracegraph_json INTERFACE)
  target_link_libraries(tracegraph_json INTERFACE nlohmann_json::nlohmann_json)
endif()
