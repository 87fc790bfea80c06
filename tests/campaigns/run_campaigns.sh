#!/usr/bin/env bash
# run_campaigns.sh — runs the reliability campaigns of issue 6
# (docs/RELIABILITY.md, sections 2, 3, 4, 6) and collects their summary lines.
#
#   tests/campaigns/run_campaigns.sh [--long] [campaign...]
#
# Campaigns: power_loss (tests/crash/crash_test.cc), power_loss_timing (its
# cases on the timed fault device: 512 and 4096-byte blocks, and 512-byte
# tears inside 4096-byte blocks), power_loss_generations
# (tests/crash/crash_generations_test.cc), full_devices, damage,
# concurrency, device_concurrency (tests/campaigns/*_test.cc), io_errors
# (tests/contract/io_error_test.cc). Default: all eight.
# Without --long: the short forms (what ctest runs). With --long: the long
# forms, i.e. the same binaries with the counts below (each can be
# overridden by setting the variable before calling the script):
#
#   power_loss    PGRING_CRASH_POINTS=2000 PGRING_CRASH_TXNS=120
#   power_loss_timing  PGRING_CRASH_POINTS=600 PGRING_CRASH_TXNS=120 (a
#                 timed case takes a sixth of the points: 100 per case)
#   power_loss_generations  PGRING_CRASH_GENERATIONS=2000 (per case: one
#                 store crashed and recovered 2,000 times)
#   full_devices  PGRING_FULL_CYCLES=12 PGRING_FULL_ITERATIONS=12
#   damage        PGRING_DAMAGE_ITERATIONS=3000   (per case: per-PG rings and
#                 the log stream, each under both tail-block policies)
#   concurrency   PGRING_CONC_TXNS=3000 PGRING_CONC_EPOCHS=20
#   device_concurrency  PGRING_DEVCONC_TXNS=1200 PGRING_DEVCONC_EPOCHS=8
#   io_errors     PGRING_IO_ERROR_ROUNDS=60   (fault points per case)
#
# Environment:
#   PGRING_BUILD_DIR  build tree to use (default build/default; configured
#                     with the "default" preset if missing). The script
#                     builds the campaign targets in it (-j2).
#   PGRING_CAMPAIGN_LOG_DIR  where the logs go (default $PGRING_BUILD_DIR/campaign-logs)
#   PGRING_GTEST_FILTER  passed to every binary as --gtest_filter (instead
#                     of the campaign's own: power_loss and
#                     power_loss_timing split crash_test's cases)
#
# Output: each campaign's log, then one "CAMPAIGN <name>: ..." line per
# campaign (the figures: iterations, crash points, bytes flipped, entries
# checked, lost). Exits non-zero if any campaign failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LONG=0
CAMPAIGNS=()
for a in "$@"; do
  case "$a" in
    --long) LONG=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    power_loss|power_loss_timing|power_loss_generations|full_devices|damage|concurrency|device_concurrency|io_errors) CAMPAIGNS+=("$a") ;;
    *) echo "run_campaigns.sh: unknown campaign '$a' (power_loss power_loss_timing power_loss_generations full_devices damage concurrency device_concurrency io_errors)" >&2; exit 2 ;;
  esac
