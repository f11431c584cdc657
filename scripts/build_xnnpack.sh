#!/usr/bin/env bash
# Builds XNNPACK + pthreadpool (and natively cpuinfo) from the tarballs
# scripts/bootstrap.sh fetched, and caches the result outside the clone, keyed
# by version, build revision and target:
#   ~/.cache/tracegraph/xnnpack/<version>-<revision>-native/{include,lib}
# Quick when the cache is there. Usage: scripts/build_xnnpack.sh [native|wasm|wasm-threads]
#
# Natively the three libraries share a process with LibTorch, whose
# libtorch_cpu.so exports its own XNNPACK, pthreadpool and cpuinfo under the
# same names. So every global symbol our archives define is renamed with the
# prefix tracegraph_ (objcopy --redefine-syms), and the copied headers start by
# including tracegraph_xnnpack_symbols.h, which #defines each name of theirs to
# the renamed one: code that includes them calls our copies, and no symbol of
# ours can bind to LibTorch's or LibTorch's to ours (docs/design.md, "One copy
# of each library"). In wasm there is no LibTorch: the header defines nothing.
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
CPUINFO_VERSION=0.0~git20250905.877328f
# Bumped when the build changes what a cached variant holds (cmake/xnnpack.cmake has the same).
REVISION=sealed2
CACHE="${TRACEGRAPH_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracegraph}"
KEY="$CACHE/xnnpack/${XNN_VERSION}-${REVISION}-${TARGET}"
PREFIX=tracegraph_
say() { printf '[xnnpack] %s\n' "$*"; }
if [[ -f "$KEY/lib/libXNNPACK.a" && -f "$KEY/lib/libpthreadpool.a" ]]; then
  say "cached: $KEY"
  exit 0
fi
[[ "$TARGET" == native || "$TARGET" == wasm || "$TARGET" == wasm-threads ]] ||
  { say "unknown target '$TARGET' (native, wasm or wasm-threads)" >&2; exit 2; }
WORK="$CACHE/xnnpack/work-${TARGET}"
rm -rf "$WORK"
mkdir -p "$WORK/xnnpack" "$WORK/pthreadpool" "$WORK/cpuinfo"
tar -xf "$CACHE/sources/xnnpack_${XNN_VERSION}.orig.tar.xz" -C "$WORK/xnnpack"
tar -xf "$CACHE/sources/pthreadpool_${PTP_VERSION}.orig.tar.xz" -C "$WORK/pthreadpool" --strip-components=1  # it has a top folder; xnnpack has none
say "configuring ($TARGET)"
CONFIGURE=(cmake -S cmake/xnnpack -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DXNNPACK_SOURCE="$WORK/xnnpack" -DPTHREADPOOL_SOURCE="$WORK/pthreadpool")
if [[ "$TARGET" == native ]]; then
  tar -xf "$CACHE/sources/cpuinfo_${CPUINFO_VERSION}.orig.tar.xz" -C "$WORK/cpuinfo" --strip-components=1
  CONFIGURE+=(-DCPUINFO_SOURCE="$WORK/cpuinfo")
fi
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
TARGETS=(XNNPACK pthreadpool)
[[ "$TARGET" == native ]] && TARGETS+=(cpuinfo)
cmake --build "$WORK/build" --target "${TARGETS[@]}" >"$WORK/build.log" || { grep -m5 -B2 -A8 'error' "$WORK/build.log" >&2; exit 1; }
OUT="$WORK/out"
mkdir -p "$OUT/lib" "$OUT/include"
find "$WORK/build" \( -name 'libXNNPACK.a' -o -name 'libpthreadpool.a' -o -name 'libmicrokernels-prod.a' -o -name 'libcpuinfo.a' \) -exec cp {} "$OUT/lib/" \;
cp "$WORK/xnnpack/include/"*.h "$WORK/pthreadpool/include/"*.h "$OUT/include/"
[[ "$TARGET" == native ]] && cp "$WORK/cpuinfo/include/cpuinfo.h" "$OUT/include/"

SYMBOLS_H="$OUT/include/tracegraph_xnnpack_symbols.h"
{
  echo "// Made by scripts/build_xnnpack.sh ($TARGET): the names our copies of XNNPACK,"
  echo "// pthreadpool and cpuinfo have in their archives. Included first by each of their headers."
  echo "#pragma once"
  echo "// Our code checks for it: LibTorch's wheel ships a pthreadpool.h and a cpuinfo.h of its own."
  echo "#define TRACEGRAPH_XNNPACK_SYMBOLS 1"
} >"$SYMBOLS_H"
if [[ "$TARGET" == native ]]; then
  export LC_ALL=C  # one collation for sort and comm
  # Every global symbol the archives define (functions, data, weak C++ ones),
  # renamed in all of them at once so that their references to each other follow.
  nm -g --defined-only --format=posix "$OUT/lib/"*.a | awk 'NF >= 2 && $2 ~ /^[A-Za-z]$/ {print $1}' | sort -u >"$WORK/defined.txt"
  [[ -s "$WORK/defined.txt" ]] || { say "no symbols found in $OUT/lib" >&2; exit 1; }
  awk -v p="$PREFIX" '{print $1, p $1}' "$WORK/defined.txt" >"$WORK/renames.txt"
  for lib in "$OUT/lib/"*.a; do objcopy --redefine-syms="$WORK/renames.txt" "$lib"; done
  if nm -g --defined-only --format=posix "$OUT/lib/"*.a | awk 'NF >= 2 && $2 ~ /^[A-Za-z]$/ {print $1}' | grep -qv "^$PREFIX"; then
    say "objcopy left symbols without the prefix $PREFIX" >&2; exit 1
  fi
  # The names code can write: the identifiers of the public headers that are symbols.
  cat "$OUT/include/"*.h | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u | comm -12 - "$WORK/defined.txt" |
    awk -v p="$PREFIX" '{print "#define " $1 " " p $1}' >>"$SYMBOLS_H"
  say "renamed $(wc -l <"$WORK/defined.txt") symbols to $PREFIX*; $(grep -c '^#define' "$SYMBOLS_H") of them are in the headers"
fi
for h in "$OUT/include/"*.h; do
  [[ "$h" == "$SYMBOLS_H" ]] && continue
  { echo '#include "tracegraph_xnnpack_symbols.h"  // added by scripts/build_xnnpack.sh'; cat "$h"; } >"$h.new" && mv "$h.new" "$h"
done
mkdir -p "$(dirname "$KEY")"
rm -rf "$KEY"
mv "$OUT" "$KEY"
rm -rf "$WORK"
say "built in ${SECONDS} s: $KEY"
