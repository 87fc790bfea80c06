// flush_domain_fixture.h — files for the flush-domain checks
// (pgring/flush_domain.h): written ones, and a directory where holes and
// unwritten extents can be made and seen, shared by the library's tests and
// the fio engine's.
#ifndef PGRING_TESTS_UTIL_FLUSH_DOMAIN_FIXTURE_H_
#define PGRING_TESTS_UTIL_FLUSH_DOMAIN_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "util/test_util.h"

namespace pgring::testing {

// Writes `bytes` of data (allocated and written blocks, synced).
void WriteFile(const std::string& path, size_t bytes);

// A temporary directory with "falloc", a 1 MiB fallocated (unwritten) file.
// Skips the test where the checks cannot tell a written file from another:
// a file system on no disk (tmpfs, overlay), without FIEMAP (extent maps) or
// without fallocate.
class FlushDomainTest : public ::testing::Test {
 protected:
  void SetUp() override;
  TempDir dir_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_FLUSH_DOMAIN_FIXTURE_H_
