#!/usr/bin/env bash
# tracegraph.blockwise's benchmark (bench/blockwise_bench.py), not a test: a
# generated 512^3 uint8 zarr volume, a valid-padded and a same-padded 3D UNet,
# daisy with 1 and 2 workers and a Dask LocalCluster of 2 against a plain torch
# loop over the same blocks, outputs compared (1e-5), voxels/s printed, in one
# run. Usage: scripts/bench_blockwise.sh [--size N] [--block B] [--dir DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh >/dev/null
source scripts/env.sh
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph_python >/dev/null
PYTHONPATH=build/native/python "$TRACEGRAPH_PYTHON" bench/blockwise_bench.py "$@"
