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
# TRACEGRAPH_FUZZ_TARGETS, a regular expression, runs (and builds) only the
# targets it matches; the table says which targets the run left out.
#
# The backend fuzzer edits the exported test models: the native preset's
# tests make them (this script runs export_test_models and export_zoo_small_models),
# unless TRACEGRAPH_FUZZ_MODELS names folders that hold them already (then the
# native preset is neither built nor run).
#
# Each loader's target runs with its format's dictionary (tests/fuzz/dict) and
# from seeds that include the hostile archives of
# tests/hostile/make_hostile_archives.py, made once before the first target.
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
    echo "on XNNPACK (a 64 MiB budget) and on LibTorch: each outcome must be a result or a typed error other"
    echo "than \`internal\`. The README's test command runs each for 20 s from the seeds and the regression"
    echo "corpora (\`tests/data/fuzz_regressions\`, \`tests/data/fuzz_backend_seeds\`); \`scripts/fuzz.sh\`"
    echo "runs them longer and writes this table."
    echo
    echo "Each loader's target runs with a dictionary of its format's tokens (\`-dict=\`: the parts named in"
    echo "the table, from \`tests/fuzz/dict/\`: magic numbers, zip signatures, pickle opcodes, TorchScript"
    echo "keywords and ops, JSON punctuation and the field names the readers look for, npy header keys,"
    echo "safetensors dtypes, DEFLATE block headers) from seeds that are the real files in \`tests/data/valid\`,"
    echo "the malformed corpus, the regressions, and the hostile archives \`tests/hostile/make_hostile_archives.py\`"
    echo "makes (the issue 50 cases and their kin, truncations and mutations of the real files; the ctest"
    echo "fixture \`make_hostile_seeds\`, seed 50, each file at most 1 MiB). \`fuzz_inflate\` feeds raw DEFLATE"
    echo "streams to the inflater with a bounded output and checks it against zlib (a stream zlib inflates to"
    echo "the declared size must give the same bytes). The generator's full-size cases also run through the CLI"
    echo "(\`cli_hostile\`, native preset: 1 GiB of address space and 10 s of CPU each) and the JS API"
    echo "(\`js_hostile_generated\`, wasm preset); what they found and is not fixed yet is in"
    echo "\`tests/hostile/open_findings.txt\`."
    echo
    echo "Last run: $(date -u -r "$LOGS" +%Y-%m-%d), ${SECONDS_EACH} s per target, ${JOBS} at a time, on $(nproc) cores."
    echo
    echo "| target | dictionary (entries) | seeds | executions | per second | new corpus inputs | peak RSS (MB) | result |"
    echo "|---|---|---|---|---|---|---|---|"
    local t log result parts dict seeds
    for t in "${targets[@]}"; do
      log="$LOGS/$t.log"
      stat() { sed -nE "s/.*stat::$1: *([0-9]+).*/\\1/p" "$log" | tail -1; }
      if ! grep -qE "Test +#[0-9]+: $t \.+ +Passed" "$log"; then
        result="**failed** (build/fuzz/logs/$t.log)"
      elif grep -q "runtime error:" "$log"; then
        # UBSan reports and goes on: the run passes, the report is a finding.
        result="**UBSan report** ($(grep -m1 -o '[^ ]*: runtime error: .*' "$log" | cut -c1-120))"
      else
        result="no crash"
      fi
      parts=$(sed -nE "s/^set\(dict_${t#fuzz_} (.*)\)$/\\1/p" tests/fuzz/CMakeLists.txt | sed 's/ / + /g')
      dict=$(sed -nE 's/.*Dictionary: ([0-9]+) entries.*/\1/p' "$log" | tail -1)
      seeds=$(sed -nE 's/.*seed corpus: files: ([0-9]+).*/\1/p' "$log" | tail -1)
      echo "| \`$t\` | ${parts:-none}${dict:+ ($dict)} | ${seeds:-} | $(stat number_of_executed_units) | $(stat average_exec_per_sec) | $(stat new_units_added) | $(stat peak_rss_mb) | $result |"
    done
    local skipped
    skipped=$(sed 's/.*/`&`/' "$LOGS/left_out" 2>/dev/null | paste -sd, - | sed 's/,/, /g')
    if [[ -n $skipped ]]; then
      echo
      echo "Not in this run (\`TRACEGRAPH_FUZZ_TARGETS\`): $skipped."
    fi
  } >docs/fuzzing.md
  cat docs/fuzzing.md
}

