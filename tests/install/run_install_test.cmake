# tests/install/run_install_test.cmake — the install/package test.
#
# 1. `cmake --install` this build tree into a fresh temporary prefix.
# 2. Check the installed package: public headers only, and export files that
#    name neither the source/build tree nor the private pgring_internal.
# 3. Configure examples/embed_osd (a separate CMake project) against that
#    prefix only, with find_package(pgring CONFIG REQUIRED) and CLI11 and
#    nlohmann_json hidden (only the tool component needs them); check it
#    really found the prefix's pgringConfig.cmake.
# 4. Build it (same compiler, build type and sanitizer flags as this tree:
#    an instrumented libpgring.a needs the sanitizer runtime at link time) and
#    run it: the flush-domain checks, mkfs, commits with data writes, close,
#    the fsck at mount (pgring::Verify, deep, through the OSD's RocksDB
#    handle), reopen, verify.
# 5. With WITH_TOOL (the tree builds pgring-tool) and BUILD_TOOL (not OFF;
#    the sanitizer presets set it OFF): build a pgring-tool of
#    its own against the prefix, a project whose one source is
#    tools/pgring_tool.cc, with find_package(pgring CONFIG REQUIRED
#    COMPONENTS tool) (so a front end that reached into src/ fails to
#    compile here), and run it: --help; show-label on the partition
#    embed_osd left behind (its pointers are in a column family of the
#    OSD's RocksDB, which the tool does not open); mkfs, fsck --deep and
#    list-pgs on a fresh store. And the components as the package reports
#    them: with CLI11 hidden, an optional `tool` is not found but pgring is;
#    a required component that does not exist fails, naming it.
# 6. With FIO_SOURCE_DIR (the tree builds the fio engine): configure
#    tools/fio_engine on its own against the prefix, with that configured fio
#    source (no fetch), build libfio_pgring.so and have fio load it with
#    every symbol bound and list its options (tests/fio/run_fio_test.sh
#    enghelp). The engine's sources see only the installed headers, so one
#    that reached into src/ fails to compile here. Building it costs some
#    30 s on two cores (nine sources, fio's and nlohmann's headers); running
#    fio through it is left to the in-tree fio tests, which run the same
#    sources.
#
# Run by ctest (tests/CMakeLists.txt) as
#   cmake -DPGRING_SOURCE_DIR=... -DPGRING_BINARY_DIR=... -DWORK_DIR=...
#         -DGENERATOR=... -DMAKE_PROGRAM=... -DCXX_COMPILER=... -DBUILD_TYPE=...
#         -DWITH_TOOL=ON|OFF [-DBUILD_TOOL=ON|OFF]
#         -DSANITIZE_COMPILE_FLAGS=... -DSANITIZE_LINK_FLAGS=...
#         -DSANITIZE_MODULE_LINK_FLAGS=... [-DFIO_SOURCE_DIR=... -DSANITIZE=...]
#         -P this-file
cmake_minimum_required(VERSION 3.25)

foreach(var PGRING_SOURCE_DIR PGRING_BINARY_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install test: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(example_build "${WORK_DIR}/embed_osd-build")
set(engine_build "${WORK_DIR}/fio_engine-build")
set(tool_source "${WORK_DIR}/pgring_tool-src")
set(tool_build "${WORK_DIR}/pgring_tool-build")
set(run_dir "${WORK_DIR}/run")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}" "${run_dir}")

# Runs a command; on failure prints its output and stops the test.
function(run_step name)
  message(STATUS "install test: ${name}")
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "install test: ${name} failed (exit ${rc})")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# --- 1. install -------------------------------------------------------------
run_step("cmake --install into ${prefix}"
  "${CMAKE_COMMAND}" --install "${PGRING_BINARY_DIR}" --prefix "${prefix}")

# --- 2. check what was installed --------------------------------------------
set(public_headers types.h options.h transaction.h store.h log_sink.h device.h flush_domain.h
    verify.h)
if(WITH_TOOL)
  list(APPEND public_headers tool.h)
elseif(EXISTS "${prefix}/include/pgring/tool.h")
  message(FATAL_ERROR "install test: include/pgring/tool.h installed without the tool library")
endif()
foreach(h IN LISTS public_headers)
  if(NOT EXISTS "${prefix}/include/pgring/${h}")
    message(FATAL_ERROR "install test: public header include/pgring/${h} not installed")
  endif()
endforeach()
file(GLOB_RECURSE installed_headers RELATIVE "${prefix}/include" "${prefix}/include/*")
foreach(h IN LISTS installed_headers)
  if(NOT h MATCHES "^pgring/[^/]+\\.h$")
    message(FATAL_ERROR "install test: unexpected file installed under include/: ${h}")
  endif()
