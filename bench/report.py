#!/usr/bin/env python3
"""bench/report.py OUT — turns what bench/report.sh left in OUT/data into
OUT/report.md (Markdown tables, ratios from the same run), OUT/results.json
(every number in the tables) and OUT/plot-*.gp (gnuplot scripts with their
data inline, SVG terminal; report.sh runs them: OUT/*.svg).

Inputs (any may be missing; the tables then show "-"):
  settings.json                      what report.sh ran, and the machine
  data/fio-{raw-qdQ,ring-qdQ-pgsN,rocksdb-qdQ-pgsN}.fio.json   fio's JSON
  data/fio-{ring,rocksdb}-qdQ-pgsN.report.json                 pgring_stats
  data/tail-{rewrite,never}.report.json, data/long-{ring,rocksdb,floor}.*
  data/restart-{ring,rocksdb}-PxE.json, data/ring_space_bench.json
  data/roundR-{ring,rocksdb,floor,raw}.*   the headline cell, repeated
"""
import json
import os
import sys

OUT = sys.argv[1]
DATA = os.path.join(OUT, "data")


def load(name):
    path = os.path.join(DATA, name) if not os.path.isabs(name) else name
    try:
        text = open(path).read()
    except OSError:
        return None
    start = text.find("{")  # fio may print a line before its JSON
    try:
        return json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        return None


settings = json.load(open(os.path.join(OUT, "settings.json")))
QDS = [int(q) for q in settings["qds"]]
PGS = [int(p) for p in settings["pgs"]]


