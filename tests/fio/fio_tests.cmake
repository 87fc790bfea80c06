# tests/fio/fio_tests.cmake — the fio engine's tests (ctest -L fio). Included
# from tools/fio_engine/CMakeLists.txt, where the engine's targets are.
#
#   fio_osd_model_test.*   the OSD model against Ceph's trim/dup/info rules,
#                          on both backends (gtest, in-memory partition)
#   fio_ceph_payload_test.* pgring_payload=ceph's encodings decode with
#                          pgring-tool's decoder, through the model and a store
#   fio_shared_flush_test.* pgring_shared_flush and pgring_sync_covers resolved
#                          from the library's flush-domain checks
#   fio_thread_cpu_test.*  the report's CPU time per thread name
#   fio_syscall_counter_test.* system calls per thread name (perf tracepoint;
#                          the counting test skips where not permitted), and
#                          the null path without tracefs
#   fio_block_stats_test.* /sys/class/block/*/stat parsing, path -> device
#                          (a partition's disk too), counts from when added
#   fio_engine_config_test.* EngineConfig::Validate()'s refusals (RocksDB
#                          under /dev, the dup and onode sizes)
#   fio_preallocate_test.* pgring_preallocate's layout of partition files
#   fio_write_requests_test.* the HDD model's counts: write requests and the
#                          noncontiguous ones (the data file's, RocksDB's)
#   fio_engine_options     fio loads the engine (all symbols bound) and lists
#                          its options
#   fio_abi_check          the fio source's structure layouts are the
#                          installed binary's (tools/fio_engine/check_fio_abi.sh)
#   fio_engine_ring        fio write + verify=crc32c through the engine, then
#   fio_engine_rocksdb     fio_store_check on fio's output, the report and the
#   fio_engine_ring-shared store; a second run reopens and verifies again;
#   fio_engine_ring-single each job in a pool of its own, but ring-single
#                          (pgring_single_pool_mode=1)
#   fio_engine_floor       (ring-shared: pgring_shared_flush=on, no data flush;
#                          floor: pgring_no_pg_log=1, no log-partition write)
#   fio_engine_aliases     Ceph's fio engine's option names give the engine
#                          the configuration pgring's names do
#   fio_engine_plain       fio-jobs/ring-plain.fio as it is, with /usr/bin/fio and
#                          no environment: the engine lays out its files itself
include(GoogleTest)

add_executable(fio_store_check ${CMAKE_CURRENT_LIST_DIR}/fio_store_check.cc)
target_link_libraries(fio_store_check PRIVATE pgring nlohmann_json::nlohmann_json
                      RocksDB::rocksdb-shared)

add_executable(fio_osd_model_test ${CMAKE_CURRENT_LIST_DIR}/osd_model_test.cc)
target_link_libraries(fio_osd_model_test PRIVATE pgring_fio_core pgring_test_util
                      GTest::gtest GTest::gtest_main)
gtest_discover_tests(fio_osd_model_test DISCOVERY_TIMEOUT 60 TEST_PREFIX "fio_osd_model_test."
                     PROPERTIES LABELS fio
                                ENVIRONMENT "PGRING_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")

# pgring_payload=ceph against pgring-tool's Ceph decoder (in this tree only).
if(TARGET pgring_tool_internal)
  add_executable(fio_ceph_payload_test ${CMAKE_CURRENT_LIST_DIR}/ceph_payload_test.cc)
  target_link_libraries(fio_ceph_payload_test PRIVATE pgring_fio_core pgring_test_util
                        pgring_tool_internal GTest::gtest GTest::gtest_main)
  gtest_discover_tests(fio_ceph_payload_test DISCOVERY_TIMEOUT 60
                       TEST_PREFIX "fio_ceph_payload_test."
                       PROPERTIES LABELS fio
                                  ENVIRONMENT "PGRING_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")
endif()

