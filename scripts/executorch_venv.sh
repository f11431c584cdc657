#!/usr/bin/env bash
# ExecuTorch for the benchmark (bench/executorch_bench.py): PyPI's executorch
# in a venv of its own beside bootstrap's torch venv, whose torch and
# torchvision it uses through a .pth file (executorch's wheel names no torch;
# a second torch would be gigabytes). Made once; prints the venv's Python, or
# says why there is none and exits 1 (the benchmark then shows ExecuTorch as
# not measured). pip uses the machine's own configuration for its registry.
# Usage: scripts/executorch_venv.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh
VENV="$TRACEGRAPH_CACHE/executorch-venv"
PIN="executorch==1.5.1"
PY="$VENV/bin/python3"
if [[ -x "$PY" && "$(cat "$VENV/tracegraph-pin" 2>/dev/null)" == "$PIN" ]] &&
  "$PY" -c 'import executorch.runtime, torch' 2>/dev/null; then
  echo "$PY"
  exit 0
fi
[[ -x "$TRACEGRAPH_PYTHON" ]] || { echo "executorch: no torch venv (run scripts/bootstrap.sh)" >&2; exit 1; }
rm -rf "$VENV"
/usr/bin/python3 -m venv "$VENV"
TORCH_SITE=$("$TRACEGRAPH_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$PY" -c 'import sysconfig, sys; open(sysconfig.get_paths()["purelib"] + "/tracegraph-torch.pth", "w").write(sys.argv[1] + "\n")' "$TORCH_SITE"
if ! "$PY" -m pip install -q --disable-pip-version-check --no-cache-dir "$PIN" >&2; then
  echo "executorch: $PIN did not install here" >&2
  exit 1
fi
"$PY" -c 'import executorch.runtime, torch' >&2 || { echo "executorch: installed but does not import" >&2; exit 1; }
echo "$PIN" >"$VENV/tracegraph-pin"
echo "$PY"
