#!/usr/bin/env bash
# scripts/fetch-fio-source.sh — put the Debian source package of the installed
# fio binary, unpacked with Debian's patches and configured, in a directory, so
# the pgring fio engine (tools/fio_engine) builds against exactly the headers
# the fio binary was built from. No fio code is kept in the repository.
#
# Usage:
#   fetch-fio-source.sh DEST_DIR   fetch (if needed) and configure; prints the
#                                  source directory (DEST_DIR/fio-<version>)
#                                  as the last line on stdout
#   fetch-fio-source.sh --prepare  only the steps that need root: a deb-src
#                                  entry for the Debian archive and dpkg-dev
#                                  (scripts/install-deps.sh runs this)
#
# How:
# 1. The version is the installed binary's (dpkg-query -W fio, e.g. 3.33-3);
#    `fio --version` must agree with its upstream part.
# 2. apt needs a deb-src entry: if apt cannot find the source of that version,
#    /etc/apt/sources.list.d/pgring-deb-src.sources is written, mirroring the
#    `Types: deb` stanzas of /etc/apt/sources.list.d/debian.sources (or the
#    `deb` lines of /etc/apt/sources.list) with `Types: deb-src`, followed by
#    `apt-get update`. dpkg-dev (dpkg-source) unpacks and patches the source.
# 3. `apt-get source --only-source fio=<version>` downloads it; apt checks the
#    files against the signed archive index.
# 4. `./configure --disable-native --prefix=/usr` writes config-host.h, which
#    fio's headers need. Debian configures with `--enable-gfio --enable-libnbd`
#    too; those add the GTK front end and the nbd engine, need GTK and libnbd
#    headers, and change nothing in the headers an engine includes, so they are
#    left out. (The structures an engine touches — thread_data, thread_options,
#    io_u up to its engine-private union, fio_file, ioengine_ops — contain no
#    configure-dependent fields; tools/fio_engine/check_fio_abi.sh compares
#    code compiled from this tree with the installed binary.)
#
# Idempotent and offline once done: a stamp file records the fetched version.
set -euo pipefail

log() { echo "fetch-fio-source: $*" >&2; }
die() { log "error: $*"; exit 1; }

SUDO=()
need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to $1"
    SUDO=(sudo)
  fi
}

installed_fio_version() {
  local v
  v=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
  [[ -n "$v" ]] || die "the fio package is not installed (scripts/install-deps.sh installs it)"
  echo "$v"
}

# True if apt knows where to download the source of fio=$1.
apt_has_source() {
  apt-get source --print-uris --only-source "fio=$1" >/dev/null 2>&1
}

DEB_SRC_FILE=/etc/apt/sources.list.d/pgring-deb-src.sources

# Writes $DEB_SRC_FILE: every `Types: deb` stanza of debian.sources as deb-src,
# or, on systems with a one-line sources.list, one stanza per `deb` line.
write_deb_src_entry() {
  local tmp
  tmp=$(mktemp)
  {
    echo "# Written by pgring's scripts/fetch-fio-source.sh: the source packages"
    echo "# of the Debian archive, for 'apt-get source fio' (the fio engine builds"
    echo "# against the headers of the installed fio). Safe to delete."
    echo
  } >"$tmp"
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    # deb822 stanzas are separated by blank lines; keep the ones whose Types
    # include "deb" and rewrite that field.
    awk '
      BEGIN { RS = ""; ORS = "\n\n" }
      {
        if ($0 !~ /(^|\n)Types:[^\n]*(^|[ \t])deb([ \t]|\n|$)/) next
        n = split($0, lines, "\n"); out = ""
        for (i = 1; i <= n; i++) {
          if (lines[i] ~ /^Types:/) lines[i] = "Types: deb-src"
          out = out lines[i] (i < n ? "\n" : "")
        }
        print out
      }' /etc/apt/sources.list.d/debian.sources >>"$tmp"
  elif [[ -f /etc/apt/sources.list ]]; then
    # "deb [opts] URI SUITE COMPONENT..." -> one deb822 stanza each.
    awk '
      $1 == "deb" {
        i = 2; opts = ""
        if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
        uri = $i; suite = $(i + 1); comps = ""
        for (j = i + 2; j <= NF; j++) comps = comps (comps == "" ? "" : " ") $j
        printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uri, suite, comps
        if (match(opts, /signed-by=[^] ]+/)) printf "Signed-By: %s\n", substr(opts, RSTART + 10, RLENGTH - 10)
        printf "\n"
      }' /etc/apt/sources.list >>"$tmp"
  else
    rm -f "$tmp"
    die "no /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list to derive a deb-src entry from"
  fi
  grep -q '^Types: deb-src' "$tmp" || { rm -f "$tmp"; die "found no 'deb' entries to mirror as deb-src"; }
  log "writing $DEB_SRC_FILE"
  "${SUDO[@]}" install -m 0644 "$tmp" "$DEB_SRC_FILE"
  rm -f "$tmp"
}

