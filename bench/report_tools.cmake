# bench/report_tools.cmake — the programs bench/report.sh runs besides fio and
# the google-benchmark binaries, and its ctest smoke (label "bench").
# Included from bench/CMakeLists.txt.
find_package(nlohmann_json CONFIG REQUIRED)

# restart_bench: open time (load every PG log) and memory per live entry,
# for either backend, on a file-backed partition + RocksDB. Public API only.
add_executable(restart_bench ${CMAKE_CURRENT_LIST_DIR}/restart_bench.cc)
target_link_libraries(restart_bench PRIVATE pgring nlohmann_json::nlohmann_json)
target_compile_options(restart_bench PRIVATE -Wall -Wextra -Werror=return-type)

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
