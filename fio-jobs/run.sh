#!/usr/bin/env bash
# fio-jobs/run.sh — runs one of the fio jobs in this directory with defaults
# for the environment variables it reads (fio itself has no defaults for
# ${VAR}), after creating the file-backed partitions if they are missing.
#
# Usage: fio-jobs/run.sh JOB.fio [fio arguments...]
#   e.g. PGRING_IODEPTH=32 fio-jobs/run.sh fio-jobs/ring-randwrite.fio --output-format=json
#
# Defaults (override any of them in the environment): fio-jobs/defaults.sh
# (PGRING_SIZE, PGRING_LOG_SIZE, PGRING_RUNTIME, PGRING_IODEPTH, PGRING_PGS,
# PGRING_SHARED_FLUSH, PGRING_SYNC_COVERS, PGRING_NO_PG_LOG, PGRING_LAYOUT —
# stream, the library's default, or perpg — and PGRING_PAYLOAD — ceph,
# Ceph's encodings, or random: the same for scripts/main-job.sh and
# bench/report.sh, which say where they differ), and here the paths:
#   PGRING_DIR      build/fio-bench in the repository: where the partitions live
#   PGRING_DATA     $PGRING_DIR/data.part, written with PGRING_SIZE of zeros
#   PGRING_LOG      $PGRING_DIR/log.part, written with PGRING_LOG_SIZE of zeros
#   PGRING_DB       $PGRING_DIR/db
#   PGRING_STATS    $PGRING_DIR/<job name>.report.json
#   PGRING_ENGINE   the first libfio_pgring.so found under build/{default,dev,*}
# Block devices given as PGRING_DATA or PGRING_LOG are used as they are
# (RocksDB stays in PGRING_DB: the engine refuses one that would default to
# <block device>.db, under /dev).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOB=${1:?usage: $0 JOB.fio [fio arguments...]}
shift

: "${PGRING_DIR:=$ROOT/build/fio-bench}"
: "${PGRING_DATA:=$PGRING_DIR/data.part}"
: "${PGRING_LOG:=$PGRING_DIR/log.part}"
: "${PGRING_DB:=$PGRING_DIR/db}"
# shellcheck source=fio-jobs/defaults.sh
source "$ROOT/fio-jobs/defaults.sh"
: "${PGRING_STATS:=$PGRING_DIR/$(basename "$JOB" .fio).report.json}"
if [[ -z "${PGRING_ENGINE:-}" ]]; then
  for so in "$ROOT"/build/default/tools/fio_engine/libfio_pgring.so \
            "$ROOT"/build/dev/tools/fio_engine/libfio_pgring.so \
            "$ROOT"/build/*/tools/fio_engine/libfio_pgring.so; do
    if [[ -f "$so" ]]; then PGRING_ENGINE=$so; break; fi
  done
fi
[[ -n "${PGRING_ENGINE:-}" ]] || { echo "run.sh: no libfio_pgring.so under build/: build the fio_pgring target or set PGRING_ENGINE" >&2; exit 1; }
export PGRING_DIR PGRING_DATA PGRING_LOG PGRING_DB PGRING_STATS PGRING_ENGINE

mkdir -p "$PGRING_DIR"
# The partitions, when they are files: written once with zeros. Not
# fallocate, and not fio's own layout (which fallocates the data file and
# leaves most of it "unwritten"): ext4 converts an unwritten extent on its
# first write, a metadata change, so every fdatasync that follows commits the
# journal — a cost a raw partition does not have. Fully written files are
# also what lets the ring backend share one flush between the data and the
# log (pgring_shared_flush=auto: tools/fio_engine/flush_domain.h).
# A file that is short, has holes (fewer bytes allocated than its size) or
# unwritten extents (filefrag says so) is written again, whole.
write_zeros() {  # PATH SIZE
  local path=$1 want have alloc unwritten
  [[ -b "$path" ]] && return 0
  want=$(numfmt --from=iec "$2")
  have=$(stat -c %s "$path" 2>/dev/null || echo 0)
  alloc=$(stat -c '%b * %B' "$path" 2>/dev/null || echo 0)
  alloc=$((alloc))
  # Count extent lines (they start with "N:") flagged unwritten; all of
  # filefrag's output is read (grep -q could stop early and its SIGPIPE
  # would fail the pipeline under pipefail).
  unwritten=$( (filefrag -v "$path" 2>/dev/null || true) |
               awk '$1 ~ /^[0-9]+:$/ && /unwritten/ {n++} END {print n+0}')
  if [[ "$have" -ge "$want" && "$alloc" -ge "$have" && "$unwritten" -eq 0 ]]; then
    return 0
  fi
  # The whole file (it may be larger than asked), in 4 KiB units for O_DIRECT.
  if [[ "$have" -gt "$want" ]]; then want=$have; fi
  want=$(( (want + 4095) / 4096 * 4096 ))
  echo "run.sh: writing $path ($want bytes of zeros)" >&2
  dd if=/dev/zero of="$path" bs=4M count="$want" iflag=count_bytes oflag=direct conv=notrunc \
    status=none
}
write_zeros "$PGRING_DATA" "$PGRING_SIZE"
write_zeros "$PGRING_LOG" "$PGRING_LOG_SIZE"

exec fio "$@" "$JOB"
