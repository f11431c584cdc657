#!/usr/bin/env bash
# The native benchmark table: tracegraph on LibTorch against LibTorch's own
# TorchScript forward (plain, frozen, optimize_for_inference), on
# mobilenet_v2, resnet18 and the UNets. Usage: scripts/bench.sh [--device cuda] [--runs N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph >/dev/null
/usr/bin/python3 tests/models/make_test_models.py build/models --only mobilenet_v2_traced,resnet18_traced,unet2d,unet3d_sigmoid_traced
TG=build/native/native/tracegraph
$TG bench build/models/mobilenet_v2_traced.ts --input-shape 1,3,224,224 "$@"
echo
$TG bench build/models/resnet18_traced.ts --input-shape 1,3,224,224 "$@"
echo
$TG bench build/models/unet2d.ts --input-shape 1,3,64,64 "$@"
echo
$TG bench build/models/unet3d_sigmoid_traced.ts --input-shape 1,1,44,44,44 "$@"
