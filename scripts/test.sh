#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: bootstrap, then each
# preset's configure + build + test workflow. Prints one closing line with
# the totals and the seconds each part took. Set TRACEGRAPH_FUZZ_SECONDS to
# change how long each fuzzer runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/bootstrap.sh
source scripts/env.sh
# Seconds per part for the closing line (bash's SECONDS counts from the start).
timings=" bootstrap ${SECONDS}s"
mark=$SECONDS
# timed NAME: adds "NAME Ns" to the timings, the seconds since the last mark.
timed() {
  timings+=" $1 $((SECONDS - mark))s"
  mark=$SECONDS
}

LOGS=build/test-logs
mkdir -p "$LOGS"
passed=0
failed=0
skipped=0
status=0

# step NAME COMMAND...: runs a step (preset NAME, build/NAME), keeps its log,
# adds up its counts in test cases: a ctest test of GoogleTest cases counts as
# its cases, any other as one (scripts/test_counts.py); a case that skipped
# (GTEST_SKIP, or a test's SKIP_RETURN_CODE) counts as skipped, not passed,
# and is named at the end.
skipped_names=()
step() {
  local name=$1
  shift
  printf '\n==== %s ====\n' "$name"
  rm -rf "build/$name/gtest-results"
  if "$@" 2>&1 | tee "$LOGS/$name.log"; then :; else status=1; fi
  if grep -qE 'tests passed, [0-9]+ tests failed out of [0-9]+' "$LOGS/$name.log"; then
    local counts p f s
    counts=$(python3 scripts/test_counts.py "$LOGS/$name.log" "build/$name")
    read -r p f s <<<"$(head -1 <<<"$counts")"
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))
    mapfile -t -O "${#skipped_names[@]}" skipped_names < <(sed -n "s/^skipped: /$name: /p" <<<"$counts")
    sed -n 's/^failed: /[test] failed: /p' <<<"$counts" >&2
  else
    echo "[test] $name ran no ctest summary" >&2
    status=1
  fi
  timed "$name"
}

step native cmake --workflow --preset native
# The CUDA build links libtorch_cuda from the same torch wheel: the tool is
# built and linked that way here (the sources are the native preset's, with its
# position-independent flags, so that ccache has the core and the native
# library from above; what differs is the link). The CUDA tests run where a GPU is
# (scripts/cuda_check.sh builds the whole preset there), not here.
printf '\n==== native-cuda (configure, build and link the tool) ====\n'
if (cmake --preset native-cuda && cmake --build --preset native-cuda --target tracegraph) 2>&1 | tee "$LOGS/native-cuda.log"; then
  echo "[test] native-cuda: the tool configured, built and linked against libtorch_cuda; its CUDA tests need a GPU (scripts/cuda_check.sh)"
else
  echo "[test] native-cuda: the build failed" >&2
  status=1
fi
timed native-cuda
step sanitize cmake --workflow --preset sanitize
step wasm cmake --workflow --preset wasm
step fuzz cmake --workflow --preset fuzz

echo
for name in "${skipped_names[@]}"; do echo "skipped: $name"; done
echo "tracegraph: $passed passed, $failed failed, $skipped skipped in $((SECONDS / 60)) min;$timings"
exit $status
