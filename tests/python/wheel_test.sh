#!/usr/bin/env bash
# The wheel as a user gets it: `python -m build` makes it from python/ (the
# venv's scikit-build-core and nanobind, the repository's one CMake tree), a
# fresh venv with numpy alone installs it, and wheel_check.py runs test-zoo
# models there (no torch, no compiler, no source tree).
# Usage: wheel_test.sh PYTHON OUT_DIR MODELS_DIR EXPORTED_DIR CXX
set -euo pipefail
python=$1 out=$2 models=$3 exported=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rm -rf "$out/dist" "$out/venv"
mkdir -p "$out"
SECONDS=0
# The core and XNNPACK alone: a venv without torch has no use for the LibTorch backend.
# The native preset's build type, in a build folder as deep as the preset's
# (build/python-wheel beside build/native) and with its compiler (CXX: not
# the one Python's sysconfig names): with ccache's paths relative to the
# source tree (cmake/ccache.cmake), every source the preset compiled for the
# extension is a cache hit here, and the test pays for the packaging, not for
# compiling the core again; stripped on install, as a Release wheel is. A
# user's `pip install python/` is Release.
CXX=$5 "$python" -m build --wheel --no-isolation -Ccmake.define.TRACEGRAPH_NATIVE=OFF \
  -Ccmake.build-type=RelWithDebInfo -Cinstall.strip=true -Cbuild-dir="$root/build/python-wheel" --outdir "$out/dist" "$root/python"
wheel=$(ls "$out"/dist/tracegraph-*.whl)
echo "[wheel] built $(basename "$wheel") ($(stat -c %s "$wheel") bytes) in ${SECONDS}s"
/usr/bin/python3 -m venv "$out/venv"
"$out/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel"
"$out/venv/bin/python" -m pip list --disable-pip-version-check --format=freeze
cd "$out"  # not the source tree: the installed package is the one imported
"$out/venv/bin/python" "$here/wheel_check.py" "$models" "$exported"
