#!/usr/bin/env bash
# scripts/main-job.sh — the main job: 4 KiB random writes through an OSD-like
# write path, side by side, on file-backed partitions with an embedded RocksDB:
#   raw      fio's io_uring engine straight on the data partition (the device's limit)
#   floor    pgring's fio engine with no PG log (pgring_no_pg_log=1): the same
#            OSD write (data, onode, flushes, RocksDB sync), which no PG-log
#            backend can beat
#   ring     pgring's fio engine, PG logs in per-PG rings (pgring_layout=perpg)
#   stream   the same, the rings behind the log stream (pgring_layout=stream:
#            one stream write for every PG's records, rings in whole blocks)
#   rocksdb  pgring's fio engine, PG logs in RocksDB the way BlueStore keeps them
# and prints one table: IOPS, p50/p99 completion latency, and the counts a
# noisy machine cannot move: CPU time, context switches, log-partition writes and PG-log
# metadata bytes (log partition + RocksDB, less the floor's RocksDB bytes)
# per client write, RocksDB bytes and keys per client write, log bytes per
# payload byte; then the ratios against the project's targets, for both
# ring layouts.
#
# It installs what is missing (Debian packages), builds the engine, creates
# the partitions under the work directory, and can be run again.
#
# Environment (defaults: fio-jobs/defaults.sh, the same as fio-jobs/run.sh's
# and bench/report.sh's, but for the two set here, as said):
#   PGRING_RUNTIME  seconds per job (60, not 20: one run per backend, long
#                   enough to be steady; the whole run is ~5x that plus setup)
#   PGRING_IODEPTH  writes in flight (32, not 16: the brief's headline cell)
#   PGRING_PGS      placement groups (128)
#   PGRING_SIZE     data partition size (2G)     PGRING_LOG_SIZE  log partition size (2G)
#   PGRING_WORK     work directory (build/main-job-work)
#   PGRING_DATA / PGRING_LOG   use these (files or block devices) instead
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

: "${PGRING_RUNTIME:=60}"
: "${PGRING_IODEPTH:=32}"
# shellcheck source=fio-jobs/defaults.sh
source "$ROOT/fio-jobs/defaults.sh"
: "${PGRING_WORK:=$ROOT/build/main-job-work}"

bash scripts/install-deps.sh

BUILD=$ROOT/build/main-job
echo "main-job: building the fio engine (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPGRING_BUILD_TESTS=OFF -DPGRING_BUILD_BENCH=OFF -DPGRING_BUILD_TOOLS=OFF >/dev/null
cmake --build "$BUILD" --target fio_pgring -j "$(nproc)"
export PGRING_ENGINE=$BUILD/tools/fio_engine/libfio_pgring.so

mkdir -p "$PGRING_WORK"
export PGRING_DIR=$PGRING_WORK
for job in raw floor ring stream rocksdb; do
  echo "main-job: running $job for ${PGRING_RUNTIME}s (iodepth $PGRING_IODEPTH, $PGRING_PGS PGs)"
  # The floor is the ring job itself with its PG log switched off, and the
  # stream the ring job in the other layout, so they differ in nothing else.
  jobfile=fio-jobs/$job-randwrite.fio no_pg_log=0 layout=perpg
  case $job in
    floor) jobfile=fio-jobs/ring-randwrite.fio no_pg_log=1 ;;
    stream) jobfile=fio-jobs/ring-randwrite.fio layout=stream ;;
  esac
  PGRING_NO_PG_LOG=$no_pg_log PGRING_LAYOUT=$layout PGRING_STATS=$PGRING_WORK/$job.report.json \
    bash fio-jobs/run.sh "$jobfile" \
      --output-format=json --output="$PGRING_WORK/$job.fio.json"
done

python3 - "$PGRING_WORK" <<'PY'
import json, os, sys
work = sys.argv[1]
JOBS = ("raw", "floor", "ring", "stream", "rocksdb")

def load(name):
    p = os.path.join(work, name)
    return json.load(open(p)) if os.path.exists(p) else None

