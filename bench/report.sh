#!/usr/bin/env bash
# bench/report.sh — the benchmark report, in one go, on any machine with
# Debian 12's packages: the ring backend in both log layouts (per-PG rings,
# pgring_layout=perpg, and the log stream, pgring_layout=stream, the
# library's default), the RocksDB backend and the raw device side by side,
# measured in the same run, as a Markdown report, raw JSON and SVG plots in a
# results directory.
#
#   bash bench/report.sh                  # the full report (~40 min on 2 cores)
#   bash bench/report.sh --quick          # a short form (~12 min)
#   bash bench/report.sh --smoke          # ~40 s: checks the pipeline (ctest -L bench)
#
# The kinds of run, as the tables name them (file names use the short key):
#   ring     "per-PG rings": the ring job with pgring_layout=perpg
#   stream   "stream": the ring job with pgring_layout=stream
#   rocksdb  the rocksdb job (PG logs in RocksDB, as BlueStore keeps them)
#   floor    the ring job with pgring_no_pg_log=1 (and pgring_layout=perpg):
#            the same OSD write with no PG log, which no backend can beat
#   raw      fio's io_uring engine on the data partition alone
# The layout is passed to every ring job as an engine option line
# (bench_fio's extra lines), so what ran is in each run's .fio copy. Every
# engine run writes Ceph's encodings of the PG log entries, dups and infos
# (PGRING_PAYLOAD=ceph, fio-jobs/defaults.sh; random: filler bytes), and
# report.md says which ("- payload:", from the engine's reports).
#
# What it measures (docs/BENCHMARKS.md lists the targets):
#  1. fio, 4 KiB random writes as OSD writes (fio-jobs/*-randwrite.fio through
#     fio-jobs/run.sh, durable group commit): queue depth 1, 16, 32 x PGs 8,
#     128, 1024 x {ring, stream, rocksdb}, and raw (no PGs) once per queue
#     depth. IOPS, p50/p99 completion latency (fio's clat), ratios to rocksdb
#     and raw from the same run; and the floor (pgring_no_pg_log=1) at 128
#     PGs. From the engine's report, per client write: CPU time,
#     log-partition writes and bytes, PG-log metadata bytes (log partition +
#     RocksDB, less the floor's RocksDB bytes), which the machine's load
#     hardly moves. The headline cell (128 PGs, the highest qd) again in
#     --rounds alternating rounds of ring, stream, rocksdb, floor and raw.
#  2. log bytes per payload byte, both tail-block policies (per-PG rings
#     only): the ring job at 128 PGs, qd 32 with pgring_tail_policy=rewrite
#     (default) and =never, from the engine's report (ring space and device
#     bytes per payload byte); plus bench/ring_space_bench (in-memory
#     device, the format alone).
#  3. RocksDB bytes and keys written per client write, and RocksDB compaction
#     (seconds, bytes): ring, stream and rocksdb jobs over --long-runtime
#     seconds, with the OSD's onodes and without (pgring_onode_size=0:
#     pgring's own RocksDB traffic, which the targets compare), and the floor
#     with onodes (for the PG-log metadata bytes per client write).
#  4. restart: bench/restart_bench populates N PGs x 3000 entries (~200 B)
#     on a file-backed partition + RocksDB, closes, evicts the page cache
#     (drop_caches if permitted, else fadvise), and times Store::Open, which
#     loads every PG log; heap and RSS growth per live entry, and the store's
#     mapping-table bytes per entry. 128 and 1024 PGs: per-PG rings
#     (--layout=perpg), the stream (--layout=stream with a bound of
#     BENCH_STREAM_CHUNKS chunks, 0 being three quarters of the partition, and
#     BENCH_HOME_BYTES home bytes, 0 homing only what the stream needs
#     the room for, so that the stream is left full of unhomed records at
#     close and open replays them), and rocksdb.
#
# Options:
#   --quick             short form: 4 s per fio run, qd {1,32} x PGs {8,128,1024},
#                       restart 128 and 1024 PGs x 1000 entries, long run 40 s
#   --smoke             pipeline check: one 2 s job per backend and layout (qd 16,
#                       8 PGs), restart 8 PGs x 100 entries, no long run
#   --runtime S         seconds per fio run (15; --quick 4)
#   --long-runtime S    seconds of each long (compaction) run (180; --quick 40)
#   --long-pgs N        PGs of the long run (128)
#   --rounds N          alternating rounds of the headline cell (ring, stream,
#                       rocksdb, floor and raw at 128 PGs and the highest qd),
#                       whose medians the IOPS targets use (5; --quick 2; --smoke 1)
#   --out DIR           results directory (build/bench-report/<timestamp>)
#   --work DIR          partitions and RocksDB, kept for the next run
#                       (build/bench-report/work; --smoke: OUT/work)
#   --build-dir DIR     where to build / find the binaries (build/bench)
#   --no-build          use the binaries already in --build-dir
#   --devices LAYOUT:SECTOR  the fio runs on loop devices with direct I/O instead
#                       of files (bench/loopdev.sh): separate (data, log and
#                       RocksDB's ext4 each on its own device) or shared (data
#                       on one; log and RocksDB as two partitions of another),
#                       at 512 or 4096-byte sectors, e.g. separate:4096; the
#                       report then adds each device's write requests, bytes
#                       and flushes per client write from /sys/class/block/*/stat
#                       (engine runs: read by the engine after setup and at its
#                       final sync, the timed run only; raw: the whole fio run,
#                       which has no setup) beside the engine's own counts.
#                       Needs root: otherwise "SKIPPED: why", exit 0. Backing
#                       files in WORK/loop (data PGRING_SIZE, log
#                       PGRING_LOG_SIZE, RocksDB PGRING_DB_DEV_SIZE: 4G,
#                       --smoke 512M), kept; every loop device, node and mount
#                       is removed on exit. restart_bench still uses files.
#   --skip-fio, --skip-restart, --skip-long, --skip-space   leave a part out
#   -h, --help
#
# Environment:
#   BENCH_CACHE       how restart_bench evicts the page cache before opening:
#                     drop (echo 3 > /proc/sys/vm/drop_caches when permitted,
#                     else fadvise; default), fadvise (only the store's
#                     files), none (--smoke: fadvise)
#   BENCH_STREAM_CHUNKS  the restart's stream size bound in 1 MiB chunks
#                     (StreamOptions::max_chunks; 0: three quarters of
#                     the partition restart_bench sizes; --smoke 16)
#   BENCH_HOME_BYTES  the restart's StreamOptions::home_bytes (0: a PG's
#                     records stay in the stream until forced homes take
#                     them at half the stream's size), passed when
#                     restart_bench takes --home-bytes
#   PGRING_SIZE       data partition (2G; --smoke 256M)
#   PGRING_LOG_SIZE   log partition (4G: the logs of 1024 PGs span at least
#                     ~1.6 GB of stream, twice what a 2G partition's stream
#                     holds before forced homes start; --smoke 256M)
#   PGRING_PAYLOAD    ceph (default) or random: what the PG log entries, dups
#                     and infos hold
#   (the others' defaults: fio-jobs/defaults.sh, shared with fio-jobs/run.sh
#   and scripts/main-job.sh; this script sets runtime, queue depth and PGs
#   per run)
#   PGRING_DATA, PGRING_LOG   real devices instead of files, as for fio-jobs/run.sh
#                     (restart_bench always uses files in the work directory)
#   BENCH_JOBS        build parallelism (nproc)
#
# Results (in --out): report.md (the tables, and the targets met or not, per
# layout), results.json (every number the tables show), data/ (fio JSON, the
# engine's pgring_stats reports, the restart and ring_space_bench JSON, logs),
# *.svg: iops_vs_qd, iops_vs_pgs, p99_vs_qd, restart (gnuplot, bench/plot.py's
# rule, drawn by bench_plot as scripts/main-job.sh draws its chart; the
# plot-*.gp beside them hold their data and can be rerun), report.log (this
# script's output). bench/report.py makes the tables and plot scripts from data/ and
# can be rerun alone: python3 bench/report.py OUT.
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
SKIP_FIO=0 SKIP_RESTART=0 SKIP_LONG=0 SKIP_SPACE=0 DEVICES=""
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
    --devices) DEVICES=$2; shift ;;
    --devices=*) DEVICES=${1#*=} ;;
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
         : "${BENCH_CACHE:=fadvise}" "${BENCH_STREAM_CHUNKS:=16}"
         : "${RUNTIME:=2}" "${LONG_RUNTIME:=0}" "${ROUNDS:=1}" ;;
esac
[[ $ROUNDS =~ ^[0-9]+$ ]] || bench_die "--rounds takes a whole number, not '$ROUNDS'"
if [[ -n $DEVICES ]]; then
  # shellcheck source=bench/loopdev.sh
  source "$ROOT/bench/loopdev.sh"
  loopdev_parse "$DEVICES" || bench_die "--devices: $LOOPDEV_WHY"
  loopdev_usable || { echo "report.sh: SKIPPED: --devices $DEVICES: $LOOPDEV_WHY"; exit 0; }
fi
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
: "${BENCH_CACHE:=drop}" "${BENCH_STREAM_CHUNKS:=0}" "${BENCH_HOME_BYTES:=0}"
[[ $BENCH_STREAM_CHUNKS =~ ^[0-9]+$ && $BENCH_HOME_BYTES =~ ^[0-9]+$ ]] \
  || bench_die "BENCH_STREAM_CHUNKS and BENCH_HOME_BYTES take whole numbers"
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
# The stream's home size can be set only where restart_bench takes
# --home-bytes; otherwise its stream homes at that build's default.
RESTART_HOME_BYTES=
if "$RESTART_BENCH" --help 2>/dev/null | grep -q -- '--home-bytes'; then
  RESTART_HOME_BYTES=$BENCH_HOME_BYTES
fi

# One fio run of a kind (see the header): the job file and the engine options
# that make it that kind, then any extra option lines.
# With --devices, the devices' counts around the whole fio run are kept too
# (OUT_PREFIX.devstat.before/after): report.py uses them for raw, which has
# no engine report.
run_kind() {  # KIND OUT_PREFIX [extra job-file lines...]
  local kind=$1 out=$2 rc=0; shift 2
  [[ -z $DEVICE_LIST ]] || loopdev_snapshot "$out.devstat.before"
  case $kind in
    ring) bench_fio ring "$out" "pgring_layout=perpg" "$@" || rc=$? ;;
    stream) bench_fio ring "$out" "pgring_layout=stream" "$@" || rc=$? ;;
    floor) bench_fio ring "$out" "pgring_layout=perpg" "pgring_no_pg_log=1" "$@" || rc=$? ;;
    rocksdb | raw) bench_fio "$kind" "$out" "$@" || rc=$? ;;
    *) bench_die "run_kind: unknown kind $kind" ;;
  esac
  [[ -z $DEVICE_LIST ]] || loopdev_snapshot "$out.devstat.after"
  return $rc
}
LOG_KINDS=(ring stream)  # the ring backend's two layouts

