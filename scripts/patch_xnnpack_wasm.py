#!/usr/bin/python3
"""Teaches XNNPACK 0.0~git20241108's CMakeLists.txt to build with Emscripten:
Emscripten as a system name, "wasm" as the target processor (no cpuinfo), and
the production wasm and wasm SIMD microkernel lists. With --pthreadpool-threads
it instead makes pthreadpool 0.0~git20240616 build its real pool (pthreads.c,
which knows Emscripten's futexes) when TRACEGRAPH_WASM_THREADS is on. Fails
loudly when a pattern is not found (a new version needs a look)."""
import sys

pthreadpool = sys.argv[1] == "--pthreadpool-threads"
path = sys.argv[-1]
text = open(path).read()


def replace(old, new):
    global text
    if old not in text:
        sys.exit(f"patch_xnnpack_wasm: pattern not found in {path}: {old[:60]!r}")
    text = text.replace(old, new, 1)


if pthreadpool:
    replace("IF(EMSCRIPTEN)\n  LIST(APPEND PTHREADPOOL_SRCS src/shim.c)",
            "IF(EMSCRIPTEN AND NOT TRACEGRAPH_WASM_THREADS)\n  LIST(APPEND PTHREADPOOL_SRCS src/shim.c)")
    open(path, "w").write(text)
    print("patch_xnnpack_wasm: patched", path)
    sys.exit(0)

replace('IF(CMAKE_OSX_ARCHITECTURES)\n  LIST(LENGTH',
        'IF(EMSCRIPTEN)\n  SET(XNNPACK_TARGET_PROCESSOR "wasm")\nELSEIF(CMAKE_OSX_ARCHITECTURES)\n  LIST(LENGTH')
replace('"^(Android|Darwin|iOS|Linux|Windows|CYGWIN|MSYS|QURT)$"', '"^(Android|Darwin|iOS|Linux|Windows|CYGWIN|MSYS|QURT|Emscripten)$"')
replace('IF(XNNPACK_TARGET_PROCESSOR MATCHES "Hexagon")\n  ADD_COMPILE_DEFINITIONS("XNN_ENABLE_CPUINFO=0")',
        'IF(XNNPACK_TARGET_PROCESSOR MATCHES "Hexagon|wasm")\n  ADD_COMPILE_DEFINITIONS("XNN_ENABLE_CPUINFO=0")')
replace('IF(XNNPACK_TARGET_PROCESSOR MATCHES "^x86(_64)?$")\n  LIST(APPEND PROD_MICROKERNEL_SRCS ${PROD_SSE_MICROKERNEL_SRCS})',
        'IF(XNNPACK_TARGET_PROCESSOR STREQUAL "wasm")\n'
        '  LIST(APPEND PROD_MICROKERNEL_SRCS ${PROD_WASM_MICROKERNEL_SRCS} ${PROD_WASMSIMD_MICROKERNEL_SRCS})\n'
        'ENDIF()\n'
        'IF(XNNPACK_TARGET_PROCESSOR MATCHES "^x86(_64)?$")\n  LIST(APPEND PROD_MICROKERNEL_SRCS ${PROD_SSE_MICROKERNEL_SRCS})')
open(path, "w").write(text)
print("patch_xnnpack_wasm: patched", path)
