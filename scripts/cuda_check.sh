#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and a CUDA build of torch for python3: builds
# the native-cuda preset against the LibTorch inside that torch package, runs
# the CUDA parity tests and a short CUDA benchmark. Meant to finish in under
# 5 minutes. Usage: scripts/cuda_check.sh [python3]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${1:-python3}
$PY -c 'import torch; assert torch.cuda.is_available(), "torch sees no CUDA device"; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
# cmake/torch.cmake takes LibTorch from this Python's torch package.
# No torch 1.13 there: the old-format test models are not made (TRACEGRAPH_OLD_PYTHON empty).
cmake --preset native-cuda -DTRACEGRAPH_PYTHON="$(command -v "$PY")" -DTRACEGRAPH_OLD_PYTHON= >/dev/null
cmake --build --preset native-cuda -j"$(nproc)"
# The ctest fixture makes the test models with the same torch; the models
# torch 1.13 makes (named *_torch113) are not made here, so not tested.
ctest --preset native-cuda -R 'make_test_models|Cuda' --output-on-failure
build/native-cuda/tests/native/tracegraph_native_tests --gtest_filter='*Parity*unet3d_dict_out*:-*torch113*'
build/native-cuda/cli/tracegraph bench build/native-cuda/models/unet3d_sigmoid_traced.ts --input-shape 1,1,44,44,44 --device cuda --runs 20
