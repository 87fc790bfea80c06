#!/usr/bin/env bash
# fuzz_ctest.sh — one fuzz target's ctest (the `fuzz` preset): fuzzes it for
# SECONDS from a fresh copy of its seed corpus (the repo's corpus is never
# written), with the regressions as a read-only second corpus, and fails on
# any crash, leak, timeout or out-of-memory, printing the input that did it.
#
# Usage: fuzz_ctest.sh FUZZER TARGET SECONDS FUZZ_SOURCE_DIR WORK_DIR [INPUT_TIMEOUT]
# INPUT_TIMEOUT: seconds one input may take before it counts as a hang
# (default 10; the open target, which opens whole stores, gets more).
set -euo pipefail
fuzzer=$1 target=$2 secs=$3 src=$4 work=$5 input_timeout=${6:-10}

dir=$work/$target
rm -rf "$dir"
mkdir -p "$dir/corpus" "$dir/artifacts"
cp "$src/corpus/$target/"* "$dir/corpus/"
dirs=("$dir/corpus")
if [[ -d $src/regressions/$target ]]; then
  dirs+=("$src/regressions/$target")
fi

rc=0
"$fuzzer" -max_total_time="$secs" -timeout="$input_timeout" -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$dir/artifacts/" "${dirs[@]}" >"$dir/fuzz.log" 2>&1 || rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log" | tail -n 1)
shopt -s nullglob
found=("$dir"/artifacts/*)
if [[ $rc -ne 0 || ${#found[@]} -gt 0 ]]; then
  echo "fuzz_$target: FAILED (exit $rc) after ${execs:-?} executions; libFuzzer's log ends:"
  tail -n 60 "$dir/fuzz.log"
  for f in "${found[@]}"; do
    echo "--- $f ($(stat -c %s "$f") bytes), first 256 bytes:"
    od -An -tx1 -v "$f" | head -n 16
  done
  echo "Reproduce: $fuzzer <file>; keep it as a regression test: copy it to" \
       "tests/fuzz/regressions/$target/ (see docs/RELIABILITY.md, \"Fuzzing\")."
  exit 1
fi
echo "fuzz_$target: ${execs:-?} executions in ${secs}s, no crash" \
     "($(ls "$dir/corpus" | wc -l) corpus files)"
