#!/usr/bin/env bash
# Runs every fuzz target (the loaders and the backends) for SECONDS each
# (default 600), JOBS at a time (default: the machine's cores), and writes the
# crash-free executions per target to docs/fuzzing.md. A crash, leak, timeout
# or out-of-memory input is copied into the target's regression corpus (which
# the README's test command replays) and the script fails.
#
#   scripts/fuzz.sh [SECONDS] [JOBS]
#   scripts/fuzz.sh --table SECONDS JOBS   (docs/fuzzing.md again from the last run's logs)
#
# The backend fuzzer edits the exported test models: the native preset's
# tests make them (this script runs export_test_models and export_zoo_small_models).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TABLE_ONLY=0
if [[ ${1:-} == --table ]]; then
  TABLE_ONLY=1
  shift
fi
SECONDS_EACH=${1:-600}
JOBS=${2:-$(nproc)}
LOGS=build/fuzz/logs

# docs/fuzzing.md from the logs in $LOGS.
write_table() {
  local targets=("$@")
  {
    echo "# Fuzzing"
    echo
    echo "Every libFuzzer target (\`tests/fuzz/\`), built by the \`fuzz\` preset with clang-14 under"
    echo "ASan + UBSan. The loaders' targets take bytes as a file; \`fuzz_backends\` takes an edit script"
    echo "that changes an exported test model (an attribute, an input shape, a constant's shape, the value a"
    echo "node reads: the format is at the top of \`tests/fuzz/fuzz_backends.cpp\`), then finalizes and runs it"
    echo "on XNNPACK (a 512 MiB budget) and on LibTorch: each outcome must be a result or a typed error other"
    echo "than \`internal\`. The README's test command runs each for 20 s from the seeds and the regression"
    echo "corpora (\`tests/data/fuzz_regressions\`, \`tests/data/fuzz_backend_seeds\`); \`scripts/fuzz.sh\`"
    echo "runs them longer and writes this table."
    echo
    echo "Last run: $(date -u -r "$LOGS" +%Y-%m-%d), ${SECONDS_EACH} s per target, ${JOBS} at a time, on $(nproc) cores."
    echo
    echo "| target | executions | per second | new corpus inputs | peak RSS (MB) | result |"
    echo "|---|---|---|---|---|---|"
    local t log result
    for t in "${targets[@]}"; do
      log="$LOGS/$t.log"
      stat() { sed -nE "s/.*stat::$1: *([0-9]+).*/\\1/p" "$log" | tail -1; }
      if grep -qE "Test +#[0-9]+: $t \.+ +Passed" "$log"; then result="no crash"; else result="**failed** (build/fuzz/logs/$t.log)"; fi
      echo "| \`$t\` | $(stat number_of_executed_units) | $(stat average_exec_per_sec) | $(stat new_units_added) | $(stat peak_rss_mb) | $result |"
    done
  } >docs/fuzzing.md
  cat docs/fuzzing.md
}

if ((TABLE_ONLY)); then
  mapfile -t targets < <(ls "$LOGS" | sed -n 's/\.log$//p')
  write_table "${targets[@]}"
  exit 0
fi

./scripts/bootstrap.sh
source scripts/env.sh

cmake --preset native >/dev/null
cmake --build --preset native
ctest --test-dir build/native -R '^(make_test_models|make_old_test_models|export_test_models|make_exported_programs|make_zoo_small|export_zoo_small_models)$' --output-on-failure
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

rm -rf "$LOGS"
mkdir -p "$LOGS"
mapfile -t targets < <(ctest --test-dir build/fuzz -N | sed -nE 's/^ *Test +#[0-9]+: (fuzz_[a-z_]+)$/\1/p')
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz.sh: no fuzz targets in build/fuzz" >&2; exit 1; }
echo "fuzz.sh: ${targets[*]}: ${SECONDS_EACH} s each, ${JOBS} at a time"

marker=$(mktemp)
running=0
for t in "${targets[@]}"; do
  TRACEGRAPH_FUZZ_SECONDS=$SECONDS_EACH ctest --test-dir build/fuzz -R "^${t}\$" -V --timeout $((SECONDS_EACH + 300)) >"$LOGS/$t.log" 2>&1 &
  running=$((running + 1))
  if ((running >= JOBS)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

# Anything libFuzzer saved since the start goes into the regression corpora.
found=0
while IFS= read -r f; do
  case "$f" in
    *fuzz_backends*) dest=tests/data/fuzz_backend_seeds ;;
    *) dest=tests/data/fuzz_regressions ;;
  esac
  cp "$f" "$dest/"
  echo "fuzz.sh: kept $(basename "$f") in $dest" >&2
  found=$((found + 1))
done < <(find build/fuzz/tests/fuzz -maxdepth 1 -newer "$marker" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
rm -f "$marker"

write_table "${targets[@]}"
if ((found > 0)) || grep -q '\*\*failed\*\*' docs/fuzzing.md; then
  echo "fuzz.sh: findings above; their inputs are now regression inputs" >&2
  exit 1
fi
