#!/usr/bin/env python3
"""bench/modes.py OUT PGS QDS MODES ROUNDS [DEVICES] — the table bench/modes.sh prints:
per cell the medians over rounds of IOPS and p99 (fio), and the engine's
per-client-write counts (CPU µs, log-partition writes, seeks and bytes,
RocksDB bytes); then each mode's ratios to per-PG rings and the floor;
then the HDD model (each device's write requests and seeks per client
write, and what a 150-seek/s disk allows); then where the CPU goes: µs per client write by thread (the engine's
cpu_us_by_thread: fio's job thread, pgring-commit, io:<file> for each
device's completions, RocksDB's threads); and, when bench/modes.sh ran
with --restart, the restart column: per PG count and mode the medians of
restart_bench's open time and RSS growth, and the open time against the
RocksDB backend's. With DEVICES ("ROLE:NAME ...", bench/modes.sh --devices),
also each device's write requests, bytes and flushes per client write as
/sys/class/block/*/stat counted them over the engine's timed run (the
engine's block_devices), beside the engine's own counts."""
import json
import os
import statistics
import sys

from hdd_model import rates as hdd_rates

out, pgs_list, qds, modes, rounds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), \
    sys.argv[4].split(), int(sys.argv[5])
devices = [d.split(":", 1) for d in (sys.argv[6].split() if len(sys.argv) > 6 else [])]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cell(mode, pgs, qd):
    rows = []
    for r in range(1, rounds + 1):
        base = os.path.join(out, f"r{r}-{mode}-pgs{pgs}-qd{qd}")
        fio = load(base + ".fio.json")
        rep = load(base + ".report.json")
        if not fio:
            continue
        w = fio["jobs"][0]["write"]
        pw = ((rep or {}).get("run") or {}).get("per_write") or {}
        st = ((rep or {}).get("store") or {}).get("run") or {}
        rows.append({
            "iops": w["iops"],
            "p99": w["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6,
            "cpu": pw.get("cpu_us"),
            "writes": pw.get("log_partition_writes"),
            "seeks": pw.get("log_partition_seeks"),
            "bytes": pw.get("log_partition_bytes"),
            "rdb": pw.get("rocksdb_bytes"),
            # Log bytes per payload byte, and client writes per stream write
            # (the batch a stream write's block rounding is shared by).
            "bpp": st.get("device_bytes_per_payload_byte") or None,
            "batch": (st["stream_records"] / st["stream_writes"]
                      if st.get("stream_writes") else None),
            "threads": pw.get("cpu_us_by_thread") or {},
            # The HDD model: the other devices' write requests and seeks.
            "data_writes": pw.get("data_writes"),
            "data_seeks": pw.get("data_seeks"),
            "rdb_writes": pw.get("rocksdb_writes"),
            "rdb_seeks": pw.get("rocksdb_seeks"),
            "groups": (st["commit_groups"] / st["transactions_committed"]
                       if st.get("transactions_committed") else None),
            # RocksDB keys and context switches per client write.
            "keys": (((rep or {}).get("rocksdb") or {}).get("run") or {}).get(
                "keys_written_per_write"),
            "ctxsw": (pw.get("context_switches") or {}).get("total"),
            "syscalls": pw.get("syscalls"),
            "log_bytes_engine": pw.get("log_partition_bytes"),
            "data_bytes_engine": ((rep or {}).get("data_file") or {}).get("bytes_written", 0)
                                 / max(1, ((rep or {}).get("writes") or {}).get("committed") or 0),
            "engine_flushes": ((((rep or {}).get("data_file") or {}).get("flushes", 0)
                                + st.get("device_flushes", 0)
                                + ((((rep or {}).get("rocksdb") or {}).get("run") or {}).get("syncs") or 0))
                               / max(1, ((rep or {}).get("writes") or {}).get("committed") or 0)),
        })
        # The devices, as the engine read them over its timed run.
        bd = (((rep or {}).get("block_devices") or {}).get("devices") or {})
        for _, name in devices:
            p = (bd.get(name) or {}).get("per_write") or {}
            rows[-1][f"dev_{name}_req"] = p.get("write_requests")
            rows[-1][f"dev_{name}_bytes"] = p.get("bytes")
            rows[-1][f"dev_{name}_flushes"] = p.get("flushes")
    if not rows:
        return None
    med = {}
    for k in rows[0]:
        if k == "threads":
            continue
        vals = [r[k] for r in rows if r[k] is not None]
        med[k] = statistics.median(vals) if vals else None
    names = sorted({n for r in rows for n in r["threads"]})
    med["threads"] = {n: statistics.median(r["threads"].get(n, 0.0) for r in rows) for n in names}
    return med


def f(v, fmt):
    return "-" if v is None else format(v, fmt)


def fio_table():
    print(f"| PGs | qd | mode | IOPS | p99 ms | CPU µs/write | log writes/write | "
          f"log seeks/write | log bytes/write | log bytes/payload byte | writes/stream write | "
          f"RocksDB bytes/write | IOPS vs perpg | CPU vs perpg | "
          f"IOPS vs floor | p99 vs floor | CPU vs floor |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pgs in pgs_list:
        for qd in qds:
            cells = {m: cell(m, pgs, qd) for m in modes}
            base = cells.get("perpg")
            floor = cells.get("floor")

            def vs(c, k):
                return f(c[k] / floor[k], ".2f") if floor and floor.get(k) and c.get(k) else "-"
            for m in modes:
                c = cells[m]
                if c is None:
                    print(f"| {pgs} | {qd} | {m} | (no result) ||||||||||||||")
                    continue
                ri = f(c["iops"] / base["iops"], ".2f") if base and base["iops"] else "-"
                rc = f(c["cpu"] / base["cpu"], ".2f") if base and base["cpu"] and c["cpu"] else "-"
                print(f"| {pgs} | {qd} | {m} | {c['iops']:.0f} | {c['p99']:.2f} | {f(c['cpu'], '.1f')} | "
                      f"{f(c['writes'], '.3f')} | {f(c['seeks'], '.3f')} | {f(c['bytes'], '.0f')} | "
                      f"{f(c['bpp'], '.2f')} | {f(c['batch'], '.1f')} | {f(c['rdb'], '.0f')} | {ri} | {rc} | {vs(c, 'iops')} | {vs(c, 'p99')} | "
                      f"{vs(c, 'cpu')} |")



if any(cell(m, pgs, qd) for pgs in pgs_list for qd in qds for m in modes):
    fio_table()

# The HDD model: per client write, each device's write requests and (in
# brackets) those not starting where its previous one ended, each a seek on
# a disk; and what a 150-seek/s disk then allows, in client writes a second
# (bench/report.py's "Write requests and seeks" section says how).
def hdd_table():
    print()
    print("Write requests (seeks) per client write, commit groups per client write, and client")
    print("writes/s at 150 seeks/s (one disk: data seeks + log writes + groups + RocksDB seeks;")
    print("data + metadata disk: the larger of data seeks and log writes + groups + RocksDB seeks;")
    print("a disk each: the largest device's seeks; bench/report.py's section says why):")
    print()
    print("| PGs | qd | mode | data | log partition | RocksDB | groups | one disk | "
          "data + metadata disk | a disk each |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for pgs in pgs_list:
        for qd in qds:
            for m in modes:
                c = cell(m, pgs, qd)
                if not c or None in (c.get("data_writes"), c.get("rdb_writes"), c.get("groups")):
                    continue
                logw, logs, g = c.get("writes") or 0.0, c.get("seeks") or 0.0, c["groups"]
                rate = [f(v, ".0f") for v in hdd_rates(c["data_seeks"], logw, logs, g, c["rdb_seeks"])]
                print(f"| {pgs} | {qd} | {m} | {c['data_writes']:.3f} ({c['data_seeks']:.3f}) | "
                      f"{logw:.3f} ({logs:.3f}) | {c['rdb_writes']:.3f} ({c['rdb_seeks']:.3f}) | "
                      f"{g:.3f} | " + " | ".join(rate) + " |")


if any(cell(m, pgs, qd) for pgs in pgs_list for qd in qds for m in modes):
    hdd_table()


# The log's cost over the floor (no PG log) beside the RocksDB backend's:
# CPU µs, context switches and RocksDB keys per client write (issue 32's
# targets are stated against these differences).
def cost_table():
    print()
    print("Per client write, and the log's cost over the floor (medians over rounds):")
    print()
    print("| PGs | qd | mode | CPU µs | over floor | context switches | over floor | "
          "syscalls | over floor | RocksDB keys | over floor | CPU over floor vs RocksDB backend's |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pgs in pgs_list:
        for qd in qds:
            cells = {m: cell(m, pgs, qd) for m in modes}
            floor, rdb = cells.get("floor"), cells.get("rocksdb")
            for m in modes:
                c = cells[m]
                if not c:
                    continue

                def over(k):
                    return (c[k] - floor[k]) if floor and None not in (c.get(k), floor.get(k)) else None
                ratio = None
                if rdb and over("cpu") is not None and rdb.get("cpu") and floor["cpu"] != rdb["cpu"]:
                    ratio = over("cpu") / (rdb["cpu"] - floor["cpu"])
                print(f"| {pgs} | {qd} | {m} | {f(c.get('cpu'), '.1f')} | {f(over('cpu'), '+.1f')} | "
                      f"{f(c.get('ctxsw'), '.3f')} | {f(over('ctxsw'), '+.3f')} | "
                      f"{f(c.get('syscalls'), '.2f')} | {f(over('syscalls'), '+.2f')} | "
                      f"{f(c.get('keys'), '.2f')} | {f(over('keys'), '+.2f')} | {f(ratio, '.2f')} |")


if "floor" in modes and any(cell(m, pgs, qd) for pgs in pgs_list for qd in qds for m in modes):
    cost_table()

# The devices, as /sys/class/block/*/stat counted them (the engine's
# reading after setup and at its final sync), beside what the engine asked
# for: data writes and bytes, log-partition writes and bytes, RocksDB's file
# appends and bytes (before its file system), and flushes (data flushes +
# partition flushes + RocksDB syncs). A partition counts no flushes: in the
# shared layout its disk's row has them.
def device_table():
    eng = {"data": ("data_writes", "data_bytes_engine"), "log": ("writes", "log_bytes_engine"),
           "db": ("rdb_writes", "rdb")}
    whole = [n for r, n in devices if r not in ("log", "db")] if any(r == "disk" for r, _ in devices) \
        else [n for _, n in devices]
    print()
    print("Devices (" + ", ".join(f"{r} {n}" for r, n in devices) + "), per client write: write requests, "
          "bytes and flushes as /sys/class/block/*/stat counted them over the engine's timed run (after "
          "setup: mkfs, PG creation, prefill; to the final sync), and in brackets what the engine asked for "
          "(data writes; log-partition writes; RocksDB's file appends, before ext4; flushes: data flushes "
          "+ partition flushes + RocksDB syncs); medians over rounds. Each flush is also counted as a "
          "0-byte write request, so a device's requests exceed the engine's by about its flushes; a "
          "partition counts no flushes (the shared layout's disk column has them):")
    print()
    hdr = ["PGs", "qd", "mode"]
    for r, n in devices:
        hdr += [f"{r} {n} requests", f"{r} {n} bytes"]
    hdr.append("flushes")
    print("| " + " | ".join(hdr) + " |")
    print("|---:|---:|---|" + "---:|" * (len(hdr) - 3))
    for pgs in pgs_list:
        for qd in qds:
            for m in modes:
                c = cell(m, pgs, qd)
                if not c:
                    continue
                cells = [pgs, qd, m]
                for r, n in devices:
                    er, eb = (c.get(eng[r][0]), c.get(eng[r][1])) if r in eng else (None, None)
                    if r == "log" and m in ("floor", "rocksdb"):
                        er, eb = 0.0, 0.0
                    cells.append(f(c.get(f"dev_{n}_req"), ".3f") + (f" ({f(er, '.3f')})" if r in eng else ""))
                    cells.append(f(c.get(f"dev_{n}_bytes"), ",.0f") + (f" ({f(eb, ',.0f')})" if r in eng else ""))
                fl = [c.get(f"dev_{n}_flushes") for n in whole]
                cells.append(f(None if None in fl else sum(fl), ".3f") + f" ({f(c.get('engine_flushes'), '.3f')})")
                print("| " + " | ".join(str(x) for x in cells) + " |")


if devices and any(cell(m, pgs, qd) for pgs in pgs_list for qd in qds for m in modes):
    device_table()

# Where the CPU goes: a column per thread name that spent at least 0.05 µs
# per client write in some cell.
all_cells = {(pgs, qd, m): cell(m, pgs, qd) for pgs in pgs_list for qd in qds for m in modes}
names = sorted({n for c in all_cells.values() if c for n, v in c["threads"].items() if v >= 0.05})
if names:
    print()
    print("CPU µs per client write, by thread (medians over rounds):")
    print()
    print("| PGs | qd | mode | " + " | ".join(names) + " | total |")
    print("|---:|---:|---|" + "---:|" * (len(names) + 1))
    for (pgs, qd, m), c in all_cells.items():
        if not c:
            continue
        t = c["threads"]
        print(f"| {pgs} | {qd} | {m} | " + " | ".join(f(t.get(n), ".1f") for n in names) +
              f" | {f(sum(t.values()) if t else None, '.1f')} |")


def restart_cell(mode, pgs):
    runs = []
    for r in range(1, rounds + 1):
        d = load(os.path.join(out, f"r{r}-{mode}-pgs{pgs}.restart.json"))
        if d and d.get("open", {}).get("check_ok"):
            runs.append(d)
    if not runs:
        return None
    return {
        "entries": runs[0]["entries_per_pg"],
        "seconds": statistics.median(d["open"]["seconds"] for d in runs),
        "rss": statistics.median(d["open"]["rss_growth_bytes"] for d in runs),
        # Older runs' JSON has no peak.
        "peak": (statistics.median(d["open"]["rss_peak"] for d in runs)
                 if all("rss_peak" in d["open"] for d in runs) else None),
        "rounds": len(runs),
    }


restarts = {(pgs, m): restart_cell(m, pgs) for pgs in pgs_list for m in modes}
if any(restarts.values()):
    print()
    print("Restart (restart_bench: open a closed store, page cache dropped; medians over rounds):")
    print()
    print("| PGs | entries/PG | mode | open s | RSS growth MB | peak RSS MB | open vs rocksdb | rounds |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for pgs in pgs_list:
        rdb = restarts.get((pgs, "rocksdb"))
        for m in modes:
            c = restarts[(pgs, m)]
            if c is None:
                continue
            rel = f(c["seconds"] / rdb["seconds"], ".2f") if rdb else "-"
            peak = f(c["peak"] / 1e6 if c["peak"] is not None else None, ".0f")
            print(f"| {pgs} | {c['entries']} | {m} | {c['seconds']:.3f} | {c['rss'] / 1e6:.0f} | "
                  f"{peak} | {rel} | {c['rounds']} |")