# The partitions (fio-jobs/run.sh creates them on first use).
export PGRING_DIR=$WORK
# The fio jobs' defaults are fio-jobs/defaults.sh, as for run.sh and
# main-job.sh, but for the log partition (4G, not 2G: the logs of 1024
# PGs, the matrix's largest count, span at least ~1.6 GB of stream, twice
# what a 2G partition's stream holds before forced homes start), the
# --smoke sizes, and the runtime and queue depth, which the matrix sets run
# by run.
if [[ $MODE == smoke ]]; then
  : "${PGRING_SIZE:=256M}" "${PGRING_LOG_SIZE:=256M}"
else
  : "${PGRING_LOG_SIZE:=4G}"
fi
# What the caller asked for, before the defaults fill it in (--smoke checks
# the default).
PAYLOAD_ASKED=${PGRING_PAYLOAD:-}
# shellcheck source=fio-jobs/defaults.sh
source "$ROOT/fio-jobs/defaults.sh"
# restart_bench's entries are the fio runs' payloads (PGRING_PAYLOAD: Ceph's encodings
# by default), where restart_bench can write them: its own default, filler
# bytes, compresses to almost nothing in the stream and flatters its open.
RESTART_PAYLOAD=()
if "$RESTART_BENCH" --help 2>/dev/null | grep -q -- '--payload=filler|ceph'; then
  case $PGRING_PAYLOAD in
    ceph) RESTART_PAYLOAD=(--payload=ceph) ;;
    random) RESTART_PAYLOAD=(--payload=filler) ;;
  esac
