#!/usr/bin/env bash
# Reading and optimizing a 1,000-node model once LibTorch has loaded it,
# beside LibTorch's own freeze + frozen-graph optimizations of the same
# module (bench/read/). Builds the native preset first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh >/dev/null
source scripts/env.sh
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph_read_bench >/dev/null
mkdir -p build/bench-read
[[ -f build/bench-read/deep.ts && build/bench-read/deep.ts -nt bench/read/make_deep_model.py ]] ||
  "$TRACEGRAPH_PYTHON" bench/read/make_deep_model.py build/bench-read/deep.ts
build/native/native/tracegraph_read_bench build/bench-read/deep.ts --input-shape 1,16,32,32 "$@"
