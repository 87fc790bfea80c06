# shellcheck shell=bash
# bench/loopdev.sh — loop-device layouts of an OSD's devices for the
# benchmarks (sourced, not run: bench/blockdev.sh, bench/modes.sh,
# bench/report.sh and scripts/main-job.sh use it). Loop devices with direct
# I/O stand in for disks, laid out as ceph-volume lays out an OSD:
#   separate  data, log and RocksDB (ext4) each on its own device
#   shared    data on one device; the log (raw) and RocksDB (ext4) as two
#             partitions of another (losetup -P): one flush covers both, and
#             the engine's flush-domain proof must find that
# at 512 or 4096-byte logical sectors.
#
#   source bench/loopdev.sh
#   loopdev_usable || { echo "SKIPPED: $LOOPDEV_WHY"; exit 0; }
#   trap loopdev_cleanup EXIT
#   loopdev_make separate 4096 "$WORK" || { echo "SKIPPED: $LOOPDEV_WHY"; exit 0; }
#   PGRING_DATA=$LOOPDEV_DATA PGRING_LOG=$LOOPDEV_LOG PGRING_DB=$LOOPDEV_DB ...
#
# loopdev_make sets
#   LOOPDEV_DATA, LOOPDEV_LOG   the data and log devices (/dev/loopN, /dev/loopNp1)
#   LOOPDEV_DB                  RocksDB's directory: the mounted ext4 (WORK/db-SECTOR)
#   LOOPDEV_ROLES, LOOPDEV_NAMES  arrays, one entry per device to count, in the
#                               order data, log, db (and disk: the shared
#                               layout's whole metadata disk, where Linux counts
#                               the partitions' flushes); names as in
#                               /sys/class/block
# Sizes (numfmt --from=iec): LOOPDEV_DATA_SIZE (2G), LOOPDEV_LOG_SIZE (2G),
# LOOPDEV_DB_SIZE (4G; the shared layout's metadata disk is log + db). The
# backing files (WORK/data.img, log.img, db.img, meta.img) are written with
# zeros once and kept for the next run; rm them to free the space.
#
# loopdev_cleanup unmounts, detaches and removes every mount, loop device and
# node loopdev_make made (nothing else: other loop devices on the machine are
# not touched), and can run any number of times; run it from an EXIT trap.
# Needs root, losetup, sfdisk, partx, mkfs.ext4, mount, mknod (no udev:
# missing nodes are made from /sys/class/block/*/dev).

LOOPDEV_LOOPS=() LOOPDEV_MOUNTS=() LOOPDEV_NODES=()
LOOPDEV_WHY=""

# 0 if loop devices can be made here; else 1 with LOOPDEV_WHY saying why.
loopdev_usable() {
  if [[ $(id -u) -ne 0 ]]; then LOOPDEV_WHY="needs root (loop devices, mounts)"; return 1; fi
  local c
  for c in losetup sfdisk partx mkfs.ext4 mount umount mknod numfmt; do
    command -v "$c" >/dev/null 2>&1 || { LOOPDEV_WHY="$c is not installed"; return 1; }
  done
  [[ -e /dev/loop-control ]] || { LOOPDEV_WHY="no /dev/loop-control"; return 1; }
  return 0
}

# LAYOUT:SECTOR (separate:4096) -> LOOPDEV_LAYOUT and LOOPDEV_SECTOR; 1 with
# LOOPDEV_WHY if it is not one.
loopdev_parse() {  # SPEC
  LOOPDEV_LAYOUT=${1%%:*} LOOPDEV_SECTOR=${1#*:}
  case $LOOPDEV_LAYOUT in separate | shared) ;; *)
    LOOPDEV_WHY="layout '$LOOPDEV_LAYOUT' in '$1' is neither separate nor shared"; return 1 ;;
  esac
  case $LOOPDEV_SECTOR in 512 | 4096) ;; *)
    LOOPDEV_WHY="sector size '$LOOPDEV_SECTOR' in '$1' is neither 512 nor 4096 (LAYOUT:SECTOR)"; return 1 ;;
  esac
}

