#!/usr/bin/env bash
# run_microbench.sh — runs the google-benchmark micro-benchmark suite (record,
# crc32c, mapping_table, chunk_allocator, append) and writes one JSON file per
# program (--benchmark_out) plus the console output to a results directory.
#
# Usage: bench/run_microbench.sh [RESULTS_DIR] [extra google-benchmark args...]
#   RESULTS_DIR         default: build/microbench-results/<UTC timestamp>
#   PGRING_BUILD_DIR    the build tree holding bench/ (default: build/default;
#                       built first with `cmake --build` if a program is missing)
#   PGRING_BENCH_DIR    where append_bench puts its partition file and RocksDB
#                       (default: the system temp dir; use a directory on the
#                       disk you want measured)
#   PGRING_BENCHES      the programs to run (default: all five)
#   PGRING_HEADLINE_REPS  repetitions of the headline append comparison (both
#                       backends x memory/file x group/sync_each, 200-byte
#                       entries, 128 PGs), randomly interleaved so that a
#                       shared machine's load drifts over all cases alike;
#                       written to append_headline.json (default 5; 0 skips)
# Example: bench/run_microbench.sh /tmp/mb --benchmark_filter='Append/ring/.*'
#          (a filter that matches nothing in a program makes it print an error
#          and write no JSON; the others still run)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PGRING_BUILD_DIR:-$ROOT/build/default}
OUT=${1:-$ROOT/build/microbench-results/$(date -u +%Y%m%dT%H%M%SZ)}
shift $(( $# > 0 ? 1 : 0 ))
BENCHES=(${PGRING_BENCHES:-record_bench crc32c_bench mapping_table_bench chunk_allocator_bench append_bench})

missing=()
for b in "${BENCHES[@]}"; do [[ -x $BUILD/bench/$b ]] || missing+=("$b"); done
if (( ${#missing[@]} )); then
  echo "run_microbench.sh: building ${missing[*]} in $BUILD" >&2
  cmake --build "$BUILD" --target "${missing[@]}"
fi

mkdir -p "$OUT"
echo "run_microbench.sh: results in $OUT" >&2
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -n) $(uname -r)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "build: $BUILD"
  echo "bench dir: ${PGRING_BENCH_DIR:-$(dirname "$(mktemp -u)")}"
} > "$OUT/env.txt"

rc=0
t0=$SECONDS
for b in "${BENCHES[@]}"; do
  echo "== $b" >&2
  t=$SECONDS
  if ! "$BUILD/bench/$b" --benchmark_out="$OUT/$b.json" --benchmark_out_format=json \
      --benchmark_counters_tabular=false "$@" 2>&1 | tee "$OUT/$b.txt"; then
    echo "run_microbench.sh: $b failed" >&2
    rc=1
  fi
  echo "== $b: $((SECONDS - t)) s" >&2
done
REPS=${PGRING_HEADLINE_REPS:-5}
if (( REPS > 0 )) && [[ " ${BENCHES[*]} " == *" append_bench "* ]]; then
  echo "== append_bench headline ($REPS interleaved repetitions)" >&2
  t=$SECONDS
  if ! "$BUILD/bench/append_bench" --benchmark_filter='Append/.*/entry:200/batch:1/pgs:128/' \
      --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
      --benchmark_out="$OUT/append_headline.json" --benchmark_out_format=json \
      --benchmark_counters_tabular=false 2>&1 | tee "$OUT/append_headline.txt"; then
    echo "run_microbench.sh: append_bench headline failed" >&2
    rc=1
  fi
  echo "== append_bench headline: $((SECONDS - t)) s" >&2
fi
echo "run_microbench.sh: done in $((SECONDS - t0)) s; JSON in $OUT" >&2
exit $rc
