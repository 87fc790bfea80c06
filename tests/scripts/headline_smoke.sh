#!/usr/bin/env bash
# tests/scripts/headline_smoke.sh BUILD_DIR WORK_DIR — the README's headline
# cell end to end, short: bench/modes.sh (floor, stream, RocksDB backend;
# 2 rounds of 2 s at 8 PGs, qd 8, 256 MiB partitions, this build's engine),
# then bench/headline.py on its output. Checks:
#   - the table has a row per figure, with each mode's IOPS the median of
#     its rounds' fio IOPS (recomputed here from fio's JSON);
#   - the chart script draws a whole SVG with gnuplot;
#   - headline.py refuses a directory without the rounds, naming what is
#     missing.
# ctest headline_smoke (label bench) runs it in the default preset.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR WORK_DIR}
WORK=${2:?usage: $0 BUILD_DIR WORK_DIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
PGRING_SIZE=256M PGRING_LOG_SIZE=256M bash "$ROOT/bench/modes.sh" --no-build --build-dir "$BUILD" \
  --runtime 2 --pgs 8 --qds 8 --rounds 2 --modes "floor stream rocksdb" --out "$WORK/modes" \
  >"$WORK/modes.log" 2>&1 || { cat "$WORK/modes.log"; fail "bench/modes.sh failed"; }
python3 "$ROOT/bench/headline.py" "$WORK/modes" --pgs 8 --qd 8 --chart-dir "$WORK/chart" \
  >"$WORK/headline.md" || fail "bench/headline.py failed"
cat "$WORK/headline.md"

for row in "IOPS" "p99 latency, ms" "CPU, µs" "PG-log bytes written"; do
  grep -q "^| $row" "$WORK/headline.md" || fail "the table has no row '$row'"
done
python3 - "$WORK" <<'PY' || fail "the table's IOPS are not the rounds' medians"
import glob, json, re, statistics, sys
work = sys.argv[1]
table = open(f"{work}/headline.md").read()
row = next(l for l in table.splitlines() if l.startswith("| IOPS |"))
cells = [c.strip() for c in row.strip("|").split("|")][1:]
shown = [float(re.match(r"[\d,]+", c).group(0).replace(",", "")) for c in cells]
for mode, got in zip(("floor", "stream", "rocksdb"), shown):
    iops = [json.load(open(p))["jobs"][0]["write"]["iops"]
            for p in glob.glob(f"{work}/modes/r*-{mode}-pgs8-qd8.fio.json")]
    want = statistics.median(iops)
    if len(iops) != 2 or abs(got - round(want)) > 1:
        sys.exit(f"{mode}: table {got}, rounds {iops} (median {want})")
PY
gnuplot "$WORK/chart/plot-headline.gp" || fail "gnuplot failed on the chart"
grep -q '</svg>' "$WORK/chart/headline.svg" || fail "the chart is not a whole SVG"

mkdir -p "$WORK/empty"
if python3 "$ROOT/bench/headline.py" "$WORK/empty" --pgs 8 --qd 8 >"$WORK/empty.out" 2>&1; then
  fail "headline.py accepted a directory without rounds"
fi
grep -q "no rounds of floor at 8 PGs, qd 8" "$WORK/empty.out" ||
  fail "headline.py's refusal does not say what is missing"
echo "headline smoke: OK"