fi

# --devices: the fio runs' data, log and RocksDB on loop devices.
DEVICE_LIST=""
if [[ -n $DEVICES ]]; then
  trap loopdev_cleanup EXIT
  db_size=${PGRING_DB_DEV_SIZE:-4G}
  [[ $MODE == smoke ]] && db_size=${PGRING_DB_DEV_SIZE:-512M}
  loopdev_use "$LOOPDEV_LAYOUT" "$LOOPDEV_SECTOR" "$WORK/loop" "$db_size" ||
    { echo "report.sh: SKIPPED: --devices $DEVICES: $LOOPDEV_WHY"; exit 0; }
  DEVICE_LIST=$LOOPDEV_COUNTED
  bench_log "on loop devices, $DEVICES: data $PGRING_DATA, log $PGRING_LOG, RocksDB $PGRING_DB" \
            "(counted: $DEVICE_LIST)"
fi

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
  "restart_stream_chunks": $BENCH_STREAM_CHUNKS,
  "restart_home_bytes": int("$RESTART_HOME_BYTES") if "$RESTART_HOME_BYTES" else None,
  "devices": "$DEVICES", "device_list": "$DEVICE_LIST".split(), "payload": "$PGRING_PAYLOAD",
}, open(sys.argv[1], "w"), indent=2)
PY

