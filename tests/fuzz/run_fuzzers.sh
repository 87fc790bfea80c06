#!/usr/bin/env bash
# tests/fuzz/run_fuzzers.sh — fuzz for as long as asked.
#
# Usage: bash tests/fuzz/run_fuzzers.sh [--time SECONDS] [--jobs N] [target...]
#   --time SECONDS  how long each target runs (default 300)
#   --jobs N        parallel fuzzing processes per target (default 1); they
#                   share the target's corpus
#   target...       record ring stream label export open ceph (default: all seven, in turn)
#
# Builds the `fuzz` preset (clang-14, libFuzzer + ASan + UBSan) in build/fuzz
# if needed. Each target fuzzes a persistent working corpus outside the repo,
# build/fuzz-corpus/<target>, seeded from tests/fuzz/corpus/<target> and
# growing run after run; the repo's regressions are a read-only second corpus.
# Prints the executions per target (libFuzzer's stat::number_of_executed_units)
# and copies every crash, leak, timeout or out-of-memory input into
# tests/fuzz/regressions/<target>/, saying how to minimize it and add it to
# git; exits 1 if there was one.
#
# Environment: PGRING_JOBS (build parallelism, default 2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
ALL_TARGETS=(record ring stream label export open ceph)

secs=300
jobs=1
targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --time) secs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_fuzzers.sh: unknown option $1" >&2; exit 2 ;;
    *)
      case " ${ALL_TARGETS[*]} " in
        *" $1 "*) targets+=("$1") ;;
        *) echo "run_fuzzers.sh: unknown target '$1' (known: ${ALL_TARGETS[*]})" >&2; exit 2 ;;
      esac
      shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL_TARGETS[@]}")
[[ $secs =~ ^[0-9]+$ && $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run_fuzzers.sh: bad --time/--jobs" >&2; exit 2; }

# Clang's ASan cannot map its shadow memory when the kernel randomizes mmap
# with more than 28 bits; scripts/test.sh does the same.
rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
if [[ "$rnd_bits" -gt 28 && -z "${PGRING_NO_ASLR_REEXEC:-}" ]] && setarch "$(uname -m)" -R true 2>/dev/null; then
  export PGRING_NO_ASLR_REEXEC=1
  exec setarch "$(uname -m)" -R bash "$ROOT/tests/fuzz/run_fuzzers.sh" --time "$secs" --jobs "$jobs" "${targets[@]}"
fi

BUILD=$ROOT/build/fuzz
if [[ ! -f $BUILD/CMakeCache.txt ]]; then
  cmake --preset fuzz
fi
cmake --build --preset fuzz -j"${PGRING_JOBS:-2}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

declare -A EXECS STATUS
crashes=()
for t in "${targets[@]}"; do
  corpus=$ROOT/build/fuzz-corpus/$t
  artifacts=$ROOT/build/fuzz-artifacts/$t
  logs=$ROOT/build/fuzz-logs/$t
  mkdir -p "$corpus" "$artifacts" "$logs"
  rm -f "$logs"/*.log
  cp -n "$ROOT/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  dirs=("$corpus")
  [[ -d $ROOT/tests/fuzz/regressions/$t ]] && dirs+=("$ROOT/tests/fuzz/regressions/$t")
  before=$(ls "$artifacts" | wc -l)
  echo "==================== fuzzing $t for ${secs}s (jobs $jobs) ===================="
  rc=0
  input_timeout=10
  [[ $t == open ]] && input_timeout=60  # whole stores opened per input (fuzz_ctest.sh)
  flags=(-max_total_time="$secs" -timeout="$input_timeout" -rss_limit_mb=2048 -print_final_stats=1
         -artifact_prefix="$artifacts/")
  if [[ $jobs -eq 1 ]]; then
    "$BUILD/tests/fuzz/${t}_fuzzer" "${flags[@]}" "${dirs[@]}" >"$logs/fuzz-0.log" 2>&1 || rc=$?
  else
    # libFuzzer's fork-free parallel mode: N processes, logs fuzz-<i>.log in the cwd.
    (cd "$logs" && "$BUILD/tests/fuzz/${t}_fuzzer" "${flags[@]}" -jobs="$jobs" -workers="$jobs" \
       "${dirs[@]}" >"$logs/parent.log" 2>&1) || rc=$?
  fi
  n=0
  for log in "$logs"/fuzz-*.log; do
    [[ -f $log ]] || continue
    v=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    n=$((n + ${v:-0}))
  done
  EXECS[$t]=$n
  new=()
  while IFS= read -r f; do new+=("$f"); done < <(ls -t "$artifacts" | head -n $(( $(ls "$artifacts" | wc -l) - before )))
  if [[ $rc -ne 0 || ${#new[@]} -gt 0 ]]; then
    STATUS[$t]="FOUND ${#new[@]} input(s) (exit $rc)"
    mkdir -p "$ROOT/tests/fuzz/regressions/$t"
    for f in "${new[@]}"; do
      cp "$artifacts/$f" "$ROOT/tests/fuzz/regressions/$t/$f"
      crashes+=("$t/$f")
    done
    echo "$t: libFuzzer's log ends:"
    tail -n 40 "$logs"/fuzz-0.log 2>/dev/null || true
  else
    STATUS[$t]="no crash"
  fi
  echo "$t: $n executions, ${STATUS[$t]}; corpus $(ls "$corpus" | wc -l) files in ${corpus#"$ROOT"/}"
done

echo
echo "==================== summary (${secs}s per target, jobs $jobs) ===================="
for t in "${targets[@]}"; do
  printf 'run_fuzzers.sh: %-7s %12s executions  %s\n' "$t" "${EXECS[$t]}" "${STATUS[$t]}"
done
if [[ ${#crashes[@]} -gt 0 ]]; then
  echo
  echo "Inputs that crashed, now in tests/fuzz/regressions/ (fuzz_replay_test runs them):"
  for c in "${crashes[@]}"; do
    t=${c%%/*}
    echo "  tests/fuzz/regressions/$c"
    echo "    reproduce: build/fuzz/tests/fuzz/${t}_fuzzer tests/fuzz/regressions/$c"
    echo "    minimize:  build/fuzz/tests/fuzz/${t}_fuzzer -minimize_crash=1 -max_total_time=60" \
         "-exact_artifact_path=tests/fuzz/regressions/$c.min tests/fuzz/regressions/$c"
  done
  echo "Minimize each, keep the minimized file (renamed to say what it found), fix the bug,"
  echo "and add it: git add tests/fuzz/regressions/"
  exit 1
fi
