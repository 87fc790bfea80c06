#!/usr/bin/env bash
# tests/crash/kill/fio_kill_campaign.sh — reliability campaign 1 (issue 6): SIGKILL
# of the real fio (Debian's /usr/bin/fio) writing through the pgring engine,
# on loop devices (default) or on file-backed partitions (--files), many
# times, and after every kill a check that nothing acknowledged was lost.
#
# Long form (docs/RELIABILITY.md, "1. Process kills"):
#   bash tests/crash/kill/fio_kill_campaign.sh --iterations 200            # loop devices, root
#   bash tests/crash/kill/fio_kill_campaign.sh --iterations 100 --files
# Short forms: ctest -L crash -R kill_fio (kill_fio_loop, kill_fio_files; ~6 iterations).
#
# Options:
#   --iterations N     kills to make (default 20)
#   --files            plain files as the log and data partitions instead of
#                      loop devices (no root needed)
#   --layouts LIST     the log layouts the iterations take in turn
#                      (pgring_layout; default "stream perpg": the log stream
#                      and per-PG rings, each every other iteration, on the
#                      store the last kill left whatever its layout)
#   --seed S           seed of every random choice (default: from the clock);
#                      printed, so a run can be repeated
#   --engine PATH      libfio_pgring.so (default: the first
#                      build/*/tools/fio_engine/libfio_pgring.so)
#   --tool PATH        pgring-tool (default: the one of the engine's build
#                      tree, else the first build/*/tools/pgring-tool)
#   --workdir DIR      where the partitions, the RocksDB and each iteration's
#                      files go (default: a new directory under
#                      build/kill-campaign); created if missing
#   --keep             keep the work directory even when everything passed
#   --max-delay-ms MS  longest delay between the start of the writes and the
#                      kill (default 2000); the delay is drawn at random
#   --cxx CXX, --sanitize LIST
#                      the engine's compiler and PGRING_SANITIZE (comma-
#                      separated): with sanitizers, fio gets their runtime in
#                      LD_PRELOAD (tests/fio/fio_env.sh), as in the fio tests
#
# One iteration:
#   1. fio writes 4 KiB blocks at random (randwrite with fio's random map, so
#      no block is written twice in a run) into the data partition with
#      verify=crc32c, do_verify=0 and verify_state_save=1, through the engine
#      (one OSD transaction per write), with a queue depth, PG count and
#      durability mode cycled over {1,16,32} x {8,128} x {sync,group,unsynced},
#      and the log layout over --layouts (with both, six iterations take
#      every durability mode in both layouts),
#      either on a fresh store (pgring_mkfs=1: the first iteration and about
#      one in four) or on the store the previous iteration's kill left.
#      The engine records, per PG, the newest version submitted and the
#      newest acknowledged (pgring_ack_file, tools/fio_engine/ack_record.h:
#      a shared file mapping, so the kill cannot take it).
#   2. Once the engine's setup is done (the ack record appears), after a
#      random delay (one in five within 100 ms, else up to --max-delay-ms),
#      fio is killed with SIGKILL, in one of two ways:
#      trigger   the script creates fio's --trigger-file; fio saves its
#                verify state (which writes it has seen complete), stops
#                issuing writes and runs its trigger command, `kill -KILL`
#                of itself, a few milliseconds later — the writes then in
#                flight are cut in pgring's commit pipeline. This is the
#                only way fio itself can say which writes it saw complete.
#      external  (sync and group mode, half of their iterations) the script
#                sends the SIGKILL at the random moment, mid-stream; fio
#                saves nothing. In these modes pgring commits, and so
#                acknowledges, in submission order, and the engine submits
#                in fio's issue order: the acknowledged writes are exactly
#                the first N of fio's write sequence, N from the ack record.
#      The summary counts the kills that found writes in flight.
#   3. The store as the kill left it: `pgring-tool fsck --deep` must exit 0
#      with "result: clean".
#   4. A second fio run on the same partitions, without mkfs, reads back
#      with verify_only=1 every block fio saw complete (trigger:
#      verify_state_load=1) or the engine acknowledged (external:
#      number_ios=N over the same randseed, which regenerates the same
#      sequence) and checks its crc32c and header (offset, seed) — the exact
#      content, as
#      tests/fio/run_fio_test.sh's verify-only run does. The engine reopens
#      the store (recovery) and:
#        pgring_ack_check   every PG's newest version is at least the newest
#                           acknowledged one (no acknowledged write lost) and
#                           at most the newest submitted one (no record
#                           past a committed tail is ever returned);
#        pgring_verify_log  every live entry, dup and info of every PG is
#                           byte for byte what the writes put there, versions
#                           consecutive (OsdModel::CheckStore).
#      Together: each PG's log holds exactly a prefix of its submitted
#      writes that includes every acknowledged one. (fio_store_check is not
#      used: it compares a finished run's fio output and report, which a
#      killed run does not leave.)
#
# pgring_durability=unsynced acknowledges a write when its ring writes are
# done and commits it up to unsynced_max_delay later, so a crash — a process
# kill included — may lose acknowledged writes by design (docs/DESIGN.md,
# "Durability modes"). In that mode only consistency is checked: the store
# opens, fsck is clean, no entry has wrong content, nothing past the
# submitted writes appears, fio's blocks read back right (the data write
# completes before the acknowledgement in every mode, and a process kill
# does not take the page cache); acknowledged writes
# missing from the log are counted ("lost, unsynced, allowed"), not failed.
#
# Output: one line per iteration, then the summary line
#   fio_kill_campaign: iterations N, kills survived K, failures F, acknowledged
#   writes checked A, log entries verified E, data blocks verified D, lost L, ...
# Exit status: 0 all passed (L must be 0); 1 a check failed (the campaign
# stops there and keeps the work directory, with the failing iteration's job
# files, fio output, engine report, fsck output and a copy of the RocksDB as
# the kill left it); 2 bad usage; 77 skipped: fio missing, or loop devices
# unavailable (not root, no /dev/loop-control, losetup missing or failing).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
# shellcheck source=tests/fio/fio_env.sh
source "$ROOT/tests/fio/fio_env.sh"

