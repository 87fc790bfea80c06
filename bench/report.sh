#!/usr/bin/env bash
# bench/report.sh — the benchmark report, in one go, on any machine with
# Debian 12's packages: ring backend, RocksDB backend and the raw device side
# by side, measured in the same run, as a Markdown report, raw JSON and SVG
# plots in a results directory.
#
#   bash bench/report.sh                  # the full report (~30 min on 2 cores)
#   bash bench/report.sh --quick          # a short form (~5 min)
#   bash bench/report.sh --smoke          # seconds: checks the pipeline (ctest -L bench)
#
# What it measures (docs/BENCHMARKS.md lists the targets):
#  1. fio, 4 KiB random writes as OSD writes (fio-jobs/*-randwrite.fio through
#     fio-jobs/run.sh, durable group commit): queue depth 1, 16, 32 x PGs 8,
#     128, 1024 x {ring, rocksdb}, and raw (no PGs) once per queue depth.
#     IOPS, p50/p99 completion latency (fio's clat), ratios ring/rocksdb and
#     ring/raw from the same run; and the floor: the ring job with
#     pgring_no_pg_log=1 (the same OSD write with no PG log) at 128 PGs.
#     From the engine's report, per client write: CPU time, log-partition
#     writes, PG-log metadata bytes (log partition + RocksDB, less the
#     floor's RocksDB bytes), which the machine's load cannot move.
#  2. log bytes per payload byte, both tail-block policies: the ring job at
#     128 PGs, qd 32 with pgring_tail_policy=rewrite (default) and =never,
#     from the engine's report (ring space and device bytes per payload byte);
#     plus bench/ring_space_bench (in-memory device, the format alone).
#  3. RocksDB bytes and keys written per client write, and RocksDB compaction
#     (seconds, bytes): ring and rocksdb jobs over --long-runtime seconds,
#     with the OSD's onodes and without (pgring_onode_size=0: pgring's own
#     RocksDB traffic, which the targets compare), and the floor with onodes
#     (for the PG-log metadata bytes per client write).
#  4. restart: bench/restart_bench populates N PGs x 3000 entries (~200 B)
#     on a file-backed partition + RocksDB, closes, evicts the page cache
#     (drop_caches if permitted, else fadvise), and times Store::Open, which
#     loads every PG log; heap and RSS growth per live entry, and the store's
#     mapping-table bytes per entry. 128 and 1024 PGs, both backends.
#
# Options:
#   --quick             short form: 4 s per fio run, qd {1,32} x PGs {8,128,1024},
#                       restart 128 and 1024 PGs x 1000 entries, long run 40 s
#   --smoke             pipeline check: one 2 s job per backend (qd 16, 8 PGs),
#                       restart 8 PGs x 100 entries, no long run (< 60 s)
#   --runtime S         seconds per fio run (15; --quick 4)
#   --long-runtime S    seconds of each long (compaction) run (180; --quick 40)
#   --long-pgs N        PGs of the long run (128)
#   --rounds N          alternating rounds of the headline cell (ring, rocksdb,
#                       floor and raw at 128 PGs and the highest qd), whose
#                       medians the IOPS targets use (5; --quick 2; --smoke 1)
#   --out DIR           results directory (build/bench-report/<timestamp>)
#   --work DIR          partitions and RocksDB, kept for the next run
#                       (build/bench-report/work; --smoke: OUT/work)
#   --build-dir DIR     where to build / find the binaries (build/bench)
#   --no-build          use the binaries already in --build-dir
#   --skip-fio, --skip-restart, --skip-long, --skip-space   leave a part out
#   -h, --help
#
# Environment:
#   BENCH_CACHE       how restart_bench evicts the page cache before opening:
#                     drop (echo 3 > /proc/sys/vm/drop_caches when permitted,
#                     else fadvise; default), fadvise (only the store's
#                     files), none (--smoke: fadvise)
#   PGRING_SIZE       data partition (2G; --smoke 256M)
#   PGRING_LOG_SIZE   log partition (4G: 1024 PGs need ~3 chunks each; --smoke 256M)
#   PGRING_DATA, PGRING_LOG   real devices instead of files, as for fio-jobs/run.sh
#                     (restart_bench always uses files in the work directory)
#   BENCH_JOBS        build parallelism (nproc)
#
# Results (in --out): report.md (the tables, and the targets met or not),
# results.json (every number the tables show), data/ (fio JSON, the engine's
# pgring_stats reports, the restart and ring_space_bench JSON, logs), *.svg:
# iops_vs_qd, iops_vs_pgs, p99_vs_qd, restart (gnuplot; the plot-*.gp beside
# them hold their data and can be rerun), report.log (this script's output).
# bench/report.py makes the tables and plot scripts from data/ and can be
# rerun alone: python3 bench/report.py OUT.
#
# Files: bench/lib.sh (build and fio helpers; the fio side is fio-jobs/run.sh,
# as in scripts/main-job.sh), bench/restart_bench.cc, bench/report.py.
# A part that fails is logged and shows as "-" in the tables; the rest runs.
set -euo pipefail