def get(d, *path, default=None):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def fio_run(prefix):
    """IOPS and latency from fio's JSON, and the engine's report if any."""
    fio = load(prefix + ".fio.json")
    if not fio or not fio.get("jobs"):
        return None
    w = fio["jobs"][0]["write"]
    pct = get(w, "clat_ns", "percentile", default={}) or {}
    r = {"iops": w["iops"], "writes": w.get("total_ios"),
         "clat_mean_ms": get(w, "clat_ns", "mean", default=0) / 1e6,
         "p50_ms": pct.get("50.000000", 0) / 1e6,
         "p99_ms": pct.get("99.000000", 0) / 1e6, "p999_ms": pct.get("99.900000", 0) / 1e6}
    try:
        r["loadavg1"] = float(open(os.path.join(DATA, prefix + ".loadavg")).read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rep = load(prefix + ".report.json")
    if rep:
        run = get(rep, "rocksdb", "run", default={})
        st = get(rep, "store", "run", default={})
        comp = run.get("compaction") or {}
        tick = run.get("tickers") or {}
        committed = get(rep, "writes", "committed", default=0) or 0
        by_kind = run.get("bytes_written", {})
        pw = get(rep, "run", "per_write") or {}
        r.update({
            # Per client write, counted over the run (setup excluded): work
            # done, which machine noise moves less than IOPS. meta = log partition + RocksDB bytes;
            # less the floor's RocksDB bytes per write it is the PG log's
            # metadata (pg_log_meta below).
            "cpu_us_per_write": pw.get("cpu_us"),
            "log_writes_per_write": pw.get("log_partition_writes"),
            "log_bytes_per_write": pw.get("log_partition_bytes"),
            "meta_bytes_per_write": pw.get("metadata_bytes"),
            "engine_iops": get(rep, "writes", "iops"),
            "committed": committed,
            "setup_seconds": rep.get("setup_seconds"),
            "rdb_bytes_per_write": run.get("bytes_written_per_write"),
            "rdb_keys_per_write": run.get("keys_written_per_write"),
            "rdb_wal_per_write": by_kind.get("wal", 0) / committed if committed else None,
            "rdb_sst_per_write": by_kind.get("sst", 0) / committed if committed else None,
            "rdb_syncs": run.get("syncs"),
            "compaction_seconds": comp.get("CompSec"),
            "compaction_count": comp.get("CompCount"),
            "compaction_write_gb": comp.get("WriteGB"),
            "compact_write_bytes": tick.get("rocksdb.compact.write.bytes", 0),
            "compact_read_bytes": tick.get("rocksdb.compact.read.bytes", 0),
            "flush_write_bytes": tick.get("rocksdb.flush.write.bytes", 0),
            "stall_micros": tick.get("rocksdb.stall.micros", 0),
            "log_per_payload": st.get("record_bytes_per_payload_byte"),
            "dev_per_payload": st.get("device_bytes_per_payload_byte"),
            "commit_groups": st.get("commit_groups"),
            "partition_flushes": st.get("device_flushes"),
            "data_flushes": get(rep, "data_file", "flushes"),
            "shared_flush": get(rep, "config", "shared_flush"),
            "sync_covers": get(rep, "config", "sync_covers"),
            "commit_mean_ms": (get(rep, "commit_latency_us", "mean", default=0) or 0) / 1e3,
            "mapping_table_bytes": get(rep, "store", "at_end", "mapping_table_bytes"),
            "live_items": (get(rep, "store", "at_end", "live_entries", default=0) or 0)
                          + (get(rep, "store", "at_end", "live_dups", default=0) or 0),
        })
    return r


results = {"settings": settings, "fio": {}, "tail": {}, "long": {}, "restart": {}, "space_bench": {}}
for q in QDS:
    results["fio"][f"raw-qd{q}"] = fio_run(f"fio-raw-qd{q}")
    results["fio"][f"rawflush-qd{q}"] = fio_run(f"fio-rawflush-qd{q}")
    results["fio"][f"floor-qd{q}"] = fio_run(f"fio-floor-qd{q}")
    for p in PGS:
        for b in ("ring", "rocksdb"):
            results["fio"][f"{b}-qd{q}-pgs{p}"] = fio_run(f"fio-{b}-qd{q}-pgs{p}")
ROUND_KINDS = ("ring", "rocksdb", "floor", "raw")
ROUNDS = int(settings.get("rounds", 0) or 0)
results["rounds"] = {k: [fio_run(f"round{r}-{k}") for r in range(1, ROUNDS + 1)] for k in ROUND_KINDS}
for pol in ("rewrite", "never"):
    results["tail"][pol] = fio_run(f"tail-{pol}")
for b in ("ring", "rocksdb"):
    results["long"][b] = fio_run(f"long-{b}")
    results["long"][f"{b}-own"] = fio_run(f"long-{b}-own")
results["long"]["floor"] = fio_run("long-floor")


def pg_log_meta(run, floor):
    """PG-log metadata bytes per client write: log partition + RocksDB bytes,
    less what the floor (the same write with no PG log) writes to RocksDB."""
    if not run or not floor or run.get("meta_bytes_per_write") is None \
            or floor.get("rdb_bytes_per_write") is None:
        return None
    return run["meta_bytes_per_write"] - floor["rdb_bytes_per_write"]


# The floor does not depend on the PG count (it writes no PG log): each run
# is set against the floor of its queue depth, the rounds against their own
# round's, the long runs against the long floor run.
for q in QDS:
    fl = results["fio"].get(f"floor-qd{q}")
    for key in [f"floor-qd{q}"] + [f"{b}-qd{q}-pgs{p}" for p in PGS for b in ("ring", "rocksdb")]:
        x = results["fio"].get(key)
        if x:
            x["pg_log_meta"] = pg_log_meta(x, fl)
for i in range(ROUNDS):
    for k in ("ring", "rocksdb", "floor"):
        x = results["rounds"][k][i]
        if x:
            x["pg_log_meta"] = pg_log_meta(x, results["rounds"]["floor"][i])
for k in ("ring", "rocksdb", "floor"):
    if results["long"].get(k):
        results["long"][k]["pg_log_meta"] = pg_log_meta(results["long"][k], results["long"]["floor"])
for size in settings["restart"]:
    for b in ("ring", "rocksdb"):
        results["restart"][f"{b}-{size}"] = load(f"restart-{b}-{size}.json")
gb = load("ring_space_bench.json")
for bm in (gb or {}).get("benchmarks", []):
    pol = "never" if "never_rewrite:1" in bm["name"] else "rewrite"
    results["space_bench"][pol] = {k: bm.get(k) for k in (
        "ring_bytes_per_payload", "device_bytes_per_payload", "mapping_bytes_per_entry", "writes")}


def F(v, fmt=".0f"):
    return "-" if v is None else format(v, fmt)


def ratio(a, b, fmt=".2f"):
    # None when a side is missing or not positive: a figure less the floor's
    # can come out negative in a short run, and is then no measurement.
    return None if a is None or b is None or a < 0 or b <= 0 else a / b


def R(a, b):
    r = ratio(a, b)
    return "-" if r is None else f"{r:.2f}x"


def fr(key):
    return results["fio"].get(key) or {}


md = []
s = settings
md.append("# pgring benchmark report\n")
md.append(f"- date: {s['date']}; command: `{s['command'].strip()}` (mode {s['mode']}); git {s['git']}")
md.append(f"- machine: {s['host']}, {s['cpus']} CPUs ({s['cpu'].strip()}), {s['mem']} RAM, kernel {s['kernel']}; "
          f"partitions are files on {s['fs']} ({s['work']}): data {s['data_size']}, log {s['log_size']}; {s['fio']}")
md.append(f"- fio: 4 KiB random writes as OSD writes, {s['runtime']} s per run, durable group commit "
          f"(pgring_durability=group), Ceph's defaults otherwise (fio-jobs/*-randwrite.fio). "
          f"raw = fio's io_uring engine on the data partition alone (no metadata, no flushes).")
loads = [r["loadavg1"] for group in (results["fio"], results["tail"], results["long"])
         for r in group.values() if r and "loadavg1" in r]
md.append("- latencies are fio's completion latency (clat); ratios are from this run."
          + (f" 1-minute load average at the end of the fio runs: {min(loads):.1f} to {max(loads):.1f} "
             f"on {s['cpus']} CPUs (other work on the machine skews the numbers)." if loads else ""))
md.append("")

# --- 1. IOPS and latency ---
md.append("## IOPS and latency (fio)\n")
hdr = ["qd", "PGs", "raw IOPS", "raw+flush IOPS", "ring IOPS", "rocksdb IOPS", "ring/rocksdb", "ring/raw",
       "ring/raw+flush", "p99 ms raw", "p99 ms ring", "p99 ms rocksdb", "p99 ring/rocksdb", "p50 ms ring", "p50 ms rocksdb"]
md.append("| " + " | ".join(hdr) + " |")
md.append("|" + "|".join("---:" for _ in hdr) + "|")
for q in QDS:
    raw = fr(f"raw-qd{q}")
    rawf = fr(f"rawflush-qd{q}")
    for p in PGS:
        ri, rd = fr(f"ring-qd{q}-pgs{p}"), fr(f"rocksdb-qd{q}-pgs{p}")
        md.append("| " + " | ".join([
            str(q), str(p), F(raw.get("iops")), F(rawf.get("iops")), F(ri.get("iops")), F(rd.get("iops")),
            R(ri.get("iops"), rd.get("iops")), R(ri.get("iops"), raw.get("iops")),
            R(ri.get("iops"), rawf.get("iops")),
            F(raw.get("p99_ms"), ".2f"), F(ri.get("p99_ms"), ".2f"), F(rd.get("p99_ms"), ".2f"),
            R(ri.get("p99_ms"), rd.get("p99_ms")), F(ri.get("p50_ms"), ".2f"), F(rd.get("p50_ms"), ".2f")]) + " |")
md.append("\nraw does not depend on the PG count: one raw run per queue depth, repeated on each row. "
          "raw+flush is the same job with an fdatasync after every qd writes: what the device gives "
          "when writes must be made durable in groups, the ceiling for any durable commit path "
          "(rocksdb flushes the data file and then syncs RocksDB's WAL, once per group; ring does "
          "the same, except that with data and log on one disk (pgring_shared_flush=auto, the "
          "default) its one log-partition flush also covers the data writes, and with RocksDB on "
          "the same disk (pgring_sync_covers=auto, the default) the previous group's RocksDB sync "
          "stands in for that flush in most groups). All three jobs reap and submit in batches "
          "(iodepth_batch_submit=0, iodepth_batch_complete_max=qd).\n")

# --- the floor: the same OSD write with no PG log at all ---
floor_rows = []
floor_pgs = 128 if 128 in PGS else PGS[-1]  # the rows the floor is set against
for q in QDS:
    fl, ri, rd = fr(f"floor-qd{q}"), fr(f"ring-qd{q}-pgs{floor_pgs}"), fr(f"rocksdb-qd{q}-pgs{floor_pgs}")
    if not fl.get("iops"):
        continue
    floor_rows.append("| " + " | ".join([
        str(q), F(fl.get("iops")), F(ri.get("iops")), F(rd.get("iops")), R(fl.get("iops"), rd.get("iops")),
        R(ri.get("iops"), fl.get("iops")), R(rd.get("iops"), fl.get("iops")),
        F(fl.get("p99_ms"), ".2f"), R(fl.get("p99_ms"), rd.get("p99_ms")), R(ri.get("p99_ms"), fl.get("p99_ms")),
        F(fl.get("cpu_us_per_write"), ".1f"), R(ri.get("cpu_us_per_write"), fl.get("cpu_us_per_write")),
        R(rd.get("cpu_us_per_write"), fl.get("cpu_us_per_write"))]) + " |")
if floor_rows:
    md.append("## The floor: an OSD write with no PG log (fio)\n")
    md.append("The ring job with `pgring_no_pg_log=1`: each write commits only its onode, with the same "
              "data write, the same flush (shared with the log partition, as the ring does) and the same "
              f"synced RocksDB write as a real OSD write; ring and rocksdb at {floor_pgs} PGs. No PG "
              "log backend can be faster than "
              "this on this machine: floor/rocksdb is the most any backend can gain over the RocksDB "
              "backend here, and ring/floor what the ring's log costs. CPU: the fio process's user + "
              "system time per client write over the run (getrusage; setup excluded).\n")
    hdr = ["qd", "floor IOPS", "ring IOPS", "rocksdb IOPS", "floor/rocksdb", "ring/floor", "rocksdb/floor",
           "p99 ms floor", "p99 floor/rocksdb", "p99 ring/floor", "CPU us/write floor", "CPU ring/floor",
           "CPU rocksdb/floor"]
    md.append("| " + " | ".join(hdr) + " |")
    md.append("|" + "|".join("---:" for _ in hdr) + "|")
    md.extend(floor_rows)
    md.append("")

# --- the headline cell, repeated in alternating rounds ---
def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def paired(num_kind, den_kind, field):
    """Per-round ratios num/den of `field`, for the rounds that have both."""
    out = []
    for a, b in zip(results["rounds"]["ring" if num_kind == "ring" else num_kind],
                    results["rounds"][den_kind]):
        if a and b and a.get(field) and b.get(field):
            out.append(a[field] / b[field])
    return out


ROUND_RATIOS = {  # name: (numerator, denominator, field)
    "ring/rocksdb IOPS": ("ring", "rocksdb", "iops"),
    "p99 ring/rocksdb": ("ring", "rocksdb", "p99_ms"),
    "floor/rocksdb IOPS": ("floor", "rocksdb", "iops"),
    "p99 floor/rocksdb": ("floor", "rocksdb", "p99_ms"),
    "ring/floor IOPS": ("ring", "floor", "iops"),
    "ring/raw IOPS": ("ring", "raw", "iops"),
    "p99 ring/floor": ("ring", "floor", "p99_ms"),
    "CPU ring/floor": ("ring", "floor", "cpu_us_per_write"),
    "CPU rocksdb/floor": ("rocksdb", "floor", "cpu_us_per_write"),
    "PG-log metadata ring/rocksdb": ("ring", "rocksdb", "pg_log_meta"),
    "keys ring/rocksdb": ("ring", "rocksdb", "rdb_keys_per_write"),
}
round_summary = {name: {"per_round": paired(*spec), "median": median(paired(*spec))}
                 for name, spec in ROUND_RATIOS.items()}
ROUND_COUNTS = {  # name: field, medians per kind of the engine's runs
    "CPU us/write": "cpu_us_per_write",
    "log-partition writes/write": "log_writes_per_write",
    "log-partition B/write": "log_bytes_per_write",
    "PG-log metadata B/write": "pg_log_meta",
    "keys/write": "rdb_keys_per_write",
}
for k in ROUND_KINDS:
    round_summary[f"{k} IOPS"] = {"median": median([(r or {}).get("iops") for r in results["rounds"][k]])}
    round_summary[f"{k} p99 ms"] = {"median": median([(r or {}).get("p99_ms") for r in results["rounds"][k]])}
    if k != "raw":
        for name, field in ROUND_COUNTS.items():
            round_summary[f"{k} {name}"] = {"median": median([(r or {}).get(field) for r in results["rounds"][k]])}
results["round_summary"] = round_summary
complete_rounds = len(round_summary["ring/rocksdb IOPS"]["per_round"])
if ROUNDS:
    rq, rp = settings.get("round_qd"), settings.get("round_pgs")
    md.append(f"## The headline cell, repeated: qd {rq}, {rp} PGs, {ROUNDS} alternating rounds (fio)\n")
    md.append("Each round runs ring, rocksdb, the floor and raw back to back, in an order that rotates "
              "from round to round. Ratios are taken within a round (the runs minutes apart, under the "
              "same load), then the median across rounds: the figure the IOPS and p99 targets use when "
              "there are 3 rounds or more.\n")
    hdr = ["round", "ring IOPS", "rocksdb IOPS", "floor IOPS", "raw IOPS", "ring/rocksdb", "floor/rocksdb",
           "ring/floor", "ring/raw", "p99 ms ring", "p99 ms rocksdb", "p99 ms floor", "p99 ring/rocksdb",
           "p99 floor/rocksdb"]
    md.append("| " + " | ".join(hdr) + " |")
    md.append("|" + "|".join("---:" for _ in hdr) + "|")
    for i in range(ROUNDS):
        g = {k: results["rounds"][k][i] or {} for k in ROUND_KINDS}
        md.append("| " + " | ".join([
            str(i + 1), F(g["ring"].get("iops")), F(g["rocksdb"].get("iops")), F(g["floor"].get("iops")),
            F(g["raw"].get("iops")), R(g["ring"].get("iops"), g["rocksdb"].get("iops")),
            R(g["floor"].get("iops"), g["rocksdb"].get("iops")), R(g["ring"].get("iops"), g["floor"].get("iops")),
            R(g["ring"].get("iops"), g["raw"].get("iops")), F(g["ring"].get("p99_ms"), ".2f"),
            F(g["rocksdb"].get("p99_ms"), ".2f"), F(g["floor"].get("p99_ms"), ".2f"),
            R(g["ring"].get("p99_ms"), g["rocksdb"].get("p99_ms")),
            R(g["floor"].get("p99_ms"), g["rocksdb"].get("p99_ms"))]) + " |")

    def M(name, fmt):
        v = round_summary[name]["median"]
        return "-" if v is None else format(v, fmt) + ("x" if name in ROUND_RATIOS else "")
    md.append("| **median** | " + " | ".join([
        M("ring IOPS", ".0f"), M("rocksdb IOPS", ".0f"), M("floor IOPS", ".0f"), M("raw IOPS", ".0f"),
        M("ring/rocksdb IOPS", ".2f"), M("floor/rocksdb IOPS", ".2f"), M("ring/floor IOPS", ".2f"),
        M("ring/raw IOPS", ".2f"), M("ring p99 ms", ".2f"), M("rocksdb p99 ms", ".2f"), M("floor p99 ms", ".2f"),
        M("p99 ring/rocksdb", ".2f"), M("p99 floor/rocksdb", ".2f")]) + " |")
    md.append("")
    md.append("The same rounds in counts per client write: CPU "
              "time of the fio process (user + system, getrusage, setup excluded), write requests to the "
              "log partition and their bytes, PG-log metadata bytes (log partition + RocksDB, less the "
              "round's floor's RocksDB bytes per write) and RocksDB keys. The machine's load hardly "
              "moves the writes, bytes and keys; it moves the CPU time, hence the ratios within a round.\n")
    hdr = ["round", "CPU us/write ring", "CPU us/write rocksdb", "CPU us/write floor", "CPU ring/floor",
           "CPU rocksdb/floor", "log-partition writes/write ring", "log-partition B/write ring",
           "PG-log metadata B/write ring", "PG-log metadata B/write rocksdb", "PG-log metadata ring/rocksdb",
           "keys ring/rocksdb"]
    md.append("| " + " | ".join(hdr) + " |")
    md.append("|" + "|".join("---:" for _ in hdr) + "|")
    for i in range(ROUNDS):
        g = {k: results["rounds"][k][i] or {} for k in ROUND_KINDS}
        md.append("| " + " | ".join([
            str(i + 1), F(g["ring"].get("cpu_us_per_write"), ".1f"), F(g["rocksdb"].get("cpu_us_per_write"), ".1f"),
            F(g["floor"].get("cpu_us_per_write"), ".1f"),
            R(g["ring"].get("cpu_us_per_write"), g["floor"].get("cpu_us_per_write")),
            R(g["rocksdb"].get("cpu_us_per_write"), g["floor"].get("cpu_us_per_write")),
            F(g["ring"].get("log_writes_per_write"), ".3f"), F(g["ring"].get("log_bytes_per_write"), ".0f"),
            F(g["ring"].get("pg_log_meta"), ".0f"), F(g["rocksdb"].get("pg_log_meta"), ".0f"),
            R(g["ring"].get("pg_log_meta"), g["rocksdb"].get("pg_log_meta")),
            R(g["ring"].get("rdb_keys_per_write"), g["rocksdb"].get("rdb_keys_per_write"))]) + " |")
    md.append("| **median** | " + " | ".join([
        M("ring CPU us/write", ".1f"), M("rocksdb CPU us/write", ".1f"), M("floor CPU us/write", ".1f"),
        M("CPU ring/floor", ".2f"), M("CPU rocksdb/floor", ".2f"), M("ring log-partition writes/write", ".3f"),
        M("ring log-partition B/write", ".0f"), M("ring PG-log metadata B/write", ".0f"),
        M("rocksdb PG-log metadata B/write", ".0f"), M("PG-log metadata ring/rocksdb", ".2f"),
        M("keys ring/rocksdb", ".2f")]) + " |")
    md.append("")

# --- the commit path: flushes per write, group sizes, where the latency is ---
md.append("## The commit path (fio matrix)\n")
md.append("Device flushes per client write by kind (the data file's fdatasync, the log partition's "
          "fdatasync, RocksDB's synced WAL write), client writes per commit group, and the mean "
          "latency inside the store (engine: from the write's submission to its commit callback) "
          "against fio's mean completion latency; the difference is time in fio's own thread "
          "(issuing the other writes of the queue, reaping). \"ring (shared)\": the log partition's "
          "flush also made the data writes durable (pgring_shared_flush), so the engine flushed "
          "no data file; \"covers\": each group's RocksDB sync also made the next group's "
          "records durable (pgring_sync_covers), so most groups made no partition flush.\n")
hdr = ["qd", "PGs", "backend", "writes/group", "data flushes/write", "partition flushes/write",
       "WAL syncs/write", "flushes/write", "commit mean ms", "fio clat mean ms"]
md.append("| " + " | ".join(hdr) + " |")
md.append("|" + "|".join("---:" for _ in hdr) + "|")
for q in QDS:
    for p in PGS:
        for b in ("ring", "rocksdb"):
            x = fr(f"{b}-qd{q}-pgs{p}")
            n = x.get("writes")
            if not n or x.get("commit_groups") is None:
                continue
            d, pf, wal = x.get("data_flushes") or 0, x.get("partition_flushes") or 0, x.get("rdb_syncs") or 0
            md.append("| " + " | ".join([
                str(q), str(p), b + (" (shared)" if x.get("shared_flush") else "")
                + (" (covers)" if x.get("sync_covers") else ""),
                F(n / max(x["commit_groups"], 1), ".1f"), F(d / n, ".3f"),
                F(pf / n, ".3f"), F(wal / n, ".3f"), F((d + pf + wal) / n, ".3f"),
                F(x.get("commit_mean_ms"), ".2f"), F(x.get("clat_mean_ms"), ".2f")]) + " |")
md.append("")

# --- counts per client write, in the matrix ---
md.append("## CPU time, log-partition writes and PG-log metadata per client write (fio matrix)\n")
md.append("Counts over each run (setup excluded), divided by the client writes it committed: work "
          "done, which a busy machine moves less than IOPS (the writes and bytes hardly at all, the "
          "CPU time more). CPU: the fio process's user + system time "
          "(getrusage), fio's own threads included, the same in every job. Log-partition writes: "
          "write requests the store made to the log partition (StoreStats::device_writes). PG-log "
          "metadata: log-partition bytes plus RocksDB bytes, less the floor's RocksDB bytes per write at "
          "the same queue depth (what the same write with no PG log puts in RocksDB).\n")
hdr = ["qd", "PGs", "CPU us/write ring", "CPU us/write rocksdb", "CPU us/write floor", "CPU ring/floor",
       "log-partition writes/write ring", "log-partition B/write ring", "PG-log metadata B/write ring",
       "PG-log metadata B/write rocksdb", "ring/rocksdb"]
md.append("| " + " | ".join(hdr) + " |")
md.append("|" + "|".join("---:" for _ in hdr) + "|")
for q in QDS:
    fl = fr(f"floor-qd{q}")
    for p in PGS:
        ri, rd = fr(f"ring-qd{q}-pgs{p}"), fr(f"rocksdb-qd{q}-pgs{p}")
        md.append("| " + " | ".join([
            str(q), str(p), F(ri.get("cpu_us_per_write"), ".1f"), F(rd.get("cpu_us_per_write"), ".1f"),
            F(fl.get("cpu_us_per_write"), ".1f"), R(ri.get("cpu_us_per_write"), fl.get("cpu_us_per_write")),
            F(ri.get("log_writes_per_write"), ".3f"), F(ri.get("log_bytes_per_write"), ".0f"),
            F(ri.get("pg_log_meta"), ".0f"), F(rd.get("pg_log_meta"), ".0f"),
            R(ri.get("pg_log_meta"), rd.get("pg_log_meta"))]) + " |")
md.append("")

# --- RocksDB traffic per write, in the matrix ---
md.append("## RocksDB writes per client write, and log bytes per payload byte (fio matrix)\n")
hdr = ["qd", "PGs", "RocksDB B/write ring", "RocksDB B/write rocksdb", "ring/rocksdb",
       "keys/write ring", "keys/write rocksdb", "ring/rocksdb", "log B/payload B (ring space)",
       "device B/payload B (ring)"]
md.append("| " + " | ".join(hdr) + " |")
md.append("|" + "|".join("---:" for _ in hdr) + "|")
for q in QDS:
    for p in PGS:
        ri, rd = fr(f"ring-qd{q}-pgs{p}"), fr(f"rocksdb-qd{q}-pgs{p}")
        md.append("| " + " | ".join([
            str(q), str(p), F(ri.get("rdb_bytes_per_write")), F(rd.get("rdb_bytes_per_write")),
            R(ri.get("rdb_bytes_per_write"), rd.get("rdb_bytes_per_write")),
            F(ri.get("rdb_keys_per_write"), ".2f"), F(rd.get("rdb_keys_per_write"), ".2f"),
            R(ri.get("rdb_keys_per_write"), rd.get("rdb_keys_per_write")),
            F(ri.get("log_per_payload"), ".3f"), F(ri.get("dev_per_payload"), ".2f")]) + " |")
md.append("\nShort runs: RocksDB's bytes here are mostly WAL (few memtable flushes and compactions "
          "happen in a run this short); the long run below includes them.\n")

# --- 2. tail policies ---
md.append("## Log bytes per payload byte, both tail-block policies\n")
hdr = ["tail-block policy", "ring space / payload (fio, 128 PGs, qd 32)", "device bytes / payload (fio)",
       "ring IOPS (fio)", "ring space / payload (ring_space_bench)", "device bytes / payload (ring_space_bench)",
       "mapping table B/entry (ring_space_bench)"]
md.append("| " + " | ".join(hdr) + " |")
md.append("|" + "|".join(["---"] + ["---:"] * (len(hdr) - 1)) + "|")
for pol, label in (("rewrite", "`rewrite` (default)"), ("never", "`never`")):
    t = results["tail"].get(pol) or {}
    g = results["space_bench"].get(pol) or {}
    md.append("| " + " | ".join([label, F(t.get("log_per_payload"), ".3f"), F(t.get("dev_per_payload"), ".2f"),
                                  F(t.get("iops")), F(g.get("ring_bytes_per_payload"), ".3f"),
                                  F(g.get("device_bytes_per_payload"), ".2f"),
                                  F(g.get("mapping_bytes_per_entry"), ".1f")]) + " |")
md.append("\nfio: the engine's report (store.run: record bytes appended and partition bytes written per "
          "payload byte over the run). ring_space_bench: 400,000 OSD-like writes on an in-memory device "
          "(the format alone; a full info every 16th write).\n")

# --- 3. long run ---
L = results["long"]
lr, ld = L.get("ring") or {}, L.get("rocksdb") or {}
lro, ldo = L.get("ring-own") or {}, L.get("rocksdb-own") or {}
md.append(f"## RocksDB writes and compaction over a long run ({s['long_runtime']} s, {s['long_pgs']} PGs, qd 32)\n")
rows = [("IOPS", "iops", ".0f"), ("p99 ms", "p99_ms", ".2f"),
        ("RocksDB bytes written / client write", "rdb_bytes_per_write", ".0f"),
        ("  of which WAL", "rdb_wal_per_write", ".0f"), ("  of which SST (flush + compaction)", "rdb_sst_per_write", ".0f"),
        ("RocksDB keys written / client write", "rdb_keys_per_write", ".2f"),
        ("flush + compaction seconds (CompSec)", "compaction_seconds", ".1f"),
        ("flushes + compactions (CompCount)", "compaction_count", ".0f"),
        ("memtable flush bytes written (MB)", "flush_write_mb", ".1f"),
        ("compaction bytes written (MB)", "compact_write_mb", ".1f"),
        ("compaction bytes read (MB)", "compact_read_mb", ".1f"),
        ("write stall seconds", "stall_s", ".2f"),
        ("CPU us / client write", "cpu_us_per_write", ".1f"),
        ("log-partition writes / client write", "log_writes_per_write", ".3f"),
        ("PG-log metadata bytes / client write (with onodes: less the long floor run's RocksDB bytes)",
         "pg_log_meta", ".0f"),
        ("client writes committed", "committed", ".0f")]
for d in (lr, ld, lro, ldo):
    if d:
        d["compact_write_mb"] = (d.get("compact_write_bytes") or 0) / 1e6
        d["flush_write_mb"] = (d.get("flush_write_bytes") or 0) / 1e6
        d["compact_read_mb"] = (d.get("compact_read_bytes") or 0) / 1e6
        d["stall_s"] = (d.get("stall_micros") or 0) / 1e6
md.append("| | ring | rocksdb | ring/rocksdb | ring, no onodes | rocksdb, no onodes | ring/rocksdb, no onodes |")
md.append("|---|---:|---:|---:|---:|---:|---:|")
for label, k, fmt in rows:
    md.append(f"| {label} | {F(lr.get(k), fmt)} | {F(ld.get(k), fmt)} | {R(lr.get(k), ld.get(k))} "
              f"| {F(lro.get(k), fmt)} | {F(ldo.get(k), fmt)} | {R(lro.get(k), ldo.get(k))} |")
md.append("\nWith onodes: what the OSD's RocksDB writes (every client write also puts its object's 400-byte "
          "onode, the same in both backends). No onodes (`pgring_onode_size=0`): the PG log's own RocksDB "
          "traffic, the part the backend changes (ring: the PG's tail pointer; rocksdb: a key per entry, "
          "dup and info, and the trims' deletes). CompSec and CompCount are the \"Sum\" row "
          "of the column family's compaction statistics, which counts memtable flushes (L0) with the "
          "compactions; the bytes are RocksDB's tickers (`rocksdb.flush.write.bytes`, "
          "`rocksdb.compact.write.bytes`, `rocksdb.compact.read.bytes`); all minus their values after setup "
          "(mkfs, prefill). With BlueStore's options (16 MiB write buffers, 32 merged per flush, L0 "
          "compaction at 8 files) most PG log keys are deleted by trims before they are flushed; L0->L1 "
          "compaction starts after 8 flushes, so a run shorter than that shows flushes only: see "
          "`--long-runtime`.\n")

# --- 4. restart ---
md.append("## Restart: open the store and load every PG log\n")
hdr = ["PGs x entries", "backend", "open s", "ring/rocksdb open", "heap growth B/entry", "RSS growth B/entry",
       "mapping table B/entry", "live entries", "populate s", "page cache"]
md.append("| " + " | ".join(hdr) + " |")
md.append("|" + "|".join(["---", "---"] + ["---:"] * (len(hdr) - 3) + ["---"]) + "|")
for size in s["restart"]:
    ro = get(results["restart"].get(f"rocksdb-{size}"), "open", default={}) or {}
    for b in ("ring", "rocksdb"):
        r = results["restart"].get(f"{b}-{size}") or {}
        o = r.get("open") or {}
        md.append("| " + " | ".join([
            size.replace("x", " x "), b, F(o.get("seconds"), ".3f"),
            R(o.get("seconds"), ro.get("seconds")) if b == "ring" else "",
            F(o.get("heap_bytes_per_live_entry"), ".1f"), F(o.get("rss_bytes_per_live_entry"), ".1f"),
            F(o.get("mapping_table_bytes_per_live_entry"), ".1f"), F(o.get("live_entries")),
            F(get(r, "populate", "seconds"), ".1f"), get(r, "cache_drop", "method", default="-")]) + " |")
md.append("\nEntries of 180-220 payload bytes (uniform), one info per PG; bench/restart_bench. Heap = "
          "mallinfo2 in-use bytes (glibc) before and after Store::Open in a fresh process, so it counts "
          "everything Open allocates (RocksDB's memtables, caches and table readers included); "
          "mapping table = StoreStats::mapping_table_bytes (the per-PG in-memory indexes). "
          "Page cache: `drop_caches` if the machine let us, else `fadvise_dontneed` on the partition and "
          "every RocksDB file (evicts their clean pages without privileges); the ring backend reads its "
          "partition with O_DIRECT in any case.\n")

# --- targets ---
def at(key, field):
    return fr(key).get(field)


q_hi, p_main = (32 if 32 in QDS else max(QDS)), (128 if 128 in PGS else PGS[len(PGS) // 2])
main_ri, main_rd, main_raw = f"ring-qd{q_hi}-pgs{p_main}", f"rocksdb-qd{q_hi}-pgs{p_main}", f"raw-qd{q_hi}"
targets = []


def target(name, value, ok, note=""):
    targets.append({"target": name, "value": value,
                    "met": None if ok is None else bool(ok), "note": note})


use_rounds = complete_rounds >= 3


def headline(name, matrix_value):
    """The target's ratio: the rounds' median if there are enough, else the matrix run's."""
    return round_summary[name]["median"] if use_rounds else matrix_value


def matrix_note(v, fmt):
    return f"; single matrix run: {format(v, fmt)}x" if (use_rounds and v is not None) else ""


src_note = (f"median of {complete_rounds} alternating rounds' ratios (medians "
            f"{F(round_summary['ring IOPS']['median'])} vs {F(round_summary['rocksdb IOPS']['median'])} IOPS)"
            if use_rounds else f"{F(at(main_ri, 'iops'))} vs {F(at(main_rd, 'iops'))} IOPS")
mv = ratio(at(main_ri, "iops"), at(main_rd, "iops"))
v = headline("ring/rocksdb IOPS", mv)
fv = headline("floor/rocksdb IOPS", ratio(at(f"floor-qd{q_hi}", "iops"), at(main_rd, "iops")))
floor_note = "" if fv is None else f"; with no PG log at all the same writes reach {fv:.2f}x rocksdb (the floor)"
target(f"IOPS ring >= 1.5x rocksdb ({p_main} PGs, qd {q_hi})", None if v is None else f"{v:.2f}x",
       None if v is None else v >= 1.5, f"{src_note}{matrix_note(mv, '.2f')}{floor_note}")
mv = ratio(at(main_ri, "p99_ms"), at(main_rd, "p99_ms"))
v = headline("p99 ring/rocksdb", mv)
fv = headline("p99 floor/rocksdb", ratio(at(f"floor-qd{q_hi}", "p99_ms"), at(main_rd, "p99_ms")))
target(f"p99 ring <= 0.5x rocksdb ({p_main} PGs, qd {q_hi})", None if v is None else f"{v:.2f}x",
       None if v is None else v <= 0.5,
       (f"median of {complete_rounds} rounds' ratios (medians {F(round_summary['ring p99 ms']['median'], '.2f')} vs "
        f"{F(round_summary['rocksdb p99 ms']['median'], '.2f')} ms)" if use_rounds else
        f"{F(at(main_ri, 'p99_ms'), '.2f')} vs {F(at(main_rd, 'p99_ms'), '.2f')} ms")
       + matrix_note(mv, ".2f") + ("" if fv is None else f"; the floor: {fv:.2f}x"))
mv = ratio(at(main_ri, "iops"), at(main_raw, "iops"))
v = headline("ring/raw IOPS", mv)
target(f"IOPS ring >= 50% of raw ({p_main} PGs, qd {q_hi})", None if v is None else f"{v * 100:.0f}%",
       None if v is None else v >= 0.5,
       (f"median of {complete_rounds} rounds' ratios; " if use_rounds else "")
       + f"matrix run {F(at(main_ri, 'iops'))} vs {F(at(main_raw, 'iops'))} IOPS; raw never flushes: with one "
       f"fdatasync per {q_hi} writes the device gives {F(at(f'rawflush-qd{q_hi}', 'iops'))} IOPS "
       f"(ring = {R(at(main_ri, 'iops'), at(f'rawflush-qd{q_hi}', 'iops'))} of that)")
# Against the floor, and the counts per client write (the project brief,
# section 4): the rounds' medians when there are enough, else the matrix run.
main_fl = f"floor-qd{q_hi}"


def vs_floor(name, round_name, field, op, limit, unit, fmt):
    mv = ratio(at(main_ri, field), at(main_fl, field))
    v = headline(round_name, mv)
    target(f"{name} ring <= {limit}x the floor ({p_main} PGs, qd {q_hi})" if op == "<=" else
           f"{name} ring >= {limit}x the floor ({p_main} PGs, qd {q_hi})",
           None if v is None else f"{v:.2f}x", None if v is None else (v <= limit if op == "<=" else v >= limit),
           (f"median of {complete_rounds} rounds' ratios" if use_rounds else
            f"{F(at(main_ri, field), fmt)} vs {F(at(main_fl, field), fmt)} {unit}")
           + matrix_note(mv, ".2f"))


vs_floor("IOPS", "ring/floor IOPS", "iops", ">=", 0.95, "IOPS", ".0f")
vs_floor("p99", "p99 ring/floor", "p99_ms", "<=", 1.1, "ms", ".2f")
vs_floor("CPU per client write,", "CPU ring/floor", "cpu_us_per_write", "<=", 1.1, "us", ".1f")
mv = at(main_ri, "log_writes_per_write")
v = round_summary["ring log-partition writes/write"]["median"] if use_rounds else mv
target("log-partition writes per client write, ring <= 0.2", None if v is None else f"{v:.3f}",
       None if v is None else v <= 0.2,
       (f"median of {complete_rounds} rounds" if use_rounds else f"{p_main} PGs, qd {q_hi}")
       + ("" if not use_rounds or mv is None else f"; single matrix run: {mv:.3f}"))
if lr.get("pg_log_meta") is not None and ld.get("pg_log_meta") is not None:
    src, a, b = f"long run ({s['long_runtime']} s), less the long floor run's RocksDB bytes", lr, ld
    v = ratio(a["pg_log_meta"], b["pg_log_meta"])
elif use_rounds:
    src, a, b = f"median of {complete_rounds} rounds' ratios", {}, {}
    v = round_summary["PG-log metadata ring/rocksdb"]["median"]
else:
    src, a, b = f"{p_main} PGs qd {q_hi}, less the floor's RocksDB bytes", fr(main_ri), fr(main_rd)
    v = ratio(a.get("pg_log_meta"), b.get("pg_log_meta"))
target("PG-log metadata bytes per client write (log partition + RocksDB), ring <= rocksdb",
       None if v is None else f"{v:.2f}x", None if v is None else v <= 1.0,
       (f"{F(a.get('pg_log_meta'))} vs {F(b.get('pg_log_meta'))} B/write; " if a else "") + src)
d = (results["tail"].get("rewrite") or {}).get("dev_per_payload") or fr(main_ri).get("dev_per_payload")
target("log-partition bytes per payload byte (device) <= 2.0, ring", None if d is None else f"{d:.2f}",
       None if d is None else d <= 2.0, "device bytes written per byte of log payload, default tail policy")

if lro.get("rdb_bytes_per_write") and ldo.get("rdb_bytes_per_write"):
    src, a, b = "long run, pgring's own (no onodes)", lro, ldo
elif lr.get("rdb_bytes_per_write") and ld.get("rdb_bytes_per_write"):
    src, a, b = "long run, with onodes", lr, ld
else:
    src, a, b = f"{p_main} PGs qd {q_hi}, with onodes", fr(main_ri), fr(main_rd)
v = ratio(a.get("rdb_bytes_per_write"), b.get("rdb_bytes_per_write"))
target("RocksDB bytes written per write, ring <= 10% of rocksdb", None if v is None else f"{v * 100:.1f}%",
       None if v is None else v <= 0.10,
       f"{F(a.get('rdb_bytes_per_write'))} vs {F(b.get('rdb_bytes_per_write'))} B/write ({src})")
v = ratio(a.get("rdb_keys_per_write"), b.get("rdb_keys_per_write"))
target("RocksDB keys written per write, ring <= 20% of rocksdb", None if v is None else f"{v * 100:.1f}%",
       None if v is None else v <= 0.20,
       f"{F(a.get('rdb_keys_per_write'), '.2f')} vs {F(b.get('rdb_keys_per_write'), '.2f')} keys/write ({src})")
t = (results["tail"].get("rewrite") or {}).get("log_per_payload") or fr(main_ri).get("log_per_payload")
g = (results["space_bench"].get("rewrite") or {}).get("ring_bytes_per_payload")
target("log bytes per payload byte <= 1.15 (default tail policy)", None if t is None else f"{t:.3f}",
       None if t is None else t <= 1.15, "fio ring space/payload" + (f"; ring_space_bench {g:.3f}" if g else ""))
big = max(s["restart"], key=lambda x: int(x.split("x")[0]) * int(x.split("x")[1])) if s["restart"] else None
ro = get(results["restart"].get(f"ring-{big}"), "open", default={}) or {}
rd_ = get(results["restart"].get(f"rocksdb-{big}"), "open", default={}) or {}
v = ratio(ro.get("seconds"), rd_.get("seconds"))
target(f"restart {big} ring faster than rocksdb", None if v is None else f"{ro['seconds']:.2f} s vs {rd_['seconds']:.2f} s",
       None if v is None else v < 1.0, "" if v is None else f"ring/rocksdb {v:.2f}x")
m = ro.get("mapping_table_bytes_per_live_entry")
target("mapping-table memory <= 16 B/entry", None if m is None else f"{m:.1f} B",
       None if m is None else m <= 16,
       f"ring, {big}, StoreStats::mapping_table_bytes; heap growth {F(ro.get('heap_bytes_per_live_entry'), '.1f')} B/entry")
ring_q = [(q, at(f"ring-qd{q}-pgs{p_main}", "iops")) for q in QDS]
if all(i for _, i in ring_q) and len(ring_q) > 1:
    ok = all(b_ > a_ for (_, a_), (_, b_) in zip(ring_q, ring_q[1:]))
    target(f"ring IOPS scales with qd ({p_main} PGs)", " / ".join(f"{i:.0f}" for _, i in ring_q), ok,
           "qd " + ", ".join(str(q) for q, _ in ring_q) + ": each above the last")
else:
    target("ring IOPS scales with qd", None, None)
p_big = max(PGS)
a_, b_ = at(f"ring-qd{q_hi}-pgs{p_main}", "iops"), at(f"ring-qd{q_hi}-pgs{p_big}", "iops")
v = ratio(b_, a_)
target(f"ring IOPS does not fall at {p_big} PGs (qd {q_hi}, vs {p_main} PGs)", None if v is None else f"{v:.2f}x",
       None if v is None else v >= 0.9, f"{F(b_)} vs {F(a_)} IOPS; met = within 10% or above")
results["targets"] = targets

md.append("## Targets\n")
md.append("| target | measured | met | |")
md.append("|---|---:|---|---|")
for t in targets:
    met = "n/a" if t["met"] is None else ("met" if t["met"] else "**not met**")
    md.append(f"| {t['target']} | {t['value'] or '-'} | {met} | {t['note']} |")
md.append("")
md.append("Plots: iops_vs_qd.svg, iops_vs_pgs.svg, p99_vs_qd.svg, restart.svg. Raw data: data/, results.json.\n")

open(os.path.join(OUT, "report.md"), "w").write("\n".join(md))
json.dump(results, open(os.path.join(OUT, "results.json"), "w"), indent=2)

# --- plots: gnuplot scripts with inline data ---
COMMON = """set terminal svg size 900,560 dynamic enhanced font 'sans,12' background rgb 'white'
set key outside right top
set grid
"""


def series_block(name, rows):
    return f"${name} << EOD\n" + "\n".join(" ".join(str(c) for c in r) for r in rows) + "\nEOD\n"


def write_plot(fname, body):
    open(os.path.join(OUT, f"plot-{fname}.gp"), "w").write(
        f"# {fname}.svg — generated by bench/report.py; run: gnuplot plot-{fname}.gp (in this directory)\n"
        + f"cd '{OUT}'\n" + COMMON + body)


def nz(v):
    return v if v else "NaN"


# IOPS and p99 vs queue depth: one line per backend and PG count, raw.
blocks, plots_iops, plots_p99 = "", [], []
# Solid = ring, dashed = rocksdb; one colour per PG count (or queue depth).
styles = {"ring": "lw 2 pt 7", "rocksdb": "lw 2 dt 2 pt 4"}
for b in ("ring", "rocksdb"):
    for i, p in enumerate(PGS):
        rows = [(q, nz(at(f"{b}-qd{q}-pgs{p}", "iops")), nz(at(f"{b}-qd{q}-pgs{p}", "p99_ms"))) for q in QDS]
        blocks += series_block(f"{b}{p}", rows)
        plots_iops.append(f"${b}{p} using 1:2 with linespoints {styles[b]} lc {i + 1} title '{b}, {p} PGs'")
        plots_p99.append(f"${b}{p} using 1:3 with linespoints {styles[b]} lc {i + 1} title '{b}, {p} PGs'")
rows = [(q, nz(fr(f"raw-qd{q}").get("iops")), nz(fr(f"raw-qd{q}").get("p99_ms"))) for q in QDS]
blocks += series_block("raw", rows)
plots_iops.append("$raw using 1:2 with linespoints lw 2 lc rgb 'black' title 'raw device'")
plots_p99.append("$raw using 1:3 with linespoints lw 2 lc rgb 'black' title 'raw device'")
xt = "set xtics (" + ", ".join(f"'{q}' {q}" for q in QDS) + ")\n"
write_plot("iops_vs_qd", blocks + "set output 'iops_vs_qd.svg'\nset title '4 KiB random writes (OSD writes, durable): IOPS vs queue depth'\n"
           "set xlabel 'queue depth'\nset ylabel 'IOPS (log scale)'\nset logscale y\n" + xt
           + "plot " + ", \\\n     ".join(plots_iops) + "\n")
write_plot("p99_vs_qd", blocks + "set output 'p99_vs_qd.svg'\nset title 'p99 completion latency vs queue depth'\n"
           "set xlabel 'queue depth'\nset ylabel 'p99 latency (ms)'\nset yrange [0:*]\n" + xt
           + "plot " + ", \\\n     ".join(plots_p99) + "\n")

# IOPS vs PG count: one line per backend and queue depth; raw per qd dotted.
blocks, plots = "", []
for b in ("ring", "rocksdb"):
    for i, q in enumerate(QDS):
        rows = [(p, nz(at(f"{b}-qd{q}-pgs{p}", "iops"))) for p in PGS]
        blocks += series_block(f"{b}q{q}", rows)
        plots.append(f"${b}q{q} using 1:2 with linespoints {styles[b]} lc {i + 1} title '{b}, qd {q}'")
for i, q in enumerate(QDS):
    rows = [(p, nz(fr(f"raw-qd{q}").get("iops"))) for p in PGS]
    blocks += series_block(f"rawq{q}", rows)
    plots.append(f"$rawq{q} using 1:2 with lines lw 1 dt 3 lc {i + 1} title 'raw device, qd {q}'")
write_plot("iops_vs_pgs", blocks + "set output 'iops_vs_pgs.svg'\nset title 'IOPS vs number of PGs'\n"
           "set logscale x 2\nset logscale y\nset xlabel 'PGs'\nset ylabel 'IOPS (log scale)'\n"
           "set xtics (" + ", ".join(f"'{p}' {p}" for p in PGS) + ")\n"
           + "plot " + ", \\\n     ".join(plots) + "\n")

# Restart: open seconds, clustered bars.
rows = []
for size in s["restart"]:
    r1 = get(results["restart"].get(f"ring-{size}"), "open", "seconds")
    r2 = get(results["restart"].get(f"rocksdb-{size}"), "open", "seconds")
    rows.append((f"\"{size.replace('x', ' x ')}\"", nz(r1), nz(r2)))
write_plot("restart", series_block("restart", rows) +
           "set output 'restart.svg'\nset title 'Restart: Store::Open, loading every PG log (PGs x entries)'\n"
           "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
           "set ylabel 'seconds'\nset yrange [0:*]\nset grid ytics\nunset grid\nset grid ytics\n"
           "plot $restart using 2:xtic(1) title 'ring', '' using 3 title 'rocksdb'\n")
print(f"report.py: wrote {OUT}/report.md, results.json and {len([f for f in os.listdir(OUT) if f.startswith('plot-')])} plot scripts")