# --- 1. the fio matrix -------------------------------------------------------
if [[ $SKIP_FIO == 0 ]]; then
  export PGRING_RUNTIME=$RUNTIME
  for qd in $QDS; do
    export PGRING_IODEPTH=$qd PGRING_PGS=128
    bench_log "fio raw qd $qd (${RUNTIME}s)"
    run_kind raw "$DATA/fio-raw-qd$qd" || true
    # The device's ceiling for durable writes: the same job with one
    # fdatasync per qd writes, as a group commit flushes once per group.
    bench_log "fio raw+flush qd $qd (fdatasync every $qd writes, ${RUNTIME}s)"
    run_kind raw "$DATA/fio-rawflush-qd$qd" "fdatasync=$qd" || true
    # The floor: the ring job with no PG log at all (only the onode, the data
    # write, the shared flush and the WAL sync): what no log backend can beat.
    bench_log "fio floor (no PG log) qd $qd, 128 PGs (${RUNTIME}s)"
    run_kind floor "$DATA/fio-floor-qd$qd" || true
    for pgs in $PGS_LIST; do
      export PGRING_PGS=$pgs
      for b in "${LOG_KINDS[@]}" rocksdb; do
        bench_log "fio $b qd $qd, $pgs PGs (${RUNTIME}s)"
        run_kind "$b" "$DATA/fio-$b-qd$qd-pgs$pgs" || true
      done
    done
  done
fi

