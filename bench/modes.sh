#!/usr/bin/env bash
# bench/modes.sh — the table of log layouts (docs/DESIGN.md §10, "The log
# stream"; docs/BENCHMARKS.md): per-PG rings, rings behind the log stream,
# and the RocksDB backend, at PGs x queue depths, through the fio engine as
# OSD writes (fio-jobs/*-randwrite.fio, durable group commit). Per cell:
# IOPS, p99, and from the engine's report per client write: CPU µs,
# log-partition writes and bytes, RocksDB bytes, and the log-partition
# writes that are not contiguous with the previous one (each a seek on a
# disk; docs/DESIGN.md §10 states what that predicts for a 150-seek/s HDD),
# with the data file's and RocksDB's requests and seeks beside them;
# then the CPU per client write by thread (fio's job thread, pgring-commit,
# each device's completion thread io:<file>).
#
#   bash bench/modes.sh                      # 8/128/1024 PGs x qd 1/16/32, 10 s each
#   bash bench/modes.sh --runtime 4 --pgs "128" --qds "32"
#   bash bench/modes.sh --restart-only --rounds 3   # the restart column alone
#
# Options: --runtime S (10), --pgs "LIST" (8 128 1024), --qds "LIST" (1 16 32),
#   --modes "LIST" (perpg stream rocksdb; stream is the library's default
#   stream; also floor: no PG log, stream-homed: the stream that homes
#   every record, 8 KiB at a time, in 16 chunks (max_chunks 16,
#   home_bytes 8192: the default before records were written once),
#   stream-clean: the default's write-once stream with a bound of
#   PGRING_CLEAN_CHUNKS chunks (1536 by default; docs/DESIGN.md, "Cleaning
#   the stream"), and
#   stream-wo: a 2 GiB stream with home_bytes 256 MiB, the most;
#   stream-lz4 and stream-plain: the default stream with its records
#   compressed and not, whichever the default is),
#   --base-engine SO (adds mode "base": the stream with another build of the
#   engine, e.g. an older commit's, to compare a change against; not in the
#   restart column),
#   --rounds N (1: cells alternate
#   modes within a round; medians over rounds), --out DIR
#   (build/bench-modes/<timestamp>), --build-dir DIR (build/bench), --no-build,
#   --restart (also the restart column: per PG count and mode, bench/restart_bench
#   opens a closed store of PGs x E entries, page cache dropped; E is Ceph's
#   osd_target_pg_log_entries_per_osd 300000 over the PGs, at most
#   osd_max_pg_log_entries 10000 and at least 3000, the dups a PG keeps anyway;
#   the floor has no log to load and is skipped), --restart-only (no fio runs),
#   --devices LAYOUT:SECTOR (separate:512, separate:4096, shared:512,
#   shared:4096: the fio runs on loop devices with direct I/O, made by
#   bench/loopdev.sh, instead of files: separate = data, log and RocksDB's
#   ext4 each on its own device, shared = data on one, log and RocksDB as two
#   partitions of another; then a table of every device's write requests,
#   bytes and flushes per client write from /sys/class/block/*/stat, read by
#   the engine after setup and at its final sync (the timed run only),
#   beside the engine's own counts. Needs root: otherwise "SKIPPED: why",
#   exit 0. Backing files (data PGRING_SIZE, log PGRING_LOG_SIZE, RocksDB
#   PGRING_DB_DEV_SIZE 4G) are kept in --device-work DIR
#   (build/bench-modes-devices); every loop device, node and mount is
#   removed on exit. restart_bench always runs on files).
# The jobs write Ceph's encodings of the PG log (PGRING_PAYLOAD=ceph, from
# fio-jobs/defaults.sh; PGRING_PAYLOAD=random for filler bytes).
# Counts per client write hold on a noisy machine; IOPS and p99 do not (the
# rounds alternate modes so each meets the same load).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

