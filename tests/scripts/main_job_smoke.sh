#!/usr/bin/env bash
# tests/scripts/main_job_smoke.sh ENGINE_SO TOOL WORK_DIR — scripts/main-job.sh
# end to end, short (2 s a job, 8 PGs, 256 MiB partitions), with the engine
# already built (PGRING_ENGINE: nothing installed or built) and the job
# defaults as they are (PGRING_LAYOUT and PGRING_PAYLOAD unset). Checks:
#   - the table has a row of figures for every backend (raw, floor, ring,
#     stream, rocksdb), and says the payload was ceph;
#   - the engine's reports: ring ran pgring_layout=perpg, stream
#     pgring_layout=stream, and the ring, stream and rocksdb jobs
#     pgring_payload=ceph (the default README and fio-jobs/defaults.sh state);
#   - the chart: the script says where it wrote it, it is a whole SVG, and it
#     shows each backend with the table's IOPS, p99 and CPU figures;
#   - pgring-tool log on the store the main job leaves decodes its entries
#     (Ceph's encodings, not hex).
# ctest main_job_smoke (label bench) runs it in the default preset.
set -euo pipefail

ENGINE=${1:?usage: $0 ENGINE_SO TOOL WORK_DIR}
TOOL=${2:?usage: $0 ENGINE_SO TOOL WORK_DIR}
WORK=${3:?usage: $0 ENGINE_SO TOOL WORK_DIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$WORK"
LOG=$WORK/main-job.log
rc=0
env -u PGRING_LAYOUT -u PGRING_PAYLOAD -u PGRING_DATA -u PGRING_LOG -u PGRING_DB \
    -u PGRING_DIR -u PGRING_STATS -u PGRING_DEVICES -u PGRING_NO_PG_LOG \
    PGRING_ENGINE="$ENGINE" PGRING_WORK="$WORK" PGRING_RUNTIME=2 PGRING_IODEPTH=16 \
    PGRING_PGS=8 PGRING_SIZE=256M PGRING_LOG_SIZE=256M \
    bash "$ROOT/scripts/main-job.sh" >"$LOG" 2>&1 || rc=$?
cat "$LOG"
[[ $rc == 0 ]] || fail "scripts/main-job.sh exited $rc"

# The table: one row of figures per backend, and the payload that ran.
for job in raw floor ring stream rocksdb; do
  grep -Eq "^\| $job \| [0-9]+ \|" "$LOG" || fail "the table has no row of figures for $job"
done
grep -q "durable group commit, payload ceph;" "$LOG" \
  || fail "the table does not say 'payload ceph' (the default: fio-jobs/defaults.sh)"

# What each job ran, as the engine's reports say.
want() {  # JOB KEY VALUE
  grep -q "\"$2\": \"$3\"" "$WORK/$1.report.json" 2>/dev/null \
    || fail "$WORK/$1.report.json missing or not $2=$3"
}
want ring pgring_layout perpg
want stream pgring_layout stream
for job in ring stream rocksdb; do want "$job" pgring_payload ceph; done

# The chart: where the script said, whole, and drawing the table's figures.
SVG=$WORK/main-job.svg
grep -qF "main-job: chart of the table: $SVG " "$LOG" || fail "the script does not say where the chart is"
[[ -s $SVG ]] || fail "no chart: $SVG"
grep -q '</svg>' "$SVG" || fail "$SVG is not a whole SVG"
python3 - "$LOG" "$SVG" <<'PY' || fail "the chart does not show the table's figures"
import re, sys
log, svg = open(sys.argv[1]).read(), open(sys.argv[2]).read()
texts = set(re.findall(r">([^<>]+)</tspan>", svg))
names = {"raw": "raw", "floor": "floor", "ring": "ring (per-PG)", "stream": "stream", "rocksdb": "rocksdb"}
bad = []
for job, name in names.items():
    row = re.search(rf"^\| {job} \| (.*)\|$", log, re.M).group(1).split(" | ")
    iops, p99, cpu = row[0].strip(), row[2].strip(), row[3].strip()
    for what, v in (("name", name), ("IOPS", iops), ("p99", p99), ("CPU", cpu)):
        if v != "-" and v not in texts:
            bad.append(f"{job}: {what} {v}")
if bad:
    print("not in the chart: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY

# The store the main job leaves (the last job's: the RocksDB backend's):
# pgring-tool decodes its entries.
out=$("$TOOL" --dev "$WORK/log.part" --db "$WORK/db" log --pg 1.0 --max 2 --format json) \
  || fail "pgring-tool log on the main job's store failed: $out"
echo "$out"
grep -q '"decoded"' <<<"$out" || fail "pgring-tool log shows no decoded entry on the main job's store"
echo "main_job_smoke: OK"