rows = {}
for job in JOBS:
    fio = load(f"{job}.fio.json")
    w = fio["jobs"][0]["write"]
    pct = w["clat_ns"].get("percentile", {})
    row = {"iops": w["iops"],
           "p50": pct.get("50.000000", 0) / 1e6,
           "p99": pct.get("99.000000", 0) / 1e6}
    rep = load(f"{job}.report.json")
    if rep:  # the engine's jobs (raw has no report)
        run = rep["rocksdb"]["run"]
        row["rdb_bytes"] = run.get("bytes_written_per_write")
        row["rdb_keys"] = run.get("keys_written_per_write")
        pw = rep.get("run", {}).get("per_write") or {}
        row["cpu_us"] = pw.get("cpu_us")
        row["ctx_sw"] = (pw.get("context_switches") or {}).get("total")
        row["log_writes"] = pw.get("log_partition_writes")
        row["log_bytes"] = pw.get("log_partition_bytes")
        row["meta_bytes"] = pw.get("metadata_bytes")
        if job in ("ring", "stream"):  # the RocksDB backend writes no log partition
            row["shared_why"] = rep.get("config", {}).get("shared_flush_why")
            row["shared"] = rep.get("config", {}).get("shared_flush")
            row["covers_why"] = rep.get("config", {}).get("sync_covers_why")
            row["covers"] = rep.get("config", {}).get("sync_covers")
            st = rep.get("store", {}).get("run", {})
            row["log_per_payload"] = st.get("record_bytes_per_payload_byte")
            row["dev_per_payload"] = st.get("device_bytes_per_payload_byte")
    rows[job] = row
raw, floor, ring, stream, rdb = (rows[j] for j in JOBS)
# The PG log's metadata: log partition plus RocksDB bytes per client write,
# less what the same write with no PG log puts in RocksDB (the onode, and the
# WAL's framing of it).
# Likewise its RocksDB keys: less the floor's (the onode's).
for r in (floor, ring, stream, rdb):
    if r.get("meta_bytes") is not None and floor.get("rdb_bytes") is not None:
        r["pg_log_meta"] = r["meta_bytes"] - floor["rdb_bytes"]
    if r.get("rdb_keys") is not None and floor.get("rdb_keys") is not None:
        r["pg_log_keys"] = r["rdb_keys"] - floor["rdb_keys"]

def f(v, fmt):
    return "-" if v is None else format(v, fmt)

print()
print(f"4 KiB random writes, iodepth {os.environ['PGRING_IODEPTH']}, {os.environ['PGRING_PGS']} PGs, "
      f"{os.environ['PGRING_RUNTIME']} s each, durable group commit; work dir {work}")
print()
hdr = ("backend", "IOPS", "p50 ms", "p99 ms", "CPU us/write", "context switches/write",
       "log-partition writes/write",
       "PG-log metadata B/write", "RocksDB B/write", "RocksDB keys/write",
       "log B/payload B (ring space)", "log B/payload B (device)")
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
for job, r in rows.items():
    print("| " + " | ".join([job, f(r["iops"], ".0f"), f(r["p50"], ".2f"), f(r["p99"], ".2f"),
                             f(r.get("cpu_us"), ".1f"), f(r.get("ctx_sw"), ".3f"),
                             f(r.get("log_writes"), ".3f"),
                             f(r.get("pg_log_meta"), ".0f"),
                             f(r.get("rdb_bytes"), ".0f"), f(r.get("rdb_keys"), ".2f"),
                             f(r.get("log_per_payload"), ".3f"), f(r.get("dev_per_payload"), ".2f")]) + " |")

# None when either side is missing or not positive: a figure less the
# floor's can come out negative in a short run, and is then no measurement.
def ratio(a, b):
    return None if a is None or b is None or a < 0 or b <= 0 else a / b