add_executable(fio_shared_flush_test ${CMAKE_CURRENT_LIST_DIR}/shared_flush_test.cc)
target_link_libraries(fio_shared_flush_test PRIVATE pgring_fio_core pgring_test_util
                      GTest::gtest GTest::gtest_main)
gtest_discover_tests(fio_shared_flush_test DISCOVERY_TIMEOUT 60
                     TEST_PREFIX "fio_shared_flush_test."
                     PROPERTIES LABELS fio
                                ENVIRONMENT "PGRING_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")

foreach(_t engine_config preallocate write_requests)
  add_executable(fio_${_t}_test ${CMAKE_CURRENT_LIST_DIR}/${_t}_test.cc)
  target_link_libraries(fio_${_t}_test PRIVATE pgring_fio_core pgring_test_util
                        GTest::gtest GTest::gtest_main)
  gtest_discover_tests(fio_${_t}_test DISCOVERY_TIMEOUT 60 TEST_PREFIX "fio_${_t}_test."
                       PROPERTIES LABELS fio
                                  ENVIRONMENT "PGRING_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")
endforeach()

foreach(_t thread_cpu syscall_counter block_stats)
  add_executable(fio_${_t}_test ${CMAKE_CURRENT_LIST_DIR}/${_t}_test.cc)
  target_link_libraries(fio_${_t}_test PRIVATE pgring_fio_core GTest::gtest GTest::gtest_main)
  gtest_discover_tests(fio_${_t}_test DISCOVERY_TIMEOUT 60 TEST_PREFIX "fio_${_t}_test."
                       PROPERTIES LABELS fio
                                  ENVIRONMENT "PGRING_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")
endforeach()

set(_fio_sanitize "${PGRING_SANITIZE}")
string(REPLACE ";" "," _fio_sanitize "${_fio_sanitize}")

add_test(NAME fio_engine_options
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_fio_test.sh enghelp
          $<TARGET_FILE:fio_pgring> ${CMAKE_CXX_COMPILER} "${_fio_sanitize}")
set_tests_properties(fio_engine_options PROPERTIES LABELS fio TIMEOUT 60 SKIP_RETURN_CODE 77)

add_test(NAME fio_abi_check
  COMMAND bash ${PROJECT_SOURCE_DIR}/tools/fio_engine/check_fio_abi.sh ${FIO_SOURCE_DIR})
set_tests_properties(fio_abi_check PROPERTIES LABELS fio TIMEOUT 300 SKIP_RETURN_CODE 77)

foreach(_backend ring rocksdb ring-single ring-shared floor)
  add_test(NAME fio_engine_${_backend}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_fio_test.sh run ${_backend}
            $<TARGET_FILE:fio_pgring> $<TARGET_FILE:fio_store_check>
            ${CMAKE_BINARY_DIR}/test-tmp/fio_engine_${_backend}
            ${CMAKE_CXX_COMPILER} "${_fio_sanitize}")
  set_tests_properties(fio_engine_${_backend} PROPERTIES LABELS fio TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endforeach()

add_test(NAME fio_engine_plain
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_fio_test.sh plain
          ${PROJECT_SOURCE_DIR}/fio-jobs/ring-plain.fio
          $<TARGET_FILE:fio_pgring> $<TARGET_FILE:fio_store_check>
          ${CMAKE_BINARY_DIR}/test-tmp/fio_engine_plain
          ${CMAKE_CXX_COMPILER} "${_fio_sanitize}")
set_tests_properties(fio_engine_plain PROPERTIES LABELS fio TIMEOUT 300 SKIP_RETURN_CODE 77)

add_test(NAME fio_engine_aliases
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_fio_test.sh aliases $<TARGET_FILE:fio_pgring>
          ${CMAKE_BINARY_DIR}/test-tmp/fio_engine_aliases ${CMAKE_CXX_COMPILER} "${_fio_sanitize}")
set_tests_properties(fio_engine_aliases PROPERTIES LABELS fio TIMEOUT 120 SKIP_RETURN_CODE 77)
