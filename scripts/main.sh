#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: bootstrap, build the native
# tools, make a sample model with real PyTorch (a cellmap-style 3D UNet ending
# in a sigmoid), inspect it, and export it to the format the web side reads.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/bootstrap.sh
echo "[main] building (preset native)"
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph

echo "[main] making the sample models with PyTorch (/usr/bin/python3)"
/usr/bin/python3 tests/models/make_test_models.py build/models --only unet3d_sigmoid_traced,unet3d_two_heads

SAMPLE=build/models/unet3d_sigmoid_traced.ts
echo
echo "[main] tracegraph inspect $SAMPLE --input-shape 1,1,44,44,44"
./build/native/native/tracegraph inspect "$SAMPLE" --input-shape 1,1,44,44,44
echo
echo "[main] tracegraph export $SAMPLE -o build/exported --input-shape 1,1,44,44,44"
./build/native/native/tracegraph export "$SAMPLE" -o build/exported --input-shape 1,1,44,44,44
echo
echo "[main] a model with two heads: a sigmoid mask channel and two raw channels"
./build/native/native/tracegraph inspect build/models/unet3d_two_heads.ts --input-shape 1,1,44,44,44 | sed -n '/outputs and their activation/,/^$/p'
