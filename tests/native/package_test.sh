#!/usr/bin/env bash
# An app outside the tree through the CMake package: installs this build into
# a fresh prefix, builds examples/cpp against it with find_package, and runs
# the app on a test model.
#   package_test.sh BUILD_DIR SOURCE_DIR MODELS_DIR SCRATCH_DIR
set -euo pipefail
build=$1 source=$2 models=$3 scratch=$4
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >"$scratch.install.log" 2>&1 || { cat "$scratch.install.log"; exit 1; }
cmake -S "$source/examples/cpp" -B "$scratch/app" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$scratch/app"
out=$("$scratch/app/activation" "$models/unet3d_sigmoid_traced.ts" 1,1,44,44,44)
echo "$out"
grep -qx 'activation: sigmoid' <<<"$out"
grep -q 'output: \[1, 1, 28, 28, 28\] on libtorch and xnnpack, equal within 1e-4: yes' <<<"$out"
# The app's XNNPACK, pthreadpool and cpuinfo are its own (renamed tracegraph_*):
# nothing of theirs is left for the dynamic linker to bind to LibTorch's copies.
if nm -D --undefined-only "$scratch/app/activation" | grep -E ' (xnn_|pthreadpool_|cpuinfo_)'; then
  echo "the app leaves XNNPACK, pthreadpool or cpuinfo symbols to the dynamic linker" >&2
  exit 1
fi
# And with the kernels capped at SSE2, the same result.
out=$(TRACEGRAPH_MAX_CPU_ISA=sse2 "$scratch/app/activation" "$models/unet3d_sigmoid_traced.ts" 1,1,44,44,44)
grep -q 'output: \[1, 1, 28, 28, 28\] on libtorch and xnnpack, equal within 1e-4: yes' <<<"$out"
# The installed tool runs too.
"$scratch/prefix/bin/tracegraph" run "$models/unet2d.ts" --random 1,3,32,32 | grep -q '^run '
# A component the install lacks is a clear refusal.
mkdir -p "$scratch/bad"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(bad LANGUAGES CXX)\nfind_package(tracegraph CONFIG REQUIRED COMPONENTS cuda)\n' >"$scratch/bad/CMakeLists.txt"
if cmake -S "$scratch/bad" -B "$scratch/bad/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" >"$scratch/bad.log" 2>&1; then
  echo "find_package with an unknown component succeeded" >&2
  exit 1
fi
grep -q "tracegraph has no component 'cuda'" "$scratch/bad.log"
echo "package test: find_package, build, run: ok"
