#!/usr/bin/env bash
# Builds XNNPACK + pthreadpool from the tarballs scripts/bootstrap.sh fetched,
# and caches the result outside the clone, keyed by version and target:
#   ~/.cache/tracegraph/xnnpack/<version>-native/{include,lib}
# Quick when the cache is there. Usage: scripts/build_xnnpack.sh [native|wasm|wasm-threads]
# The wasm build patches XNNPACK's CMake (it has no Emscripten branch): accept
# Emscripten as a system name, target processor "wasm" without cpuinfo, and the
# production wasm + wasm SIMD kernel lists (scripts/patch_xnnpack_wasm.py).
# wasm-threads compiles everything with -pthread and gives pthreadpool its
# real thread pool (it falls back to a one-thread shim under Emscripten).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TARGET=${1:-native}
XNN_VERSION=0.0~git20241108.4ea82e5
PTP_VERSION=0.0~git20240616.560c60d
CACHE="${TRACEGRAPH_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracegraph}"
KEY="$CACHE/xnnpack/${XNN_VERSION}-${TARGET}"
say() { printf '[xnnpack] %s\n' "$*"; }
if [[ -f "$KEY/lib/libXNNPACK.a" && -f "$KEY/lib/libpthreadpool.a" ]]; then
  say "cached: $KEY"
  exit 0
fi
[[ "$TARGET" == native || "$TARGET" == wasm || "$TARGET" == wasm-threads ]] ||
  { say "unknown target '$TARGET' (native, wasm or wasm-threads)" >&2; exit 2; }
WORK="$CACHE/xnnpack/work-${TARGET}"
rm -rf "$WORK"
mkdir -p "$WORK/xnnpack" "$WORK/pthreadpool"
tar -xf "$CACHE/sources/xnnpack_${XNN_VERSION}.orig.tar.xz" -C "$WORK/xnnpack"
tar -xf "$CACHE/sources/pthreadpool_${PTP_VERSION}.orig.tar.xz" -C "$WORK/pthreadpool" --strip-components=1  # it has a top folder; xnnpack has none
say "configuring ($TARGET)"
CONFIGURE=(cmake -S cmake/xnnpack -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DXNNPACK_SOURCE="$WORK/xnnpack" -DPTHREADPOOL_SOURCE="$WORK/pthreadpool")
if [[ "$TARGET" == wasm* ]]; then
  /usr/bin/python3 scripts/patch_xnnpack_wasm.py "$WORK/xnnpack/CMakeLists.txt"
  if [[ "$TARGET" == wasm-threads ]]; then
    /usr/bin/python3 scripts/patch_xnnpack_wasm.py --pthreadpool-threads "$WORK/pthreadpool/CMakeLists.txt"
    CONFIGURE+=(-DTRACEGRAPH_WASM_THREADS=ON)
  fi
  export NODE_PATH=/usr/share/nodejs
  CONFIGURE+=(-DCMAKE_TOOLCHAIN_FILE=/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake)
fi
"${CONFIGURE[@]}" >"$WORK/configure.log" || { tail -30 "$WORK/configure.log" >&2; exit 1; }
say "building ($(nproc) jobs; about two minutes on two cores)"
cmake --build "$WORK/build" --target XNNPACK pthreadpool >"$WORK/build.log" || { grep -m5 -B2 -A8 'error' "$WORK/build.log" >&2; exit 1; }
mkdir -p "$KEY/lib" "$KEY/include"
find "$WORK/build" \( -name 'libXNNPACK.a' -o -name 'libpthreadpool.a' -o -name 'libmicrokernels-prod.a' -o -name 'libxnnpack-*.a' \) -exec cp {} "$KEY/lib/" \;
cp "$WORK/xnnpack/include/"*.h "$WORK/pthreadpool/include/"*.h "$KEY/include/"
rm -rf "$WORK"
say "built: $KEY"