# --- 1b. the headline cell, repeated in alternating rounds ------------------
# One run per cell is at the mercy of whatever else the machine does for
# those 15 s (the matrix above shows it). Each round runs per-PG rings, the
# stream, rocksdb, the floor and raw back to back, in an order that rotates
# from round to round, so every kind meets every slot; report.py takes the
# medians.
if [[ $SKIP_FIO == 0 && $ROUNDS -gt 0 ]]; then
  export PGRING_RUNTIME=$RUNTIME PGRING_IODEPTH=$ROUND_QD PGRING_PGS=$ROUND_PGS
  KINDS=("${LOG_KINDS[@]}" rocksdb floor raw)
  for ((r = 1; r <= ROUNDS; r++)); do
    for ((i = 0; i < ${#KINDS[@]}; i++)); do
      k=${KINDS[(i + r - 1) % ${#KINDS[@]}]}
      bench_log "round $r/$ROUNDS: fio $k qd $ROUND_QD, $ROUND_PGS PGs (${RUNTIME}s)"
      run_kind "$k" "$DATA/round$r-$k" || true
    done
  done
fi

# --- 2. tail-block policies (engine report) and ring_space_bench -------------
# Per-PG rings only: there every record write rewrites its PG's tail block.
if [[ $SKIP_SPACE == 0 ]]; then
  export PGRING_RUNTIME=$RUNTIME PGRING_IODEPTH=32 PGRING_PGS=128
  for policy in rewrite never; do
    bench_log "fio ring (per-PG rings), tail policy $policy, qd 32, 128 PGs (${RUNTIME}s)"
    run_kind ring "$DATA/tail-$policy" "pgring_tail_policy=$policy" || true
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
  # every backend), and pgring's own RocksDB traffic (pgring_onode_size=0),
  # which is what the log's design changes and what the targets are about.
  for b in "${LOG_KINDS[@]}" rocksdb; do
    bench_log "fio $b long run, qd 32, $LONG_PGS PGs (${LONG_RUNTIME}s)"
    run_kind "$b" "$DATA/long-$b" || true
  done
  # The floor over as long a run: what the same writes with no PG log put
  # in RocksDB (the onodes, their flushes and compactions), which the PG-log
  # metadata bytes per client write of the runs above subtract.
  bench_log "fio floor (no PG log) long run, qd 32, $LONG_PGS PGs (${LONG_RUNTIME}s)"
  run_kind floor "$DATA/long-floor" || true
  for b in "${LOG_KINDS[@]}" rocksdb; do
    bench_log "fio $b long run without onodes, qd 32, $LONG_PGS PGs (${LONG_RUNTIME}s)"
    run_kind "$b" "$DATA/long-$b-own" "pgring_onode_size=0" || true
  done
fi

# --- 4. restart time and memory ----------------------------------------------
# The stream's row opens a store whose stream is full of unhomed records:
# home_bytes 0 (where restart_bench takes it), so that a PG's records leave
# the stream only when forced homes take them, once the stream is half
# full. With BENCH_STREAM_CHUNKS 0 restart_bench sizes the partition (the
# rings, and a third more for the stream); otherwise the partition holds
# the rings (restart_bench's own sizing: ~1 chunk per 3000 entries, 3 more
# per PG and 64 MiB) plus the stream's chunks (1 MiB each).
if [[ $SKIP_RESTART == 0 ]]; then
  for size in $RESTART; do
    pgs=${size%x*} entries=${size#*x}
    for b in "${LOG_KINDS[@]}" rocksdb; do
      args=(--backend=ring --layout=perpg)
      case $b in
        stream)
          args=(--backend=ring --layout=stream --stream-chunks="$BENCH_STREAM_CHUNKS")
          if (( BENCH_STREAM_CHUNKS != 0 )); then
            per_pg=$(( (entries * (220 + 64) + 4096 + 1048575) / 1048576 + 3 ))
            log_mib=$(( pgs * per_pg + BENCH_STREAM_CHUNKS + 64 ))
            (( log_mib >= 256 )) || log_mib=256
            args+=(--log-size="$((log_mib * 1048576))")
          fi
          [[ -z $RESTART_HOME_BYTES ]] || args+=(--home-bytes="$RESTART_HOME_BYTES") ;;
        rocksdb) args=(--backend=rocksdb) ;;
      esac
      bench_log "restart $b: $pgs PGs x $entries entries (${args[*]})"
      "$RESTART_BENCH" "${args[@]}" "${RESTART_PAYLOAD[@]}" --pgs="$pgs" --entries="$entries" \
        --dir="$WORK/restart" \
        --cache="$BENCH_CACHE" \
        >"$DATA/restart-$b-$size.json" 2>"$DATA/restart-$b-$size.log" \
        || { tail -5 "$DATA/restart-$b-$size.log" >&2; bench_log "restart_bench $b $size failed; continuing"; }
    done
  done
fi

# --- the report ----------------------------------------------------------------
bench_log "writing $OUT/report.md and the plots"
python3 "$ROOT/bench/report.py" "$OUT"
shopt -s nullglob
plots=("$OUT"/plot-*.gp)
shopt -u nullglob
bench_plot "${plots[@]}" || bench_log "a plot was not drawn (above); the report goes on"
if [[ $MODE == smoke ]]; then
  # The work directory stays for the next run: deleting a written 256 MiB
  # partition file can take a minute where the file system discards.
  for f in report.md results.json iops_vs_qd.svg restart.svg; do
    [[ -s $OUT/$f ]] || bench_die "smoke: $OUT/$f was not written"
  done
  # Each layout ran as itself: its engine report names that layout. Every
  # engine run wrote the payload asked for, by default Ceph's encodings (the
  # default README and fio-jobs/defaults.sh state), and report.md says so.
  want_payload=${PAYLOAD_ASKED:-ceph}
  for b in "${LOG_KINDS[@]}" rocksdb; do
    [[ $SKIP_FIO == 0 ]] || break
    want=$b; [[ $b == ring ]] && want=perpg
    f=$DATA/fio-$b-qd$ROUND_QD-pgs$ROUND_PGS.report.json
    [[ $b == rocksdb ]] || grep -q "\"pgring_layout\": \"$want\"" "$f" 2>/dev/null \
      || bench_die "smoke: $f missing or not pgring_layout=$want"
    grep -q "\"pgring_payload\": \"$want_payload\"" "$f" 2>/dev/null \
      || bench_die "smoke: $f missing or not pgring_payload=$want_payload"
    # On devices, the engine counted every device of the layout.
    [[ $b == rocksdb ]] && continue
    for d in $DEVICE_LIST; do
      python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(0 if sys.argv[2] in r["block_devices"]["devices"] else 1)' "$f" "${d#*:}" \
        || bench_die "smoke: $f has no block_devices entry for ${d#*:}"
    done
  done
  [[ -z $DEVICE_LIST ]] || grep -q "^## Devices" "$OUT/report.md" \
    || bench_die "smoke: report.md has no Devices section"
  [[ $SKIP_FIO == 1 ]] || grep -q "^- payload: $want_payload " "$OUT/report.md" \
    || bench_die "smoke: report.md does not say '- payload: $want_payload'"
fi
echo
cat "$OUT/report.md"
bench_log "done: $OUT/report.md"
}

main "$@"; exit $?  # one line: bash has read it all before main runs
