#!/usr/bin/env python3
"""bench/report.py OUT — turns what bench/report.sh left in OUT/data into
OUT/report.md (Markdown tables, ratios from the same run), OUT/results.json
(every number in the tables) and OUT/plot-*.gp (gnuplot scripts with their
data inline, SVG terminal, written by bench/plot.py's rule; report.sh runs
them: OUT/*.svg).

The kinds of run (file keys, and the names the tables use):
  ring     per-PG rings   the ring job, pgring_layout=perpg
  stream   stream         the ring job, pgring_layout=stream (the default layout)
  rocksdb  rocksdb        PG logs in RocksDB
  floor    floor          the ring job with pgring_no_pg_log=1 (no PG log)
  raw      raw            fio's io_uring engine on the data partition
Every table and target loops over LOG_KINDS (the ring backend's layouts).

Inputs (any may be missing; the tables then show "-"):
  settings.json                      what report.sh ran, and the machine
  data/fio-{raw,rawflush,floor}-qdQ.*, data/fio-{ring,stream,rocksdb}-qdQ-pgsN.*
      .fio.json (fio's JSON) and, for the engine's jobs, .report.json (pgring_stats)
  data/roundR-{ring,stream,rocksdb,floor,raw}.*   the headline cell, repeated
  data/tail-{rewrite,never}.*                      per-PG rings, both tail policies
  data/long-{ring,stream,rocksdb,floor}.*, data/long-{ring,stream,rocksdb}-own.*
  data/restart-{ring,stream,rocksdb}-PxE.json, data/ring_space_bench.json
  data/*.devstat.{before,after}      with --devices: every device's stat line
                                     (ROLE NAME REQUESTS SECTORS FLUSHES) around
                                     the whole fio run (raw's device counts)
"""
import json
import os
import sys

import plot
from hdd_model import rates as hdd_model_rates
from plot import nz, series_block

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


def devstat(prefix):
    """report.sh's reading of the devices around a whole fio run (--devices):
    name -> [write requests, sectors, flushes]; None without one."""
    def read(path):
        try:
            return {f[1]: [int(x) for x in f[2:5]] for f in (l.split() for l in open(path)) if f}
        except (OSError, ValueError, IndexError):
            return None
    a = read(os.path.join(DATA, prefix + ".devstat.before"))
    b = read(os.path.join(DATA, prefix + ".devstat.after"))
    if not a or not b:
        return None
    return {d: [y - x for x, y in zip(a[d], b[d])] for d in b if d in a}


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
    # With --devices: each device's writes per client write. The engine's
    # reading (after setup to the final sync) where there is an engine
    # report, else (raw) report.sh's around the whole fio run, per fio write.
    ds = devstat(prefix)
    if ds and r.get("writes"):
        n = r["writes"]
        r["devices"] = {d: {"write_requests": v[0] / n, "bytes": v[1] * 512 / n, "flushes": v[2] / n}
                        for d, v in ds.items()}
        r["devices_from"] = "script"
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
            "ctx_per_write": pw.get("context_switches"),
            "log_writes_per_write": pw.get("log_partition_writes"),
            # The HDD model: write requests per client write to each device,
            # and those not continuing the one before on it (each a seek).
            "log_seeks_per_write": pw.get("log_partition_seeks"),
            "data_writes_per_write": pw.get("data_writes"),
            "data_seeks_per_write": pw.get("data_seeks"),
            "rdb_writes_per_write": pw.get("rocksdb_writes"),
            "rdb_seeks_per_write": pw.get("rocksdb_seeks"),
            "groups_per_write": st.get("commit_groups", 0) / committed if committed else None,
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
            # Where the log partition's writes went (stream layout): stream
            # writes and home writes (whole blocks to the PGs' rings), per
            # client write; forced homes and stream-full fallbacks in all.
            "stream_writes_per_write": st.get("stream_writes", 0) / committed if committed else None,
            "stream_bytes_per_write": st.get("stream_bytes_written", 0) / committed if committed else None,
            "home_writes_per_write": st.get("home_writes", 0) / committed if committed else None,
            "home_bytes_per_write": st.get("home_bytes_written", 0) / committed if committed else None,
            "forced_homes": st.get("forced_homes"),
            "stream_full_fallbacks": st.get("stream_full_fallbacks"),
            "stream_restates": st.get("stream_restates"),
            "restated_bytes_per_write": st.get("stream_restated_bytes", 0) / committed if committed else None,
            "layout": get(rep, "config", "pgring_layout"),
            "payload": get(rep, "config", "pgring_payload"),
            "partition_flushes": st.get("device_flushes"),
            "data_flushes": get(rep, "data_file", "flushes"),
            "shared_flush": get(rep, "config", "shared_flush"),
            "sync_covers": get(rep, "config", "sync_covers"),
            "commit_mean_ms": (get(rep, "commit_latency_us", "mean", default=0) or 0) / 1e3,
            "mapping_table_bytes": get(rep, "store", "at_end", "mapping_table_bytes"),
            "live_items": (get(rep, "store", "at_end", "live_entries", default=0) or 0)
                          + (get(rep, "store", "at_end", "live_dups", default=0) or 0),
            "ctx_per_write": get(pw, "context_switches", "total"),
            "syscalls_per_write": pw.get("syscalls"),
            "syscalls_why_not": get(rep, "run", "syscalls", "why_not"),
            "data_bytes_per_write": (get(rep, "data_file", "bytes_written", default=0) or 0) / committed
                                    if committed else None,
            "engine_flushes_per_write": ((get(rep, "data_file", "flushes", default=0) or 0)
                                         + (st.get("device_flushes") or 0) + (run.get("syncs") or 0))
                                        / committed if committed else None,
        })
        bd = get(rep, "block_devices", "devices")
        if bd is not None:
            r["devices"] = {d: v.get("per_write") or {} for d, v in bd.items()}
            r["devices_from"] = "engine"
    return r


LOG_KINDS = ("ring", "stream")                   # the ring backend's two layouts
ENGINE_KINDS = LOG_KINDS + ("rocksdb",)          # the PG-log backends the matrix runs
ROUND_KINDS = ENGINE_KINDS + ("floor", "raw")    # what each alternating round runs
TARGET_KINDS = ("stream", "ring")                # the default layout's targets first
LABEL = {"ring": "per-PG rings", "stream": "stream", "rocksdb": "rocksdb", "floor": "floor", "raw": "raw"}

results = {"settings": settings, "fio": {}, "tail": {}, "long": {}, "restart": {}, "space_bench": {}}
for q in QDS:
    for k in ("raw", "rawflush", "floor"):
        results["fio"][f"{k}-qd{q}"] = fio_run(f"fio-{k}-qd{q}")
    for p in PGS:
        for b in ENGINE_KINDS:
            results["fio"][f"{b}-qd{q}-pgs{p}"] = fio_run(f"fio-{b}-qd{q}-pgs{p}")
ROUNDS = int(settings.get("rounds", 0) or 0)
results["rounds"] = {k: [fio_run(f"round{r}-{k}") for r in range(1, ROUNDS + 1)] for k in ROUND_KINDS}
for pol in ("rewrite", "never"):
    results["tail"][pol] = fio_run(f"tail-{pol}")
for b in ENGINE_KINDS:
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
    for key in [f"floor-qd{q}"] + [f"{b}-qd{q}-pgs{p}" for p in PGS for b in ENGINE_KINDS]:
        x = results["fio"].get(key)
        if x:
            x["pg_log_meta"] = pg_log_meta(x, fl)
