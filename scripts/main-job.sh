#!/usr/bin/env bash
# scripts/main-job.sh — the main job: 4 KiB random writes through an OSD-like
# write path, side by side, on file-backed partitions with an embedded RocksDB:
#   raw      fio's io_uring engine straight on the data partition (the device's limit)
#   ring     pgring's fio engine, PG logs in per-PG rings (pgring's point)
#   rocksdb  pgring's fio engine, PG logs in RocksDB the way BlueStore keeps them
# and prints one table: IOPS, p50/p99 completion latency, RocksDB bytes and keys
# written per client write, log bytes per payload byte, and the ratios.
#
# It installs what is missing (Debian packages), builds the engine, creates
# the partitions under the work directory, and can be run again.
#
# Environment (defaults):
#   PGRING_RUNTIME  seconds per job (60; the whole run is ~3x that plus setup)
#   PGRING_IODEPTH  writes in flight (32)
#   PGRING_PGS      placement groups (128)
#   PGRING_SIZE     data partition size (2G)     PGRING_LOG_SIZE  log partition size (2G)
#   PGRING_WORK     work directory (build/main-job-work)
#   PGRING_DATA / PGRING_LOG   use these (files or block devices) instead
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

: "${PGRING_RUNTIME:=60}"
: "${PGRING_IODEPTH:=32}"
: "${PGRING_PGS:=128}"
: "${PGRING_WORK:=$ROOT/build/main-job-work}"
export PGRING_RUNTIME PGRING_IODEPTH PGRING_PGS

bash scripts/install-deps.sh

BUILD=$ROOT/build/main-job
echo "main-job: building the fio engine (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPGRING_BUILD_TESTS=OFF -DPGRING_BUILD_BENCH=OFF -DPGRING_BUILD_TOOLS=OFF >/dev/null
cmake --build "$BUILD" --target fio_pgring -j "$(nproc)"
export PGRING_ENGINE=$BUILD/tools/fio_engine/libfio_pgring.so

mkdir -p "$PGRING_WORK"
export PGRING_DIR=$PGRING_WORK
for job in raw ring rocksdb; do
  echo "main-job: running $job for ${PGRING_RUNTIME}s (iodepth $PGRING_IODEPTH, $PGRING_PGS PGs)"
  PGRING_STATS=$PGRING_WORK/$job.report.json \
    bash fio-jobs/run.sh "fio-jobs/$job-randwrite.fio" \
      --output-format=json --output="$PGRING_WORK/$job.fio.json"
done

python3 - "$PGRING_WORK" <<'PY'
import json, os, sys
work = sys.argv[1]

def load(name):
    p = os.path.join(work, name)
    return json.load(open(p)) if os.path.exists(p) else None

rows = {}
for job in ("raw", "ring", "rocksdb"):
    fio = load(f"{job}.fio.json")
    w = fio["jobs"][0]["write"]
    pct = w["clat_ns"].get("percentile", {})
    row = {"iops": w["iops"],
           "p50": pct.get("50.000000", 0) / 1e6,
           "p99": pct.get("99.000000", 0) / 1e6}
    rep = load(f"{job}.report.json")
    if rep:
        run = rep["rocksdb"]["run"]
        row["rdb_bytes"] = run.get("bytes_written_per_write")
        row["rdb_keys"] = run.get("keys_written_per_write")
        if job == "ring":  # the RocksDB backend writes no log partition
            row["shared_why"] = rep.get("config", {}).get("shared_flush_why")
            row["shared"] = rep.get("config", {}).get("shared_flush")
            row["covers_why"] = rep.get("config", {}).get("sync_covers_why")
            row["covers"] = rep.get("config", {}).get("sync_covers")
            st = rep.get("store", {}).get("run", {})
            row["log_per_payload"] = st.get("record_bytes_per_payload_byte")
            row["dev_per_payload"] = st.get("device_bytes_per_payload_byte")
    rows[job] = row

def f(v, fmt):
    return "-" if v is None else format(v, fmt)

print()
print(f"4 KiB random writes, iodepth {os.environ['PGRING_IODEPTH']}, {os.environ['PGRING_PGS']} PGs, "
      f"{os.environ['PGRING_RUNTIME']} s each, durable group commit; work dir {work}")
print()
hdr = ("backend", "IOPS", "p50 ms", "p99 ms", "RocksDB B/write", "RocksDB keys/write",
       "log B/payload B (ring space)", "log B/payload B (device)")
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
for job, r in rows.items():
    print("| " + " | ".join([job, f(r["iops"], ".0f"), f(r["p50"], ".2f"), f(r["p99"], ".2f"),
                             f(r.get("rdb_bytes"), ".0f"), f(r.get("rdb_keys"), ".2f"),
                             f(r.get("log_per_payload"), ".3f"), f(r.get("dev_per_payload"), ".2f")]) + " |")
ring, rdb, raw = rows["ring"], rows["rocksdb"], rows["raw"]
def ratio(a, b):
    return "-" if not a or not b else f"{a / b:.2f}x"
print()
print("ratios (the brief's targets: IOPS >= 1.5x, p99 <= 0.5x, RocksDB bytes <= 0.10x, keys <= 0.20x)")
print(f"  ring / rocksdb: IOPS {ratio(ring['iops'], rdb['iops'])}, p99 {ratio(ring['p99'], rdb['p99'])}, "
      f"RocksDB bytes/write {ratio(ring.get('rdb_bytes'), rdb.get('rdb_bytes'))}, "
      f"keys/write {ratio(ring.get('rdb_keys'), rdb.get('rdb_keys'))}")
print(f"  ring / raw:     IOPS {ratio(ring['iops'], raw['iops'])}, p99 {ratio(ring['p99'], raw['p99'])}")
print(f"  rocksdb / raw:  IOPS {ratio(rdb['iops'], raw['iops'])}, p99 {ratio(rdb['p99'], raw['p99'])}")
if ring.get("shared_why"):
    print()
    print(("ring: one flush for data and log: " if ring.get("shared") else
           "ring: data and log flushed separately: ") + ring["shared_why"])
if ring.get("covers_why"):
    print(("ring: each group's RocksDB sync covers the next group's records: " if ring.get("covers")
           else "ring: a partition flush before every group's RocksDB write: ") + ring["covers_why"])
PY