done
[ ${#CAMPAIGNS[@]} -eq 0 ] && CAMPAIGNS=(power_loss power_loss_timing power_loss_generations full_devices damage concurrency device_concurrency io_errors)

BUILD=${PGRING_BUILD_DIR:-$ROOT/build/default}
LOGS=${PGRING_CAMPAIGN_LOG_DIR:-$BUILD/campaign-logs}
if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
  echo "run_campaigns.sh: configuring $BUILD (preset default)"
  (cd "$ROOT" && cmake --preset default) || exit 1
fi
mkdir -p "$LOGS" "$BUILD/test-tmp"

declare -A TARGET=(
  [power_loss]=crash_test
  [power_loss_timing]=crash_test
  [power_loss_generations]=crash_generations_test
  [full_devices]=campaign_full_device_test
  [damage]=campaign_damage_test
  [concurrency]=campaign_concurrency_test
  [device_concurrency]=campaign_device_concurrency_test
  [io_errors]=io_error_test
)
declare -A BINARY=(
  [power_loss]=tests/crash_test
  [power_loss_timing]=tests/crash_test
  [power_loss_generations]=tests/crash_generations_test
  [full_devices]=tests/campaigns/campaign_full_device_test
  [damage]=tests/campaigns/campaign_damage_test
  [concurrency]=tests/campaigns/campaign_concurrency_test
  [device_concurrency]=tests/campaigns/campaign_device_concurrency_test
  [io_errors]=tests/io_error_test
)
# name=value pairs of the long forms; a variable already set wins.
declare -A LONG_ENV=(
  [power_loss]="PGRING_CRASH_POINTS=2000 PGRING_CRASH_TXNS=120"
  [power_loss_timing]="PGRING_CRASH_POINTS=600 PGRING_CRASH_TXNS=120"
  [power_loss_generations]="PGRING_CRASH_GENERATIONS=2000"
  [full_devices]="PGRING_FULL_CYCLES=12 PGRING_FULL_ITERATIONS=12"
  [damage]="PGRING_DAMAGE_ITERATIONS=3000"
  [concurrency]="PGRING_CONC_TXNS=3000 PGRING_CONC_EPOCHS=20"
  [device_concurrency]="PGRING_DEVCONC_TXNS=1200 PGRING_DEVCONC_EPOCHS=8"
  [io_errors]="PGRING_IO_ERROR_ROUNDS=60"
)

# The campaigns that share a binary take their part of its tests.
declare -A FILTER=(
  [power_loss]="-Timing/*"
  [power_loss_timing]="Timing/*"
)

targets=()
for c in "${CAMPAIGNS[@]}"; do targets+=("${TARGET[$c]}"); done
echo "run_campaigns.sh: building ${targets[*]} in $BUILD"
cmake --build "$BUILD" -j2 --target "${targets[@]}" || exit 1

declare -A RESULT
rc_all=0
for c in "${CAMPAIGNS[@]}"; do
  env_args=("PGRING_TEST_TMPDIR=$BUILD/test-tmp")
  if [ "$LONG" = 1 ]; then
    for kv in ${LONG_ENV[$c]}; do
      name=${kv%%=*}
      if [ -z "${!name:-}" ]; then env_args+=("$kv"); else env_args+=("$name=${!name}"); fi
    done
  fi
  args=()
  if [ -n "${PGRING_GTEST_FILTER:-}" ]; then
    args+=("--gtest_filter=$PGRING_GTEST_FILTER")
  elif [ -n "${FILTER[$c]:-}" ]; then
    args+=("--gtest_filter=${FILTER[$c]}")
  fi
  log="$LOGS/$c$([ "$LONG" = 1 ] && echo -long).log"
  echo "=== $c: ${env_args[*]} ${BINARY[$c]} ${args[*]} (log: $log)"
  t0=$SECONDS
  env "${env_args[@]}" "$BUILD/${BINARY[$c]}" "${args[@]}" >"$log" 2>&1
  rc=$?
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]' "$log" | sed 's/^/    /'
  line=$(grep -E "^CAMPAIGN " "$log" | tail -1)
  [ -z "$line" ] && line="CAMPAIGN $c: (no summary line)"
  if [ $rc -ne 0 ]; then rc_all=1; line="$line [FAILED rc=$rc]"; fi
  RESULT[$c]="$line [$((SECONDS - t0))s]"
done

echo
echo "=== summary ($([ "$LONG" = 1 ] && echo long || echo short) forms)"
for c in "${CAMPAIGNS[@]}"; do echo "${RESULT[$c]}"; done
exit $rc_all
