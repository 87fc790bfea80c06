#!/usr/bin/env bash
# scripts/install-deps.sh — install everything pgring needs to build, test and
# benchmark, from Debian 12 (bookworm) packages only. Idempotent: when every
# package is already installed it touches neither apt nor the network, so
# repeated runs are fast and work offline.
#
# It also makes sure apt can fetch the source package of the installed fio
# (a deb-src entry; scripts/fetch-fio-source.sh --prepare), which the fio
# engine is built against. That check is local too once the entry exists.
#
# Usage: bash scripts/install-deps.sh      (as root, or with sudo available)
#        bash scripts/install-deps.sh --list   (print the package list and exit)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PACKAGES=(
  # Toolchain and build system.
  build-essential      # gcc/g++ 12, make, libc6-dev; pulls in libgcc-12-dev
  cmake                # >= 3.25 (bookworm ships 3.25.1)
  ninja-build
  pkg-config           # FindPkgConfig: liburing, libisal and liblz4 have no CMake config
  git
  ca-certificates
  # Sanitizer runtimes for the asan/tsan presets (GCC 12). They come with
  # libgcc-12-dev already; listed so the dependency is explicit.
  libasan8 libubsan1 libtsan2 liblsan0
  # Libraries (headers + CMake/pkg-config files).
  librocksdb-dev       # RocksDBConfig.cmake (RocksDB::rocksdb-shared)
  # RocksDBConfig.cmake calls find_dependency() for each of these; Debian's
  # librocksdb-dev depends on them, listed here because our configure needs them.
  libgflags-dev        # gflags CONFIG
  libsnappy-dev        # Snappy CONFIG
  zlib1g-dev           # FindZLIB
  libbz2-dev           # FindBZip2
  liblz4-dev           # rocksdb's Findlz4 module; pgring's compressed stream records
  libzstd-dev          # zstd CONFIG
  libabsl-dev          # abslConfig.cmake (absl::status, absl::synchronization, ...)
  liburing-dev         # liburing.pc
  libisal-dev          # libisal.pc (CRC32C)
  libgtest-dev         # GTestConfig.cmake (GTest::gtest, GTest::gtest_main)
  libgmock-dev         # GTest::gmock
  libbenchmark-dev     # benchmarkConfig.cmake
  nlohmann-json3-dev   # nlohmann_jsonConfig.cmake
  libcli11-dev         # CLI11Config.cmake (pgring-tool's command line)
  uuid-dev             # libuuid (store UUIDs)
  # Tools used by the tests and the main job.
  fio                  # the Debian fio binary the pgring engine plugs into
  python3              # scripts/main-job.sh: reads fio's JSON and prints the table
  dpkg-dev             # dpkg-source: unpacks fio's source package (fetch-fio-source.sh)
  clang                # clang 14 (fuzzers, second compiler)
  libclang-rt-14-dev   # clang's sanitizer/libFuzzer runtimes
  util-linux           # losetup, blkdiscard, setarch
  dmsetup              # flush_domain_test: two LVs on one loop device (where the kernel has device-mapper)
  gnuplot-nox          # bench/report.sh: plots (SVG)
  e2fsprogs            # filefrag: fio-jobs/run.sh finds unwritten extents in partition files
  fdisk                # sfdisk: bench/blockdev.sh partitions a loop device as ceph-volume lays out an OSD
  gdb                  # tests/util/watchdog: every thread's stack when a test hangs
)

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

is_installed() {
  # One line per installed architecture; "installed" means fully configured.
  dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qx installed
}

install_packages() {
  local missing=() still_missing=() p
  for p in "${PACKAGES[@]}"; do
    is_installed "$p" || missing+=("$p")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps: all ${#PACKAGES[@]} packages already installed; nothing to do"
    return 0
  fi

  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
      return 1
    fi
  fi

  echo "install-deps: installing ${#missing[@]} package(s): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"

  for p in "${missing[@]}"; do
    is_installed "$p" || still_missing+=("$p")
  done
  if [[ ${#still_missing[@]} -ne 0 ]]; then
    echo "install-deps: still not installed: ${still_missing[*]}" >&2
    return 1
  fi
  echo "install-deps: packages installed"
}

install_packages
# The fio engine builds against the installed fio's Debian source package:
# make sure apt can fetch it (adds a deb-src entry + apt-get update only if
# apt cannot find it yet; otherwise a local, offline check).
bash "$ROOT/scripts/fetch-fio-source.sh" --prepare
echo "install-deps: fio source package available to apt"
