# bench/report_tools.cmake — the programs bench/report.sh runs besides fio and
# the google-benchmark binaries, and the ctest smokes (label "bench") of the
# two benchmark scripts, bench/report.sh and scripts/main-job.sh.
# Included from bench/CMakeLists.txt.
find_package(nlohmann_json CONFIG REQUIRED)

# restart_bench: open time (load every PG log) and memory per live entry,
# for either backend, on a file-backed partition + RocksDB. Public API only.
add_executable(restart_bench ${CMAKE_CURRENT_LIST_DIR}/restart_bench.cc)
target_link_libraries(restart_bench PRIVATE pgring nlohmann_json::nlohmann_json)
target_compile_options(restart_bench PRIVATE -Wall -Wextra -Werror=return-type)
# --payload=ceph: the fio engine's Ceph encodings (tools/fio_engine/ceph_payload.h).
if(PGRING_BUILD_FIO_ENGINE)
  target_link_libraries(restart_bench PRIVATE pgring_fio_core)
  target_compile_definitions(restart_bench PRIVATE PGRING_RESTART_CEPH_PAYLOADS)
endif()

# The report's smoke test: one 2-second fio job per backend (and raw), a
# restart of 8 PGs x 100 entries per backend, the Markdown report and the
# plots; checks they were written. Uses this build's binaries (--no-build).
# Needs fio, gnuplot and python3 on the machine, and the fio engine here.
if(PGRING_BUILD_TESTS AND PGRING_BUILD_FIO_ENGINE)
  add_test(NAME bench_report_smoke
           COMMAND bash ${PROJECT_SOURCE_DIR}/bench/report.sh --smoke --no-build
                   --build-dir ${CMAKE_BINARY_DIR}
                   --out ${CMAKE_CURRENT_BINARY_DIR}/report-smoke)
  set_tests_properties(bench_report_smoke PROPERTIES
                       LABELS bench TIMEOUT 120 RUN_SERIAL TRUE
                       REQUIRED_FILES "$<TARGET_FILE:fio_pgring>;$<TARGET_FILE:restart_bench>")
endif()

# The main job's smoke test (tests/scripts/main_job_smoke.sh): scripts/main-job.sh
# with this build's engine (PGRING_ENGINE: nothing installed or built), 2 s a
# job at 8 PGs, the job defaults as they are; checks the table, the payload
# (ceph) and layouts the engine's reports name, the chart (main-job.svg,
# with the table's figures) and that pgring-tool decodes the store's entries.
if(PGRING_BUILD_TESTS AND PGRING_BUILD_FIO_ENGINE AND PGRING_BUILD_TOOLS)
  add_test(NAME main_job_smoke
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/scripts/main_job_smoke.sh
                   $<TARGET_FILE:fio_pgring> $<TARGET_FILE:pgring-tool>
                   ${CMAKE_CURRENT_BINARY_DIR}/main-job-smoke)
  set_tests_properties(main_job_smoke PROPERTIES
                       LABELS bench TIMEOUT 180 RUN_SERIAL TRUE
                       REQUIRED_FILES "$<TARGET_FILE:fio_pgring>;$<TARGET_FILE:pgring-tool>")
endif()

# The README's headline cell (tests/scripts/headline_smoke.sh): bench/modes.sh
# with this build's engine, 2 rounds of 2 s at 8 PGs, then bench/headline.py's
# table (each IOPS the median of its rounds) and chart.
if(PGRING_BUILD_TESTS AND PGRING_BUILD_FIO_ENGINE)
  add_test(NAME headline_smoke
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/scripts/headline_smoke.sh
                   ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/headline-smoke)
  set_tests_properties(headline_smoke PROPERTIES
                       LABELS bench TIMEOUT 120 RUN_SERIAL TRUE
                       REQUIRED_FILES "$<TARGET_FILE:fio_pgring>")
endif()