# All in one function, which bash parses whole before running it: editing
# this file while a report runs (it takes an hour) cannot derail the run.
main() {
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

COMMAND="bench/report.sh $*"
MODE=full
RUNTIME= LONG_RUNTIME= LONG_PGS=128 ROUNDS= OUT= WORK= BUILD=$ROOT/build/bench BUILD_IT=1
SKIP_FIO=0 SKIP_RESTART=0 SKIP_LONG=0 SKIP_SPACE=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) MODE=quick ;;
    --smoke) MODE=smoke ;;
    --runtime) RUNTIME=$2; shift ;;
    --runtime=*) RUNTIME=${1#*=} ;;
    --long-runtime) LONG_RUNTIME=$2; shift ;;
    --long-runtime=*) LONG_RUNTIME=${1#*=} ;;
    --long-pgs) LONG_PGS=$2; shift ;;
    --long-pgs=*) LONG_PGS=${1#*=} ;;
    --rounds) ROUNDS=$2; shift ;;
    --rounds=*) ROUNDS=${1#*=} ;;
    --out) OUT=$2; shift ;;
    --out=*) OUT=${1#*=} ;;
    --work) WORK=$2; shift ;;
    --work=*) WORK=${1#*=} ;;
    --build-dir) BUILD=$2; shift ;;
    --build-dir=*) BUILD=${1#*=} ;;
    --no-build) BUILD_IT=0 ;;
    --skip-fio) SKIP_FIO=1 ;;
    --skip-restart) SKIP_RESTART=1 ;;
    --skip-long) SKIP_LONG=1 ;;
    --skip-space) SKIP_SPACE=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option $1 (--help)" ;;
  esac
  shift
done

# The matrix. Only --quick and --smoke reduce it.
case $MODE in
  full)  QDS="1 16 32"; PGS_LIST="8 128 1024"; RESTART="128x3000 1024x3000"
         : "${RUNTIME:=15}" "${LONG_RUNTIME:=180}" "${ROUNDS:=5}" ;;
  quick) QDS="1 32"; PGS_LIST="8 128 1024"; RESTART="128x1000 1024x1000"
         : "${RUNTIME:=4}" "${LONG_RUNTIME:=40}" "${ROUNDS:=2}" ;;
  smoke) QDS="16"; PGS_LIST="8"; RESTART="8x100"; SKIP_LONG=1; SKIP_SPACE=1
         : "${BENCH_CACHE:=fadvise}"
         : "${RUNTIME:=2}" "${LONG_RUNTIME:=0}" "${ROUNDS:=1}" ;;
