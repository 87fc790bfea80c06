#!/usr/bin/env python3
"""bench/blockdev.py — the table of bench/blockdev.sh's runs.

For each layout and sector size, and each mode (floor, stream, rocksdb,
base), the long run minus the short run: per client write committed in
between, the write requests, bytes and flushes each device saw
(/sys/class/block/*/stat), and the engine's own counts over its long run
(IOPS, p99, CPU, context switches, RocksDB keys, log-partition writes).
PG-log device bytes are what the log device and RocksDB's device wrote
beyond the floor's RocksDB device bytes, the brief's measure. Writes
results.json beside the runs.

Usage: python3 bench/blockdev.py OUT_DIR
"""
import glob
import json
import os
import sys


def read_stat(path):
    out = {}
    for line in open(path):
        name, req, sectors, flushes = line.split()
        out[name] = (int(req), int(sectors), int(flushes))
    return out


def delta(before, after):
    return {d: tuple(a - b for a, b in zip(after[d], before[d])) for d in after}


def load(out, tag):
    try:
        rep = json.load(open(os.path.join(out, tag + ".report.json")))
        fio = json.load(open(os.path.join(out, tag + ".fio.json")))
        d = delta(read_stat(os.path.join(out, tag + ".before")),
                  read_stat(os.path.join(out, tag + ".after")))
    except (OSError, ValueError, KeyError):
        return None
    return rep, fio, d


def cell(out, layout, sector, mode, roles):
    short, long_ = load(out, f"{layout}-{sector}-{mode}-short"), load(out, f"{layout}-{sector}-{mode}-long")
    if not short or not long_:
        return None
    rep, fio, dl = long_
    _, _, ds = short
    n = long_[0]["writes"]["committed"] - short[0]["writes"]["committed"]
    if n <= 0:
        return None
    row = {"client_writes": n}
    for role, dev in roles.items():
        req, sec, fl = (a - b for a, b in zip(dl[dev], ds[dev]))
        row[role] = {"requests": req / n, "bytes": sec * 512 / n, "flushes": fl / n}
    pw = rep["run"]["per_write"] or {}
    w = fio["jobs"][0]["write"]
    row["engine"] = {
        "iops": w["iops"],
        "p99_ms": w["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6,
        "cpu_us": pw.get("cpu_us"),
        "context_switches": (pw.get("context_switches") or {}).get("total"),
        "rocksdb_keys": rep.get("rocksdb", {}).get("run", {}).get("keys_written_per_write"),
        "log_partition_writes": pw.get("log_partition_writes"),
        "shared_flush": rep["config"].get("shared_flush"),
        "sync_covers": rep["config"].get("sync_covers"),
    }
    return row


def main():
    out = sys.argv[1]
    results = {}
    for devfile in sorted(glob.glob(os.path.join(out, "*.devices"))):
        layout, sector = os.path.basename(devfile)[: -len(".devices")].rsplit("-", 1)
        roles = dict(line.split() for line in open(devfile) if line.strip())
        modes = {}
        for mode in ("floor", "stream", "base", "rocksdb"):
            c = cell(out, layout, sector, mode, roles)
            if c:
                modes[mode] = c
        results[f"{layout}-{sector}"] = modes
        floor_db = modes.get("floor", {}).get("db", {}).get("bytes", 0.0)
        print(f"\n{layout}, {sector}-byte sectors ({', '.join(f'{r} {d}' for r, d in roles.items())}); "
              "per client write, long run minus short run")
        cols = ["IOPS", "p99 ms", "CPU us", "ctx sw", "keys", "log req", "log B", "db req",
                "db B", "data req", "flushes", "PG-log B"]
        print("| mode | " + " | ".join(cols) + " |")
        print("|---|" + "---:|" * len(cols))
        for mode, c in modes.items():
            e = c["engine"]
            # A partition counts no flushes: in the shared layout the disk's
            # are the log's and RocksDB's.
            devs = ("data", "disk") if "disk" in roles else ("data", "log", "db")
            flushes = sum(c[d]["flushes"] for d in devs)
            pglog = c["log"]["bytes"] + c["db"]["bytes"] - floor_db
            c["pg_log_device_bytes"] = pglog
            vals = [f"{e['iops']:,.0f}", f"{e['p99_ms']:.2f}", f"{e['cpu_us'] or 0:.1f}",
                    f"{e['context_switches'] or 0:.3f}", f"{e['rocksdb_keys'] or 0:.2f}",
                    f"{c['log']['requests']:.3f}", f"{c['log']['bytes']:,.0f}",
                    f"{c['db']['requests']:.3f}", f"{c['db']['bytes']:,.0f}",
                    f"{c['data']['requests']:.3f}", f"{flushes:.3f}",
                    "-" if mode == "floor" else f"{pglog:,.0f}"]
            print(f"| {mode} | " + " | ".join(vals) + " |")
        if "rocksdb" in modes and "floor" in modes:
            f, r = modes["floor"]["engine"], modes["rocksdb"]["engine"]
            for mode in ("stream", "base"):
                if mode not in modes:
                    continue
                s = modes[mode]["engine"]
                cost = (s["cpu_us"] - f["cpu_us"]) / max(1e-9, r["cpu_us"] - f["cpu_us"])
                print(f"{mode}: CPU cost over the floor {cost:.2f}x the RocksDB backend's; IOPS "
                      f"{s['iops'] / r['iops']:.2f}x the RocksDB backend's, {s['iops'] / f['iops']:.2f}x "
                      f"the floor's; p99 {s['p99_ms'] / f['p99_ms']:.2f}x the floor's; PG-log device "
                      f"bytes {modes[mode]['pg_log_device_bytes'] / max(1e-9, modes['rocksdb']['pg_log_device_bytes']):.2f}x "
                      f"the RocksDB backend's")
    json.dump(results, open(os.path.join(out, "results.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