for i in range(ROUNDS):
    for k in ENGINE_KINDS + ("floor",):
        x = results["rounds"][k][i]
        if x:
            x["pg_log_meta"] = pg_log_meta(x, results["rounds"]["floor"][i])
for k in ENGINE_KINDS + ("floor",):
    if results["long"].get(k):
        results["long"][k]["pg_log_meta"] = pg_log_meta(results["long"][k], results["long"]["floor"])
for size in settings["restart"]:
    for b in ENGINE_KINDS:
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


def cell(k, q, p):
    """The matrix run of kind k at queue depth q and p PGs (raw and the
    floor have one run per queue depth)."""
    return fr(f"{k}-qd{q}") if k in ("raw", "rawflush", "floor") else fr(f"{k}-qd{q}-pgs{p}")


def table(hdr, align=None):
    md.append("| " + " | ".join(hdr) + " |")
    md.append("|" + "|".join(align or ["---:"] * len(hdr)) + "|")


def row(cells):
    md.append("| " + " | ".join(cells) + " |")


md = []
s = settings
md.append("# pgring benchmark report\n")
md.append(f"- date: {s['date']}; command: `{s['command'].strip()}` (mode {s['mode']}); git {s['git']}")
DEVICES = [d.split(":", 1) for d in s.get("device_list") or []]
if DEVICES:
    where = (f"the fio runs' partitions are loop devices with direct I/O, layout {s['devices']} "
             f"(bench/loopdev.sh: " + ", ".join(f"{r} {d}" for r, d in DEVICES) +
             f"; backing files on {s['fs']}): data {s['data_size']}, log {s['log_size']}; restart_bench "
             f"uses files in {s['work']}")
else:
    where = f"partitions are files on {s['fs']} ({s['work']}): data {s['data_size']}, log {s['log_size']}"
md.append(f"- machine: {s['host']}, {s['cpus']} CPUs ({s['cpu'].strip()}), {s['mem']} RAM, kernel {s['kernel']}; "
          f"{where}; {s['fio']}")
md.append(f"- fio: 4 KiB random writes as OSD writes, {s['runtime']} s per run, durable group commit "
          f"(pgring_durability=group), Ceph's defaults otherwise (fio-jobs/*-randwrite.fio). "
          f"raw = fio's io_uring engine on the data partition alone (no metadata, no flushes).")
md.append("- the ring backend in both log layouts: **per-PG rings** = the ring job with "
          "`pgring_layout=perpg` (each PG's records straight to its ring); **stream** = "
          "`pgring_layout=stream`, the library's default (one log stream write for every PG's records, "
          "each record kept there until its PG trims it and homed to its ring only when the stream needs "
          "the room), at the engine's stream defaults. **floor** = the ring "
          "job with `pgring_no_pg_log=1` (the same OSD write with no PG log; `pgring_layout=perpg`).")
# What the PG-log entries, dups and infos held, as every engine run's report
# says (PGRING_PAYLOAD, fio-jobs/defaults.sh; the floor writes none).
payloads = sorted({r["payload"] for group in (results["fio"], results["tail"], results["long"])
                   for k, r in group.items() if r and r.get("payload") and not k.startswith("floor")}
                  | {r["payload"] for k, runs in results["rounds"].items() if k != "floor"
                     for r in runs if r and r.get("payload")})
md.append(f"- payload: {', '.join(payloads) or '-'} (`pgring_payload` in the engine's reports; "
          + ("ceph: Ceph 19's encodings of the entries, dups and infos, as an OSD writes them, "
             "which `pgring-tool log` decodes" if payloads == ["ceph"] else
             "random: pseudo-random bytes of Ceph's sizes" if payloads == ["random"] else
             "runs differ: see each run's report") + "; PGRING_PAYLOAD, fio-jobs/defaults.sh).")
loads = [r["loadavg1"] for group in (results["fio"], results["tail"], results["long"])
         for r in group.values() if r and "loadavg1" in r]
loads += [r["loadavg1"] for runs in results["rounds"].values() for r in runs if r and "loadavg1" in r]
md.append("- latencies are fio's completion latency (clat); ratios are from this run."
          + (f" 1-minute load average at the end of the fio runs: {min(loads):.1f} to {max(loads):.1f} "
             f"on {s['cpus']} CPUs (other work on the machine skews the numbers)." if loads else ""))
md.append("")

# --- 1. IOPS and latency ---
md.append("## IOPS and latency (fio)\n")
table(["qd", "PGs", "backend", "IOPS", "/rocksdb", "/raw", "/raw+flush", "p50 ms", "p99 ms", "p99 /rocksdb"],
      ["---:", "---:", "---"] + ["---:"] * 7)
for q in QDS:
    raw, rawf = fr(f"raw-qd{q}"), fr(f"rawflush-qd{q}")
    for k, x in (("raw", raw), ("raw+flush", rawf)):
        row([str(q), "-", k, F(x.get("iops")), "", "", "", F(x.get("p50_ms"), ".2f"), F(x.get("p99_ms"), ".2f"), ""])
    for p in PGS:
        rd = cell("rocksdb", q, p)
        for b in ENGINE_KINDS:
            x = cell(b, q, p)
            row([str(q), str(p), LABEL[b], F(x.get("iops")),
                 R(x.get("iops"), rd.get("iops")) if b != "rocksdb" else "",
                 R(x.get("iops"), raw.get("iops")), R(x.get("iops"), rawf.get("iops")),
                 F(x.get("p50_ms"), ".2f"), F(x.get("p99_ms"), ".2f"),
                 R(x.get("p99_ms"), rd.get("p99_ms")) if b != "rocksdb" else ""])
md.append("\nraw and raw+flush do not depend on the PG count: one run each per queue depth. "
          "raw+flush is the raw job with an fdatasync after every qd writes: what the device gives "
          "when writes must be made durable in groups, the ceiling for any durable commit path "
          "(rocksdb flushes the data file and then syncs RocksDB's WAL, once per group; the ring "
          "backend, in either layout, does the same, except that with data and log on one disk "
          "(pgring_shared_flush=auto, the default) its one log-partition flush also covers the data "
          "writes, and with RocksDB on the same disk (pgring_sync_covers=auto, the default) the "
          "previous group's RocksDB sync stands in for that flush in most groups). All jobs reap and "
          "submit in batches (iodepth_batch_submit=0, iodepth_batch_complete_max=qd).\n")

# --- the floor: the same OSD write with no PG log at all ---
floor_pgs = 128 if 128 in PGS else PGS[-1]  # the rows the floor is set against
floor_qds = [q for q in QDS if fr(f"floor-qd{q}").get("iops")]
if floor_qds:
    md.append("## The floor: an OSD write with no PG log (fio)\n")
    md.append("The ring job with `pgring_no_pg_log=1`: each write commits only its onode, with the same "
              "data write, the same flush (shared with the log partition, as the ring backend does) and "
              f"the same synced RocksDB write as a real OSD write; the backends at {floor_pgs} PGs. No PG "
              "log backend can be faster than this on this machine: floor/rocksdb is the most any backend "
              "can gain over the RocksDB backend here, and a layout's /floor what its log costs. CPU: the "
              "fio process's user + system time per client write over the run (getrusage; setup "
              "excluded).\n")
    table(["qd", "backend", "IOPS", "/floor", "/rocksdb", "p99 ms", "p99 /floor", "p99 /rocksdb",
           "CPU us/write", "CPU /floor"], ["---:", "---"] + ["---:"] * 8)
    for q in floor_qds:
        fl, rd = cell("floor", q, floor_pgs), cell("rocksdb", q, floor_pgs)
        for k in ("floor",) + ENGINE_KINDS:
            x = cell(k, q, floor_pgs)
            row([str(q), LABEL[k], F(x.get("iops")),
                 R(x.get("iops"), fl.get("iops")) if k != "floor" else "",
                 R(x.get("iops"), rd.get("iops")) if k != "rocksdb" else "",
                 F(x.get("p99_ms"), ".2f"),
                 R(x.get("p99_ms"), fl.get("p99_ms")) if k != "floor" else "",
                 R(x.get("p99_ms"), rd.get("p99_ms")) if k != "rocksdb" else "",
                 F(x.get("cpu_us_per_write"), ".1f"),
                 R(x.get("cpu_us_per_write"), fl.get("cpu_us_per_write")) if k != "floor" else ""])
    md.append("")


