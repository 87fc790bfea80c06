#!/usr/bin/env bash
# bench/blockdev.sh — the floor, pgring (the log stream) and the RocksDB
# backend on block devices laid out as ceph-volume lays out an OSD, counted
# where the devices see it: requests, bytes and flushes per client write
# from /sys/block/*/stat, for every device (RocksDB's too), beside the
# engine's own report. Loop devices with direct I/O stand in for disks:
#   separate  data, log and RocksDB (ext4) each on its own device
#   shared    data on one device; log (raw) and RocksDB (ext4) as two
#             partitions of another (one flush covers both: the engine's
#             flush-domain proof must find that)
# at 512 and 4096-byte logical sectors.
#
# The jobs are fio-jobs/*-randwrite.fio through fio-jobs/run.sh, with Ceph's
# encodings of the PG log (PGRING_PAYLOAD=ceph, from fio-jobs/defaults.sh;
# an engine built before pgring_payload existed cannot run them).
#
# Each job runs twice, --short and --long seconds, on a fresh store, and the
# counts are the long run's minus the short run's, divided by the client
# writes committed in between: mkfs, PG creation and prefill cancel out.
#
# Usage: bash bench/blockdev.sh [--layouts "separate shared"] [--sectors "512 4096"]
#          [--modes "floor stream rocksdb"] [--short S (5)] [--long S (20)]
#          [--out DIR (build/bench-blockdev/<timestamp>)] [--work DIR]
#          [--engine SO (builds build/main-job's)] [--base-engine SO: adds mode "base",
#          the stream with another build of the engine, e.g. an older commit's]
# Needs root, losetup, sfdisk, mkfs.ext4 and mount; says why and exits 0
# (skipped) when it cannot make loop devices. Every loop device, node and
# mount it makes is removed on exit; the backing files (data 2 GiB, log 2,
# db 4, meta 6: 14 GiB) stay in the work directory for the next run
# (rm -r it to free the space). Prints one table per layout and sector
# size (bench/blockdev.py) and writes results.json in the output directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
LAYOUTS="separate shared" SECTORS="512 4096" MODES="floor stream rocksdb"
SHORT=5 LONG=20 OUT="" WORK="" ENGINE="" BASE_ENGINE=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --layouts) LAYOUTS=$2; shift 2 ;;
    --sectors) SECTORS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --short) SHORT=$2; shift 2 ;;
    --long) LONG=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --engine) ENGINE=$2; shift 2 ;;
    --base-engine) BASE_ENGINE=$2; MODES="$MODES base"; shift 2 ;;
    *) echo "blockdev.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${OUT:=$ROOT/build/bench-blockdev/$(date +%Y%m%d-%H%M%S)}"
: "${WORK:=$ROOT/build/bench-blockdev-work}"
skip() { echo "blockdev.sh: SKIPPED: $*"; exit 0; }
# The layouts: bench/loopdev.sh (shared with bench/modes.sh, bench/report.sh
# and scripts/main-job.sh), with this script's sizes.
# shellcheck source=bench/loopdev.sh
source "$ROOT/bench/loopdev.sh"
for layout in $LAYOUTS; do
  for sector in $SECTORS; do
    loopdev_parse "$layout:$sector" || { echo "blockdev.sh: $LOOPDEV_WHY" >&2; exit 2; }
  done
done
loopdev_usable || skip "$LOOPDEV_WHY"
bash scripts/install-deps.sh

if [[ -z "$ENGINE" ]]; then
  cmake -S "$ROOT" -B "$ROOT/build/main-job" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPGRING_BUILD_TESTS=OFF -DPGRING_BUILD_BENCH=OFF -DPGRING_BUILD_TOOLS=OFF >/dev/null
  cmake --build "$ROOT/build/main-job" --target fio_pgring -j "$(nproc)"
  ENGINE=$ROOT/build/main-job/tools/fio_engine/libfio_pgring.so
fi
mkdir -p "$OUT" "$WORK"

LOOPDEV_DATA_SIZE=2G LOOPDEV_LOG_SIZE=2G LOOPDEV_DB_SIZE=4G
trap loopdev_cleanup EXIT
dev_stat() { loopdev_stat "$@"; }

# One job: runs fio and saves the devices' counts before and after.
run_job() {  # TAG MODE RUNTIME DATA LOG DB DEVICES...
  local tag=$1 mode=$2 rt=$3 data=$4 log=$5 db=$6; shift 6
  local eng=$ENGINE job=fio-jobs/ring-randwrite.fio nolog=0
  case $mode in
    floor) nolog=1 ;;
    base) eng=$BASE_ENGINE ;;
    rocksdb) job=fio-jobs/rocksdb-randwrite.fio ;;
  esac
  rm -rf "${db:?}"/*
  for d in "$@"; do echo "$d $(dev_stat "$d")"; done >"$OUT/$tag.before"
  PGRING_ENGINE=$eng PGRING_DATA=$data PGRING_LOG=$log PGRING_DB=$db PGRING_DIR=$WORK \
    PGRING_RUNTIME=$rt PGRING_IODEPTH=${PGRING_IODEPTH:-32} PGRING_PGS=${PGRING_PGS:-128} \
    PGRING_NO_PG_LOG=$nolog PGRING_LAYOUT=stream PGRING_STATS=$OUT/$tag.report.json \
    bash fio-jobs/run.sh "$job" --output-format=json --output="$OUT/$tag.fio.json" \
    >"$OUT/$tag.log" 2>&1 || { echo "blockdev.sh: $tag failed, see $OUT/$tag.log" >&2; return 0; }
  for d in "$@"; do echo "$d $(dev_stat "$d")"; done >"$OUT/$tag.after"
}

for layout in $LAYOUTS; do
  for sector in $SECTORS; do
    loopdev_cleanup
    loopdev_make "$layout" "$sector" "$WORK" || skip "$LOOPDEV_WHY"
    devices=("${LOOPDEV_NAMES[@]}")
    for i in "${!LOOPDEV_NAMES[@]}"; do
      echo "${LOOPDEV_ROLES[$i]} ${LOOPDEV_NAMES[$i]}"
    done >"$OUT/$layout-$sector.devices"
    echo "blockdev.sh: $layout, ${sector}-byte sectors: ${devices[*]}"
    for mode in $MODES; do
      for len in short long; do
        rt=$SHORT; [[ $len == long ]] && rt=$LONG
        run_job "$layout-$sector-$mode-$len" "$mode" "$rt" "$LOOPDEV_DATA" "$LOOPDEV_LOG" \
          "$LOOPDEV_DB" "${devices[@]}"
      done
    done
  done
done
loopdev_cleanup
python3 "$ROOT/bench/blockdev.py" "$OUT" | tee "$OUT/table.txt"
echo "blockdev.sh: results in $OUT"
