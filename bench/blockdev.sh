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
[[ $(id -u) -eq 0 ]] || skip "needs root (loop devices, mounts)"
bash scripts/install-deps.sh
for c in losetup sfdisk mkfs.ext4 mount umount mknod; do
  command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
done
[[ -e /dev/loop-control ]] || skip "no /dev/loop-control"

if [[ -z "$ENGINE" ]]; then
  cmake -S "$ROOT" -B "$ROOT/build/main-job" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPGRING_BUILD_TESTS=OFF -DPGRING_BUILD_BENCH=OFF -DPGRING_BUILD_TOOLS=OFF >/dev/null
  cmake --build "$ROOT/build/main-job" --target fio_pgring -j "$(nproc)"
  ENGINE=$ROOT/build/main-job/tools/fio_engine/libfio_pgring.so
fi
mkdir -p "$OUT" "$WORK"

LOOPS=() MOUNTS=() NODES=()
cleanup() {
  set +e
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
  for n in "${NODES[@]}"; do rm -f "$n"; done
  MOUNTS=() LOOPS=() NODES=()
}
trap cleanup EXIT

# A loop device with direct I/O and the given logical sector size over the
# backing file NAME.img of SIZE, its path in the variable VAR (not printed:
# a command substitution's subshell would lose it from LOOPS). The backing
# file is written with zeros once and kept in the work directory for the
# next run: not fallocate, whose unwritten extents the host's file system
# converts on their first write, a cost the first job of a cell would pay
# and the next ones not.
make_loop() {  # VAR NAME SIZE SECTOR [-P]
  local img=$WORK/$2.img dev want
  want=$(numfmt --from=iec "$3")
  if [[ $(stat -c %s "$img" 2>/dev/null || echo 0) -ne $want || -e $img.partial ]]; then
    echo "blockdev.sh: writing $img ($3 of zeros, once)"
    touch "$img.partial"
    dd if=/dev/zero of="$img" bs=4M count="$want" iflag=count_bytes oflag=direct status=none
    rm -f "$img.partial"
  fi
  dev=$(losetup --find --show --direct-io=on --sector-size "$4" ${5:-} "$img") ||
    skip "losetup --direct-io=on --sector-size $4 failed"
  LOOPS+=("$dev")
  printf -v "$1" '%s' "$dev"
}
# /dev/<name> from /sys/class/block/<name>/dev (no udev here).
make_node() {  # NAME
  local n=$1 majmin
  [[ -b /dev/$n ]] && return 0
  majmin=$(cat "/sys/class/block/$n/dev")
  mknod "/dev/$n" b "${majmin%%:*}" "${majmin##*:}"
  NODES+=("/dev/$n")
}
# ext4 on DEV, mounted at DIR.
make_fs() {  # DEV DIR
  mkfs.ext4 -q -F "$1"
  mkdir -p "$2"
  mount "$1" "$2"
  MOUNTS+=("$2")
}
# The write count fields of /sys/class/block/NAME/stat: requests, 512-byte
# sectors, flushes (the 16th field, since Linux 5.5; 0 where there is none).
dev_stat() { awk '{print $5, $7, ($16 == "" ? 0 : $16)}' "/sys/class/block/$1/stat"; }

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
    cleanup
    case $layout in
      separate)
        make_loop data data 2G "$sector"
        make_loop logdev log 2G "$sector"
        make_loop dbdev db 4G "$sector"
        make_fs "$dbdev" "$WORK/db-$sector"
        devices=("${data#/dev/}" "${logdev#/dev/}" "${dbdev#/dev/}")
        printf 'data %s\nlog %s\ndb %s\n' "${devices[@]}" >"$OUT/$layout-$sector.devices"
        log=$logdev ;;
      shared)
        make_loop data data 2G "$sector"
        make_loop meta meta 6G "$sector" -P
        # Log first (raw, 2 GiB), RocksDB after it, as ceph-volume puts a
        # DB partition beside the WAL/block ones.
        printf 'label: gpt\n,2GiB\n,\n' | sfdisk -q "$meta" >/dev/null
        partx -u "$meta" 2>/dev/null || partx -a "$meta" 2>/dev/null || true
        m=${meta#/dev/}
        for p in "${m}p1" "${m}p2"; do
          for _ in $(seq 50); do [[ -e /sys/class/block/$p ]] && break; sleep 0.1; done
          [[ -e /sys/class/block/$p ]] || skip "no partition $p after partx"
          make_node "$p"
        done
        make_fs "/dev/${m}p2" "$WORK/db-$sector"
        devices=("${data#/dev/}" "${m}p1" "${m}p2" "$m")
        printf 'data %s\nlog %s\ndb %s\ndisk %s\n' "${devices[@]}" >"$OUT/$layout-$sector.devices"
        log=/dev/${m}p1 ;;
      *) echo "blockdev.sh: unknown layout $layout" >&2; exit 2 ;;
    esac
    echo "blockdev.sh: $layout, ${sector}-byte sectors: ${devices[*]}"
    for mode in $MODES; do
      for len in short long; do
        rt=$SHORT; [[ $len == long ]] && rt=$LONG
        run_job "$layout-$sector-$mode-$len" "$mode" "$rt" "$data" "$log" "$WORK/db-$sector" \
          "${devices[@]}"
      done
    done
  done
done
cleanup
python3 "$ROOT/bench/blockdev.py" "$OUT" | tee "$OUT/table.txt"
echo "blockdev.sh: results in $OUT"
