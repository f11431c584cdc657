#!/usr/bin/env bash
# Writes docs/ops.md from the op table and the backends (`tracegraph ops
# --markdown` of the native build); the ctest test ops_doc_is_fresh fails
# when it is stale. Builds the native preset first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh
cmake --preset native >/dev/null
cmake --build --preset native --target tracegraph
build/native/native/tracegraph ops --markdown > docs/ops.md
echo "wrote docs/ops.md"
