"""bench/headline.py — the README's headline cell from a bench/modes.sh run:
the floor (no PG log), pgring's default (the log stream) and the RocksDB
backend at one PG count and queue depth, medians over the run's rounds, as
a Markdown table and a chart.

  python3 bench/headline.py DIR [--pgs 128] [--qd 32] [--chart-dir docs/benchmarks]
                            [--pgring-mode stream]

--pgring-mode names the run's mode that is pgring's default (bench/modes.sh
runs the library's default as "stream"; "stream-lz4" names it explicitly).
DIR holds the rounds' r<N>-<mode>-pgs<P>-qd<Q>.{fio,report}.json. The
chart is CHART_DIR/headline.svg, drawn by CHART_DIR/plot-headline.gp (the
data inline, as bench/plot.py writes every chart); the caller runs gnuplot
on it (bench/lib.sh's bench_plot). PG-log bytes are the log partition's and
RocksDB's bytes per client write less the floor's RocksDB bytes (what the
same write with no PG log puts in RocksDB), as docs/BENCHMARKS.md counts
them.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402

MODES = (("floor", "floor (no PG log)"), ("stream", "pgring (default)"),
         ("rocksdb", "RocksDB backend"))
SHORT = {"floor": "floor", "stream": "pgring", "rocksdb": "RocksDB"}


def rounds(dir_, mode, pgs, qd):
    out = []
    for path in glob.glob(os.path.join(dir_, f"r*-{mode}-pgs{pgs}-qd{qd}.report.json")):
        m = re.search(r"/r(\d+)-", path)
        fio = path.replace(".report.json", ".fio.json")
        if not m or not os.path.exists(fio):
            continue
        rep, f = json.load(open(path)), json.load(open(fio))
        w = f["jobs"][0]["write"]
        pw = rep["run"]["per_write"]
        out.append({"iops": w["iops"],
                    "p99": w["clat_ns"]["percentile"]["99.000000"] / 1e6,
                    "cpu": pw["cpu_us"],
                    "meta": pw["metadata_bytes"]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--pgs", type=int, default=128)
    ap.add_argument("--qd", type=int, default=32)
    ap.add_argument("--chart-dir", default=None)
    ap.add_argument("--pgring-mode", default="stream")
    a = ap.parse_args()
    med = {}
    n = {}
    for mode, _ in MODES:
        run_mode = a.pgring_mode if mode == "stream" else mode
        rs = rounds(a.dir, run_mode, a.pgs, a.qd)
        if not rs:
            sys.exit(f"headline.py: no rounds of {run_mode} at {a.pgs} PGs, qd {a.qd} in {a.dir}")
        n[mode] = len(rs)
        med[mode] = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
    floor = med["floor"]
    for m in med.values():
        m["pglog"] = m["meta"] - floor["meta"]
    print(f"| per client write ({a.pgs} PGs, qd {a.qd}; medians of "
          f"{min(n.values())} rounds) | " + " | ".join(label for _, label in MODES) + " |")
    print("|---|" + "---:|" * len(MODES))

    def row(name, key, fmt, ratio):
        cells = []
        for mode, _ in MODES:
            v = med[mode][key]
            c = format(v, fmt)
            if ratio and mode != "floor":
                c += f" ({v / floor[key]:.2f}x)"
            cells.append(c)
        print(f"| {name} | " + " | ".join(cells) + " |")

    row("IOPS", "iops", ",.0f", True)
    row("p99 latency, ms", "p99", ".2f", True)
    row("CPU, µs", "cpu", ".1f", True)
    cells = ["0"] + [f"{med[m]['pglog']:,.0f}" for m in ("stream", "rocksdb")]
    print("| PG-log bytes written (log partition + RocksDB, over the floor's) | " +
          " | ".join(cells) + " |")
    over = {m: med[m]["cpu"] - floor["cpu"] for m in ("stream", "rocksdb")}
    print()
    print(f"pgring: {med['stream']['iops'] / med['rocksdb']['iops']:.2f}x the RocksDB backend's "
          f"IOPS; its CPU over the floor {over['stream'] / over['rocksdb']:.2f}x the RocksDB "
          f"backend's; PG-log bytes {med['stream']['pglog'] / med['rocksdb']['pglog']:.2f}x.")
    if a.chart_dir:
        rows = [[f'"{SHORT[m]}"', f"{med[m]['iops']:.0f}", f"{med[m]['p99']:.3f}",
                 f"{med[m]['cpu']:.1f}"] for m, _ in MODES]
        body = (plot.series_block("h", rows) +
                "set style data boxes\nset style fill solid 0.8 border -1\n"
                "set boxwidth 0.6\nunset key\nset yrange [0:*]\nset xrange [-0.6:2.6]\n"
                "set multiplot layout 1,3 title "
                f"'{a.pgs} PGs, queue depth {a.qd}: medians of {min(n.values())} rounds'\n"
                "set title 'IOPS'\nplot $h using 0:2:xtic(1) lc rgb '#4477aa'\n"
                "set title 'p99 latency (ms)'\nplot $h using 0:3:xtic(1) lc rgb '#cc6677'\n"
                "set title 'CPU per client write (µs)'\nplot $h using 0:4:xtic(1) lc rgb '#228833'\n"
                "unset multiplot\n")
        os.makedirs(a.chart_dir, exist_ok=True)
        plot.write_plot(os.path.abspath(a.chart_dir), "headline", body, "bench/headline.py",
                        size=(1000, 380))


if __name__ == "__main__":
    main()
