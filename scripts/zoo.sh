#!/usr/bin/env bash
# The large set of the real-model zoo (models over ~30M parameters: alexnet,
# vgg, wide_resnet, vit_b_16, maxvit, fcn/deeplabv3 on resnet50, r3d,
# r2plus1d), which the README's test command leaves out for time: made by the
# venv's torch, read, checked for their activation and run on LibTorch and on
# XNNPACK (portable kernels for what it lacks). Builds the native preset
# first. About 15 minutes and 3 GB of models here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh
source scripts/env.sh
cmake --preset native
cmake --build --preset native
ctest --test-dir build/native -L zoo_large --output-on-failure "$@"
