# One precompiled <ATen/ATen.h> for the executables that include LibTorch (the
# CLI, the native and XNNPACK test programs, the read benchmark).
#
# ATen.h is about 30 s of every compile that includes it (20 s under the
# sanitizers), whatever the source itself holds; precompiled once, a source
# loads it in about 4 s. A precompiled header is only valid for the flags it
# was made with (-fPIE and -fPIC differ, so do the sanitizers' flags), so it is
# made by an executable of its own whose flags are every executable's, and the
# others reuse it (target_precompile_headers REUSE_FROM). ATen.h alone, not
# torch/script.h: every source of those targets loads it, and most need no
# more. GCC says so (-Winvalid-pch, which CMake adds) if a source's flags
# ever stop matching it.
#
# Two of them: one with the programs' flags (the CLI, the read benchmark), one
# with the test programs' (tracegraph_test_options: -Og -g1).
#
#   tracegraph_torch_pch(TARGET [TEST]): TARGET's sources start from the
#   precompiled ATen.h; TEST for a test program.
foreach(_kind program test)
  add_executable(tracegraph_torch_${_kind}_pch EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/torch_pch_main.cpp)
  # tracegraph_warnings: -Wpedantic changes what GCC predefines (__cpp_runtime_arrays).
  target_link_libraries(tracegraph_torch_${_kind}_pch PRIVATE tracegraph::torch tracegraph_warnings)
  target_precompile_headers(tracegraph_torch_${_kind}_pch PRIVATE <ATen/ATen.h>)
endforeach()
target_link_libraries(tracegraph_torch_test_pch PRIVATE tracegraph_test_options)

function(tracegraph_torch_pch target)
  cmake_parse_arguments(ARG "TEST" "" "" ${ARGN})
  if(ARG_TEST)
    target_precompile_headers(${target} REUSE_FROM tracegraph_torch_test_pch)
  else()
    target_precompile_headers(${target} REUSE_FROM tracegraph_torch_program_pch)
  endif()
endfunction()
