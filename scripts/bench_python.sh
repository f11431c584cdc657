#!/usr/bin/env bash
# The Python package's benchmark (bench/python_bench.py): tracegraph called
# from Python against the same run timed in C++, torch's forward and
# onnxruntime's Python API, on the benchmark models, in one run. Not a test.
# onnxruntime is installed into a folder of its own beside bootstrap's venv
# (the package's tests never need it). Usage: scripts/bench_python.sh [--runs N] [--models a,b]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/bootstrap.sh >/dev/null
source scripts/env.sh
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph_python >/dev/null
"$TRACEGRAPH_OLD_PYTHON" bench/make_models.py build/bench 2>&1 | grep -v -i warn || true
ORT="$TRACEGRAPH_CACHE/onnxruntime-site"
if ! PYTHONPATH="$ORT" "$TRACEGRAPH_PYTHON" -c 'import onnxruntime' 2>/dev/null; then
  "$TRACEGRAPH_PYTHON" -m pip install -q --disable-pip-version-check --no-deps --target "$ORT" onnxruntime
fi
PYTHONPATH="build/native/python:$ORT" "$TRACEGRAPH_PYTHON" bench/python_bench.py build/bench "$@"
