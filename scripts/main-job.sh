#!/usr/bin/env bash
# scripts/main-job.sh — the main job: 4 KiB random writes through an OSD-like
# write path, side by side, on file-backed partitions with an embedded RocksDB:
#   raw      fio's io_uring engine straight on the data partition (the device's limit)
#   floor    pgring's fio engine with no PG log (pgring_no_pg_log=1): the same
#            OSD write (data, onode, flushes, RocksDB sync), which no PG-log
#            backend can beat
#   ring     pgring's fio engine, PG logs in per-PG rings (pgring_layout=perpg)
#   stream   the same, the rings behind the log stream (pgring_layout=stream,
#            the library's default: one stream write for every PG's records,
#            each record written once and kept there until its PG trims it)
#   rocksdb  pgring's fio engine, PG logs in RocksDB the way BlueStore keeps them
# and prints one table: IOPS, p50/p99 completion latency, and the counts a
# noisy machine cannot move: CPU time, context switches, system calls, log-partition writes and PG-log
# metadata bytes (log partition + RocksDB, less the floor's RocksDB bytes)
# per client write, RocksDB bytes and keys per client write, log bytes per
# payload byte; then per client write by thread (fio's job thread,
# pgring-commit, io:<device>, ...): CPU µs, voluntary and involuntary context
# switches and system calls (the engine's report: /proc/self/task, and a perf
# counter per thread on raw_syscalls:sys_enter; "-" and the reason where the
# kernel does not let it count them); with PGRING_DEVICES, each device's write
# requests, bytes and flushes per client write; then the ratios against the
# project's targets, for both ring layouts. Then it draws the first table as
# a chart, PGRING_WORK/main-job.svg, beside the jobs' JSON (IOPS, p50 and
# p99 per backend; CPU time and the PG log's bytes per client write: the
# log partition's and RocksDB's), with bench/plot.py's rule, as
# bench/report.sh draws its plots, and says where; the gnuplot script beside
# it (plot-main-job.gp) holds the data and draws it again.
# The engine's jobs write Ceph's encodings of the PG log entries, dups and
# infos (pgring_payload=ceph, PGRING_PAYLOAD), so the store the last job
# leaves in the work directory (the RocksDB backend's) shows them decoded in
# `pgring-tool log` (the script prints the command).
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
#   PGRING_PAYLOAD  what the PG log holds: ceph (Ceph's encodings) or random
#   PGRING_ENGINE   a libfio_pgring.so already built: run it, and install and
#                   build nothing (ctest main_job_smoke runs the default
#                   preset's this way; gnuplot, fio and python3 must be there)
#   PGRING_DATA / PGRING_LOG   use these (files or block devices) instead
#   PGRING_DEVICES  LAYOUT:SECTOR, e.g. separate:4096 or shared:512: run every
#                   job on loop devices with direct I/O instead of files
#                   (bench/loopdev.sh: separate = data, log and RocksDB's
#                   ext4 each on its own device; shared = data on one, log and
#                   RocksDB as two partitions of another; 512 or 4096-byte
#                   sectors), and add a table of each device's write
#                   requests, bytes and flushes per client write from
#                   /sys/class/block/*/stat beside the engine's own counts
#                   (the timed run only: the engine reads them after setup
#                   and at its final sync; raw, which has no setup: fio's
#                   whole run). Needs root: otherwise prints "SKIPPED: why"
#                   and exits 0. The backing files (data PGRING_SIZE, log
#                   PGRING_LOG_SIZE, RocksDB PGRING_DB_DEV_SIZE, 4G) stay in
#                   PGRING_WORK/loop for the next run; every loop device,
#                   node and mount is removed on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

: "${PGRING_RUNTIME:=60}"
: "${PGRING_IODEPTH:=32}"
# shellcheck source=fio-jobs/defaults.sh
source "$ROOT/fio-jobs/defaults.sh"
: "${PGRING_WORK:=$ROOT/build/main-job-work}"

