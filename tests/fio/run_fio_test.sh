#!/usr/bin/env bash
# tests/fio/run_fio_test.sh — runs fio through the pgring engine on
# file-backed partitions in a scratch directory and checks the outcome.
#
# Usage:
#   run_fio_test.sh run BACKEND ENGINE_SO CHECKER WORK_DIR CXX SANITIZE
#   run_fio_test.sh enghelp ENGINE_SO CXX SANITIZE
#
# run: two jobs (thread=1, so they share one store) write 4 KiB blocks at
#   random into their own data files with verify=crc32c (fio reads every
#   block back through the engine and checks it), on a fresh store (mkfs)
#   with 16 PGs and Ceph's trimming scaled down so the logs trim and make dups
#   many times; the engine checks every PG's log at the end
#   (pgring_verify_log=1). Then fio_store_check compares fio's JSON output,
#   the engine's report and the reopened store. A second fio run reopens the
#   store without mkfs and verifies the data again (verify_only=1).
#   BACKEND is ring, rocksdb, ring-shared (the ring with
#   pgring_shared_flush=on) or floor (the ring with pgring_no_pg_log=1: the
#   OSD write with no PG log, which must write nothing to the log partition).
# enghelp: the engine loads with every symbol bound at once (LD_BIND_NOW=1,
#   so a fio function the engine needs but fio does not export fails here,
#   not in the middle of a run) and lists all of its options.
#
# The engine is built with the tree's sanitizers; fio is not, so the sanitizer
# runtime is preloaded (ASan must come first) and leak checking is off for
# fio's own allocations. Exit status 77 (skipped) when fio is missing.
set -euo pipefail

MODE=$1
shift

command -v fio >/dev/null 2>&1 || { echo "fio not installed: skipped"; exit 77; }

# sanitizer_env CXX SANITIZE: LD_PRELOAD of the sanitizer runtime for fio.
# shellcheck source=tests/fio/fio_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/fio_env.sh"

if [[ "$MODE" == "enghelp" ]]; then
  ENGINE=$1 CXX=$2 SANITIZE=${3:-}
  sanitizer_env "$CXX" "$SANITIZE"
  # fio 3.33's --enghelp takes the engine's path as is (the "external:"
  # prefix is only understood by ioengine=).
  out=$(LD_BIND_NOW=1 fio --enghelp="$ENGINE" 2>&1) || { echo "$out"; echo "FAIL: fio --enghelp"; exit 1; }
  echo "$out"
  for opt in pgring_backend pgring_log_dev pgring_db pgring_mkfs pgring_chunk_size pgring_pgs \
             pgring_object_size pgring_onode_size pgring_entry_min pgring_entry_max \
             pgring_fastinfo_size pgring_info_size pgring_full_info_every pgring_prefill pgring_payload \
             osd_min_pg_log_entries osd_max_pg_log_entries osd_target_pg_log_entries_per_osd \
             osd_pg_log_dups_tracked osd_pg_log_trim_min osd_pg_log_trim_max pgring_durability \
             pgring_tail_policy pgring_io_engine pgring_stats pgring_verify_log \
             pgring_ack_file pgring_ack_check; do
    grep -q "^$opt *:" <<<"$out" || { echo "FAIL: option $opt not listed"; exit 1; }
  done
  # One option in detail: its default and values.
  detail=$(LD_BIND_NOW=1 fio --enghelp="$ENGINE,pgring_durability" 2>&1)
  echo "$detail"
  grep -q "default: group" <<<"$detail" || { echo "FAIL: pgring_durability's default"; exit 1; }
  grep -q "unsynced" <<<"$detail" || { echo "FAIL: pgring_durability's values"; exit 1; }
  echo "PASS"
  exit 0
fi

[[ "$MODE" == "run" ]] || { echo "usage: $0 run|enghelp ..."; exit 2; }
BACKEND=$1 ENGINE=$2 CHECKER=$3 WORK=$4 CXX=$5 SANITIZE=${6:-}
# ring-shared: the ring backend with pgring_shared_flush=on, its partition and
# data files written with zeros first (what the shared flush requires); the
# engine must then never flush the data files itself.
SHARED_FLUSH=off NO_PG_LOG=0 CHECK_ARGS=()
if [[ "$BACKEND" == ring-shared ]]; then
  BACKEND=ring SHARED_FLUSH=on
