#!/usr/bin/env bash
# tests/fio/run_fio_test.sh — runs fio through the pgring engine on
# file-backed partitions in a scratch directory and checks the outcome.
#
# Usage:
#   run_fio_test.sh run BACKEND ENGINE_SO CHECKER WORK_DIR CXX SANITIZE
#   run_fio_test.sh enghelp ENGINE_SO CXX SANITIZE
#   run_fio_test.sh plain JOB_FILE ENGINE_SO CHECKER WORK_DIR CXX SANITIZE
#   run_fio_test.sh aliases ENGINE_SO WORK_DIR CXX SANITIZE
#
# run: two jobs (thread=1, so they share one store) write 4 KiB blocks at
#   random into their own data files with verify=crc32c (fio reads every
#   block back through the engine and checks it), on a fresh store (mkfs)
#   with 16 PGs and Ceph's trimming scaled down so the logs trim and make dups
#   many times; the engine checks every PG's log at the end
#   (pgring_verify_log=1). Then fio_store_check compares fio's JSON output,
#   the engine's report and the reopened store. A second fio run reopens the
#   store without mkfs and verifies the data again (verify_only=1).
#   Each job writes to a pool of its own (fio_store_check checks that each
#   pool took exactly its job's writes). BACKEND is ring, rocksdb,
#   ring-single (the ring with pgring_single_pool_mode=1: both jobs in pool
#   1), ring-shared (the ring with pgring_shared_flush=on) or floor (the ring with pgring_no_pg_log=1: the
#   OSD write with no PG log, which must write nothing to the log partition).
# plain: runs JOB_FILE (fio-jobs/ring-plain.fio) exactly as it is, with
#   /usr/bin/fio, no environment variables and no file made beforehand, from
#   WORK_DIR with the engine linked where the job file names it
#   (build/default/tools/fio_engine/): the engine must lay out the log
#   partition and the data file itself (pgring_preallocate=1, fully written,
#   no holes) and the run must pass fio_store_check; a second run finds them
#   laid out and writes no zeros.
# aliases: pairs of short runs, one job with pgring's option names and one
#   with Ceph's fio engine's (pglog_omap_len, pglog_dup_omap_len,
#   _fastinfo_omap_len, oi_attr_len, pglog_simulation, preallocate_files,
#   single_pool_mode),
#   away from the defaults (the first pair also sets the stream's byte sizes
#   with fio's size suffixes); the engine's reports must show the same
#   configuration, and the values asked for.
# enghelp: the engine loads with every symbol bound at once (LD_BIND_NOW=1,
#   so a fio function the engine needs but fio does not export fails here,
#   not in the middle of a run) and lists all of its options; the fio jobs'
#   default layout (fio-jobs/defaults.sh) is the engine's default.
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
             pgring_ack_file pgring_ack_check pgring_dup_size pgring_oi_attr_len \
             pgring_preallocate pgring_log_size pgring_no_pg_log pgring_layout \
             pgring_stream_chunks pgring_home_bytes pgring_resident_bytes pgring_force_home_percent pgring_stream_bypass pgring_shared_flush \
             pgring_sync_covers pglog_omap_len pglog_simulation pgring_single_pool_mode; do
    grep -q "^$opt *:" <<<"$out" || { echo "FAIL: option $opt not listed"; exit 1; }
  done
  # Ceph's fio engine's names: in the listing's help text, and fio finds the
  # option by its alias.
  for pair in pgring_fastinfo_size:_fastinfo_omap_len pgring_dup_size:pglog_dup_omap_len \
              pgring_oi_attr_len:oi_attr_len pgring_preallocate:preallocate_files \
              pgring_single_pool_mode:single_pool_mode; do
    opt=${pair%%:*} alias=${pair#*:}
    grep -q "^$opt *:.*alias: $alias" <<<"$out" || { echo "FAIL: $opt's help does not name $alias"; exit 1; }
    detail=$(LD_BIND_NOW=1 fio --enghelp="$ENGINE,$alias" 2>&1)
    grep -q "^ *$opt: " <<<"$detail" && grep -q "alias: $alias" <<<"$detail" \
      || { echo "$detail"; echo "FAIL: fio --enghelp=ENGINE,$alias does not show $opt"; exit 1; }
  done
  # One option in detail: its default and values.
  detail=$(LD_BIND_NOW=1 fio --enghelp="$ENGINE,pgring_durability" 2>&1)
  echo "$detail"
  grep -q "default: group" <<<"$detail" || { echo "FAIL: pgring_durability's default"; exit 1; }
  grep -q "unsynced" <<<"$detail" || { echo "FAIL: pgring_durability's values"; exit 1; }
  # The stream's sizes are bytes (fio's size suffixes), not blocks.
  detail=$(LD_BIND_NOW=1 fio --enghelp="$ENGINE,pgring_home_bytes" 2>&1)
  echo "$detail"
  # Its default is the library's: 0, records written once.
  grep -q "default: 0" <<<"$detail" || { echo "FAIL: pgring_home_bytes's default"; exit 1; }
  # The job files run the engine's (the library's) default layout:
  # fio-jobs/defaults.sh's PGRING_LAYOUT, as a caller that sets nothing gets it.
  detail=$(LD_BIND_NOW=1 fio --enghelp="$ENGINE,pgring_layout" 2>&1)
  engine_layout=$(sed -n 's/^ *default: //p' <<<"$detail")
  # (Without the sanitizer runtime: bash does not run under TSan's.)
  jobs_layout=$(env -u PGRING_LAYOUT -u LD_PRELOAD bash -c \
    'source "$1/../../fio-jobs/defaults.sh" && echo "$PGRING_LAYOUT"' _ "$(dirname "${BASH_SOURCE[0]}")")
  [[ -n $engine_layout && $jobs_layout == "$engine_layout" ]] || {
    echo "$detail"
    echo "FAIL: fio-jobs/defaults.sh runs PGRING_LAYOUT=$jobs_layout, the engine's default is '$engine_layout'"
    exit 1
  }
  echo "PASS"
  exit 0
fi

if [[ "$MODE" == "aliases" ]]; then
  ENGINE=$1 WORK=$2 CXX=$3 SANITIZE=${4:-}
  rm -rf "$WORK"
  mkdir -p "$WORK"
  # run_named NAME OPTION_LINES: one short job, its report in WORK/NAME.json.
  run_named() {
    local name=$1 lines=$2 rc=0
    mkdir -p "$WORK/$name"
    cat >"$WORK/$name/job.fio" <<EOF
[global]
ioengine=external:$ENGINE
pgring_log_dev=$WORK/$name/log.part
pgring_log_size=64M
pgring_db=$WORK/$name/db
pgring_mkfs=1
pgring_pgs=4
pgring_prefill=0
pgring_stats=$WORK/$name.json
$lines
thread=1
filename=$WORK/$name/data
size=4M
io_size=256k
bs=4k
rw=randwrite
iodepth=4
[job]
EOF
    sanitizer_env "$CXX" "$SANITIZE"
    fio --output="$WORK/$name/fio.out" "$WORK/$name/job.fio" || rc=$?
    unset LD_PRELOAD
    [[ $rc -eq 0 ]] || { cat "$WORK/$name/fio.out"; echo "FAIL: fio ($name) exited with $rc"; exit 1; }
  }
  run_named pgring-a $'pgring_entry_min=200\npgring_entry_max=300\npgring_dup_size=80\npgring_fastinfo_size=150\npgring_oi_attr_len=100\npgring_preallocate=1\npgring_single_pool_mode=1\npgring_home_bytes=16k\npgring_resident_bytes=128k'
  run_named ceph-a $'pglog_omap_len=200-300\npglog_dup_omap_len=80\n_fastinfo_omap_len=150\noi_attr_len=100\npreallocate_files=1\nsingle_pool_mode=1\npgring_home_bytes=16k\npgring_resident_bytes=128k'
  run_named pgring-b $'pgring_entry_min=220\npgring_entry_max=220\npgring_no_pg_log=1\npgring_preallocate=1'
  run_named ceph-b $'pglog_omap_len=220\npglog_simulation=0\npreallocate_files=1'
  python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
def config(name):
    c = json.load(open(f"{work}/{name}.json"))["config"]
    for path_key in ("pgring_log_dev", "pgring_db", "shared_flush_why", "sync_covers_why"):
        c.pop(path_key, None)
    return c
want = {
    "a": {"pgring_entry_min": 200, "pgring_entry_max": 300, "pgring_dup_size": 80,
          "pgring_fastinfo_size": 150, "pgring_oi_attr_len": 100, "pgring_preallocate": True,
          "pgring_no_pg_log": False, "pgring_single_pool_mode": True,
          # fio's size suffixes: bytes, not blocks.
          "pgring_home_bytes": 16384, "pgring_resident_bytes": 131072},
    "b": {"pgring_entry_min": 220, "pgring_entry_max": 220, "pgring_dup_size": 57,
          "pgring_no_pg_log": True},
}
bad = 0
for pair, values in want.items():
    mine, ceph = config(f"pgring-{pair}"), config(f"ceph-{pair}")
    for k in sorted(set(mine) | set(ceph)):
        if mine.get(k) != ceph.get(k):
            print(f"FAIL: pair {pair}: {k} is {mine.get(k)!r} with pgring's names, {ceph.get(k)!r} with Ceph's")
            bad += 1
    for k, v in values.items():
        if ceph.get(k) != v:
            print(f"FAIL: pair {pair}: {k} is {ceph.get(k)!r}, asked for {v!r}")
            bad += 1
sys.exit(1 if bad else 0)
PY
  echo "PASS"
  exit 0
fi

if [[ "$MODE" == "plain" ]]; then
  JOBFILE=$1 ENGINE=$2 CHECKER=$3 WORK=$4 CXX=$5 SANITIZE=${6:-}
  rm -rf "$WORK"
  mkdir -p "$WORK/build/default/tools/fio_engine"
  ln -s "$ENGINE" "$WORK/build/default/tools/fio_engine/libfio_pgring.so"
  FIO=/usr/bin/fio
  [[ -x $FIO ]] || { echo "no /usr/bin/fio: skipped"; exit 77; }
  # The partitions' size, from the job file itself.
  want=$(numfmt --from=iec "$(sed -n 's/^pgring_log_size=//p' "$JOBFILE")")
  for pass in 1 2; do
    echo "== plain fio on $JOBFILE, run $pass"
    sanitizer_env "$CXX" "$SANITIZE"
    rc=0
    (cd "$WORK" && env -u PGRING_ENGINE "$FIO" --output-format=json --output=fio.json "$JOBFILE") \
      2>"$WORK/fio.err" || rc=$?
    unset LD_PRELOAD
    cat "$WORK/fio.err" >&2
    [[ $rc -eq 0 ]] || { head -50 "$WORK/fio.json" || true; echo "FAIL: fio exited with $rc"; exit 1; }
    for f in log.part data.part; do
      path=$WORK/build/fio-plain/$f
      size=$(stat -c %s "$path") alloc=$(( $(stat -c '%b * %B' "$path") ))
      [[ $size -eq $want ]] || { echo "FAIL: $f is $size bytes, not $want"; exit 1; }
      [[ $alloc -ge $size ]] || { echo "FAIL: $f has holes ($alloc of $size bytes allocated)"; exit 1; }
    done
    zeroed=$(grep -c "bytes of zeros (pgring_preallocate)" "$WORK/fio.err" || true)
    if [[ $pass -eq 1 && $zeroed -ne 1 ]]; then
      echo "FAIL: the first run laid out $zeroed data file(s), not 1"; exit 1
    fi
    if [[ $pass -eq 2 && $zeroed -ne 0 ]]; then
      echo "FAIL: the second run wrote zeros again"; exit 1
    fi
    grep -q '"pgring_preallocate": true' "$WORK/build/fio-plain/report.json" \
      || { echo "FAIL: the report does not show pgring_preallocate"; exit 1; }
    "$CHECKER" --backend ring --log-dev "$WORK/build/fio-plain/log.part" --db "$WORK/build/fio-plain/db" \
      --report "$WORK/build/fio-plain/report.json" --fio-json "$WORK/fio.json"
  done
  echo "PASS"
  exit 0
fi

[[ "$MODE" == "run" ]] || { echo "usage: $0 run|plain|enghelp ..."; exit 2; }
BACKEND=$1 ENGINE=$2 CHECKER=$3 WORK=$4 CXX=$5 SANITIZE=${6:-}
# ring-shared: the ring backend with pgring_shared_flush=on, its partition and
# data files written with zeros first (what the shared flush requires); the
# engine must then never flush the data files itself.
SHARED_FLUSH=off NO_PG_LOG=0 SINGLE_POOL=0 CHECK_ARGS=()
if [[ "$BACKEND" == ring-single ]]; then
  BACKEND=ring SINGLE_POOL=1
elif [[ "$BACKEND" == ring-shared ]]; then
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
; 0: each of the two jobs writes to a pool of its own (1 and 2), as in
; Ceph's fio engine; 1: both to pool 1's PGs.
pgring_single_pool_mode=$SINGLE_POOL
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
