#!/usr/bin/env bash
# The large set of the real-model zoo (models over ~30M parameters: alexnet,
# vgg, wide_resnet, vit_b_16, maxvit, fcn/deeplabv3 on resnet50, r3d,
# r2plus1d), which the README's test command leaves out for time: made by the
# venv's torch, read, checked for their activation and run on LibTorch and on
# XNNPACK (portable kernels for what it lacks), natively and in wasm. Builds
# the native and wasm presets. About 20 minutes and 5 GB of models here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh
source scripts/env.sh
cmake --preset native -DTRACEGRAPH_ZOO_LARGE=ON
cmake --build --preset native
ctest --test-dir build/native -L zoo_large --output-on-failure "$@"
# and in wasm under Node, single-threaded and with two threads
cmake --preset wasm
cmake --build --preset wasm
TRACEGRAPH_ZOO_SET=large TRACEGRAPH_EXPORTED_DIR=build/native/exported-zoo-large TRACEGRAPH_JS_DIR=build/wasm/js \
  node --test tests/js/zoo.test.mjs
