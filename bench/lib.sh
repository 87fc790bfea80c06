# bench/lib.sh — shell helpers for bench/report.sh (sourced, not run; bench_plot and
# bench_need serve scripts/main-job.sh too).
#
# The fio side is fio-jobs/run.sh and the fio-jobs/*.fio files, exactly as
# scripts/main-job.sh uses them: these helpers only set the environment those
# read (PGRING_RUNTIME, PGRING_IODEPTH, PGRING_PGS, PGRING_DIR, PGRING_STATS,
# PGRING_ENGINE, ...), so a report run and the main job run the same jobs.
#
# Needs: ROOT (the repository) set by the caller.

bench_log() { echo "bench [$(date +%T)]: $*" >&2; }
bench_die() { echo "bench: error: $*" >&2; exit 1; }

# bench_build BUILD_DIR TARGET... — configure BUILD_DIR (Release, Ninja,
# benchmarks + tools + fio engine, no tests; ccache when installed) and build
# the targets with -j$BENCH_JOBS (default: nproc). As scripts/main-job.sh does
# for the engine, plus the bench programs.
bench_build() {
  local build=$1; shift
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    : "${CCACHE_BASEDIR:=$ROOT}"; export CCACHE_BASEDIR
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  bench_log "configuring $build (Release)"
  cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPGRING_BUILD_TESTS=OFF -DPGRING_BUILD_BENCH=ON -DPGRING_BUILD_TOOLS=ON \
    -DPGRING_BUILD_FIO_ENGINE=ON "${launcher[@]}" >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log" >&2; bench_die "configure failed"; }
  bench_log "building $* in $build"
  cmake --build "$build" --target "$@" -j "${BENCH_JOBS:-$(nproc)}"
}

# bench_fio JOB OUT_PREFIX [extra job-file lines...] — runs fio-jobs/JOB-randwrite.fio
# through fio-jobs/run.sh with the current PGRING_* environment; writes
# OUT_PREFIX.fio.json (fio's JSON) and, for the engine's jobs,
# OUT_PREFIX.report.json (pgring_stats). Extra lines (engine options such as
# pgring_tail_policy=never) are appended to a copy of the job file, i.e. to
# its only job section, after ioengine= as the engine requires.
bench_fio() {
  local job=$1 out=$2; shift 2
  local jobfile=$ROOT/fio-jobs/$job-randwrite.fio
  [[ -f "$jobfile" ]] || bench_die "no $jobfile"
  if [[ $# -gt 0 ]]; then
    local copy=$out.fio
    cp "$jobfile" "$copy"
    printf '%s\n' "$@" >>"$copy"
    jobfile=$copy
  fi
  rm -f "$out.fio.json" "$out.report.json"
  # The machine's load at the end of the run (1, 5, 15 min): other work on a
  # shared machine skews the numbers; report.py shows the range.
  local rc=0
  PGRING_STATS=$out.report.json bash "$ROOT/fio-jobs/run.sh" "$jobfile" \
    --output-format=json --output="$out.fio.json" >"$out.log" 2>&1 || rc=$?
  cat /proc/loadavg >"$out.loadavg" 2>/dev/null || true
  if [[ $rc != 0 ]]; then
    cat "$out.log" >&2
    bench_log "fio job $job failed (see $out.log); continuing"
    return 1
  fi
}

# bench_plot GP... — draws each chart bench/plot.py wrote (DIR/plot-NAME.gp,
# which draws DIR/NAME.svg) with gnuplot, and checks that the SVG came out
# whole; says which did not. Returns 1 if any did not. bench/report.sh and
# scripts/main-job.sh draw their charts with it.
bench_plot() {
  local gp svg rc=0
  for gp in "$@"; do
    svg=$(dirname "$gp")/$(basename "$gp" .gp).svg
    svg=${svg/\/plot-//}
    rm -f "$svg"
    if ! gnuplot "$gp"; then
      bench_log "gnuplot $gp failed"; rc=1
    elif [[ ! -s $svg ]] || ! grep -q '</svg>' "$svg"; then
      bench_log "gnuplot $gp drew no whole $svg"; rc=1
    fi
  done
  return $rc
}

# bench_need CMD PACKAGE — fail early with the Debian package to install.
bench_need() {
  command -v "$1" >/dev/null 2>&1 || bench_die "$1 not found: install $2 (bash scripts/install-deps.sh)"
}
