#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: bootstrap, build the native
# tools and the wasm module, make the sample models with real PyTorch (a
# cellmap-style 3D UNet ending in a sigmoid first), inspect one and export
# them, then serve the web page, open the sample in headless Chromium, show
# its graph and run it there, and keep serving the page for you.
# TRACEGRAPH_SERVE=0: stop after the headless run instead of serving.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/bootstrap.sh
source scripts/env.sh
echo "[main] building (preset native)"
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph tracegraph_python

echo "[main] making the sample models with PyTorch ($("$TRACEGRAPH_PYTHON" -c 'import torch; print("torch", torch.__version__)'))"
# The page's samples (web-demo/samples.json) that come from TorchScript; the
# torch.export one is made by the Python exporter below.
SAMPLES=$(node -e 'console.log(require("./web-demo/samples.json").filter((s) => s.from === "torchscript").map((s) => s.name).join(","))')
"$TRACEGRAPH_PYTHON" tests/models/make_test_models.py build/samples/models --only "$SAMPLES"

SAMPLE=build/samples/models/unet3d_sigmoid_traced.ts
echo
echo "[main] tracegraph inspect $SAMPLE --input-shape 1,1,44,44,44"
./build/native/cli/tracegraph inspect "$SAMPLE" --input-shape 1,1,44,44,44
echo
echo "[main] tracegraph export $SAMPLE -o build/exported --input-shape 1,1,44,44,44"
./build/native/cli/tracegraph export "$SAMPLE" -o build/exported --input-shape 1,1,44,44,44
echo
echo "[main] a model with two heads: a sigmoid mask channel and two raw channels"
./build/native/cli/tracegraph inspect build/samples/models/unet3d_two_heads.ts --input-shape 1,1,44,44,44 | sed -n '/outputs and their activation/,/^$/p'

echo "[main] exporting the samples for the web page"
cmake -DCLI=build/native/cli/tracegraph -DMODELS=build/samples/models -DOUT=build/samples/exported \
  -P tests/models/export_test_models.cmake
echo
echo "[main] the same 3D UNet as a torch.export program (.pt2), saved by the Python exporter (python/tracegraph/export) and read by the core's .pt2 reader"
PYTHONPATH=python "$TRACEGRAPH_PYTHON" -m tracegraph.export tests/models/make_test_models.py:unet3d_sigmoid \
  --example 1,1,44,44,44 -o build/samples/exported/unet3d_sigmoid_export --name unet3d_sigmoid_export
./build/native/cli/tracegraph inspect build/samples/exported/unet3d_sigmoid_export/unet3d_sigmoid_export.pt2 |
  sed -n '/outputs and their activation/,/^$/p'

echo "[main] the same 3D UNet from Python (import tracegraph: the core and XNNPACK, no torch needed to run it)"
PYTHONPATH=build/native/python "$TRACEGRAPH_PYTHON" - "$SAMPLE" <<'PY'
import sys, numpy as np, tracegraph
g = tracegraph.load(sys.argv[1], [[1, 1, 44, 44, 44]])
print("activation:", ", ".join(map(str, tracegraph.output_activation(g))))
g.finalize()
(y,) = g.run([np.random.default_rng(0).standard_normal((1, 1, 44, 44, 44), dtype=np.float32)])
print(f"ran on {g.backend}: output {y.shape}, in [{y.min():.3f}, {y.max():.3f}]")
PY
echo

echo "[main] building the wasm module (preset wasm)"
cmake --preset wasm >/dev/null
cmake --build --preset wasm --target tracegraph_core tracegraph_core_threads
echo
echo "[main] the web page, in headless Chromium"
export TRACEGRAPH_EXPORTED_DIR=build/samples/exported
if [[ "${TRACEGRAPH_SERVE:-1}" == 0 ]]; then
  node web-demo/show.mjs --port 0 --exit
else
  node web-demo/show.mjs --port "${TRACEGRAPH_PORT:-8080}"
fi