endforeach()

file(GLOB_RECURSE config_file "${prefix}/*/pgringConfig.cmake")
file(GLOB_RECURSE target_files "${prefix}/*/pgringTargets*.cmake")
file(GLOB_RECURSE tool_target_files "${prefix}/*/pgringToolTargets*.cmake")
if(NOT config_file OR NOT target_files)
  message(FATAL_ERROR "install test: pgringConfig.cmake / pgringTargets*.cmake not installed under ${prefix}")
endif()
if(WITH_TOOL AND NOT tool_target_files)
  message(FATAL_ERROR "install test: pgringToolTargets*.cmake (the tool component) not installed under ${prefix}")
endif()
list(APPEND target_files ${tool_target_files})
foreach(f IN LISTS config_file target_files)
  file(READ "${f}" content)
  foreach(forbidden "${PGRING_SOURCE_DIR}" "${PGRING_BINARY_DIR}" "pgring_internal")
    string(FIND "${content}" "${forbidden}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "install test: ${f} refers to '${forbidden}'; the installed package must only name installed files and public targets")
    endif()
  endforeach()
endforeach()

# --- 3. configure the example against the prefix ---------------------------
# The arguments every consumer project here is configured with: the prefix
# and nothing else to find pgring in, this tree's compiler, build type and
# sanitizer flags.
set(consumer_args
  -G "${GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  # Find pgring in the prefix and nowhere else.
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND consumer_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(BUILD_TYPE)
  list(APPEND consumer_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(SANITIZE_COMPILE_FLAGS)
  list(APPEND consumer_args
    "-DCMAKE_CXX_FLAGS=${SANITIZE_COMPILE_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${SANITIZE_LINK_FLAGS}"
    "-DCMAKE_MODULE_LINKER_FLAGS=${SANITIZE_MODULE_LINK_FLAGS}")
endif()
# The plain package (no components) must not need the tool component's
# dependencies: the example is configured as if they were not installed.
set(configure_args
  -S "${PGRING_SOURCE_DIR}/examples/embed_osd"
  -B "${example_build}"
  ${consumer_args}
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON)
run_step("configure examples/embed_osd against the prefix"
  "${CMAKE_COMMAND}" ${configure_args})

# Stops the test unless the project built in `build_dir` found pgring in
# the install prefix.
function(check_found_in_prefix build_dir what)
  file(STRINGS "${build_dir}/CMakeCache.txt" pgring_dir_line REGEX "^pgring_DIR:")
  string(REGEX REPLACE "^pgring_DIR:[A-Z]+=" "" pgring_dir "${pgring_dir_line}")
  file(REAL_PATH "${prefix}" real_prefix)
  if(EXISTS "${pgring_dir}")
    file(REAL_PATH "${pgring_dir}" pgring_dir)
  endif()
  string(FIND "${pgring_dir}" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "install test: ${what} found pgring in '${pgring_dir}', not in the install prefix ${real_prefix}")
  endif()
endfunction()
check_found_in_prefix("${example_build}" "the example")

# --- 4. build and run it ------------------------------------------------------
run_step("build examples/embed_osd" "${CMAKE_COMMAND}" --build "${example_build}")
run_step("run embed_osd"
  "${example_build}/embed_osd" "${run_dir}/osd.partition" "${run_dir}/osd.data"
  "${run_dir}/osd.rocksdb")
message("${step_output}")
# Its second mount ran the library's fsck, found the three PGs, and it was
# clean (an unclean one fails the run above).
string(FIND "${step_output}" "embed_osd: fsck (deep) at mount: 3 PGs" at)
if(at EQUAL -1)
  message(FATAL_ERROR "install test: embed_osd did not report its fsck at mount "
                      "(pgring::Verify) on three PGs")
endif()

# --- 5. a pgring-tool of its own, built against the tool component -----------
# Runs the pgring-tool built here with the arguments after `what`; stops the
# test unless it exits with 0. Its stdout is left in tool_output.
function(run_tool what)
  execute_process(COMMAND "${tool_build}/pgring-tool" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message("${out}${err}")
    message(FATAL_ERROR "install test: pgring-tool built against the prefix: ${what} "
                        "exited ${rc}, not 0")
  endif()
  set(tool_output "${out}" PARENT_SCOPE)
endfunction()

# Stops the test unless `text` (the output of `what`) contains `needle`.
function(expect_in text needle what)
  string(FIND "${text}" "${needle}" at)
  if(at EQUAL -1)
    message("${text}")
    message(FATAL_ERROR "install test: pgring-tool built against the prefix: ${what} "
                        "does not say '${needle}'")
  endif()
endfunction()

if(NOT DEFINED BUILD_TOOL)
  set(BUILD_TOOL ON)
endif()
if(WITH_TOOL AND BUILD_TOOL)
  file(MAKE_DIRECTORY "${tool_source}")
  file(WRITE "${tool_source}/CMakeLists.txt" "\
cmake_minimum_required(VERSION 3.25)
project(own_pgring_tool LANGUAGES CXX)
find_package(pgring CONFIG REQUIRED COMPONENTS tool)
add_executable(pgring-tool \"${PGRING_SOURCE_DIR}/tools/pgring_tool.cc\")
target_link_libraries(pgring-tool PRIVATE pgring::tool)
")
  run_step("configure tools/pgring_tool.cc against the prefix's tool component"
    "${CMAKE_COMMAND}" -S "${tool_source}" -B "${tool_build}" ${consumer_args})
  check_found_in_prefix("${tool_build}" "pgring-tool")
  run_step("build pgring-tool" "${CMAKE_COMMAND}" --build "${tool_build}")

  run_tool("--help" --help)
  foreach(cmd mkfs fsck list-pgs)
    expect_in("${tool_output}" "${cmd}" "--help")
  endforeach()

  run_tool("show-label on embed_osd's partition"
    --dev "${run_dir}/osd.partition" --format json show-label)
  expect_in("${tool_output}" "\"valid\": true" "show-label on embed_osd's partition")

  set(tool_dev "${run_dir}/tool.partition")
  set(tool_db "${run_dir}/tool.rocksdb")
  # A partition file written with zeros, as a raw partition is.
  execute_process(COMMAND head -c 4194304 /dev/zero OUTPUT_FILE "${tool_dev}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: cannot write ${tool_dev} (exit ${rc})")
  endif()
  run_tool("mkfs" --dev "${tool_dev}" --db "${tool_db}" mkfs --chunk-size 64K)
  expect_in("${tool_output}" "made ring store" "mkfs")
  run_tool("fsck --deep" --dev "${tool_dev}" --db "${tool_db}" fsck --deep)
  run_tool("list-pgs" --dev "${tool_dev}" --db "${tool_db}" --format json list-pgs)
  expect_in("${tool_output}" "\"pgs\"" "list-pgs")
  message(STATUS "install test: pgring-tool built against the prefix runs")

  set(probe_source "${WORK_DIR}/components-src")
  file(MAKE_DIRECTORY "${probe_source}")
  file(WRITE "${probe_source}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.25)
project(pgring_components LANGUAGES CXX)
find_package(pgring CONFIG REQUIRED OPTIONAL_COMPONENTS tool)
message(STATUS "probe: optional tool: pgring_FOUND=${pgring_FOUND} pgring_tool_FOUND=${pgring_tool_FOUND}")
find_package(pgring CONFIG REQUIRED COMPONENTS nosuch)
]=])
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${probe_source}" -B "${WORK_DIR}/components-build"
            ${consumer_args} -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
  foreach(needle "probe: optional tool: pgring_FOUND=1 pgring_tool_FOUND=FALSE"
                 "component 'nosuch' not found")
    string(FIND "${flat}" "${needle}" at)
    if(at EQUAL -1 OR rc EQUAL 0)
      message("${out}")
      message(FATAL_ERROR "install test: the package's components: expected the configure "
                          "to fail saying '${needle}' (exit ${rc})")
    endif()
  endforeach()
  message(STATUS "install test: the package reports its components")
endif()

# --- 6. the fio engine, built on its own against the prefix -------------------
if(FIO_SOURCE_DIR)
  run_step("configure tools/fio_engine against the prefix"
    "${CMAKE_COMMAND}" -S "${PGRING_SOURCE_DIR}/tools/fio_engine" -B "${engine_build}"
    ${consumer_args} "-DPGRING_FIO_SOURCE_DIR=${FIO_SOURCE_DIR}")
  check_found_in_prefix("${engine_build}" "the fio engine")
  run_step("build the fio engine" "${CMAKE_COMMAND}" --build "${engine_build}")
  execute_process(
    COMMAND bash "${PGRING_SOURCE_DIR}/tests/fio/run_fio_test.sh" enghelp
            "${engine_build}/libfio_pgring.so" "${CXX_COMPILER}" "${SANITIZE}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 77)
    message(STATUS "install test: fio is not installed; the engine was built but not loaded")
  elseif(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "install test: fio cannot load the engine built against the prefix (exit ${rc})")
  else()
    message(STATUS "install test: fio loads the engine built against the prefix")
  endif()
endif()
message(STATUS "install test: passed")
file(REMOVE_RECURSE "${WORK_DIR}")