DEVICES=${PGRING_DEVICES:-}
if [[ -n $DEVICES ]]; then
  [[ -z ${PGRING_DATA:-}${PGRING_LOG:-} ]] ||
    { echo "main-job: PGRING_DEVICES makes its own devices: unset PGRING_DATA and PGRING_LOG" >&2; exit 2; }
  # shellcheck source=bench/loopdev.sh
  source "$ROOT/bench/loopdev.sh"
  loopdev_parse "$DEVICES" || { echo "main-job: PGRING_DEVICES: $LOOPDEV_WHY" >&2; exit 2; }
  loopdev_usable || { echo "main-job: SKIPPED: PGRING_DEVICES=$DEVICES: $LOOPDEV_WHY"; exit 0; }
fi

# bench_plot (the chart) and bench_need.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
if [[ -n ${PGRING_ENGINE:-} ]]; then
  [[ -f $PGRING_ENGINE ]] || { echo "main-job: PGRING_ENGINE=$PGRING_ENGINE: no such file" >&2; exit 2; }
  echo "main-job: running the engine $PGRING_ENGINE (PGRING_ENGINE: nothing installed or built)"
else
  bash scripts/install-deps.sh
  BUILD=$ROOT/build/main-job
  echo "main-job: building the fio engine (Release) in $BUILD"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPGRING_BUILD_TESTS=OFF -DPGRING_BUILD_BENCH=OFF -DPGRING_BUILD_TOOLS=OFF >/dev/null
  cmake --build "$BUILD" --target fio_pgring -j "$(nproc)"
  export PGRING_ENGINE=$BUILD/tools/fio_engine/libfio_pgring.so
fi
bench_need fio fio
bench_need python3 python3
bench_need gnuplot gnuplot-nox

mkdir -p "$PGRING_WORK"
export PGRING_DIR=$PGRING_WORK
# No chart from an earlier run may pass for this one's.
rm -f "$PGRING_WORK/main-job.svg" "$PGRING_WORK/plot-main-job.gp"
DEVICE_LIST=""
if [[ -n $DEVICES ]]; then
  trap loopdev_cleanup EXIT
  loopdev_use "$LOOPDEV_LAYOUT" "$LOOPDEV_SECTOR" "$PGRING_WORK/loop" "${PGRING_DB_DEV_SIZE:-4G}" ||
    { echo "main-job: SKIPPED: PGRING_DEVICES=$DEVICES: $LOOPDEV_WHY"; exit 0; }
  DEVICE_LIST=$LOOPDEV_COUNTED
  echo "main-job: on loop devices, $DEVICES: data $PGRING_DATA, log $PGRING_LOG, RocksDB $PGRING_DB" \
       "(counted: $DEVICE_LIST)"
fi
for job in raw floor ring stream rocksdb; do
  echo "main-job: running $job for ${PGRING_RUNTIME}s (iodepth $PGRING_IODEPTH, $PGRING_PGS PGs)"
  # The floor is the ring job itself with its PG log switched off, and the
  # stream the ring job in the other layout, so they differ in nothing else.
  jobfile=fio-jobs/$job-randwrite.fio no_pg_log=0 layout=perpg
  case $job in
    floor) jobfile=fio-jobs/ring-randwrite.fio no_pg_log=1 ;;
    stream) jobfile=fio-jobs/ring-randwrite.fio layout=stream ;;
  esac
  # The devices' counts around the whole fio run too (the table uses them
  # for raw, which has no engine report; the engine's own cover only its
  # timed run).
  rm -f "$PGRING_WORK/$job.devstat."*
  [[ -z $DEVICES ]] || loopdev_snapshot "$PGRING_WORK/$job.devstat.before"
  PGRING_NO_PG_LOG=$no_pg_log PGRING_LAYOUT=$layout PGRING_STATS=$PGRING_WORK/$job.report.json \
    bash fio-jobs/run.sh "$jobfile" \
      --output-format=json --output="$PGRING_WORK/$job.fio.json"
  [[ -z $DEVICES ]] || loopdev_snapshot "$PGRING_WORK/$job.devstat.after"
done

