# LibTorch from a Python torch package: by default the PyPI wheel in the venv
# that scripts/bootstrap.sh makes (scripts/python-requirements.txt pins it), or
# any Python with torch given as -DTRACEGRAPH_PYTHON=... (scripts/cuda_check.sh
# passes the GPU machine's own). The same Python makes the test models, so the
# files the tests read and the LibTorch that reads them are of one version.
#
# The wheel's share/cmake/Torch stops with a fatal error when it finds no CUDA
# toolkit, and the SDK compiles no CUDA code (it calls ATen, which dispatches to
# CUDA kernels at run time), so the imported target is defined here from the
# package's include/ and lib/:
#   tracegraph::torch   headers + libtorch_cpu and libc10; with TRACEGRAPH_CUDA,
#                       also libtorch_cuda and libc10_cuda, linked even though no
#                       symbol of theirs is referenced (their static initializers
#                       register the CUDA kernels), as TorchConfig does.
# (Installed as tracegraphTorch.cmake, the package's config sets TRACEGRAPH_PYTHON first.)
if(NOT DEFINED TRACEGRAPH_PYTHON)
  include(${CMAKE_CURRENT_LIST_DIR}/tracegraph_cache.cmake)
  set(TRACEGRAPH_PYTHON "${TRACEGRAPH_CACHE_DIR}/venv/bin/python3" CACHE FILEPATH
      "The Python whose torch package the native build links and which makes the test models")
endif()

execute_process(
  COMMAND "${TRACEGRAPH_PYTHON}" -c
    "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.version.cuda or '')"
  RESULT_VARIABLE _torch_rc OUTPUT_VARIABLE _torch_out ERROR_VARIABLE _torch_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "No torch for ${TRACEGRAPH_PYTHON} (${_torch_err}): run scripts/bootstrap.sh, "
                      "or pass -DTRACEGRAPH_PYTHON=/path/to/python with torch installed")
endif()
string(REPLACE "\n" ";" _torch_out "${_torch_out}")
list(GET _torch_out 0 TRACEGRAPH_TORCH_DIR)
list(GET _torch_out 1 TRACEGRAPH_TORCH_VERSION)
list(GET _torch_out 2 _torch_abi)
list(LENGTH _torch_out _n)
set(TRACEGRAPH_TORCH_CUDA "")
if(_n GREATER 3)
  list(GET _torch_out 3 TRACEGRAPH_TORCH_CUDA)
endif()
message(STATUS "LibTorch ${TRACEGRAPH_TORCH_VERSION} (CUDA: ${TRACEGRAPH_TORCH_CUDA}) from ${TRACEGRAPH_TORCH_DIR}")

set(_torch_lib "${TRACEGRAPH_TORCH_DIR}/lib")
add_library(tracegraph_torch INTERFACE IMPORTED GLOBAL)
add_library(tracegraph::torch ALIAS tracegraph_torch)
target_include_directories(tracegraph_torch SYSTEM INTERFACE
  "${TRACEGRAPH_TORCH_DIR}/include" "${TRACEGRAPH_TORCH_DIR}/include/torch/csrc/api/include")
# The package's C++ ABI, whatever it is, so that std::string crosses the boundary.
target_compile_definitions(tracegraph_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${_torch_abi})
target_link_libraries(tracegraph_torch INTERFACE "${_torch_lib}/libtorch_cpu.so" "${_torch_lib}/libc10.so")
if(TRACEGRAPH_CUDA)
  if(TRACEGRAPH_TORCH_CUDA STREQUAL "" OR NOT EXISTS "${_torch_lib}/libtorch_cuda.so")
    message(FATAL_ERROR "TRACEGRAPH_CUDA=ON needs a CUDA build of torch; ${TRACEGRAPH_PYTHON} has ${TRACEGRAPH_TORCH_VERSION}")
  endif()
  target_link_libraries(tracegraph_torch INTERFACE
    "-Wl,--no-as-needed" "${_torch_lib}/libtorch_cuda.so" "${_torch_lib}/libc10_cuda.so" "-Wl,--as-needed")
endif()
# Executables find the package's libraries where they are (no install step).
set(CMAKE_BUILD_RPATH "${CMAKE_BUILD_RPATH};${_torch_lib}")