esac
[[ $ROUNDS =~ ^[0-9]+$ ]] || bench_die "--rounds takes a whole number, not '$ROUNDS'"
# The headline cell the targets are about: the highest queue depth, 128 PGs
# (or the matrix's largest PG count below it).
ROUND_QD=${QDS##* }
ROUND_PGS=128
[[ " $PGS_LIST " == *" 128 "* ]] || ROUND_PGS=${PGS_LIST%% *}
: "${OUT:=$ROOT/build/bench-report/$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT/data"
OUT=$(cd "$OUT" && pwd)
if [[ -z "$WORK" ]]; then
  if [[ $MODE == smoke ]]; then WORK=$OUT/work; else WORK=$ROOT/build/bench-report/work; fi
fi
mkdir -p "$WORK"
DATA=$OUT/data
: "${BENCH_CACHE:=drop}"
exec > >(tee -a "$OUT/report.log") 2>&1
bench_log "mode $MODE, $RUNTIME s per fio run, long run ${LONG_RUNTIME} s; results in $OUT"

bench_need fio fio
bench_need python3 python3
bench_need gnuplot gnuplot-nox
if [[ $BUILD_IT == 1 ]]; then
  if [[ $(id -u) == 0 ]] || command -v sudo >/dev/null 2>&1; then
    bash scripts/install-deps.sh
  fi
  bench_build "$BUILD" fio_pgring restart_bench ring_space_bench
fi
export PGRING_ENGINE=$BUILD/tools/fio_engine/libfio_pgring.so
RESTART_BENCH=$BUILD/bench/restart_bench
SPACE_BENCH=$BUILD/bench/ring_space_bench
[[ -f $PGRING_ENGINE ]] || bench_die "$PGRING_ENGINE missing (build target fio_pgring, or drop --no-build)"
[[ -x $RESTART_BENCH ]] || bench_die "$RESTART_BENCH missing (build target restart_bench)"

# The partitions (fio-jobs/run.sh creates them on first use).
export PGRING_DIR=$WORK
if [[ $MODE == smoke ]]; then
  : "${PGRING_SIZE:=256M}" "${PGRING_LOG_SIZE:=256M}"
else
  : "${PGRING_SIZE:=2G}" "${PGRING_LOG_SIZE:=4G}"
fi
export PGRING_SIZE PGRING_LOG_SIZE

# Record the setting for report.py.
python3 - "$OUT/settings.json" <<PY
import json, sys, os, platform, subprocess, datetime
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception: return ""
json.dump({
  "command": """$COMMAND""", "mode": "$MODE", "runtime": $RUNTIME, "long_runtime": $LONG_RUNTIME,
  "long_pgs": $LONG_PGS, "rounds": $ROUNDS, "round_qd": $ROUND_QD, "round_pgs": $ROUND_PGS, "qds": "$QDS".split(), "pgs": "$PGS_LIST".split(), "restart": "$RESTART".split(),
  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
  "host": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(),
  "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
  "mem": sh("free -h | awk '/Mem:/{print \$2}'"),
  "fs": sh("df -T '$WORK' | awk 'NR==2{print \$2\" on \"\$1}'"),
  "fio": sh("fio --version"), "git": sh("git -C '$ROOT' describe --always --dirty"),
  "data_size": "$PGRING_SIZE", "log_size": "$PGRING_LOG_SIZE", "work": "$WORK",
}, open(sys.argv[1], "w"), indent=2)
PY

# --- 1. the fio matrix -------------------------------------------------------
if [[ $SKIP_FIO == 0 ]]; then
  export PGRING_RUNTIME=$RUNTIME
  for qd in $QDS; do
    export PGRING_IODEPTH=$qd PGRING_PGS=128
    bench_log "fio raw qd $qd (${RUNTIME}s)"
    bench_fio raw "$DATA/fio-raw-qd$qd" || true
    # The device's ceiling for durable writes: the same job with one
    # fdatasync per qd writes, as a group commit flushes once per group.
    bench_log "fio raw+flush qd $qd (fdatasync every $qd writes, ${RUNTIME}s)"
    bench_fio raw "$DATA/fio-rawflush-qd$qd" "fdatasync=$qd" || true
    # The floor: the ring job with no PG log at all (only the onode, the data
    # write, the shared flush and the WAL sync): what no log backend can beat.
    bench_log "fio floor (no PG log) qd $qd, 128 PGs (${RUNTIME}s)"
    bench_fio ring "$DATA/fio-floor-qd$qd" "pgring_no_pg_log=1" || true
    for pgs in $PGS_LIST; do
      export PGRING_PGS=$pgs
      for b in ring rocksdb; do
        bench_log "fio $b qd $qd, $pgs PGs (${RUNTIME}s)"
        bench_fio "$b" "$DATA/fio-$b-qd$qd-pgs$pgs" || true
      done
    done
  done
fi

# --- 1b. the headline cell, repeated in alternating rounds ------------------
# One run per cell is at the mercy of whatever else the machine does for
# those 15 s (the matrix above shows it). Each round runs ring, rocksdb, the
# floor and raw back to back, in an order that rotates from round to round,
# so every backend meets every slot; report.py takes the medians.
if [[ $SKIP_FIO == 0 && $ROUNDS -gt 0 ]]; then
  export PGRING_RUNTIME=$RUNTIME PGRING_IODEPTH=$ROUND_QD PGRING_PGS=$ROUND_PGS
  KINDS=(ring rocksdb floor raw)
  for ((r = 1; r <= ROUNDS; r++)); do
    for ((i = 0; i < ${#KINDS[@]}; i++)); do
      k=${KINDS[(i + r - 1) % ${#KINDS[@]}]}
      bench_log "round $r/$ROUNDS: fio $k qd $ROUND_QD, $ROUND_PGS PGs (${RUNTIME}s)"
      case $k in
        floor) bench_fio ring "$DATA/round$r-floor" "pgring_no_pg_log=1" || true ;;
        *) bench_fio "$k" "$DATA/round$r-$k" || true ;;
      esac
    done
  done
fi

# --- 2. tail-block policies (engine report) and ring_space_bench -------------
if [[ $SKIP_SPACE == 0 ]]; then
  export PGRING_RUNTIME=$RUNTIME PGRING_IODEPTH=32 PGRING_PGS=128
  for policy in rewrite never; do
    bench_log "fio ring, tail policy $policy, qd 32, 128 PGs (${RUNTIME}s)"
    bench_fio ring "$DATA/tail-$policy" "pgring_tail_policy=$policy" || true
  done
  if [[ -x $SPACE_BENCH ]]; then
    bench_log "ring_space_bench (in-memory device, both policies)"
    "$SPACE_BENCH" --benchmark_format=json --benchmark_out="$DATA/ring_space_bench.json" \
      --benchmark_out_format=json >"$DATA/ring_space_bench.log" 2>&1 \
      || bench_log "ring_space_bench failed (see $DATA/ring_space_bench.log); continuing"
  fi
fi

# --- 3. the long run: RocksDB bytes/keys per write, compaction ---------------
if [[ $SKIP_LONG == 0 ]]; then
  export PGRING_RUNTIME=$LONG_RUNTIME PGRING_IODEPTH=32 PGRING_PGS=$LONG_PGS
  # Twice: as the OSD writes (with each write's 400-byte onode, the same in
  # both backends), and pgring's own RocksDB traffic (pgring_onode_size=0),
  # which is what the log's design changes and what the targets are about.
  for b in ring rocksdb; do
    bench_log "fio $b long run, qd 32, $LONG_PGS PGs (${LONG_RUNTIME}s)"
    bench_fio "$b" "$DATA/long-$b" || true
  done
  # The floor over as long a run: what the same writes with no PG log put
  # in RocksDB (the onodes, their flushes and compactions), which the PG-log
  # metadata bytes per client write of the two runs above subtract.
  bench_log "fio floor (no PG log) long run, qd 32, $LONG_PGS PGs (${LONG_RUNTIME}s)"
  bench_fio ring "$DATA/long-floor" "pgring_no_pg_log=1" || true
  for b in ring rocksdb; do
    bench_log "fio $b long run without onodes, qd 32, $LONG_PGS PGs (${LONG_RUNTIME}s)"
    bench_fio "$b" "$DATA/long-$b-own" "pgring_onode_size=0" || true
  done
fi

# --- 4. restart time and memory ----------------------------------------------
if [[ $SKIP_RESTART == 0 ]]; then
  for size in $RESTART; do
    pgs=${size%x*} entries=${size#*x}
    for b in ring rocksdb; do
      bench_log "restart $b: $pgs PGs x $entries entries"
      "$RESTART_BENCH" --backend="$b" --pgs="$pgs" --entries="$entries" --dir="$WORK/restart" \
        --cache="$BENCH_CACHE" \
        >"$DATA/restart-$b-$size.json" 2>"$DATA/restart-$b-$size.log" \
        || { tail -5 "$DATA/restart-$b-$size.log" >&2; bench_log "restart_bench $b $size failed; continuing"; }
    done
  done
fi

# --- the report ----------------------------------------------------------------
bench_log "writing $OUT/report.md and the plots"
python3 "$ROOT/bench/report.py" "$OUT"
for p in "$OUT"/plot-*.gp; do
  [[ -e $p ]] || continue
  gnuplot "$p" || bench_log "gnuplot $p failed"
done
if [[ $MODE == smoke ]]; then
  # The work directory stays for the next run: deleting a written 256 MiB
  # partition file can take a minute where the file system discards.
  for f in report.md results.json iops_vs_qd.svg restart.svg; do
    [[ -s $OUT/$f ]] || bench_die "smoke: $OUT/$f was not written"
  done
fi
echo
cat "$OUT/report.md"
bench_log "done: $OUT/report.md"
}

main "$@"; exit $?  # one line: bash has read it all before main runs
