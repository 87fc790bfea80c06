# shellcheck shell=bash
# fio-jobs/defaults.sh — the one set of defaults for the environment the fio
# jobs read (fio-jobs/*-randwrite.fio: fio itself has no defaults for
# ${VAR}). Sourced, not run, by fio-jobs/run.sh, scripts/main-job.sh and
# bench/report.sh; each sets a variable only if it is unset, so what the
# caller's environment (or the sourcing script, before it sources this) sets
# wins.
#
# Where the scripts differ from these, on purpose (each says so where it sets
# its own value):
#   scripts/main-job.sh  PGRING_RUNTIME=60, PGRING_IODEPTH=32: one run per
#                        backend at the brief's headline queue depth, long
#                        enough to be steady; its own PGRING_DIR
#                        (build/main-job-work).
#   bench/report.sh      PGRING_RUNTIME and PGRING_IODEPTH per mode and per
#                        cell of its matrix (it sweeps them);
#                        PGRING_LOG_SIZE=4G: its matrix has 1024 PGs,
#                        whose logs span at least ~1.6 GB of the log
#                        stream (3000 writes of each PG, dups included:
#                        docs/decisions/2026-11-28-write-once-plan.md),
#                        twice what the stream holds on 2G before forced
#                        homes start (at half its bound, three quarters of
#                        the partition); --smoke 256M for both
#                        partitions; its own PGRING_DIR (--work).
#   fio-jobs/ring-plain.fio  no environment at all: its values are in the
#                        file (small and short: it shows plain fio works).
# The ring job's layout is the library's default (LogLayout::kStream), as
# the engine's pgring_layout is; PGRING_LAYOUT=perpg runs the per-PG rings.
# The scripts call the per-PG layout "ring" and the stream "stream" and pass
# it explicitly (main-job.sh, bench/report.sh, bench/modes.sh,
# bench/blockdev.sh), so none of them relies on this one.
# The payload is Ceph's encodings (pgring_payload=ceph: what an OSD writes,
# which pgring-tool decodes and compression and byte counts are meaningful
# on); the engine's own default stays random (tools/fio_engine/README.md
# says why), so these jobs pass it: PGRING_PAYLOAD=random for filler bytes.

: "${PGRING_SIZE:=2G}"            # data partition file (a block device: used as it is)
: "${PGRING_LOG_SIZE:=2G}"        # log partition file
: "${PGRING_RUNTIME:=20}"         # seconds per fio run
: "${PGRING_IODEPTH:=16}"         # writes in flight
: "${PGRING_PGS:=128}"            # placement groups
: "${PGRING_SHARED_FLUSH:=auto}"  # ring job: one flush for data and log when provably safe
: "${PGRING_SYNC_COVERS:=auto}"   # ring job: a RocksDB sync covers the partition when provable
: "${PGRING_NO_PG_LOG:=0}"        # ring job: 1 is the floor (no PG log)
: "${PGRING_LAYOUT:=stream}"      # ring job: stream or perpg (see above)
: "${PGRING_PAYLOAD:=ceph}"       # ring and rocksdb jobs: ceph or random (see above)
export PGRING_SIZE PGRING_LOG_SIZE PGRING_RUNTIME PGRING_IODEPTH PGRING_PGS PGRING_SHARED_FLUSH \
       PGRING_SYNC_COVERS PGRING_NO_PG_LOG PGRING_LAYOUT PGRING_PAYLOAD
