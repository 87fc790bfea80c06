# tests/install/run_install_test.cmake — the install/package test.
#
# 1. `cmake --install` this build tree into a fresh temporary prefix.
# 2. Check the installed package: public headers only, and an export file that
#    names neither the source/build tree nor the private pgring_internal.
# 3. Configure examples/embed_osd (a separate CMake project) against that
#    prefix only, with find_package(pgring CONFIG REQUIRED); check it really
#    found the prefix's pgringConfig.cmake.
# 4. Build it (same compiler, build type and sanitizer flags as this tree:
#    an instrumented libpgring.a needs the sanitizer runtime at link time) and
#    run it: the flush-domain checks, mkfs, commits with data writes, close,
#    reopen, verify.
# 5. With FIO_SOURCE_DIR (the tree builds the fio engine): configure
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
foreach(h types.h options.h transaction.h store.h log_sink.h device.h flush_domain.h)
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
if(NOT config_file OR NOT target_files)
  message(FATAL_ERROR "install test: pgringConfig.cmake / pgringTargets*.cmake not installed under ${prefix}")
endif()
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
set(configure_args
  -S "${PGRING_SOURCE_DIR}/examples/embed_osd"
  -B "${example_build}"
  ${consumer_args})
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

# --- 5. the fio engine, built on its own against the prefix -------------------
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
