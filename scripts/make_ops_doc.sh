#!/usr/bin/env bash
# Writes docs/ops.md from the op table and the backends (`tracegraph ops
# --markdown` of the native build), and docs/op_sweep.md from the op sweep
# (PyTorch's OpInfo samples on both backends: the OpSweep test writes it);
# the ctest tests ops_doc_is_fresh and OpSweep fail when either is stale.
# Builds the native preset first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph tracegraph_op_sweep_tests
build/native/cli/tracegraph ops --markdown > docs/ops.md
echo "wrote docs/ops.md"
[[ -f build/native/op_sweep/index.json ]] || "$TRACEGRAPH_PYTHON" tests/models/make_op_sweep.py build/native/op_sweep
build/native/tests/xnnpack/tracegraph_op_sweep_tests --gtest_brief=1 >/dev/null || true
cp build/native/op_sweep.md docs/op_sweep.md
echo "wrote docs/op_sweep.md"