# --- the headline cell, repeated in alternating rounds ---
def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def paired(num, den, field):
    """Per-round ratios num/den of `field`, for the rounds that have both."""
    out = []
    for a, b in zip(results["rounds"][num], results["rounds"][den]):
        r = ratio((a or {}).get(field), (b or {}).get(field))
        if r is not None:
            out.append(r)
    return out


# The fields the rounds compare, by name; a ratio is "NUM/DEN FIELD" (the
# median of the per-round ratios), a count "KIND FIELD" (the median count).
ROUND_FIELDS = ("iops", "p99_ms", "cpu_us_per_write", "log_writes_per_write", "log_bytes_per_write",
                "pg_log_meta", "rdb_keys_per_write", "dev_per_payload", "log_per_payload", "ctx_per_write")
round_summary = {}
for num in ROUND_KINDS:
    for f_ in ROUND_FIELDS:
        round_summary[f"{num} {f_}"] = {"median": median([(r or {}).get(f_) for r in results["rounds"][num]])}
        for den in ("rocksdb", "floor", "raw"):
            if den != num:
                pr = paired(num, den, f_)
                if pr:
                    round_summary[f"{num}/{den} {f_}"] = {"per_round": pr, "median": median(pr)}
results["round_summary"] = round_summary


def rmed(name):
    return (round_summary.get(name) or {}).get("median")


# Rounds in which a kind and rocksdb both ran: the targets use the rounds'
# medians for a kind with 3 or more.
complete_rounds = {k: len(paired(k, "rocksdb", "iops")) for k in LOG_KINDS}


def RR(k, den, field, i):
    """Round i's ratio k/den of field, as a cell ("" against itself)."""
    if k == den:
        return ""
    return R((results["rounds"][k][i] or {}).get(field), (results["rounds"][den][i] or {}).get(field))


def RM(k, den, field):
    if k == den:
        return ""
    v = rmed(f"{k}/{den} {field}")
    return "-" if v is None else f"{v:.2f}x"


if ROUNDS:
    rq, rp = settings.get("round_qd"), settings.get("round_pgs")
    md.append(f"## The headline cell, repeated: qd {rq}, {rp} PGs, {ROUNDS} alternating rounds (fio)\n")
    md.append("Each round runs per-PG rings, the stream, rocksdb, the floor and raw back to back, in an "
              "order that rotates from round to round. Ratios are taken within a round (the runs minutes "
              "apart, under the same load), then the median across rounds (the **median** rows: the "
              "median of each round's ratio, beside the median figure): what the IOPS and p99 targets "
              "use when there are 3 rounds or more.\n")
    table(["round", "backend", "IOPS", "/rocksdb", "/floor", "/raw", "p99 ms", "p99 /rocksdb", "p99 /floor"],
          ["---:", "---"] + ["---:"] * 7)
    for i in range(ROUNDS):
        for k in ROUND_KINDS:
            x = results["rounds"][k][i] or {}
            row([str(i + 1), LABEL[k], F(x.get("iops")), RR(k, "rocksdb", "iops", i), RR(k, "floor", "iops", i),
                 RR(k, "raw", "iops", i), F(x.get("p99_ms"), ".2f"), RR(k, "rocksdb", "p99_ms", i),
                 RR(k, "floor", "p99_ms", i)])
    for k in ROUND_KINDS:
        row(["**median**", LABEL[k], F(rmed(f"{k} iops")), RM(k, "rocksdb", "iops"), RM(k, "floor", "iops"),
             RM(k, "raw", "iops"), F(rmed(f"{k} p99_ms"), ".2f"), RM(k, "rocksdb", "p99_ms"),
             RM(k, "floor", "p99_ms")])
    md.append("")
    md.append("The same rounds in counts per client write: CPU time of the fio process (user + system, "
              "getrusage, setup excluded), write requests to the log partition and their bytes, device "
              "bytes per payload byte, PG-log metadata bytes (log partition + RocksDB, less the round's "
              "floor's RocksDB bytes per write) and RocksDB keys. The machine's load hardly moves the "
              "writes, bytes and keys; it moves the CPU time, hence the ratios within a round.\n")
    table(["round", "backend", "CPU us/write", "CPU /floor", "log-partition writes/write",
           "log-partition B/write", "device B/payload B", "PG-log metadata B/write", "PG-log metadata /rocksdb",
           "keys/write", "keys /rocksdb"], ["---:", "---"] + ["---:"] * 9)
    COUNT_KINDS = ENGINE_KINDS + ("floor",)
    # rocksdb and the floor write no log partition: their device bytes per
    # payload byte, and the floor's PG-log metadata ratio, are left blank.
    for i in range(ROUNDS):
        for k in COUNT_KINDS:
            x = results["rounds"][k][i] or {}
            lk = k in LOG_KINDS
            row([str(i + 1), LABEL[k], F(x.get("cpu_us_per_write"), ".1f"), RR(k, "floor", "cpu_us_per_write", i),
                 F(x.get("log_writes_per_write"), ".3f"), F(x.get("log_bytes_per_write"), ".0f"),
                 F(x.get("dev_per_payload"), ".2f") if lk else "", F(x.get("pg_log_meta"), ".0f"),
                 RR(k, "rocksdb", "pg_log_meta", i) if lk else "", F(x.get("rdb_keys_per_write"), ".2f"),
                 RR(k, "rocksdb", "rdb_keys_per_write", i)])
    for k in COUNT_KINDS:
        lk = k in LOG_KINDS
        row(["**median**", LABEL[k], F(rmed(f"{k} cpu_us_per_write"), ".1f"), RM(k, "floor", "cpu_us_per_write"),
             F(rmed(f"{k} log_writes_per_write"), ".3f"), F(rmed(f"{k} log_bytes_per_write"), ".0f"),
             F(rmed(f"{k} dev_per_payload"), ".2f") if lk else "", F(rmed(f"{k} pg_log_meta"), ".0f"),
             RM(k, "rocksdb", "pg_log_meta") if lk else "", F(rmed(f"{k} rdb_keys_per_write"), ".2f"),
             RM(k, "rocksdb", "rdb_keys_per_write")])
    md.append("")

# --- the commit path: flushes per write, group sizes, where the latency is ---
md.append("## The commit path (fio matrix)\n")
md.append("Device flushes per client write by kind (the data file's fdatasync, the log partition's "
          "fdatasync, RocksDB's synced WAL write), client writes per commit group, and the mean "
          "latency inside the store (engine: from the write's submission to its commit callback) "
          "against fio's mean completion latency; the difference is time in fio's own thread "
          "(issuing the other writes of the queue, reaping). \"(shared)\": the log partition's "
          "flush also made the data writes durable (pgring_shared_flush), so the engine flushed "
          "no data file; \"(covers)\": each group's RocksDB sync also made the next group's "
          "records durable (pgring_sync_covers), so most groups made no partition flush.\n")