if ((TABLE_ONLY)); then
  mapfile -t targets < <(ls "$LOGS" | sed -n 's/^\(fuzz_.*\)\.log$/\1/p')
  write_table "${targets[@]}"
  exit 0
fi

./scripts/bootstrap.sh
source scripts/env.sh

FILTER=${TRACEGRAPH_FUZZ_TARGETS:-}
if [[ -z ${TRACEGRAPH_FUZZ_MODELS:-} && ( -z $FILTER || fuzz_backends =~ $FILTER ) ]]; then
  cmake --preset native >/dev/null
  cmake --build --preset native
  ctest --test-dir build/native -R '^(make_test_models|make_old_test_models|export_test_models|make_exported_programs|make_zoo_small|export_zoo_small_models)$' --output-on-failure
fi
cmake --preset fuzz >/dev/null
mapfile -t all_targets < <(ctest --test-dir build/fuzz -N | sed -nE 's/^ *Test +#[0-9]+: (fuzz_[a-z0-9_]+)$/\1/p')
targets=()
left_out=()
for t in "${all_targets[@]}"; do
  if [[ -z $FILTER || $t =~ $FILTER ]]; then targets+=("$t"); else left_out+=("$t"); fi
done
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz.sh: no fuzz targets in build/fuzz${FILTER:+ match $FILTER}" >&2; exit 1; }
if [[ -n $FILTER ]]; then
  cmake --build --preset fuzz --target "${targets[@]}"
else
  cmake --build --preset fuzz
fi

rm -rf "$LOGS"
mkdir -p "$LOGS"
if ((${#left_out[@]})); then printf '%s\n' "${left_out[@]}"; fi >"$LOGS/left_out"
echo "fuzz.sh: ${targets[*]}: ${SECONDS_EACH} s each, ${JOBS} at a time"
# The hostile seeds, once for all the targets (each target's run below leaves the fixture out).
ctest --test-dir build/fuzz -R '^make_hostile_seeds$' --output-on-failure >"$LOGS/make_hostile_seeds.log" 2>&1 ||
  { cat "$LOGS/make_hostile_seeds.log" >&2; exit 1; }

marker=$(mktemp)
running=0
for t in "${targets[@]}"; do
  TRACEGRAPH_FUZZ_SECONDS=$SECONDS_EACH ctest --test-dir build/fuzz -R "^${t}\$" -FA hostile_seeds -V --timeout $((SECONDS_EACH + 300)) >"$LOGS/$t.log" 2>&1 &
  running=$((running + 1))
  if ((running >= JOBS)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

# Anything libFuzzer saved goes into the regression corpora: the backends'
# edit scripts into their seeds, the loaders' files into fuzz_regressions. The
# target's log names what it wrote (all targets write into one folder).
found=0
for t in "${targets[@]}"; do
  case "$t" in
    fuzz_backends) dest=tests/data/fuzz_backend_seeds ;;
    *) dest=tests/data/fuzz_regressions ;;
  esac
  while IFS= read -r name; do
    f=build/fuzz/tests/fuzz/$name
    [[ -f $f && $f -nt $marker ]] || continue
    cp "$f" "$dest/"
    echo "fuzz.sh: kept $name ($t) in $dest" >&2
    found=$((found + 1))
  done < <(sed -nE 's/.*Test unit written to \.\/((crash|leak|timeout|oom)-[0-9a-f]+).*/\1/p' "$LOGS/$t.log" | sort -u)
done
rm -f "$marker"

write_table "${targets[@]}"
if ((found > 0)) || grep -qE '\*\*(failed|UBSan report)\*\*' docs/fuzzing.md; then
  echo "fuzz.sh: findings above; their inputs are now regression inputs" >&2
  exit 1
fi