loopdev_cleanup() {
  local m l n
  for m in "${LOOPDEV_MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  for l in "${LOOPDEV_LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
  for n in "${LOOPDEV_NODES[@]}"; do rm -f "$n"; done
  LOOPDEV_MOUNTS=() LOOPDEV_LOOPS=() LOOPDEV_NODES=()
  return 0
}

# /dev/<name> from /sys/class/block/<name>/dev, if devtmpfs has not made it.
loopdev_node() {  # NAME
  local n=$1 majmin
  [[ -b /dev/$n ]] && return 0
  majmin=$(cat "/sys/class/block/$n/dev") || { LOOPDEV_WHY="no /sys/class/block/$n/dev"; return 1; }
  mknod "/dev/$n" b "${majmin%%:*}" "${majmin##*:}" || { LOOPDEV_WHY="mknod /dev/$n failed"; return 1; }
  LOOPDEV_NODES+=("/dev/$n")
}

# A loop device with direct I/O and logical sector SECTOR over WORK/NAME.img
# of SIZE, its path in the variable VAR (not printed: a command
# substitution's subshell would lose it from LOOPDEV_LOOPS). The backing
# file is written with zeros once, not fallocated: the host file system
# converts unwritten extents on their first write, a cost the first job
# would pay and the next ones not.
loopdev_loop() {  # VAR WORK NAME SIZE SECTOR [-P]
  local img=$2/$3.img dev want
  want=$(numfmt --from=iec "$4") || { LOOPDEV_WHY="bad size $4"; return 1; }
  if [[ $(stat -c %s "$img" 2>/dev/null || echo 0) -ne $want || -e $img.partial ]]; then
    echo "loopdev: writing $img ($(numfmt --to=iec "$want") of zeros, once)" >&2
    touch "$img.partial" || { LOOPDEV_WHY="cannot write in $2"; return 1; }
    dd if=/dev/zero of="$img" bs=4M count="$want" iflag=count_bytes oflag=direct status=none ||
      { LOOPDEV_WHY="writing $img failed (disk full?)"; return 1; }
    rm -f "$img.partial"
  fi
  dev=$(losetup --find --show --direct-io=on --sector-size "$5" ${6:-} "$img") ||
    { LOOPDEV_WHY="losetup --direct-io=on --sector-size $5 failed"; return 1; }
  LOOPDEV_LOOPS+=("$dev")
  loopdev_node "${dev#/dev/}" || return 1
  printf -v "$1" '%s' "$dev"
}

# ext4 on DEV, mounted at DIR. Its inode tables and journal are zeroed by
# mkfs itself, not lazily after the mount: ext4lazyinit's writes (some 64
# MiB on 4 GiB, over the first minutes) would otherwise land in the first
# jobs' counts of RocksDB's device.
loopdev_fs() {  # DEV DIR
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1" >/dev/null ||
    { LOOPDEV_WHY="mkfs.ext4 $1 failed"; return 1; }
  mkdir -p "$2"
  mount "$1" "$2" || { LOOPDEV_WHY="mount $1 $2 failed"; return 1; }
  LOOPDEV_MOUNTS+=("$2")
}

# Makes LAYOUT at SECTOR-byte sectors over backing files in WORK (see the
# header for what it sets). 1 with LOOPDEV_WHY if a step fails; what was
# made by then is left for loopdev_cleanup.
loopdev_make() {  # LAYOUT SECTOR WORK
  local layout=$1 sector=$2 work=$3 data="" logdev="" dbdev="" meta="" m p log_mib
  mkdir -p "$work" || { LOOPDEV_WHY="cannot make $work"; return 1; }
  local ds=${LOOPDEV_DATA_SIZE:-2G} ls=${LOOPDEV_LOG_SIZE:-2G} bs=${LOOPDEV_DB_SIZE:-4G}
  LOOPDEV_DB=$work/db-$sector
  case $layout in
    separate)
      loopdev_loop data "$work" data "$ds" "$sector" || return 1
      loopdev_loop logdev "$work" log "$ls" "$sector" || return 1
      loopdev_loop dbdev "$work" db "$bs" "$sector" || return 1
      loopdev_fs "$dbdev" "$LOOPDEV_DB" || return 1
      LOOPDEV_DATA=$data LOOPDEV_LOG=$logdev
      LOOPDEV_ROLES=(data log db)
      LOOPDEV_NAMES=("${data#/dev/}" "${logdev#/dev/}" "${dbdev#/dev/}") ;;
    shared)
      local ms
      ms=$(( $(numfmt --from=iec "$ls") + $(numfmt --from=iec "$bs") ))
      loopdev_loop data "$work" data "$ds" "$sector" || return 1
      loopdev_loop meta "$work" meta "$ms" "$sector" -P || return 1
      # The log first (raw), RocksDB after it, as ceph-volume puts a DB
      # partition beside the WAL/block ones.
      log_mib=$(( $(numfmt --from=iec "$ls") / 1048576 ))
      printf 'label: gpt\n,%sMiB\n,\n' "$log_mib" | sfdisk -q "$meta" >/dev/null ||
        { LOOPDEV_WHY="sfdisk $meta failed"; return 1; }
      partx -u "$meta" 2>/dev/null || partx -a "$meta" 2>/dev/null || true
      m=${meta#/dev/}
      for p in "${m}p1" "${m}p2"; do
        for _ in $(seq 50); do [[ -e /sys/class/block/$p ]] && break; sleep 0.1; done
        [[ -e /sys/class/block/$p ]] || { LOOPDEV_WHY="no partition $p after partx"; return 1; }
        loopdev_node "$p" || return 1
      done
      loopdev_fs "/dev/${m}p2" "$LOOPDEV_DB" || return 1
      LOOPDEV_DATA=$data LOOPDEV_LOG=/dev/${m}p1
      LOOPDEV_ROLES=(data log db disk)
      LOOPDEV_NAMES=("${data#/dev/}" "${m}p1" "${m}p2" "$m") ;;
    *) LOOPDEV_WHY="unknown layout $layout (separate or shared)"; return 1 ;;
  esac
}

