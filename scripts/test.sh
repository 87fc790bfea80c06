#!/usr/bin/env bash
# scripts/test.sh — THE test command. Installs the dependencies, then for each
# preset (default: default asan tsan fuzz, in that order) configures, builds
# and runs ctest, and prints one summary line per preset. Exits non-zero if
# any step of any preset failed. The fuzz preset builds the libFuzzer targets
# with clang and fuzzes each one briefly (tests/fuzz; longer runs:
# tests/fuzz/run_fuzzers.sh).
#
# Usage: bash scripts/test.sh [preset...]
# Environment:
#   PGRING_JOBS        build parallelism (default 2)
#   PGRING_CTEST_ARGS  extra ctest arguments, e.g. "-R crc32c" or "-L unit"
#   PGRING_FAIL_FAST=1 stop after the first failing preset
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

ALL_PRESETS=(default asan tsan fuzz)
if [[ $# -gt 0 ]]; then
  PRESETS=("$@")
else
  PRESETS=("${ALL_PRESETS[@]}")
fi
for p in "${PRESETS[@]}"; do
  case " ${ALL_PRESETS[*]} " in
    *" $p "*) ;;
    *) echo "test.sh: unknown preset '$p' (known: ${ALL_PRESETS[*]})" >&2; exit 2 ;;
  esac
done

# GCC 12's TSan (and, on some kernels, ASan) cannot map its shadow memory
# when the kernel randomizes mmap with more than 28 bits (vm.mmap_rnd_bits=32
# on some newer kernels): "FATAL: ThreadSanitizer: unexpected memory mapping".
# Running without address-space randomization avoids it; the personality is
# inherited by everything we start, including gtest discovery at build time.
rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
if [[ "$rnd_bits" -gt 28 && -z "${PGRING_NO_ASLR_REEXEC:-}" ]]; then
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    echo "test.sh: vm.mmap_rnd_bits=$rnd_bits > 28: re-running with ASLR disabled (setarch -R) for the sanitizers"
    export PGRING_NO_ASLR_REEXEC=1
    exec setarch "$(uname -m)" -R bash "$ROOT/scripts/test.sh" "$@"
  fi
  echo "test.sh: warning: vm.mmap_rnd_bits=$rnd_bits and setarch -R is not permitted here;" \
       "sanitizer runs may fail to start (lower it with: sysctl vm.mmap_rnd_bits=28)" >&2
fi

bash "$ROOT/scripts/install-deps.sh"

JOBS=${PGRING_JOBS:-2}
read -r -a CTEST_EXTRA <<< "${PGRING_CTEST_ARGS:-}"
LOG_DIR=$ROOT/build/test-logs
mkdir -p "$LOG_DIR"

declare -A RESULT
overall=0
start_all=$SECONDS

run_preset() {
  local p=$1 t0=$SECONDS log="$LOG_DIR/ctest-$1.log"
  echo
  echo "==================== preset $p: configure ===================="
  if ! cmake --preset "$p"; then
    RESULT[$p]="FAIL (configure) after $((SECONDS - t0))s"
    return 1
  fi
  echo "==================== preset $p: build (-j$JOBS) ===================="
  if ! cmake --build --preset "$p" -j"$JOBS"; then
    RESULT[$p]="FAIL (build) after $((SECONDS - t0))s"
    return 1
  fi
  echo "==================== preset $p: test ===================="
  local rc=0
  ctest --preset "$p" "${CTEST_EXTRA[@]}" 2>&1 | tee "$log" || rc=$?
  # "100% tests passed, 0 tests failed out of 42" (or the no-tests error).
  local summary
  summary=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)
  if [[ $rc -ne 0 ]]; then
    RESULT[$p]="FAIL (test) after $((SECONDS - t0))s: ${summary:-ctest exit $rc} (log: ${log#"$ROOT"/})"
    return 1
  fi
  RESULT[$p]="PASS in $((SECONDS - t0))s: ${summary:-ctest ok}"
}

for p in "${PRESETS[@]}"; do
  if ! run_preset "$p"; then
    overall=1
    if [[ "${PGRING_FAIL_FAST:-}" == 1 ]]; then
      break
    fi
  fi
done

echo
echo "==================== summary ($((SECONDS - start_all))s) ===================="
for p in "${PRESETS[@]}"; do
  echo "test.sh: preset $p: ${RESULT[$p]:-NOT RUN}"
done
exit "$overall"