RUNTIME=10 PGS_LIST="8 128 1024" QDS="1 16 32" MODES="perpg stream rocksdb" ROUNDS=1
RESTART=0 FIO=1 DEVICES="" DEVICE_WORK=$ROOT/build/bench-modes-devices BASE_ENGINE=""
OUT=$ROOT/build/bench-modes/$(date -u +%Y%m%d-%H%M%S) BUILD=$ROOT/build/bench BUILD_IT=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --runtime) RUNTIME=$2; shift 2 ;;
    --pgs) PGS_LIST=$2; shift 2 ;;
    --qds) QDS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --base-engine) BASE_ENGINE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --build-dir) BUILD=$2; shift 2 ;;
    --no-build) BUILD_IT=0; shift ;;
    --restart) RESTART=1; shift ;;
    --restart-only) RESTART=1 FIO=0; shift ;;
    --devices) DEVICES=$2; shift 2 ;;
    --device-work) DEVICE_WORK=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) bench_die "unknown option $1 (see --help)" ;;
  esac
done
if [[ -n $DEVICES ]]; then
  # shellcheck source=bench/loopdev.sh
  source "$ROOT/bench/loopdev.sh"
  loopdev_parse "$DEVICES" || bench_die "--devices: $LOOPDEV_WHY"
  loopdev_usable || { echo "modes.sh: SKIPPED: --devices $DEVICES: $LOOPDEV_WHY"; exit 0; }
fi
mkdir -p "$OUT"
bench_need fio fio
bench_need python3 python3
if [[ $BUILD_IT == 1 ]]; then
  if [[ $(id -u) == 0 ]] || command -v sudo >/dev/null 2>&1; then bash scripts/install-deps.sh; fi
  bench_build "$BUILD" fio_pgring restart_bench
fi
export PGRING_ENGINE=$BUILD/tools/fio_engine/libfio_pgring.so
[[ $FIO == 0 || -f $PGRING_ENGINE ]] ||
  bench_die "$PGRING_ENGINE missing (build target fio_pgring, or drop --no-build)"
RESTART_BENCH=$BUILD/bench/restart_bench
[[ $RESTART == 0 || -x $RESTART_BENCH ]] ||
  bench_die "$RESTART_BENCH missing (build target restart_bench, or drop --no-build)"
export PGRING_DIR=$OUT/work PGRING_RUNTIME=$RUNTIME
: "${PGRING_SIZE:=2G}" "${PGRING_LOG_SIZE:=4G}"
export PGRING_SIZE PGRING_LOG_SIZE

if [[ -n $BASE_ENGINE ]]; then
  [[ -f $BASE_ENGINE ]] || bench_die "--base-engine $BASE_ENGINE: no such file"
  BASE_ENGINE=$(realpath "$BASE_ENGINE")
  MODES="$MODES base"
fi
read -r -a modes <<<"$MODES"

DEVICE_LIST=""
if [[ -n $DEVICES && $FIO == 1 ]]; then
  trap loopdev_cleanup EXIT
  loopdev_use "$LOOPDEV_LAYOUT" "$LOOPDEV_SECTOR" "$DEVICE_WORK" "${PGRING_DB_DEV_SIZE:-4G}" ||
    { echo "modes.sh: SKIPPED: --devices $DEVICES: $LOOPDEV_WHY"; exit 0; }
  DEVICE_LIST=$LOOPDEV_COUNTED
  bench_log "on loop devices, $DEVICES: data $PGRING_DATA, log $PGRING_LOG, RocksDB $PGRING_DB" \
            "(counted: $DEVICE_LIST)"
fi