# The write fields of /sys/class/block/NAME/stat: requests, 512-byte sectors,
# flushes (the 16th field, since Linux 5.5; 0 where there is none).
loopdev_stat() { awk '{print $5, $7, ($16 == "" ? 0 : $16)}' "/sys/class/block/$1/stat"; }

# One line per device of the layout: ROLE NAME REQUESTS SECTORS FLUSHES.
loopdev_snapshot() {  # FILE
  local i
  for i in "${!LOOPDEV_NAMES[@]}"; do
    echo "${LOOPDEV_ROLES[$i]} ${LOOPDEV_NAMES[$i]} $(loopdev_stat "${LOOPDEV_NAMES[$i]}")"
  done >"$1"
}

# The fio jobs on a layout: loopdev_make in WORK with the data and log
# sizes PGRING_SIZE and PGRING_LOG_SIZE and RocksDB's DB_SIZE, then
# PGRING_DATA, PGRING_LOG and PGRING_DB exported to it, and
# LOOPDEV_COUNTED the "role:name" list of the devices counted. 1 with
# LOOPDEV_WHY when the layout cannot be made. The caller sets the EXIT trap.
loopdev_use() {  # LAYOUT SECTOR WORK DB_SIZE
  LOOPDEV_DATA_SIZE=$PGRING_SIZE LOOPDEV_LOG_SIZE=$PGRING_LOG_SIZE LOOPDEV_DB_SIZE=$4
  loopdev_make "$1" "$2" "$3" || return 1
  export PGRING_DATA=$LOOPDEV_DATA PGRING_LOG=$LOOPDEV_LOG PGRING_DB=$LOOPDEV_DB
  LOOPDEV_COUNTED=""
  local i
  for i in "${!LOOPDEV_NAMES[@]}"; do
    LOOPDEV_COUNTED+="${LOOPDEV_ROLES[$i]}:${LOOPDEV_NAMES[$i]} "
  done
}