ITERATIONS=20
FILES=0
LAYOUTS_ARG="stream perpg"
SEED=""
ENGINE=""
TOOL=""
WORKDIR=""
KEEP=0
MAX_DELAY_MS=2000
CXX_PATH=""
SANITIZE=""

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

die_usage() { echo "fio_kill_campaign: $*" >&2; exit 2; }
skip() { echo "fio_kill_campaign: SKIPPED: $*"; exit 77; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --iterations) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; ITERATIONS=$2; shift 2 ;;
    --files) FILES=1; shift ;;
    --layouts) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; LAYOUTS_ARG=$2; shift 2 ;;
    --seed) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; SEED=$2; shift 2 ;;
    --engine) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; ENGINE=$2; shift 2 ;;
    --tool) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; TOOL=$2; shift 2 ;;
    --workdir) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; WORKDIR=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --max-delay-ms) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; MAX_DELAY_MS=$2; shift 2 ;;
    --cxx) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; CXX_PATH=$2; shift 2 ;;
    --sanitize) [[ $# -ge 2 ]] || die_usage "$1 needs a value"; SANITIZE=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument $1 (--help lists the options)" ;;
  esac
done
[[ "$ITERATIONS" =~ ^[0-9]+$ && "$ITERATIONS" -ge 1 ]] || die_usage "--iterations wants a positive number"
[[ "$MAX_DELAY_MS" =~ ^[0-9]+$ && "$MAX_DELAY_MS" -ge 20 ]] || die_usage "--max-delay-ms wants a number >= 20"
read -r -a LAYOUTS <<< "$LAYOUTS_ARG"
[[ ${#LAYOUTS[@]} -ge 1 ]] || die_usage "--layouts wants one or more of: stream perpg"
for l in "${LAYOUTS[@]}"; do
  [[ $l == stream || $l == perpg ]] || die_usage "--layouts: unknown layout '$l' (known: stream perpg)"
done
[[ -z "$SEED" ]] && SEED=$(( $(date +%s%N) % 1000000007 ))
[[ "$SEED" =~ ^[0-9]+$ ]] || die_usage "--seed wants a number"
[[ -n "$SANITIZE" && -z "$CXX_PATH" ]] && die_usage "--sanitize needs --cxx (to find the runtime)"

command -v fio >/dev/null 2>&1 || skip "fio is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 (to read fio's and the engine's JSON) is not installed"

if [[ -z "$ENGINE" ]]; then
  for so in "$ROOT"/build/*/tools/fio_engine/libfio_pgring.so; do
    if [[ -f "$so" ]]; then ENGINE=$so; break; fi
  done
fi
[[ -n "$ENGINE" && -f "$ENGINE" ]] || die_usage "no libfio_pgring.so (build the fio_pgring target or pass --engine)"
if [[ -z "$TOOL" ]]; then
  candidate="$(dirname "$(dirname "$(dirname "$ENGINE")")")/tools/pgring-tool"
  if [[ -x "$candidate" ]]; then
    TOOL=$candidate
  else
    for t in "$ROOT"/build/*/tools/pgring-tool; do
      if [[ -x "$t" ]]; then TOOL=$t; break; fi
    done
  fi
fi
[[ -n "$TOOL" && -x "$TOOL" ]] || die_usage "no pgring-tool (build the pgring-tool target or pass --tool)"
ENGINE=$(realpath "$ENGINE")   # fio resolves ioengine=external: paths itself
TOOL=$(realpath "$TOOL")

if [[ -z "$WORKDIR" ]]; then
  mkdir -p "$ROOT/build/kill-campaign"
  WORKDIR=$(mktemp -d "$ROOT/build/kill-campaign/run.XXXXXX")
else
  mkdir -p "$WORKDIR"
fi
WORKDIR=$(cd "$WORKDIR" && pwd)

# --- cleanup on every exit path ---------------------------------------------
FIO_PID=""      # fio, while it runs
RUNNER_PID=""   # the subshell waiting for it
LOOP_DEVS=()
FAILED_DIR=""
cleanup() {
  local rc=$?
  if [[ -n "$FIO_PID" ]] && kill -0 "$FIO_PID" 2>/dev/null; then
    kill -KILL "$FIO_PID" 2>/dev/null || true
  fi
  if [[ -n "$RUNNER_PID" ]]; then wait "$RUNNER_PID" 2>/dev/null || true; fi
  local dev
  for dev in "${LOOP_DEVS[@]}"; do
    losetup -d "$dev" 2>/dev/null || echo "fio_kill_campaign: could not detach $dev" >&2
  done
  if [[ $rc -eq 0 && $KEEP -eq 0 ]]; then
    rm -rf "$WORKDIR"
  elif [[ $rc -eq 77 ]]; then
    rm -rf "$WORKDIR"
  else
    echo "fio_kill_campaign: work directory kept: $WORKDIR${FAILED_DIR:+ (failing iteration: $FAILED_DIR)}"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the partitions -----------------------------------------------------------
LOG_SIZE=64M      # 64 KiB chunks: 1024 of them
DATA_SIZE=512M    # 131072 blocks of 4 KiB: more than any run writes
LOG_IMG=$WORKDIR/log.img
DATA_IMG=$WORKDIR/data.img
rm -f "$LOG_IMG" "$DATA_IMG"
truncate -s "$LOG_SIZE" "$LOG_IMG"
truncate -s "$DATA_SIZE" "$DATA_IMG"
if [[ $FILES -eq 1 ]]; then
  LOG_DEV=$LOG_IMG
  DATA_DEV=$DATA_IMG
  MEDIUM="files"
else
  [[ $EUID -eq 0 ]] || skip "loop devices need root (use --files for file-backed partitions)"
  [[ -e /dev/loop-control ]] || skip "no /dev/loop-control (no loop device support here; use --files)"
  command -v losetup >/dev/null 2>&1 || skip "losetup is not installed (use --files)"
  for img in "$LOG_IMG" "$DATA_IMG"; do
    if ! dev=$(losetup --find --show "$img" 2>&1); then
      skip "losetup --find --show $img failed: $dev"
    fi
    [[ -b "$dev" ]] || skip "losetup gave '$dev', not a block device"
    LOOP_DEVS+=("$dev")
  done
  LOG_DEV=${LOOP_DEVS[0]}
  DATA_DEV=${LOOP_DEVS[1]}
  MEDIUM="loop devices"
fi
DB=$WORKDIR/db
ACKS=$WORKDIR/acks.bin

echo "fio_kill_campaign: $ITERATIONS iterations on $MEDIUM (log $LOG_DEV, data $DATA_DEV), seed $SEED"
echo "fio_kill_campaign: engine $ENGINE, tool $TOOL, work directory $WORKDIR"
RANDOM=$SEED

# --- fio job files ------------------------------------------------------------
# write_job FILE MODE MKFS PGS QD DURABILITY FIO_SEED IT_DIR [N]
#   MODE write: the run that is killed; verify-state: reads back what fio's
#   saved verify state says was complete; verify-count: reads back the first
#   N writes of the sequence (N > 0); open-only: no data check (N = 0).
write_job() {
  local file=$1 mode=$2 mkfs=$3 pgs=$4 qd=$5 durability=$6 fio_seed=$7 it=$8 count=${9:-0}
  {
    echo "; Written by tests/crash/kill/fio_kill_campaign.sh ($mode run)."
    echo "[global]"
    echo "ioengine=external:$ENGINE"
    echo "pgring_log_dev=$LOG_DEV"
    echo "pgring_db=$DB"
    echo "pgring_mkfs=$mkfs"
    echo "pgring_chunk_size=64k"
    echo "pgring_pgs=$pgs"
    echo "pgring_object_size=64k"
    echo "; Ceph's trim rules scaled down (as tests/fio/run_fio_test.sh): 20-40"
    echo "; entries per PG, trims of at least 10, 60 versions of dups — the rings"
    echo "; wrap and reuse chunks all the time."
    echo "osd_target_pg_log_entries_per_osd=480"
    echo "osd_min_pg_log_entries=20"
    echo "osd_max_pg_log_entries=40"
    echo "osd_pg_log_trim_min=10"
    echo "osd_pg_log_dups_tracked=60"
    echo "pgring_durability=$durability"
    echo "pgring_layout=$LAYOUT"
    if [[ $mode == write ]]; then
      echo "pgring_stats=$it/write-report.json"
    else
      echo "pgring_stats=$it/verify-report.json"
    fi
    if [[ $mode == write ]]; then
      echo "pgring_ack_file=$ACKS"
    else
      echo "pgring_ack_check=$ACKS"
      echo "pgring_verify_log=1"
    fi
    echo "thread=1"
    echo "filename=$DATA_DEV"
    echo "size=$DATA_SIZE"
    echo "bs=4k"
    echo "direct=1"
    echo "iodepth=$qd"
    echo "randseed=$fio_seed"
    case $mode in
      write)
        echo "rw=randwrite"
        echo "verify=crc32c"
        echo "do_verify=0"
        echo "verify_state_save=1"
        ;;
      verify-state)
        echo "rw=randwrite"
        echo "verify=crc32c"
        echo "verify_fatal=1"
        echo "verify_only=1"
        echo "do_verify=1"
        echo "verify_state_save=0"
        echo "verify_state_load=1"
        ;;
      verify-count)
        echo "; The first $count writes of the killed run's sequence (the same"
        echo "; randseed and random map regenerate it): in sync and group mode"
        echo "; commits, hence acknowledgements, follow submission order, so the"
        echo "; acknowledged writes are exactly a prefix of it."
        echo "rw=randwrite"
        echo "verify=crc32c"
        echo "verify_fatal=1"
        echo "verify_only=1"
        echo "do_verify=1"
        echo "verify_state_save=0"
        echo "number_ios=$count"
        ;;
      open-only)
        echo "; Nothing was acknowledged: only the engine's checks at open and close."
        echo "rw=read"
        echo "number_ios=1"
        ;;
    esac
    echo
    echo "[kill]"
  } >"$file"
}

# json_get FILE KEY... — prints report values (python3; jq is not a
# dependency). fio may put notes before its JSON document: skipped.
json_fields() {
  python3 - "$@" <<'PY'
import json, sys
path = sys.argv[1]
text = open(path).read()
doc = json.loads(text[text.index("{"):])
for key in sys.argv[2:]:
    v = doc
    for part in key.split("."):
        if isinstance(v, list):
            v = v[int(part)]
        else:
            v = v.get(part) if isinstance(v, dict) else None
    if isinstance(v, bool):
        v = int(v)
    print("null" if v is None else v)
PY
}

# ack_totals FILE — "acknowledged in_flight" of an ack record
# (tools/fio_engine/ack_record.cc: 32-byte header, then per PG u64 start,
# submitted, acked): sums of acked - start and submitted - acked.
ack_totals() {
  python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"PGRACK1\0", "not an ack record"
pgs = struct.unpack_from("<I", data, 8)[0]
acked = in_flight = 0
for pg in range(pgs):
    start, submitted, ack = struct.unpack_from("<QQQ", data, 32 + 24 * pg)
    acked += ack - start
    in_flight += submitted - ack
print(acked, in_flight)
PY
}

# --- the campaign -------------------------------------------------------------
DURABILITIES=(sync group unsynced)
QDS=(1 16 32)
PGS_LIST=(8 128)

acked_durable=0 trigger_kills=0 external_kills=0 kills=0 finished_first=0 failures=0 acked_checked=0 entries_verified=0 blocks_verified=0
lost=0 lost_unsynced=0 in_flight_kills=0 mkfs_count=0
declare -A LAYOUT_KILLS=()
start_s=$SECONDS

fail() {
  echo "FAIL (iteration $i, $combo): $*" >&2
  failures=$((failures + 1))
  FAILED_DIR=$IT
}

summary() {
  local by_layout="" l
  for l in "${LAYOUTS[@]}"; do by_layout+="${by_layout:+, }$l ${LAYOUT_KILLS[$l]:-0}"; done
  echo "fio_kill_campaign: iterations $done_iterations, kills survived $kills ($by_layout;" \
       "$trigger_kills by fio's trigger, $external_kills from outside; plus $finished_first" \
       "runs that finished first), failures $failures," \
       "acknowledged writes checked $acked_checked ($acked_durable in sync/group mode)," \
       "log entries verified $entries_verified," \
       "data blocks verified $blocks_verified, lost $lost (unsynced, allowed: $lost_unsynced)," \
       "kills with writes in flight $in_flight_kills, fresh stores $mkfs_count," \
       "time $((SECONDS - start_s)) s, seed $SEED, $MEDIUM"
}

done_iterations=0
for ((i = 0; i < ITERATIONS; i++)); do
  # The combination: over 18 iterations every (durability, queue depth, PGs).
  k=$((i % 18))
  durability=${DURABILITIES[k % 3]}
  qd=${QDS[(k + k / 6) % 3]}
  pgs=${PGS_LIST[(k / 3) % 2]}
  # Every other iteration, shifted by one each 18 so that every combination
  # meets every layout (in 36 iterations with two).
  LAYOUT=${LAYOUTS[(i + i / 18) % ${#LAYOUTS[@]}]}
  mkfs=0
  if [[ $i -eq 0 || $((RANDOM % 4)) -eq 0 ]]; then mkfs=1; fi
  # Mostly anywhere in the window; one kill in five within 100 ms of the
  # first write.
  if [[ $((RANDOM % 5)) -eq 0 ]]; then
    delay_ms=$((RANDOM % 100))
  else
    delay_ms=$((20 + (RANDOM * 32768 + RANDOM) % (MAX_DELAY_MS - 19)))
  fi
  fio_seed=$((SEED % 100000 * 1000 + i + 1))
  # How the kill comes: fio's trigger (fio saves which writes it saw
  # complete, stops issuing, kills itself) or a SIGKILL from here at a
  # random moment mid-stream (fio saves nothing; in sync and group mode the
  # acknowledged writes are the first N of fio's sequence, N from the ack
  # record). Unsynced acknowledges out of submission order: trigger only.
  kill_style=trigger
  if [[ $durability != unsynced && $((RANDOM % 2)) -eq 0 ]]; then kill_style=external; fi
  combo="$LAYOUT $durability qd=$qd pgs=$pgs mkfs=$mkfs $kill_style ${delay_ms}ms"
  IT=$WORKDIR/iter-$(printf '%04d' "$i")
  rm -rf "$IT"
  mkdir -p "$IT/state"
  if [[ $mkfs -eq 1 ]]; then mkfs_count=$((mkfs_count + 1)); fi

  write_job "$IT/write.fio" write "$mkfs" "$pgs" "$qd" "$durability" "$fio_seed" "$IT"
  rm -f "$ACKS" "$ACKS.tmp"

  # 1-2. Write, and kill at a random moment after setup.
  if [[ $kill_style == trigger ]]; then
    # The trigger command runs in a shell fio starts: its $PPID is fio.
    # shellcheck disable=SC2016
    trigger_args=(--trigger-file="$IT/kill.trigger" --trigger='kill -KILL $PPID')
  else
    trigger_args=()
  fi
  # fio runs under a subshell that waits for it and exits with its status,
  # so that this shell does not announce the SIGKILL ("Killed").
  rm -f "$IT/fio.pid"
  (
    sanitizer_env "$CXX_PATH" "$SANITIZE"
    fio --output-format=json --output="$IT/write.json" --aux-path="$IT/state" \
      "${trigger_args[@]}" "$IT/write.fio" &
    echo $! >"$IT/fio.pid"
    wait $!
  ) >"$IT/write.out" 2>&1 &
  RUNNER_PID=$!
  until [[ -s "$IT/fio.pid" ]] || ! kill -0 "$RUNNER_PID" 2>/dev/null; do sleep 0.01; done
  FIO_PID=$(cat "$IT/fio.pid" 2>/dev/null || true)
  ready=0
  for ((w = 0; w < 6000; w++)); do   # up to 120 s for mkfs, PG creation, prefill
    if [[ -e "$ACKS" ]]; then ready=1; break; fi
    kill -0 "$FIO_PID" 2>/dev/null || break
    sleep 0.02
  done
  if [[ $ready -eq 0 ]]; then
    rc=0; wait "$RUNNER_PID" || rc=$?; FIO_PID="" RUNNER_PID=""
    fail "the engine never finished its setup (fio exit status $rc); see $IT/write.out"
    break
  fi
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if [[ $kill_style == trigger ]]; then
    touch "$IT/kill.trigger"
  else
    kill -KILL "$FIO_PID" 2>/dev/null || true
  fi
  for ((w = 0; w < 1500; w++)); do   # fio polls the trigger file every 10 ms
    kill -0 "$FIO_PID" 2>/dev/null || break
    sleep 0.02
  done
  if kill -0 "$FIO_PID" 2>/dev/null; then
    kill -KILL "$FIO_PID" 2>/dev/null || true
    wait "$RUNNER_PID" || true
    FIO_PID="" RUNNER_PID=""
    fail "fio did not act on its trigger file within 30 s (killed it); see $IT/write.out"
    break
  fi
  rc=0; wait "$RUNNER_PID" || rc=$?; FIO_PID="" RUNNER_PID=""
  if [[ $rc -eq 137 ]]; then
    kills=$((kills + 1))
    LAYOUT_KILLS[$LAYOUT]=$(( ${LAYOUT_KILLS[$LAYOUT]:-0} + 1 ))
    if [[ $kill_style == trigger ]]; then
      trigger_kills=$((trigger_kills + 1))
    else
      external_kills=$((external_kills + 1))
    fi
  elif [[ $rc -eq 0 ]]; then
    finished_first=$((finished_first + 1))
  else
    fail "fio exited with status $rc (expected 137, killed); see $IT/write.out"
    break
  fi
  cp -a "$DB" "$IT/db.after-kill"
  cp "$ACKS" "$IT/acks.after-kill"
  # The ack record as the kill left it: acknowledged writes, writes in flight.
  read -r n_acked n_inflight < <(ack_totals "$ACKS")

  # 3. The store as the kill left it.
  rc=0
  "$TOOL" --dev "$LOG_DEV" --db "$DB" fsck --deep >"$IT/fsck.txt" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]] || ! grep -q '^result: clean' "$IT/fsck.txt"; then
    fail "pgring-tool fsck --deep exited with $rc after the kill:"
    sed -n '1,40p' "$IT/fsck.txt" >&2
    break
  fi

  # 4. Read back what fio saw complete; reopen and check the logs.
  if [[ $kill_style == trigger ]]; then
    verify_mode=verify-state
  elif [[ $n_acked -gt 0 ]]; then
    verify_mode=verify-count
  else
    verify_mode=open-only
  fi
  write_job "$IT/verify.fio" "$verify_mode" 0 "$pgs" "$qd" "$durability" "$fio_seed" "$IT" "$n_acked"
  rc=0
  (
    sanitizer_env "$CXX_PATH" "$SANITIZE"
    exec fio --output-format=json --output="$IT/verify.json" --aux-path="$IT/state" "$IT/verify.fio"
  ) >"$IT/verify.out" 2>&1 || rc=$?
  if [[ $rc -ne 0 || ! -s "$IT/verify-report.json" ]]; then
    # The engine's report names the failed check when it got that far.
    [[ -s "$IT/verify-report.json" ]] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"verify": d["verify"], "ack_check": d["ack_check"]}, indent=1))' "$IT/verify-report.json" >&2
    fail "the verify run exited with $rc:"
    tail -n 30 "$IT/verify.out" >&2
    break
  fi
  mapfile -t r < <(json_fields "$IT/verify-report.json" verify.ok verify.entries \
    ack_check.ok ack_check.acked_writes ack_check.lost ack_check.beyond_submitted \
    ack_check.in_flight ack_check.committed_unacked ack_check.error_count)
  mapfile -t f < <(json_fields "$IT/verify.json" jobs.0.error jobs.0.read.total_ios)
  v_ok=${r[0]} v_entries=${r[1]} a_ok=${r[2]} a_acked=${r[3]} a_lost=${r[4]} a_beyond=${r[5]}
  a_inflight=${r[6]} a_unacked=${r[7]} a_errors=${r[8]} fio_err=${f[0]} fio_reads=${f[1]}
  problems=()
  [[ $v_ok == 1 ]] || problems+=("the engine's log check failed")
  [[ $a_ok == 1 && $a_beyond == 0 ]] || problems+=("the ack check failed ($a_errors problems, $a_beyond versions past the submitted ones)")
  [[ $fio_err == 0 ]] || problems+=("fio's verify job error=$fio_err")
  if [[ $durability != unsynced && $a_lost != 0 ]]; then
    problems+=("$a_lost acknowledged write(s) missing from the logs")
  fi
  [[ $a_inflight == "$n_inflight" ]] || problems+=("the engine's ack check counted $a_inflight writes in flight, the record $n_inflight")
  [[ $a_acked == "$n_acked" ]] || problems+=("the engine's ack check counted $a_acked acknowledged writes, the record $n_acked")
  case $verify_mode in
    verify-state)
      # fio verified what it had seen complete when it saved its state: no
      # more than the engine acknowledged, and short of it by at most the
      # writes in flight then (the queue depth) plus one being issued.
      if [[ $fio_reads -gt $a_acked || $((a_acked - fio_reads)) -gt $((qd + 1)) ]]; then
        problems+=("fio verified $fio_reads blocks, the engine acknowledged $a_acked writes")
      fi
      ;;
    verify-count)
      [[ $fio_reads == "$n_acked" ]] || problems+=("fio verified $fio_reads blocks of the $n_acked acknowledged")
      ;;
    open-only) fio_reads=0 ;;
  esac
  if [[ ${#problems[@]} -gt 0 ]]; then
    fail "$(IFS=';'; echo "${problems[*]}")"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"verify": d["verify"], "ack_check": d["ack_check"]}, indent=1))' \
      "$IT/verify-report.json" >&2 || true
    break
  fi
  acked_checked=$((acked_checked + a_acked))
  entries_verified=$((entries_verified + v_entries))
  blocks_verified=$((blocks_verified + fio_reads))
  if [[ $durability == unsynced ]]; then
    lost_unsynced=$((lost_unsynced + a_lost))
  else
    lost=$((lost + a_lost))
    acked_durable=$((acked_durable + a_acked))
  fi
  if [[ $a_inflight -gt 0 ]]; then in_flight_kills=$((in_flight_kills + 1)); fi
  note=""
  if [[ $a_lost -gt 0 ]]; then note="  lost (unsynced, allowed) $a_lost"; fi
  printf 'iteration %4d  %-48s acked %6d  in flight %3d  committed unacked %3d  blocks verified %6d%s\n' \
    "$i" "$combo" "$a_acked" "$a_inflight" "$a_unacked" "$fio_reads" "$note"
  done_iterations=$((i + 1))
  [[ $KEEP -eq 1 ]] || rm -rf "$IT"
done
if [[ $failures -gt 0 ]]; then done_iterations=$((i + 1)); fi

summary
if [[ $failures -gt 0 || $lost -gt 0 ]]; then
  exit 1
fi
echo "PASS"