# restart_bench's arguments for a mode, the same layouts as the fio cells.
restart_args() {
  case $1 in
    rocksdb) echo "--backend=rocksdb" ;;
    perpg) echo "--backend=ring --layout=perpg" ;;
    # Its payloads are filler, which compresses to nothing: the stream is
    # measured as it lies uncompressed (restart_bench.cc says why).
    stream) echo "--backend=ring --layout=stream --compression=none" ;;
    stream-lz4) echo "--backend=ring --layout=stream --compression=lz4" ;;
    stream-plain) echo "--backend=ring --layout=stream --compression=none" ;;
    stream-homed) echo "--backend=ring --layout=stream --stream-chunks=16 --home-bytes=8192 --compression=none" ;;
    stream-wo) echo "--backend=ring --layout=stream --stream-chunks=2048 --home-bytes=256M --log-size=6G --compression=none" ;;
    stream-clean) echo "--backend=ring --layout=stream --stream-chunks=${PGRING_CLEAN_CHUNKS:-1536} --home-bytes=0 --compression=none" ;;
    *) return 1 ;;
  esac
}
restart_entries() {
  local e=$((300000 / $1))
  ((e > 10000)) && e=10000
  ((e < 3000)) && e=3000
  echo "$e"
}

for ((r = 1; r <= ROUNDS && FIO; r++)); do
  for pgs in $PGS_LIST; do
    for qd in $QDS; do
      export PGRING_PGS=$pgs PGRING_IODEPTH=$qd
      for ((i = 0; i < ${#modes[@]}; i++)); do
        m=${modes[(i + r - 1) % ${#modes[@]}]}
        bench_log "round $r: $m, $pgs PGs, qd $qd (${RUNTIME}s)"
        case $m in
          rocksdb) bench_fio rocksdb "$OUT/r$r-$m-pgs$pgs-qd$qd" || true ;;
          floor) PGRING_NO_PG_LOG=1 bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" \
                   "pgring_layout=perpg" || true ;;
          # The stream large enough to hold every PG's live log (2 GiB), homing
          # only what a full stream forces: each record written once.
          stream-wo) bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" "pgring_layout=stream" \
                       "pgring_stream_chunks=2048" "pgring_home_bytes=256m" || true ;;
          stream-homed) bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" "pgring_layout=stream" \
                          "pgring_stream_chunks=16" "pgring_home_bytes=8k" || true ;;
          stream-clean) bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" "pgring_layout=stream" \
                          "pgring_stream_chunks=${PGRING_CLEAN_CHUNKS:-1536}" "pgring_home_bytes=0" || true ;;
          stream-lz4) bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" "pgring_layout=stream" \
                        "pgring_compression=lz4" || true ;;
          stream-plain) bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" "pgring_layout=stream" \
                          "pgring_compression=none" || true ;;
          base) PGRING_ENGINE=$BASE_ENGINE bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" \
                  "pgring_layout=stream" || true ;;
          *) bench_fio ring "$OUT/r$r-$m-pgs$pgs-qd$qd" "pgring_layout=$m" || true ;;
        esac
      done
    done
  done
done
for ((r = 1; r <= ROUNDS && RESTART; r++)); do
  for pgs in $PGS_LIST; do
    entries=$(restart_entries "$pgs")
    for ((i = 0; i < ${#modes[@]}; i++)); do
      m=${modes[(i + r - 1) % ${#modes[@]}]}
      args=$(restart_args "$m") || continue
      bench_log "round $r: restart $m, $pgs PGs x $entries entries"
      rm -rf "$OUT/restart-work"
      # shellcheck disable=SC2086
      "$RESTART_BENCH" $args --pgs="$pgs" --entries="$entries" --dir="$OUT/restart-work" \
        >"$OUT/r$r-$m-pgs$pgs.restart.json" 2>"$OUT/r$r-$m-pgs$pgs.restart.log" ||
        bench_log "restart_bench failed: $OUT/r$r-$m-pgs$pgs.restart.log"
    done
  done
done
# The partitions (a 4 GiB log and a 2 GiB data file) are not results.
rm -rf "$OUT/restart-work" "$OUT/work"
[[ -z $DEVICE_LIST ]] || loopdev_cleanup
python3 "$ROOT/bench/modes.py" "$OUT" "$PGS_LIST" "$QDS" "$MODES" "$ROUNDS" "$DEVICE_LIST" |
  tee "$OUT/modes.md"
