# XNNPACK + pthreadpool (+ cpuinfo natively), built from Debian's source
# tarballs by scripts/build_xnnpack.sh and cached outside the clone, keyed by
# version, build revision and variant (native, wasm, wasm-threads). Configure
# builds a missing variant (a few minutes, once). tracegraph_xnnpack_deps(TARGET
# VARIANT) makes an interface target with the headers and libraries of one
# variant. Natively their symbols carry the prefix tracegraph_, so that they
# never meet LibTorch's copies of the same libraries (scripts/build_xnnpack.sh).
set(TRACEGRAPH_XNNPACK_VERSION "0.0~git20241108.4ea82e5")
set(TRACEGRAPH_XNNPACK_REVISION "sealed2")  # scripts/build_xnnpack.sh's REVISION
include(${CMAKE_CURRENT_LIST_DIR}/tracegraph_cache.cmake)
set(TRACEGRAPH_XNNPACK_CACHE "${TRACEGRAPH_CACHE_DIR}/xnnpack" CACHE PATH "Where scripts/build_xnnpack.sh keeps the built variants")

function(tracegraph_xnnpack_deps target variant)
  set(root "${TRACEGRAPH_XNNPACK_CACHE}/${TRACEGRAPH_XNNPACK_VERSION}-${TRACEGRAPH_XNNPACK_REVISION}-${variant}")
  if(NOT EXISTS "${root}/lib/libXNNPACK.a")
    message(STATUS "XNNPACK (${variant}) not built yet: running scripts/build_xnnpack.sh ${variant}")
    execute_process(COMMAND "${CMAKE_SOURCE_DIR}/scripts/build_xnnpack.sh" ${variant} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0 OR NOT EXISTS "${root}/lib/libXNNPACK.a")
      message(FATAL_ERROR "XNNPACK build failed; run scripts/bootstrap.sh (it fetches the sources), then scripts/build_xnnpack.sh ${variant}")
    endif()
  endif()
  add_library(${target} INTERFACE)
  target_include_directories(${target} SYSTEM INTERFACE "${root}/include")
  target_link_libraries(${target} INTERFACE
    "${root}/lib/libXNNPACK.a" "${root}/lib/libmicrokernels-prod.a" "${root}/lib/libpthreadpool.a")
  if(NOT EMSCRIPTEN)
    find_package(Threads REQUIRED)
    target_link_libraries(${target} INTERFACE "${root}/lib/libcpuinfo.a" Threads::Threads)
  endif()
endfunction()