python3 - "$ROOT" "$PGRING_WORK" "$DEVICES" "$DEVICE_LIST" <<'PY'
import json, os, sys
root, work, devices_spec, device_list = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
sys.path.insert(0, os.path.join(root, "bench"))
import plot
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
        cs = pw.get("context_switches") or {}
        row["ctx_sw"] = cs.get("total")
        row["ctx_vol"], row["ctx_invol"] = cs.get("voluntary"), cs.get("involuntary")
        row["syscalls"] = pw.get("syscalls")
        row["syscalls_why"] = (rep.get("run", {}).get("syscalls") or {}).get("why_not")
        row["threads"] = {
            "cpu": pw.get("cpu_us_by_thread") or {},
            "vol": pw.get("voluntary_switches_by_thread") or {},
            "invol": pw.get("involuntary_switches_by_thread") or {},
            "sys": pw.get("syscalls_by_thread")}
        row["committed"] = rep.get("writes", {}).get("committed")
        row["data_writes"] = pw.get("data_writes")
        row["rdb_writes"] = pw.get("rocksdb_writes")
        row["rdb_bytes_w"] = pw.get("rocksdb_bytes")
        df = rep.get("data_file") or {}
        n = row["committed"] or 0
        row["data_bytes"] = df.get("bytes_written", 0) / n if n else None
        st0 = rep.get("store", {}).get("run", {})
        rsync = rep.get("rocksdb", {}).get("run", {}).get("syncs")
        row["engine_flushes"] = ((df.get("flushes", 0) + st0.get("device_flushes", 0) + (rsync or 0)) / n
                                 if n else None)
        row["block_devices"] = (rep.get("block_devices") or {}).get("devices") or {}
        row["log_writes"] = pw.get("log_partition_writes")
        row["payload"] = rep.get("config", {}).get("pgring_payload")
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

# What the PG logs held, as the engine's reports say (the floor writes none).
payloads = sorted({r["payload"] for j, r in rows.items() if j != "floor" and r.get("payload")})
payload = "/".join(payloads) or "-"
setting = (f"4 KiB random writes, iodepth {os.environ['PGRING_IODEPTH']}, {os.environ['PGRING_PGS']} PGs, "
           f"{os.environ['PGRING_RUNTIME']} s each, durable group commit, payload {payload}")
print()
print(f"{setting}; work dir {work}")
print()
hdr = ("backend", "IOPS", "p50 ms", "p99 ms", "CPU us/write", "context switches/write",
       "syscalls/write", "log-partition writes/write",
       "PG-log metadata B/write", "RocksDB B/write", "RocksDB keys/write",
       "log B/payload B (ring space)", "log B/payload B (device)")
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
for job, r in rows.items():
    print("| " + " | ".join([job, f(r["iops"], ".0f"), f(r["p50"], ".2f"), f(r["p99"], ".2f"),
                             f(r.get("cpu_us"), ".1f"), f(r.get("ctx_sw"), ".3f"),
                             f(r.get("syscalls"), ".2f"), f(r.get("log_writes"), ".3f"),
                             f(r.get("pg_log_meta"), ".0f"),
                             f(r.get("rdb_bytes"), ".0f"), f(r.get("rdb_keys"), ".2f"),
                             f(r.get("log_per_payload"), ".3f"), f(r.get("dev_per_payload"), ".2f")]) + " |")

# Where each client write's CPU, waits and system calls go: per thread name
# (fio: the job thread, the OSD model and Store::Submit; pgring-commit: the
# RocksDB write and sync; io:<file>: a device's completions; rocksdb:*), and
# the process's totals (getrusage; the syscall counters' sum). Threads below
# 0.05 us, 0.005 switches and 0.005 syscalls per write in every column are
# summed as "other".
print()
print("Per client write, by thread: CPU us, voluntary (waits) and involuntary (preemptions) context")
print("switches (/proc/self/task), system calls (perf raw_syscalls:sys_enter per thread); the setup excluded:")
print()
print("| backend | thread | CPU us | voluntary cs | involuntary cs | syscalls |")
print("|---|---|---:|---:|---:|---:|")
why_not = set()
for job, r in rows.items():
    t = r.get("threads")
    if not t:
        continue
    sysc = t["sys"]
    if sysc is None and r.get("syscalls_why"):
        why_not.add(r["syscalls_why"])
    names = sorted(set(t["cpu"]) | set(t["vol"]) | set(t["invol"]) | set(sysc or {}),
                   key=lambda n: -(t["cpu"].get(n) or 0))
    other = [0.0, 0.0, 0.0, 0.0]
    for n in names:
        v = [t["cpu"].get(n, 0.0), t["vol"].get(n, 0.0), t["invol"].get(n, 0.0),
             (sysc or {}).get(n, 0.0)]
        if v[0] < 0.05 and v[1] < 0.005 and v[2] < 0.005 and v[3] < 0.005:
            other = [a + b for a, b in zip(other, v)]
            continue
        print(f"| {job} | {n} | {v[0]:.1f} | {v[1]:.3f} | {v[2]:.3f} | "
              f"{f(v[3] if sysc is not None else None, '.2f')} |")
    if any(other):
        print(f"| {job} | other | {other[0]:.1f} | {other[1]:.3f} | {other[2]:.3f} | "
              f"{f(other[3] if sysc is not None else None, '.2f')} |")
    print(f"| {job} | **process** | {f(r.get('cpu_us'), '.1f')} | {f(r.get('ctx_vol'), '.3f')} | "
          f"{f(r.get('ctx_invol'), '.3f')} | {f(r.get('syscalls'), '.2f')} |")