table(["qd", "PGs", "backend", "writes/group", "data flushes/write", "partition flushes/write",
       "WAL syncs/write", "flushes/write", "commit mean ms", "fio clat mean ms"],
      ["---:", "---:", "---"] + ["---:"] * 7)
for q in QDS:
    for p in PGS:
        for b in ENGINE_KINDS:
            x = cell(b, q, p)
            n = x.get("writes")
            if not n or x.get("commit_groups") is None:
                continue
            d, pf, wal = x.get("data_flushes") or 0, x.get("partition_flushes") or 0, x.get("rdb_syncs") or 0
            row([str(q), str(p), LABEL[b] + (" (shared)" if x.get("shared_flush") else "")
                 + (" (covers)" if x.get("sync_covers") else ""),
                 F(n / max(x["commit_groups"], 1), ".1f"), F(d / n, ".3f"),
                 F(pf / n, ".3f"), F(wal / n, ".3f"), F((d + pf + wal) / n, ".3f"),
                 F(x.get("commit_mean_ms"), ".2f"), F(x.get("clat_mean_ms"), ".2f")])
md.append("")

# --- counts per client write, in the matrix ---
md.append("## CPU time, log-partition writes and PG-log metadata per client write (fio matrix)\n")
md.append("Counts over each run (setup excluded), divided by the client writes it committed: work "
          "done, which a busy machine moves less than IOPS (the writes and bytes hardly at all, the "
          "CPU time more). CPU: the fio process's user + system time "
          "(getrusage), fio's own threads included, the same in every job. Log-partition writes: "
          "write requests the store made to the log partition (StoreStats::device_writes); in the "
          "stream layout they are stream writes and home writes (a PG's whole blocks to its ring), "
          "whose bytes the stream and home columns split. PG-log "
          "metadata: log-partition bytes plus RocksDB bytes, less the floor's RocksDB bytes per write at "
          "the same queue depth (what the same write with no PG log puts in RocksDB).\n")
table(["qd", "PGs", "backend", "CPU us/write", "CPU /floor", "context switches/write", "syscalls/write",
       "log-partition writes/write",
       "log-partition B/write", "stream B/write", "home B/write", "PG-log metadata B/write",
       "PG-log metadata /rocksdb"], ["---:", "---:", "---"] + ["---:"] * 10)
for q in QDS:
    fl = cell("floor", q, 0)
    for p in PGS:
        rd = cell("rocksdb", q, p)
        for b in ENGINE_KINDS:
            x = cell(b, q, p)
            st = b == "stream"
            row([str(q), str(p), LABEL[b], F(x.get("cpu_us_per_write"), ".1f"),
                 R(x.get("cpu_us_per_write"), fl.get("cpu_us_per_write")),
                 F(x.get("ctx_per_write"), ".3f"), F(x.get("syscalls_per_write"), ".2f"),
                 F(x.get("log_writes_per_write"), ".3f"), F(x.get("log_bytes_per_write"), ".0f"),
                 F(x.get("stream_bytes_per_write"), ".0f") if st else "",
                 F(x.get("home_bytes_per_write"), ".0f") if st else "",
                 F(x.get("pg_log_meta"), ".0f"),
                 R(x.get("pg_log_meta"), rd.get("pg_log_meta")) if b != "rocksdb" else ""])
md.append("")

why_not = sorted({x.get("syscalls_why_not") for x in results["fio"].values()
                  if x and x.get("syscalls_why_not")})
md.append("Context switches: getrusage (voluntary + involuntary). Syscalls: system call entries of every "
          "thread of the fio process (perf tracepoint raw_syscalls:sys_enter, one counter per thread; "
          "the engine report's run.syscalls says what is counted)"
          + (": **not counted here**: " + "; ".join(why_not) if why_not else "") + ".\n")

# --- the devices, as /sys/class/block counted them (--devices) ---
if DEVICES:
    md.append(f"## Devices per client write (fio matrix; loop devices, {s['devices']})\n")
    md.append("Each device's write requests, bytes and flushes as `/sys/class/block/<dev>/stat` counted "
              "them, per client write, and in brackets what the engine asked of it (data: the data "
              "writes; log: log-partition writes; db: RocksDB's file appends and bytes, before ext4 and "
              "its journal; flushes: data flushes + log-partition flushes + RocksDB syncs). Engine runs: "
              "the engine's own reading after setup (mkfs, PG creation, prefill and their sync) and at "
              "its final sync, the timed run only; raw (no engine, no setup): report.sh's reading around "
              "the whole fio run, per fio write. Each flush is also counted as a write request of 0 bytes "
              "(block layer), so a device's requests exceed the engine's by about its flushes. A partition "
              "counts no flushes: in the shared layout its disk's column has them (and the sum of its "
              "partitions' requests and bytes).\n")
    whole = ([d for r, d in DEVICES if r not in ("log", "db")] if any(r == "disk" for r, _ in DEVICES)
             else [d for _, d in DEVICES])
    eng = {"data": ("data_writes_per_write", "data_bytes_per_write"),
           "log": ("log_writes_per_write", "log_bytes_per_write"),
           "db": ("rdb_writes_per_write", "rdb_bytes_per_write")}
    hdr = ["qd", "PGs", "backend"]
    for r, d in DEVICES:
        hdr += [f"{r} {d} requests", f"{r} {d} B"]
    hdr.append("flushes")
    table(hdr, ["---:", "---:", "---"] + ["---:"] * (len(hdr) - 3))

    def dev_row(q, p, b, x):
        if not x or not x.get("devices"):
            return
        cells = [str(q), str(p) if b not in ("raw", "floor") else "-", LABEL[b]]
        for r, d in DEVICES:
            v = x["devices"].get(d) or {}
            er = eb = None
            if r in eng and b != "raw":
                er, eb = x.get(eng[r][0]), x.get(eng[r][1])
                if r == "log" and b in ("rocksdb", "floor"):
                    er, eb = 0.0, 0.0
            cells.append(F(v.get("write_requests"), ".3f") + (f" ({F(er, '.3f')})" if er is not None else ""))
            cells.append(F(v.get("bytes"), ",.0f") + (f" ({F(eb, ',.0f')})" if eb is not None else ""))
        fl = [(x["devices"].get(d) or {}).get("flushes") for d in whole]
        ef = x.get("engine_flushes_per_write") if b != "raw" else None
        cells.append(F(None if None in fl else sum(fl), ".3f") + (f" ({F(ef, '.3f')})" if ef is not None else ""))
        row(cells)

    for q in QDS:
        dev_row(q, 0, "raw", cell("raw", q, 0))
        dev_row(q, 0, "floor", cell("floor", q, 0))
        for p in PGS:
            for b in ENGINE_KINDS:
                dev_row(q, p, b, cell(b, q, p))
    md.append("")

# --- write requests and seeks per client write: the HDD model ---
def hdd_model(x, b):
    """hdd_model.rates for cell x of kind b (rocksdb and the floor write no
    log partition)."""
    no_log = b in ("rocksdb", "floor")
    v = [x.get("data_seeks_per_write"), 0.0 if no_log else x.get("log_writes_per_write"),
         0.0 if no_log else x.get("log_seeks_per_write"), x.get("groups_per_write"),
         x.get("rdb_seeks_per_write")]
    return (None, None, None) if None in v else hdd_model_rates(*v)


