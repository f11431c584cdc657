#!/usr/bin/env bash
# The benchmark, side by side in one run (bench/run.mjs): tracegraph's wasm
# module against onnxruntime-web 1.30 in Node and in headless Chromium (1 and
# 2 threads), and natively tracegraph's XNNPACK backend against
# onnxruntime-node, ExecuTorch's XNNPACK delegate and LibTorch, on mobilenet_v2 and resnet18 at 224, a 2D
# UNet at 256 and a 3D UNet at 64^3, all from the same torch modules.
# Usage: scripts/bench.sh [--runs N] [--warmup N] [--rounds N] [--models a,b] [--no-browser] [--no-native]
# (each configuration runs in --rounds rounds, 3 unless told, and keeps its best median; about 26 minutes)
# For LibTorch variants alone (or CUDA): tracegraph bench MODEL --input-shape ... [--device cuda]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh >/dev/null
source scripts/env.sh
# The models and their ONNX twins come from Debian's torch 1.13, whose
# TorchScript-based torch.onnx.export needs no onnx/onnxscript packages; the
# native build's LibTorch (bootstrap's torch 2.x) reads its TorchScript files.
PY=$TRACEGRAPH_OLD_PYTHON
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph >/dev/null
cmake --preset wasm >/dev/null
cmake --build --preset wasm --target tracegraph_core tracegraph_core_threads >/dev/null
OUT=build/bench
"$PY" bench/make_models.py "$OUT" 2>&1 | grep -v -i warn || true
for model in $("$PY" -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))))" "$OUT/models.json"); do
  shape=$("$PY" -c "import json,sys; print(','.join(map(str, json.load(open(sys.argv[1]))[sys.argv[2]]['input_shape'])))" "$OUT/models.json" "$model")
  [[ -f "$OUT/$model/$model.json" && "$OUT/$model/$model.json" -nt "$OUT/$model.ts" ]] ||
    build/native/cli/tracegraph export "$OUT/$model.ts" --input-shape "$shape" -o "$OUT/$model" >/dev/null
  # The optimized graph (batch norms folded, activations fused) that bench/tfjs.mjs builds tfjs-wasm's network from.
  [[ -f "$OUT/optimized/$model/$model.json" && "$OUT/optimized/$model/$model.json" -nt "$OUT/$model.ts" ]] ||
    build/native/cli/tracegraph optimize "$OUT/$model.ts" --input-shape "$shape" -o "$OUT/optimized/$model" >/dev/null
done
# onnxruntime-node's install script fetches CUDA binaries from the web; its CPU
# binaries are in the package itself, so the scripts are skipped.
# Whether the two CPUs are two cores at each two-thread measurement (bench/run.mjs).
cc -O2 -pthread bench/cores_probe.c -o "$OUT/cores_probe"
(cd bench && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
# ExecuTorch's XNNPACK delegate natively, where PyPI's executorch installs.
EXECUTORCH_LOG=$(mktemp)
if EXECUTORCH_PY=$(./scripts/executorch_venv.sh 2>"$EXECUTORCH_LOG"); then
  export TRACEGRAPH_EXECUTORCH_PYTHON="$EXECUTORCH_PY"
else
  echo "executorch: not measured ($(tail -1 "$EXECUTORCH_LOG"))"
fi
rm -f "$EXECUTORCH_LOG"
node bench/run.mjs "$@"