for w in sorted(why_not):
    print(f"(syscalls not counted: {w})")

# The devices, as /sys/class/block/*/stat counted them, beside the engine's
# own counts of what it asked of them.
if devices_spec:
    roles = [d.split(":", 1) for d in device_list]
    def devstat(job):
        """The script's before/after reading of the whole fio run."""
        def read(p):
            try:
                return {l.split()[1]: [int(x) for x in l.split()[2:5]] for l in open(p) if l.strip()}
            except (OSError, ValueError, IndexError):
                return None
        a = read(os.path.join(work, f"{job}.devstat.before"))
        b = read(os.path.join(work, f"{job}.devstat.after"))
        if not a or not b:
            return None
        return {d: [y - x for x, y in zip(a[d], b[d])] for d in b if d in a}
    print()
    print(f"Devices ({devices_spec}: " + ", ".join(f"{r} {d}" for r, d in roles) +
          "), per client write: write requests, bytes and flushes as /sys/class/block/*/stat counted them,")
    print("and in brackets what the engine asked for (data: its data writes and bytes; log: log-partition")
    print("writes and bytes; db: RocksDB's file appends and bytes, before ext4; flushes: data flushes +")
    print("partition flushes + RocksDB syncs). Engine jobs: the engine's reading, after setup (mkfs, PG")
    print("creation, prefill) to the final sync; raw: the whole fio run (it has no setup), per fio write.")
    print("Each flush is also counted as a 0-byte write request, so a device's requests exceed the")
    print("engine's by about its flushes. A partition counts no flushes: the shared layout's are its disk's.")
    print()
    whole = [d for r, d in roles if r != "log" and r != "db"] if any(r == "disk" for r, _ in roles) \
        else [d for _, d in roles]
    eng = {"data": ("data_writes", "data_bytes"), "log": ("log_writes", "log_bytes"),
           "db": ("rdb_writes", "rdb_bytes_w")}
    hdr = ["backend"]
    for r, d in roles:
        hdr += [f"{r} {d} requests", f"{r} {d} bytes"]
    hdr += ["flushes"]
    print("| " + " | ".join(hdr) + " |")
    print("|---|" + "---:|" * (len(hdr) - 1))
    for job, r in rows.items():
        bd = r.get("block_devices")
        if bd:
            per = {d: ((bd.get(d) or {}).get("per_write") or {}) for _, d in roles}
            per = {d: [p.get("write_requests"), p.get("bytes"), p.get("flushes")] for d, p in per.items()}
        else:
            ds = devstat(job)
            fio = load(f"{job}.fio.json")
            n = fio["jobs"][0]["write"].get("total_ios") if fio else None
            if not ds or not n:
                continue
            per = {d: [ds[d][0] / n, ds[d][1] * 512 / n, ds[d][2] / n] for _, d in roles if d in ds}
        cells = [job]
        for role, d in roles:
            v = per.get(d, [None, None, None])
            er, eb = (r.get(eng[role][0]), r.get(eng[role][1])) if role in eng and job != "raw" else (None, None)
            if role == "log" and job in ("floor", "rocksdb"):
                er = er if er is not None else 0.0  # no log partition writes to compare
            cells.append(f(v[0], ".3f") + (f" ({f(er, '.3f')})" if er is not None else ""))
            cells.append(f(v[1], ",.0f") + (f" ({f(eb, ',.0f')})" if eb is not None else ""))
        fl = [per.get(d, [None, None, None])[2] for d in whole]
        flv = None if any(x is None for x in fl) else sum(fl)
        cells.append(f(flv, ".3f") + (f" ({f(r.get('engine_flushes'), '.3f')})"
                                       if r.get("engine_flushes") is not None else ""))
        print("| " + " | ".join(cells) + " |")

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