md.append("## Write requests and seeks per client write: the HDD model (fio matrix)\n")
md.append("Per client write, the write requests each device received and, in brackets, how many did not "
          "start where the device's previous request ended (another file, for RocksDB): each of those a "
          "seek on a disk. The data file's are the engine's, the log partition's the store's "
          "(StoreStats::device_seeks), RocksDB's its file system's (the engine's RocksDbIoCounter: each "
          "Append of a file's writer; with BlueStore's `writable_file_max_buffer_size=0` a WAL record is "
          "two, its header and its body, back to back). Commit groups per client write: each group's "
          "RocksDB write is one WAL append. What a disk that does 150 seeks a second then allows, in "
          "client writes a second: **one disk** for data, log partition and RocksDB, where each group "
          "writes its data blocks (a seek each), then its log-partition writes (each after another "
          "device's request or away from the last: a seek each), then its WAL append (a seek back to "
          "the WAL), plus RocksDB's own seeks (other files): 150 / (data seeks + log-partition writes + "
          "groups + RocksDB seeks); **data + metadata disk**, the data on one disk and the log partition "
          "and RocksDB on another, where the log's writes and the WAL appends alternate: 150 / the "
          "larger of the data's seeks and (log-partition writes + groups + RocksDB seeks; RocksDB seeks "
          "alone without log-partition writes); **a disk each**: 150 / the largest device's seeks. "
          "Not modelled: the file system's journal writes (a sync that grows a file), the rotation a "
          "synced sequential append waits for, and the disk's write cache. docs/DESIGN.md §10 reads "
          "the table.\n")
table(["qd", "PGs", "backend", "data writes (seeks)", "log-partition writes (seeks)",
       "RocksDB writes (seeks)", "commit groups", "one disk writes/s", "data + metadata disk writes/s",
       "a disk each writes/s"], ["---:", "---:", "---"] + ["---:"] * 7)


def WS(x, w, sk):
    return "-" if x.get(w) is None else f"{x.get(w):.3f} ({F(x.get(sk), '.3f')})"


for q in QDS:
    for p in PGS:
        for b in ENGINE_KINDS + (("floor",) if p == PGS[0] else ()):
            x = cell(b, q, p)
            log = "0" if b in ("rocksdb", "floor") else WS(x, "log_writes_per_write", "log_seeks_per_write")
            one, two, three = hdd_model(x, b)
            row([str(q), str(p) if b != "floor" else "-", LABEL[b],
                 WS(x, "data_writes_per_write", "data_seeks_per_write"), log,
                 WS(x, "rdb_writes_per_write", "rdb_seeks_per_write"),
                 F(x.get("groups_per_write"), ".3f"), F(one), F(two), F(three)])
md.append("")

# --- RocksDB traffic per write, in the matrix ---
md.append("## RocksDB writes per client write, and log bytes per payload byte (fio matrix)\n")
table(["qd", "PGs", "backend", "RocksDB B/write", "/rocksdb", "keys/write", "keys /rocksdb",
       "log record B/payload B", "device B/payload B"], ["---:", "---:", "---"] + ["---:"] * 6)
for q in QDS:
    for p in PGS:
        rd = cell("rocksdb", q, p)
        for b in ENGINE_KINDS:
            x = cell(b, q, p)
            own = b != "rocksdb"
            row([str(q), str(p), LABEL[b], F(x.get("rdb_bytes_per_write")),
                 R(x.get("rdb_bytes_per_write"), rd.get("rdb_bytes_per_write")) if own else "",
                 F(x.get("rdb_keys_per_write"), ".2f"),
                 R(x.get("rdb_keys_per_write"), rd.get("rdb_keys_per_write")) if own else "",
                 F(x.get("log_per_payload"), ".3f") if own else "",
                 F(x.get("dev_per_payload"), ".2f") if own else ""])
md.append("\nLog record bytes: StoreStats::record_bytes_appended per payload byte (the records' framing "
          "and padding); device bytes: everything written to the log partition per payload byte (in the "
          "stream layout: the stream writes and the home writes). Short runs: RocksDB's bytes here are "
          "mostly WAL (few memtable flushes and compactions happen in a run this short); the long run "
          "below includes them.\n")

# --- 2. tail policies ---
md.append("## Log bytes per payload byte, both tail-block policies (per-PG rings)\n")
hdr = ["tail-block policy", "ring space / payload (fio, 128 PGs, qd 32)", "device bytes / payload (fio)",
       "per-PG rings IOPS (fio)", "ring space / payload (ring_space_bench)",
       "device bytes / payload (ring_space_bench)", "mapping table B/entry (ring_space_bench)"]
table(hdr, ["---"] + ["---:"] * (len(hdr) - 1))
for pol, label in (("rewrite", "`rewrite` (default)"), ("never", "`never`")):
    t = results["tail"].get(pol) or {}
    g = results["space_bench"].get(pol) or {}
    row([label, F(t.get("log_per_payload"), ".3f"), F(t.get("dev_per_payload"), ".2f"),
         F(t.get("iops")), F(g.get("ring_bytes_per_payload"), ".3f"),
         F(g.get("device_bytes_per_payload"), ".2f"), F(g.get("mapping_bytes_per_entry"), ".1f")])
md.append("\nPer-PG rings only (`pgring_layout=perpg`), where every record write goes to its PG's tail "
          "block. fio: the engine's report (store.run: record bytes appended and partition bytes "
          "written per payload byte over the run). ring_space_bench: 400,000 OSD-like writes on an "
          "in-memory device (the format alone; a full info every 16th write).\n")

# --- 3. long run ---
L = results["long"]
LK = ENGINE_KINDS + ("floor",)
long_runs = {k: L.get(k) or {} for k in LK}
own_runs = {k: L.get(f"{k}-own") or {} for k in ENGINE_KINDS}
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
        ("log-partition bytes / client write", "log_bytes_per_write", ".0f"),
        ("PG-log metadata bytes / client write (with onodes: less the long floor run's RocksDB bytes)",
         "pg_log_meta", ".0f"),
        ("client writes committed", "committed", ".0f")]
for d in list(long_runs.values()) + list(own_runs.values()):
    if d:
        d["compact_write_mb"] = (d.get("compact_write_bytes") or 0) / 1e6
        d["flush_write_mb"] = (d.get("flush_write_bytes") or 0) / 1e6
        d["compact_read_mb"] = (d.get("compact_read_bytes") or 0) / 1e6
        d["stall_s"] = (d.get("stall_micros") or 0) / 1e6
hdr = ([""] + [LABEL[k] for k in LK] + [f"{LABEL[k]}/rocksdb" for k in LOG_KINDS]
       + [f"{LABEL[k]}, no onodes" for k in ENGINE_KINDS] + [f"{LABEL[k]}/rocksdb, no onodes" for k in LOG_KINDS])
table(hdr, ["---"] + ["---:"] * (len(hdr) - 1))
for label, k, fmt in rows:
    row([label] + [F(long_runs[b].get(k), fmt) for b in LK]
        + [R(long_runs[b].get(k), long_runs["rocksdb"].get(k)) for b in LOG_KINDS]
        + [F(own_runs[b].get(k), fmt) for b in ENGINE_KINDS]
        + [R(own_runs[b].get(k), own_runs["rocksdb"].get(k)) for b in LOG_KINDS])
