#!/usr/bin/env bash
# The library zoo: models from the libraries people build on (MONAI's 3D
# segmentation networks, timm's classifiers and vision transformers,
# segmentation_models_pytorch's 2D segmenters), built with seeded random weights
# (tests/models/make_library_models.py), saved by torch.export in both IRs, then:
#   natively: `tracegraph check` on each archive (the LibTorch backend as read
#             is the reference; XNNPACK within 1e-4), a table at the end;
#   in wasm:  tests/js/pt2.test.mjs on the same archives (loadModel, the
#             activation, the run against torch's outputs), under Node;
#   and the TorchScript path: each model traced, `tracegraph export` to the
#             JSON pair, run through the JavaScript API under Node.
# The libraries are pinned and installed from PyPI into the cache, beside the
# venv's torch (not into it). The README's test command leaves this out for
# time: about 15 minutes here. Builds the native and wasm presets.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh
source scripts/env.sh
LIBS="$TRACEGRAPH_CACHE/libzoo"
PINS=(timm==1.0.31 monai==1.6.1 segmentation-models-pytorch==0.6.0 einops==0.8.1)
if ! PYTHONPATH="$LIBS" "$TRACEGRAPH_PYTHON" -c "import timm, monai, segmentation_models_pytorch, einops" 2>/dev/null; then
  echo "[library zoo] installing ${PINS[*]} into $LIBS"
  "$TRACEGRAPH_PYTHON" -m pip install -q --target "$LIBS" "huggingface_hub<1.0" safetensors pyyaml tqdm
  "$TRACEGRAPH_PYTHON" -m pip install -q --target "$LIBS" --no-deps "${PINS[@]}"
fi
OUT=build/library-zoo
mkdir -p "$OUT"
PYTHONPATH="$LIBS" "$TRACEGRAPH_PYTHON" tests/models/make_library_models.py "$OUT" "$@"
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph

# Natively: each archive, both IRs, on both backends.
ran=0 all=0
table="| model | IR | LibTorch | XNNPACK | activation |\n|---|---|---|---|---|\n"
for model in $("$TRACEGRAPH_PYTHON" -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['models']))" "$OUT/index.json"); do
  for form in pt2 core.pt2; do
    log=$(build/native/cli/tracegraph check "$OUT/$model.$form" 2>&1 || true)
    activation=$(printf '%s\n' "$log" | sed -n 's/^output 0 *[^ ]* -> //p' | head -1)
    libtorch=$(printf '%s\n' "$log" | sed -n 's/^  libtorch  as read *\([^ ]*\) *\([a-z]*\).*/\1 \2/p' | head -1)
    xnnpack=$(printf '%s\n' "$log" | sed -n 's/^  xnnpack   as read *\(.*\)$/\1/p' | head -1 | cut -c1-160)
    all=$((all + 1))
    [[ "$xnnpack" == *" ok "* ]] && ran=$((ran + 1))
    table+="| $model | $form | $libtorch | $xnnpack | $activation |\n"
  done
done
printf '%b' "$table"
echo "[library zoo] $ran of $all archives run on XNNPACK within 1e-4 natively ($("$TRACEGRAPH_PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['refused']), 'refused by the library or torch.export:', ', '.join(d['refused']))" "$OUT/index.json"))"

# The traced TorchScript, exported to the JSON pair natively.
exported=0 traced=0
for model in $("$TRACEGRAPH_PYTHON" -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['traced']))" "$OUT/index.json"); do
  shape=$("$TRACEGRAPH_PYTHON" -c "import json,sys; print(','.join(map(str, json.load(open(sys.argv[1]))['input_shapes'][0])))" "$OUT/$model.expected.json")
  traced=$((traced + 1))
  if build/native/cli/tracegraph export "$OUT/$model.ts" -o "$OUT/exported/$model" --input-shape "$shape" >/dev/null; then
    cp "$OUT/$model.io.safetensors" "$OUT/exported/$model/"
    exported=$((exported + 1))
  fi
done
echo "[library zoo] $exported of $traced traced TorchScript files exported by tracegraph export"

# In wasm, under Node: loadModel on each archive, as the page opens it, and
# the exported TorchScript through the JavaScript API.
cmake --preset wasm >/dev/null
cmake --build --preset wasm
TRACEGRAPH_PT2_DIR="$OUT" TRACEGRAPH_JS_DIR=build/wasm/js TRACEGRAPH_LIBRARY_EXPORTED_DIR="$OUT/exported" node --test \
  --test-name-pattern='(\.pt2 opens, names its activation and runs|\.ts exported to JSON loads and runs)' tests/js/pt2.test.mjs