# The root-only part: a deb-src entry (plus apt-get update) and dpkg-dev.
prepare() {
  local version=$1
  if ! command -v dpkg-source >/dev/null 2>&1; then
    need_root "install dpkg-dev (dpkg-source unpacks the fio source package)"
    log "installing dpkg-dev"
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends dpkg-dev >&2
  fi
  if apt_has_source "$version"; then
    return 0
  fi
  need_root "add a deb-src entry to apt's sources"
  [[ -f "$DEB_SRC_FILE" ]] || write_deb_src_entry
  log "apt-get update (to read the source package index)"
  "${SUDO[@]}" apt-get update >&2 || die "apt-get update failed"
  apt_has_source "$version" ||
    die "apt finds no source package fio=$version, even with $DEB_SRC_FILE (is that version still in the archive?)"
}

main() {
  if [[ "${1:-}" == "--prepare" ]]; then
    prepare "$(installed_fio_version)"
    return 0
  fi
  [[ $# -eq 1 ]] || die "usage: $0 DEST_DIR | --prepare"
  local dest=$1
  local version upstream src stamp
  version=$(installed_fio_version)
  upstream=${version#*:}      # drop an epoch
  upstream=${upstream%-*}     # drop the Debian revision
  if command -v fio >/dev/null 2>&1; then
    local binv
    binv=$(fio --version 2>/dev/null || true)
    [[ "$binv" == "fio-$upstream" ]] ||
      die "fio --version says '$binv' but the fio package is $version (a fio not from Debian on PATH?)"
  fi
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd)
  src=$dest/fio-$upstream
  stamp=$src/.pgring-fio-source
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$version configured" && -f "$src/config-host.h" ]]; then
    echo "$src"
    return 0
  fi

  # One fetch at a time per destination (parallel configures of one tree).
  exec 9>"$dest/.fetch-fio-source.lock"
  flock 9
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$version configured" && -f "$src/config-host.h" ]]; then
    echo "$src"
    return 0
  fi

  prepare "$version"
  local work
  work=$(mktemp -d "$dest/.fio-source.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  log "apt-get source fio=$version into $dest"
  (cd "$work" && apt-get source --only-source "fio=$version" >&2) ||
    die "apt-get source fio=$version failed"
  [[ -f "$work/fio-$upstream/ioengines.h" ]] ||
    die "apt-get source did not unpack fio-$upstream/ioengines.h"
  log "configuring fio-$upstream (config-host.h)"
  (cd "$work/fio-$upstream" && ./configure --disable-native --prefix=/usr >configure.log 2>&1) ||
    die "fio's ./configure failed; see $work/fio-$upstream/configure.log"
  [[ -f "$work/fio-$upstream/config-host.h" ]] || die "fio's ./configure wrote no config-host.h"
  rm -rf "$src"
  mv "$work/fio-$upstream" "$src"
  echo "$version configured" >"$stamp"
  log "fio $version source ready in $src"
  echo "$src"
}

main "$@"
