# shellcheck shell=bash
# tests/fio/fio_env.sh — shell helpers shared by the scripts that run the
# Debian fio through the pgring engine (tests/fio/run_fio_test.sh,
# tests/kill/fio_kill_campaign.sh). Sourced, not run.

# sanitizer_env CXX SANITIZE — sets up LD_PRELOAD for an instrumented engine
# inside an uninstrumented fio. The engine is built with the tree's
# sanitizers (SANITIZE: the PGRING_SANITIZE list, comma-separated); fio is
# not, so the sanitizer runtime is preloaded (ASan must come first) and leak
# checking is off for fio's own allocations. Does nothing without sanitizers.
# Undo with `unset LD_PRELOAD` before running instrumented binaries.
sanitizer_env() {
  local cxx=$1 sanitize=$2
  case "$sanitize" in
    *address*)
      LD_PRELOAD="$("$cxx" -print-file-name=libasan.so)"
      export LD_PRELOAD
      export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
      ;;
    *thread*)
      LD_PRELOAD="$("$cxx" -print-file-name=libtsan.so)"
      export LD_PRELOAD
      ;;
  esac
}
