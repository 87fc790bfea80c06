# shellcheck shell=bash
# tests/fio/fio_env.sh — shell helpers shared by the scripts that run the
# Debian fio through the pgring engine (tests/fio/run_fio_test.sh,
# tests/crash/kill/fio_kill_campaign.sh). Sourced, not run.

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
      # tests/tsan.supp plus tests/tsan-fio.supp (why: see that file), as
      # one file, since TSan reads one. One file per user, replaced whole
      # (rename), so scripts running at once never see half of it.
      case "${TSAN_OPTIONS:-}" in *pgring-tsan-fio-*) return 0 ;; esac
      local tests_dir supp rest
      tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
      supp="${TMPDIR:-/tmp}/pgring-tsan-fio-$(id -u).supp"
      cat "$tests_dir/tsan.supp" "$tests_dir/tsan-fio.supp" > "$supp.$$"
      mv -f "$supp.$$" "$supp"
      rest=$(printf '%s' "${TSAN_OPTIONS:-}" | sed -E 's/(^|:)suppressions=[^:]*//; s/^://')
      export TSAN_OPTIONS="suppressions=$supp${rest:+:$rest}"
      ;;
  esac
}