# The chart of the first table (bench/plot.py's rule; the script draws it):
# IOPS, p50 and p99 per backend, and per client write the CPU time and the
# bytes the PG log writes (log partition and RocksDB, stacked; raw has no
# engine and so neither bar). A missing figure is NaN: no bar.
def cell(v):
    # Full precision: the labels round it once, as the table does (".6g"
    # first made 70097.46 a 70098 label beside the table's 70097).
    return "NaN" if v is None else repr(float(v))

NAMES = {"raw": "raw", "floor": "floor", "ring": "ring (per-PG)", "stream": "stream", "rocksdb": "rocksdb"}
data = []
for job, r in rows.items():
    engine = job != "raw"
    data.append([f'"{NAMES[job]}"', cell(r["iops"]), cell(r["p50"]), cell(r["p99"]), cell(r.get("cpu_us")),
                 cell((r.get("log_bytes") or 0) if engine else None),
                 cell(r.get("rdb_bytes") if engine else None),
                 cell((r.get("log_writes") or 0) if engine else None)])
value_labels = "with labels font ',10' offset 0,0.7 notitle"
plot.write_plot(work, "main-job", plot.series_block("t", data) + f"""set encoding utf8
set multiplot layout 2,2 title "main job: {setting}" font ',13'
unset grid
set grid ytics
set key inside right top
set style fill solid 0.75 border -1
set boxwidth 0.7
set xrange [-0.6:{len(data) - 0.4}]
set yrange [0:*]
set offsets 0, 0, graph 0.25, 0
set xtics nomirror scale 0
set title 'IOPS'
plot $t using 0:2:xtic(1) with boxes lc rgb '#4477aa' notitle, \\
     '' using 0:2:(sprintf('%.0f', $2)) {value_labels}
set title 'completion latency, ms'
plot $t using 0:4:xtic(1) with boxes lc rgb '#cc6677' title 'p99', \\
     '' using 0:3:(0.35) with boxes lc rgb '#ddcc77' title 'p50', \\
     '' using 0:4:(sprintf('%.2f', $4)) {value_labels}
set title 'CPU µs per client write (the fio process)'
plot $t using 0:5:xtic(1) with boxes lc rgb '#999933' notitle, \\
     '' using 0:5:(sprintf('%.1f', $5)) {value_labels}
set title 'bytes written per client write: log partition and RocksDB'
set key inside left top
plot $t using 0:($6 + $7):xtic(1) with boxes lc rgb '#117733' title 'log partition', \\
     '' using 0:7 with boxes lc rgb '#88ccee' title 'RocksDB (the onode too)', \\
     '' using 0:($6 + $7):($8 > 0 ? sprintf("%.0f B\\n%.2f log writes", $6 + $7, $8) \\
                              : sprintf("%.0f B", $6 + $7)) with labels font ',10' offset 0,1.6 notitle
unset multiplot
""", by="scripts/main-job.sh", size=(1100, 800))
PY
bench_plot "$PGRING_WORK/plot-main-job.gp" ||
  { echo "main-job: the chart was not drawn (above): $PGRING_WORK/plot-main-job.gp" >&2; exit 1; }
echo
echo "main-job: chart of the table: $PGRING_WORK/main-job.svg (data and gnuplot script: $PGRING_WORK/plot-main-job.gp)"
echo "main-job: the last job's store (the RocksDB backend's), its entries decoded:" \
     "build/default/tools/pgring-tool --dev ${PGRING_LOG:-$PGRING_WORK/log.part}" \
     "--db ${PGRING_DB:-$PGRING_WORK/db} log --pg 1.0 --max 3" \
     "(the tool: cmake --preset default && cmake --build build/default --target pgring-tool)"
