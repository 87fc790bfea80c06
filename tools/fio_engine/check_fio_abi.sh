#!/usr/bin/env bash
# tools/fio_engine/check_fio_abi.sh — checks that the fio source tree the
# engine is built against lays out fio's structures exactly as the installed
# fio binary does.
#
# Usage: check_fio_abi.sh FIO_SOURCE_DIR [FIO_BINARY]
#
# An external engine shares struct thread_data, thread_options, io_u, fio_file
# and ioengine_ops with the binary that loads it; a wrong layout would not fail
# to load, it would read the wrong fields. fio exports its functions (it links
# with -rdynamic), so this script compiles a few fio sources whose functions
# walk those structures (ioengines.c, io_u.c, filesetup.c) with Debian's build
# flags, and compares each function with the binary's: the same size, and the
# same instructions with the same operands — every struct offset and constant —
# once addresses (call and jump targets, RIP-relative data) are masked.
#
# Exit status: 0 when every function matches, 1 on a mismatch, 77 when the
# check cannot run (no objdump, or the binary carries no symbol sizes).
set -euo pipefail

SRC=${1:?usage: $0 FIO_SOURCE_DIR [FIO_BINARY]}
FIO=${2:-$(command -v fio)}
FUNCS=(td_io_queue td_io_getevents td_io_init td_io_open_file td_io_close_file
       get_io_u io_u_queued_complete io_u_mark_submit io_u_mark_complete
       generic_open_file generic_close_file generic_get_file_size)

command -v objdump >/dev/null || { echo "check_fio_abi: no objdump: skipped"; exit 77; }
command -v dpkg-buildflags >/dev/null || { echo "check_fio_abi: no dpkg-buildflags: skipped"; exit 77; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Compile in a copy so the configured source tree stays untouched.
cp -a "$SRC/." "$WORK/src"
(
  cd "$WORK/src"
  # The flags debian/rules builds with (dh: hardening=+all, from dpkg-buildflags).
  eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
  make -s ioengines.o io_u.o filesetup.o >"$WORK/make.log" 2>&1
) || { echo "check_fio_abi: compiling fio sources failed:"; cat "$WORK/make.log"; exit 1; }

# Instructions with addresses masked: one per line.
normalize() {
  sed -n 's/^ *[0-9a-f]\+:\t//p' |
    sed -e 's/ *#.*$//' -e 's/0x[0-9a-f]*(%rip)/RIP/g' -e 's/\b[0-9a-f]\+ <[^>]*>/T/g' \
        -e 's/[[:space:]]\+/ /g'
}

fail=0
for fn in "${FUNCS[@]}"; do
  read -r addr size < <(nm -D -S --defined-only "$FIO" | awk -v f="$fn" '$4 == f { print $1, $2 }') || true
  if [[ -z "${size:-}" ]]; then
    echo "check_fio_abi: $fn: not exported with a size by $FIO: skipped"; exit 77
  fi
  obj=""
  for o in ioengines.o io_u.o filesetup.o; do
    if nm "$WORK/src/$o" | awk -v f="$fn" '$2 == "T" && $3 == f { found = 1 } END { exit !found }'; then obj=$o; fi
  done
  [[ -n "$obj" ]] || { echo "check_fio_abi: $fn: not found in the compiled sources"; fail=1; continue; }
  read -r oaddr osize < <(nm -S "$WORK/src/$obj" | awk -v f="$fn" '$4 == f { print $1, $2 }')
  if [[ $((16#$osize)) -ne $((16#$size)) ]]; then
    echo "check_fio_abi: $fn: $((16#$size)) bytes in $FIO, $((16#$osize)) compiled from $SRC"; fail=1; continue
  fi
  objdump -d --no-show-raw-insn --start-address="0x$addr" \
    --stop-address="$(printf '0x%x' $((16#$addr + 16#$size)))" "$FIO" | normalize >"$WORK/bin.s"
  objdump -d --no-show-raw-insn -j .text --start-address="0x$oaddr" \
    --stop-address="$(printf '0x%x' $((16#$oaddr + 16#$osize)))" "$WORK/src/$obj" | normalize >"$WORK/src.s"
  if ! diff -q "$WORK/bin.s" "$WORK/src.s" >/dev/null; then
    echo "check_fio_abi: $fn: instructions differ:"; diff "$WORK/bin.s" "$WORK/src.s" | head -20; fail=1; continue
  fi
  echo "check_fio_abi: $fn: identical ($((16#$size)) bytes, $(wc -l <"$WORK/bin.s") instructions)"
done
exit $fail
