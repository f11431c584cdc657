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
#   tracegraph_torch_pch(TARGET): TARGET's sources start from the precompiled ATen.h.
add_executable(tracegraph_torch_pch EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/torch_pch_main.cpp)
# tracegraph_warnings: -Wpedantic changes what GCC predefines (__cpp_runtime_arrays).
target_link_libraries(tracegraph_torch_pch PRIVATE tracegraph::torch tracegraph_warnings)
target_precompile_headers(tracegraph_torch_pch PRIVATE <ATen/ATen.h>)

function(tracegraph_torch_pch target)
  target_precompile_headers(${target} REUSE_FROM tracegraph_torch_pch)
endfunction()
