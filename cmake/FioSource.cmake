# cmake/FioSource.cmake — the headers of the installed fio, for the fio engine.
#
# An external fio engine shares fio's structures (thread_data, io_u, ...) with
# the binary that loads it, so it must be compiled against the very source the
# binary was built from. Debian's fio binary is built from the fio source
# package of the same version; scripts/fetch-fio-source.sh downloads that
# package (apt-get source fio=<installed version>), applies Debian's patches
# and runs fio's ./configure, which writes the config-host.h fio's headers
# include. Nothing of fio is kept in the repository.
#
# Input:  PGRING_FIO_SOURCE_DIR (cache) — a configured fio source tree to use
#         instead; empty (default): fetch into ${CMAKE_BINARY_DIR}/fio-src.
# Output: FIO_SOURCE_DIR, FIO_IOOPS_VERSION, FIO_PACKAGE_VERSION, and the
#         INTERFACE target pgring_fio_headers (include path, config-host.h
#         forced in, the preprocessor flags Debian builds fio with).
#
# Included by pgring's top level (before the tests: the install test builds
# the engine against an installed pgring with this fio source) and by
# tools/fio_engine, which also builds on its own; the first include counts.
include_guard(GLOBAL)

set(PGRING_FIO_SOURCE_DIR "" CACHE PATH
    "Configured fio source tree matching the installed fio (empty: fetch it with scripts/fetch-fio-source.sh)")

if(PGRING_FIO_SOURCE_DIR)
  set(FIO_SOURCE_DIR "${PGRING_FIO_SOURCE_DIR}")
else()
  # Runs at every configure; once the source is there it only checks a stamp
  # against the installed version (milliseconds, no network).
  execute_process(
    COMMAND bash "${CMAKE_CURRENT_LIST_DIR}/../scripts/fetch-fio-source.sh" "${CMAKE_BINARY_DIR}/fio-src"
    RESULT_VARIABLE _fio_rc
    OUTPUT_VARIABLE _fio_out
    ERROR_VARIABLE _fio_err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _fio_rc EQUAL 0)
    message(FATAL_ERROR
      "The fio engine needs the source of the installed fio, and fetching it failed:\n"
      "${_fio_err}\n"
      "Run scripts/install-deps.sh (as root) to set up apt's deb-src entry, point "
      "PGRING_FIO_SOURCE_DIR at a configured fio source tree, or configure with "
      "-DPGRING_BUILD_FIO_ENGINE=OFF.")
  endif()
  string(REGEX REPLACE "^.*\n" "" FIO_SOURCE_DIR "${_fio_out}")  # the last line
endif()

foreach(_h fio.h optgroup.h ioengines.h config-host.h)
  if(NOT EXISTS "${FIO_SOURCE_DIR}/${_h}")
    message(FATAL_ERROR "${FIO_SOURCE_DIR}/${_h} is missing: not a configured fio source tree")
  endif()
endforeach()

file(STRINGS "${FIO_SOURCE_DIR}/ioengines.h" _fio_ioops REGEX "^#define[ \t]+FIO_IOOPS_VERSION")
string(REGEX REPLACE ".*FIO_IOOPS_VERSION[ \t]+([0-9]+).*" "\\1" FIO_IOOPS_VERSION "${_fio_ioops}")
set(FIO_PACKAGE_VERSION "unknown")
if(EXISTS "${FIO_SOURCE_DIR}/.pgring-fio-source")
  file(STRINGS "${FIO_SOURCE_DIR}/.pgring-fio-source" _fio_stamp LIMIT_COUNT 1)
  string(REGEX REPLACE " .*" "" FIO_PACKAGE_VERSION "${_fio_stamp}")
endif()
message(STATUS "fio engine: fio ${FIO_PACKAGE_VERSION} source in ${FIO_SOURCE_DIR} "
               "(FIO_IOOPS_VERSION ${FIO_IOOPS_VERSION})")

if(NOT TARGET pgring_fio_headers)
  add_library(pgring_fio_headers INTERFACE)
  # SYSTEM: fio's headers are not ours to keep warning-free.
  target_include_directories(pgring_fio_headers SYSTEM INTERFACE "${FIO_SOURCE_DIR}")
  target_compile_options(pgring_fio_headers INTERFACE
    "SHELL:-include ${FIO_SOURCE_DIR}/config-host.h")
  # What fio's Makefile (with Debian's patches) passes to every compile,
  # minus FIO_INTERNAL, which is for fio's own sources.
  target_compile_definitions(pgring_fio_headers INTERFACE
    _GNU_SOURCE _LARGEFILE_SOURCE _FILE_OFFSET_BITS=64 FIO_INC_DEBUG BITS_PER_LONG=64)
endif()