elif [[ "$BACKEND" == floor ]]; then
  BACKEND=ring NO_PG_LOG=1 CHECK_ARGS=(--floor)
fi

rm -rf "$WORK"
mkdir -p "$WORK"
if [[ "$SHARED_FLUSH" == on ]]; then
  dd if=/dev/zero of="$WORK/log.part" bs=1M count=256 status=none
  # fio's file names for job "osd" with numjobs=2: osd.<job>.<file>.
  for j in 0 1; do dd if=/dev/zero of="$WORK/osd.$j.0" bs=1M count=8 status=none; done
else
  # The log partition: a file of the partition's size (sparse is fine).
  truncate -s 256M "$WORK/log.part"
fi

cat >"$WORK/job.fio" <<EOF
; Written by tests/fio/run_fio_test.sh.
[global]
ioengine=external:$ENGINE
pgring_backend=$BACKEND
pgring_log_dev=$WORK/log.part
pgring_db=$WORK/db
pgring_mkfs=\${PGRING_MKFS}
pgring_pgs=16
pgring_object_size=64k
; Ceph's trim rules, scaled down: 480 / 16 PGs = 30 entries kept, trims of
; at least 10, 60 versions of dups.
osd_target_pg_log_entries_per_osd=480
osd_min_pg_log_entries=20
osd_max_pg_log_entries=40
osd_pg_log_trim_min=10
osd_pg_log_dups_tracked=60
pgring_stats=\${PGRING_STATS}
pgring_verify_log=1
pgring_shared_flush=$SHARED_FLUSH
pgring_no_pg_log=$NO_PG_LOG
thread=1
directory=$WORK
size=8M
bs=4k
direct=1
rw=randwrite
iodepth=8
verify=crc32c
verify_fatal=1
verify_only=\${VERIFY_ONLY}

[osd]
numjobs=2
EOF

sanitizer_env "$CXX" "$SANITIZE"

echo "== fio: write and verify ($BACKEND)"
rc=0
PGRING_MKFS=1 PGRING_STATS="$WORK/report.json" VERIFY_ONLY=0 \
  fio --output-format=json --output="$WORK/fio.json" "$WORK/job.fio" 2>"$WORK/fio.err" || rc=$?
cat "$WORK/fio.err" >&2
if [[ $rc -ne 0 ]]; then
  head -50 "$WORK/fio.json" 2>/dev/null || true
  # Files on tmpfs or overlay (no disk in sysfs, no FIEMAP) cannot prove it.
  if [[ "$SHARED_FLUSH" == on ]] && grep -q "pgring_shared_flush=on, but" "$WORK/fio.err"; then
    echo "SKIP: this file system cannot prove that one flush covers data and log: $(grep -o 'but one flush.*' "$WORK/fio.err" | head -1)"
    exit 77
  fi
  echo "FAIL: fio exited with $rc"
  exit 1
fi

unset LD_PRELOAD
if [[ "$SHARED_FLUSH" == on ]]; then
  echo "== the data writes shared the log's flush"
  python3 - "$WORK/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["shared_flush"] is True, r["config"]
flushes = r["data_file"]["flushes"]
assert flushes == 0, f"the engine flushed the data files {flushes} times"
print("shared:", r["config"]["shared_flush_why"])
PY
fi
echo "== fio_store_check"
"$CHECKER" --backend "$BACKEND" --log-dev "$WORK/log.part" --db "$WORK/db" \
  --report "$WORK/report.json" --fio-json "$WORK/fio.json" --verify-reads "${CHECK_ARGS[@]}"

sanitizer_env "$CXX" "$SANITIZE"
echo "== fio: reopen without mkfs and verify the data again"
rc=0
PGRING_MKFS=0 PGRING_STATS="$WORK/report2.json" VERIFY_ONLY=1 \
  fio --output-format=json --output="$WORK/fio2.json" "$WORK/job.fio" || rc=$?
if [[ $rc -ne 0 ]]; then
  head -50 "$WORK/fio2.json" 2>/dev/null || true
  echo "FAIL: the verify-only fio run exited with $rc"
  exit 1
fi
grep -q '"ok": true' "$WORK/report2.json" || { echo "FAIL: log check after reopening"; exit 1; }
grep -q "\"backend\": \"$BACKEND\"" "$WORK/report2.json" || { echo "FAIL: reopened backend"; exit 1; }

echo "PASS"