md.append("\nWith onodes: what the OSD's RocksDB writes (every client write also puts its object's 400-byte "
          "onode, the same in every backend; the floor writes nothing else). No onodes "
          "(`pgring_onode_size=0`): the PG log's own RocksDB traffic, the part the backend changes "
          "(the ring backend, either layout: the PG's tail pointer; rocksdb: a key per entry, "
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


def restart_open(b, size):
    return get(results["restart"].get(f"{b}-{size}"), "open", default={}) or {}


def stream_setting(size, key, settings_key):
    """What the stream row of a restart ran with: restart_bench's JSON says
    when it records it, else what report.sh passed."""
    r = results["restart"].get(f"stream-{size}") or {}
    return r.get(key, s.get(settings_key))


def home_setting(size):
    """How the stream row of a restart homed: home_bytes, or home_blocks from
    a restart_bench that set it in blocks; None when it took neither."""
    for key in ("home_bytes", "home_blocks"):
        v = stream_setting(size, key, f"restart_{key}")
        if v is not None:
            return f"{key} {v}" if v else f"{key} 0 (homed only for room)"
    return None


def stream_at_close(size):
    pop = get(results["restart"].get(f"stream-{size}"), "populate", default={}) or {}
    used, chunks = pop.get("stream_bytes_used"), pop.get("stream_chunks")
    if used is None:
        return None
    return (f"{used / 2**20:.1f} MiB" if used >= 2**20 else f"{used / 2**10:.0f} KiB") + f" in {chunks} chunks"


hdr = ["PGs x entries", "backend", "open s", "/rocksdb open", "heap growth B/entry", "RSS growth B/entry",
       "mapping table B/entry", "live entries", "stream at close", "populate s", "page cache"]
table(hdr, ["---", "---"] + ["---:"] * 6 + ["---", "---:", "---"])
for size in s["restart"]:
    ro = restart_open("rocksdb", size)
    for b in ENGINE_KINDS:
        r = results["restart"].get(f"{b}-{size}") or {}
        o = r.get("open") or {}
        row([size.replace("x", " x "), LABEL[b], F(o.get("seconds"), ".3f"),
             R(o.get("seconds"), ro.get("seconds")) if b != "rocksdb" else "",
             F(o.get("heap_bytes_per_live_entry"), ".1f"), F(o.get("rss_bytes_per_live_entry"), ".1f"),
             F(o.get("mapping_table_bytes_per_live_entry"), ".1f"), F(o.get("live_entries")),
             (stream_at_close(size) or "-") if b == "stream" else "",
             F(get(r, "populate", "seconds"), ".1f"), get(r, "cache_drop", "method", default="-")])
sc = stream_setting(s["restart"][0], "stream_chunks", "restart_stream_chunks") if s["restart"] else None
hb = home_setting(s["restart"][0]) if s["restart"] else None
restart_payload = get(results["restart"].get(f"stream-{s['restart'][0]}") if s["restart"] else None,
                      "payload", default="filler")
md.append("\n" + ("Entries of Ceph's encodings (pg_log_entry_t, ~175-260 bytes), 50 a transaction"
                   if restart_payload == "ceph" else
                   "Entries of 180-220 filler payload bytes (uniform), 50 a transaction (filler, which the "
                   "stream's lz4 shrinks to almost nothing)")
          + ", one info per PG; bench/restart_bench. per-PG rings: "
          "`--layout=perpg`. stream: `--layout=stream`, a stream of "
          + (f"{F(sc)} chunks ({F(sc)} MiB; StreamOptions::max_chunks)" if sc else
             "a bound of three quarters of the partition (StreamOptions::max_chunks 0)")
          + " and "
          + (hb or "this restart_bench's default home size (it takes no --home-bytes)")
          + ": unless the home size is small, a PG's records stay in the stream until forced homes take "
          "them (the stream half full), and open replays what the stream holds at close: \"stream at "
          "close\" is the stream's size then (its chunks hold the unhomed records, and homed ones that "
          "share their chunks)"
          + ". Heap = "
          "mallinfo2 in-use bytes (glibc) before and after Store::Open in a fresh process, so it counts "
          "everything Open allocates (RocksDB's memtables, caches and table readers included); "
          "mapping table = StoreStats::mapping_table_bytes (the per-PG in-memory indexes). "
          "Page cache: `drop_caches` if the machine let us, else `fadvise_dontneed` on the partition and "
          "every RocksDB file (evicts their clean pages without privileges); the ring backend reads its "
          "partition with O_DIRECT in any case.\n")

# --- targets ---
q_hi, p_main = (32 if 32 in QDS else max(QDS)), (128 if 128 in PGS else PGS[len(PGS) // 2])
main_raw, main_fl, main_rd = f"raw-qd{q_hi}", f"floor-qd{q_hi}", f"rocksdb-qd{q_hi}-pgs{p_main}"
targets = []


def at(key, field):
    return fr(key).get(field)


def main_cell(k):
    return {"rocksdb": main_rd, "floor": main_fl, "raw": main_raw}.get(k, f"{k}-qd{q_hi}-pgs{p_main}")


def target(group, name, k, value, ok, note=""):
    targets.append({"group": group, "target": name, "layout": LABEL[k], "value": value,
                    "met": None if ok is None else bool(ok), "note": note})


def use_rounds(k):
    return complete_rounds.get(k, 0) >= 3


def headline_ratio(k, den, field, unit, fmt):
    """k/den of field at the headline cell: the rounds' median ratio when
    there are enough rounds, else the matrix run's; and a note saying which."""
    mv = ratio(at(main_cell(k), field), at(main_cell(den), field))
    if use_rounds(k):
        return rmed(f"{k}/{den} {field}"), (
            f"median of {complete_rounds[k]} rounds' ratios (medians {F(rmed(f'{k} {field}'), fmt)} vs "
            f"{F(rmed(f'{den} {field}'), fmt)} {unit})" + ("" if mv is None else f"; single matrix run: {mv:.2f}x"))
    return mv, f"{F(at(main_cell(k), field), fmt)} vs {F(at(main_cell(den), field), fmt)} {unit} (matrix run)"


def headline_count(k, field, fmt):
    mv = at(main_cell(k), field)
    if use_rounds(k) and rmed(f"{k} {field}") is not None:
        return rmed(f"{k} {field}"), (f"median of {complete_rounds[k]} rounds"
                                     + ("" if mv is None else f"; single matrix run: {format(mv, fmt)}"))
    return mv, "matrix run"


def check(v, op, limit):
    return None if v is None else (v <= limit if op == "<=" else v >= limit)


def X(v, limit=None):
    """A ratio, to 2 decimals, or 3 where 2 would read as the limit itself
    (1.102 against <= 1.10 shows 1.102x, not met)."""
    if v is None:
        return None
    t = f"{v:.2f}"
    return f"{v:.3f}x" if limit is not None and float(t) == limit and v != limit else f"{t}x"


cell_name = f"{p_main} PGs, qd {q_hi}"
big = max(s["restart"], key=lambda x: int(x.split("x")[0]) * int(x.split("x")[1])) if s["restart"] else None
CUR = "current"


def over_floor(k, field, unit=""):
    """k's field less the floor's, and that against the RocksDB backend's
    less the floor's: the medians over the rounds when there are enough
    (each round's own floor), else the matrix runs'; and a note."""
    if use_rounds(k):
        diffs, ratios = [], []
        for a_, f_, r_ in zip(results["rounds"][k], results["rounds"]["floor"], results["rounds"]["rocksdb"]):
            a_, f_, r_ = ((x or {}).get(field) for x in (a_, f_, r_))
            if a_ is None or f_ is None:
                continue
            diffs.append(a_ - f_)
            if r_ is not None and r_ != f_:
                ratios.append((a_ - f_) / (r_ - f_))
        return median(diffs), median(ratios), (
            f"median of {len(diffs)} rounds: {F(rmed(f'{k} {field}'), '.3f')}{unit} against the floor's "
            f"{F(rmed(f'floor {field}'), '.3f')} and the RocksDB backend's "
            f"{F(rmed(f'rocksdb {field}'), '.3f')}")
    a_, f_, r_ = at(main_cell(k), field), at(main_fl, field), at(main_rd, field)
    if a_ is None or f_ is None:
        return None, None, "no run"
    return a_ - f_, (None if r_ is None or r_ == f_ else (a_ - f_) / (r_ - f_)), (
        f"{F(a_, '.3f')}{unit} against the floor's {F(f_, '.3f')} and the RocksDB backend's {F(r_, '.3f')} "
        "(matrix run)")


for k in TARGET_KINDS:
    _, v, src = over_floor(k, "cpu_us_per_write", " µs")
    target(CUR, f"CPU over the floor <= 0.5x the RocksDB backend's over the floor ({cell_name})", k,
           X(v, 0.5), check(v, "<=", 0.5), src)
    d, _, src = over_floor(k, "ctx_per_write")
    target(CUR, f"context switches per client write <= the floor's + 0.05 ({cell_name})", k,
           None if d is None else f"{d:+.3f}", check(d, "<=", 0.05), src)
    d, _, src = over_floor(k, "rdb_keys_per_write")
    target(CUR, f"RocksDB keys per client write <= the floor's + 0.2 ({cell_name})", k,
           None if d is None else f"{d:+.2f}", check(d, "<=", 0.2), src)
    v, src = headline_ratio(k, "rocksdb", "iops", "IOPS", ".0f")
    target(CUR, f"IOPS >= 1.25x the RocksDB backend's ({cell_name})", k, X(v, 1.25), check(v, ">=", 1.25), src)
    v, src = headline_ratio(k, "floor", "iops", "IOPS", ".0f")
    target(CUR, f"IOPS >= 0.9x the floor's ({cell_name})", k, X(v, 0.9), check(v, ">=", 0.9), src)
    v, src = headline_ratio(k, "floor", "p99_ms", "ms", ".2f")
    target(CUR, f"p99 <= 1.1x the floor's ({cell_name})", k, X(v, 1.1), check(v, "<=", 1.1), src)
    v, src = headline_count(k, "log_writes_per_write", ".3f")
    target(CUR, f"log-partition writes per client write <= 0.2 ({cell_name})", k,
           F(v, ".3f") if v is not None else None, check(v, "<=", 0.2), src)
    v, src = headline_count(k, "dev_per_payload", ".2f")
    target(CUR, f"log-partition bytes per payload byte <= 1.5 ({cell_name})", k,
           F(v, ".2f") if v is not None else None, check(v, "<=", 1.5), src)
    ro, rd_ = restart_open(k, big), restart_open("rocksdb", big)
    v = ratio(ro.get("seconds"), rd_.get("seconds"))
    note = "" if v is None else f"{ro['seconds']:.2f} s vs {rd_['seconds']:.2f} s"
    if k == "stream":
        note += (f"; stream of {F(sc) if sc else 'three quarters of the partition'}, "
                 f"{hb or 'the default home size'}, at close: "
                 f"{stream_at_close(big) or '-'}")
    target(CUR, f"restart {big} <= 0.25x rocksdb's" if big else "restart <= 0.25x rocksdb's", k, X(v, 0.25),
           check(v, "<=", 0.25), note)
    items = (ro.get("live_entries") or 0) + (ro.get("live_dups") or 0)
    idx = None if not items or ro.get("mapping_table_bytes") is None else \
        (ro["mapping_table_bytes"] + (ro.get("stream_index_bytes") or 0)) / items
    target(CUR, "index <= 16 B per live entry (mapping table + stream runs)", k,
           None if idx is None else f"{idx:.1f} B", check(idx, "<=", 16),
           f"{big} after open; RSS growth {F(ro.get('rss_bytes_per_live_entry'), '.1f')} B/entry")

E = "earlier"
for k in TARGET_KINDS:
    v, src = headline_ratio(k, "rocksdb", "iops", "IOPS", ".0f")
    fv = rmed("floor/rocksdb iops") if use_rounds(k) else ratio(at(main_fl, "iops"), at(main_rd, "iops"))
    target(E, f"IOPS >= 1.5x rocksdb ({cell_name})", k, X(v, 1.5), check(v, ">=", 1.5),
           src + ("" if fv is None else f"; with no PG log at all the same writes reach {fv:.2f}x rocksdb (the floor)"))
    v, src = headline_ratio(k, "rocksdb", "p99_ms", "ms", ".2f")
    fv = rmed("floor/rocksdb p99_ms") if use_rounds(k) else ratio(at(main_fl, "p99_ms"), at(main_rd, "p99_ms"))
    target(E, f"p99 <= 0.5x rocksdb ({cell_name})", k, X(v, 0.5), check(v, "<=", 0.5),
           src + ("" if fv is None else f"; the floor: {fv:.2f}x"))
    v, src = headline_ratio(k, "raw", "iops", "IOPS", ".0f")
    target(E, f"IOPS >= 50% of raw ({cell_name})", k, None if v is None else f"{v * 100:.0f}%", check(v, ">=", 0.5),
           src + f"; raw never flushes: with one fdatasync per {q_hi} writes the device gives "
           f"{F(at(f'rawflush-qd{q_hi}', 'iops'))} IOPS ({LABEL[k]} = "
           f"{R(at(main_cell(k), 'iops'), at(f'rawflush-qd{q_hi}', 'iops'))} of that)")
    lo, lr = own_runs[k], long_runs[k]
    if lo.get("rdb_bytes_per_write") and own_runs["rocksdb"].get("rdb_bytes_per_write"):
        src, a, b = "long run, pgring's own (no onodes)", lo, own_runs["rocksdb"]
    elif lr.get("rdb_bytes_per_write") and long_runs["rocksdb"].get("rdb_bytes_per_write"):
        src, a, b = "long run, with onodes", lr, long_runs["rocksdb"]
    else:
        src, a, b = f"{cell_name}, with onodes", fr(main_cell(k)), fr(main_rd)
    v = ratio(a.get("rdb_bytes_per_write"), b.get("rdb_bytes_per_write"))
    target(E, "RocksDB bytes written per write <= 10% of rocksdb", k, None if v is None else f"{v * 100:.1f}%",
           check(v, "<=", 0.10), f"{F(a.get('rdb_bytes_per_write'))} vs {F(b.get('rdb_bytes_per_write'))} B/write ({src})")
    v = ratio(a.get("rdb_keys_per_write"), b.get("rdb_keys_per_write"))
    target(E, "RocksDB keys written per write <= 20% of rocksdb", k, None if v is None else f"{v * 100:.1f}%",
           check(v, "<=", 0.20),
           f"{F(a.get('rdb_keys_per_write'), '.2f')} vs {F(b.get('rdb_keys_per_write'), '.2f')} keys/write ({src})")
    if k == "ring" and (results["tail"].get("rewrite") or {}).get("log_per_payload") is not None:
        t, src = results["tail"]["rewrite"]["log_per_payload"], "tail-policy run (rewrite)"
    else:
        t, src = headline_count(k, "log_per_payload", ".3f")
    g = (results["space_bench"].get("rewrite") or {}).get("ring_bytes_per_payload") if k == "ring" else None
    target(E, "log record bytes per payload byte <= 1.15 (default tail policy)", k, F(t, ".3f") if t is not None else None,
           check(t, "<=", 1.15), src + (f"; ring_space_bench {g:.3f}" if g else ""))
    ro = restart_open(k, big)
    m = ro.get("mapping_table_bytes_per_live_entry")
    target(E, "mapping-table memory <= 16 B/entry", k, None if m is None else f"{m:.1f} B", check(m, "<=", 16),
           f"{big}, StoreStats::mapping_table_bytes; heap growth {F(ro.get('heap_bytes_per_live_entry'), '.1f')} B/entry")
    k_q = [(q, at(f"{k}-qd{q}-pgs{p_main}", "iops")) for q in QDS]
    if all(i for _, i in k_q) and len(k_q) > 1:
        ok = all(b_ > a_ for (_, a_), (_, b_) in zip(k_q, k_q[1:]))
        target(E, f"IOPS scales with qd ({p_main} PGs)", k, " / ".join(f"{i:.0f}" for _, i in k_q), ok,
               "qd " + ", ".join(str(q) for q, _ in k_q) + ": each above the last")
    else:
        target(E, "IOPS scales with qd", k, None, None, "needs two queue depths or more")
    p_big = max(PGS)
    a_, b_ = at(f"{k}-qd{q_hi}-pgs{p_main}", "iops"), at(f"{k}-qd{q_hi}-pgs{p_big}", "iops")
    v = ratio(b_, a_)
    target(E, f"IOPS does not fall at {p_big} PGs (qd {q_hi}, vs {p_main} PGs)", k, X(v, 0.9), check(v, ">=", 0.9),
           f"{F(b_)} vs {F(a_)} IOPS; met = within 10% or above")
results["targets"] = targets

for group, title, intro in (
        (CUR, "## Targets (issues 32 and 33)\n",
         "Each target for both layouts of the ring backend; the stream's rows are the ones that count "
         "(it is the default layout), the per-PG rings' are there to compare. IOPS, p99 and the counts "
         "over the floor from the alternating rounds' medians when there are 3 rounds or more, else the "
         "single matrix run; a target not reached says \"not met\" with its figure. These runs are on "
         "files; bench/blockdev.sh measures the block-device layouts the issues also name.\n"),
        (E, "## Earlier targets\n", "")):
    md.append(title)
    if intro:
        md.append(intro)
    table(["target", "layout", "measured", "met", ""], ["---", "---", "---:", "---", "---"])
    for t in targets:
        if t["group"] != group:
            continue
        met = "n/a" if t["met"] is None else ("met" if t["met"] else "**not met**")
        row([t["target"], t["layout"], t["value"] or "-", met, t["note"]])
    md.append("")
md.append("Plots: iops_vs_qd.svg, iops_vs_pgs.svg, p99_vs_qd.svg, restart.svg. Raw data: data/, results.json.\n")

open(os.path.join(OUT, "report.md"), "w").write("\n".join(md))
json.dump(results, open(os.path.join(OUT, "results.json"), "w"), indent=2)

# --- plots: gnuplot scripts with inline data (bench/plot.py) ---
def write_plot(fname, body):
    plot.write_plot(OUT, fname, body, by="bench/report.py")


# IOPS and p99 vs queue depth: one line per backend and PG count, raw.
blocks, plots_iops, plots_p99 = "", [], []
# Solid = per-PG rings, dash-dot = stream, dashed = rocksdb; one colour per
# PG count (or queue depth).
styles = {"ring": "lw 2 pt 7", "stream": "lw 2 dt 4 pt 9", "rocksdb": "lw 2 dt 2 pt 4"}
for b in ENGINE_KINDS:
    for i, p in enumerate(PGS):
        rows = [(q, nz(at(f"{b}-qd{q}-pgs{p}", "iops")), nz(at(f"{b}-qd{q}-pgs{p}", "p99_ms"))) for q in QDS]
        blocks += series_block(f"{b}{p}", rows)
        plots_iops.append(f"${b}{p} using 1:2 with linespoints {styles[b]} lc {i + 1} title '{LABEL[b]}, {p} PGs'")
        plots_p99.append(f"${b}{p} using 1:3 with linespoints {styles[b]} lc {i + 1} title '{LABEL[b]}, {p} PGs'")
rows = [(q, nz(fr(f"raw-qd{q}").get("iops")), nz(fr(f"raw-qd{q}").get("p99_ms"))) for q in QDS]
blocks += series_block("raw", rows)
plots_iops.append("$raw using 1:2 with linespoints lw 2 lc rgb 'black' title 'raw device'")
plots_p99.append("$raw using 1:3 with linespoints lw 2 lc rgb 'black' title 'raw device'")
xt = "set xtics (" + ", ".join(f"'{q}' {q}" for q in QDS) + ")\n"
write_plot("iops_vs_qd", blocks + "set title '4 KiB random writes (OSD writes, durable): IOPS vs queue depth'\n"
           "set xlabel 'queue depth'\nset ylabel 'IOPS (log scale)'\nset logscale y\n" + xt
           + "plot " + ", \\\n     ".join(plots_iops) + "\n")
write_plot("p99_vs_qd", blocks + "set title 'p99 completion latency vs queue depth'\n"
           "set xlabel 'queue depth'\nset ylabel 'p99 latency (ms)'\nset yrange [0:*]\n" + xt
           + "plot " + ", \\\n     ".join(plots_p99) + "\n")

# IOPS vs PG count: one line per backend and queue depth; raw per qd dotted.
blocks, plots = "", []
for b in ENGINE_KINDS:
    for i, q in enumerate(QDS):
        rows = [(p, nz(at(f"{b}-qd{q}-pgs{p}", "iops"))) for p in PGS]
        blocks += series_block(f"{b}q{q}", rows)
        plots.append(f"${b}q{q} using 1:2 with linespoints {styles[b]} lc {i + 1} title '{LABEL[b]}, qd {q}'")
for i, q in enumerate(QDS):
    rows = [(p, nz(fr(f"raw-qd{q}").get("iops"))) for p in PGS]
    blocks += series_block(f"rawq{q}", rows)
    plots.append(f"$rawq{q} using 1:2 with lines lw 1 dt 3 lc {i + 1} title 'raw device, qd {q}'")
write_plot("iops_vs_pgs", blocks + "set title 'IOPS vs number of PGs'\n"
           "set logscale x 2\nset logscale y\nset xlabel 'PGs'\nset ylabel 'IOPS (log scale)'\n"
           "set xtics (" + ", ".join(f"'{p}' {p}" for p in PGS) + ")\n"
           + "plot " + ", \\\n     ".join(plots) + "\n")

# Restart: open seconds, clustered bars, one per backend.
rows = []
for size in s["restart"]:
    rows.append([f"\"{size.replace('x', ' x ')}\""]
                + [nz(get(results["restart"].get(f"{b}-{size}"), "open", "seconds")) for b in ENGINE_KINDS])
write_plot("restart", series_block("restart", rows) +
           "set title 'Restart: Store::Open, loading every PG log (PGs x entries)'\n"
           "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
           "set ylabel 'seconds'\nset yrange [0:*]\nset grid ytics\nunset grid\nset grid ytics\n"
           "plot " + ", ".join(("$restart using 2:xtic(1)" if i == 0 else f"'' using {i + 2}")
                               + f" title '{LABEL[b]}'" for i, b in enumerate(ENGINE_KINDS)) + "\n")
print(f"report.py: wrote {OUT}/report.md, results.json and {len([f for f in os.listdir(OUT) if f.startswith('plot-')])} plot scripts")