print()
print("Per client write: write requests to the log partition and PG-log metadata bytes (log")
print("partition + RocksDB, less the floor's RocksDB bytes per write), which a noisy machine hardly")
print("moves, and the fio process's CPU time and context switches (getrusage, setup excluded),")
print("which it moves in short runs too; docs/BENCHMARKS.md says what each counts.")
print()
print("targets (README, \"Results so far\"), this run:")
# (what, measured, op, limit): met when `measured op limit` holds.
def targets_of(r):
    return [
        ("/floor IOPS", ratio(r["iops"], floor["iops"]), ">=", 0.95),
        ("/floor p99", ratio(r["p99"], floor["p99"]), "<=", 1.10),
        ("/floor CPU per client write", ratio(r.get("cpu_us"), floor.get("cpu_us")), "<=", 1.10),
        (" log-partition writes per client write", r.get("log_writes"), "<=", 0.2),
        (" log-partition bytes per payload byte (device)", r.get("dev_per_payload"), "<=", 2.0),
        ("/rocksdb PG-log metadata bytes per client write",
         ratio(r.get("pg_log_meta"), rdb.get("pg_log_meta")), "<=", 1.0),
        ("/rocksdb pgring's own RocksDB keys per client write (less the floor's onode)",
         ratio(r.get("pg_log_keys"), rdb.get("pg_log_keys")), "<=", 0.20),
    ]
width = max(len(t[0]) for t in targets_of(ring))
print(f"  {'':<{width}}  {'ring (per-PG)':>20}  {'stream':>20}")
for (what, v, op, limit), (_, sv, _, _) in zip(targets_of(ring), targets_of(stream)):
    def cell(x):
        met = "-" if x is None else ("met" if (x >= limit if op == ">=" else x <= limit) else "NOT met")
        return f"{f(x, '.3f'):>7} {met:>7}"
    print(f"  {what:<{width}}  {cell(v):>20}  {cell(sv):>20}  (target {op} {limit:g})")
print("  (the targets take metadata bytes over a 600 s run, and IOPS and p99 as medians of alternating")
print("   rounds: bench/report.sh; one short run here)")
print()
print("other ratios, this run:")
print(f"  stream / ring:  IOPS {f(ratio(stream['iops'], ring['iops']), '.2f')}x, "
      f"p99 {f(ratio(stream['p99'], ring['p99']), '.2f')}x, "
      f"log writes/write {f(ratio(stream.get('log_writes'), ring.get('log_writes')), '.2f')}x, "
      f"PG-log metadata B/write {f(ratio(stream.get('pg_log_meta'), ring.get('pg_log_meta')), '.2f')}x, "
      f"CPU/write {f(ratio(stream.get('cpu_us'), ring.get('cpu_us')), '.2f')}x")
print(f"  stream / rocksdb: IOPS {f(ratio(stream['iops'], rdb['iops']), '.2f')}x, "
      f"p99 {f(ratio(stream['p99'], rdb['p99']), '.2f')}x, "
      f"CPU/write {f(ratio(stream.get('cpu_us'), rdb.get('cpu_us')), '.2f')}x")
print(f"  ring / rocksdb: IOPS {f(ratio(ring['iops'], rdb['iops']), '.2f')}x, "
      f"p99 {f(ratio(ring['p99'], rdb['p99']), '.2f')}x, "
      f"RocksDB bytes/write {f(ratio(ring.get('rdb_bytes'), rdb.get('rdb_bytes')), '.2f')}x, "
      f"RocksDB keys/write (onodes included) "
      f"{f(ratio(ring.get('rdb_keys'), rdb.get('rdb_keys')), '.2f')}x, "
      f"CPU/write {f(ratio(ring.get('cpu_us'), rdb.get('cpu_us')), '.2f')}x")
print(f"  floor / rocksdb: IOPS {f(ratio(floor['iops'], rdb['iops']), '.2f')}x, "
      f"p99 {f(ratio(floor['p99'], rdb['p99']), '.2f')}x")
print(f"  ring / raw:     IOPS {f(ratio(ring['iops'], raw['iops']), '.2f')}x, "
      f"p99 {f(ratio(ring['p99'], raw['p99']), '.2f')}x")
print(f"  rocksdb / raw:  IOPS {f(ratio(rdb['iops'], raw['iops']), '.2f')}x, "
      f"p99 {f(ratio(rdb['p99'], raw['p99']), '.2f')}x")
if ring.get("shared_why"):
    print()
    print(("ring: one flush for data and log: " if ring.get("shared") else
           "ring: data and log flushed separately: ") + ring["shared_why"])
if ring.get("covers_why"):
    print(("ring: each group's RocksDB sync covers the next group's records: " if ring.get("covers")
           else "ring: a partition flush before every group's RocksDB write: ") + ring["covers_why"])
PY
