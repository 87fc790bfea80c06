#include "util/flush_domain_fixture.h"

#include <fcntl.h>
#include <unistd.h>

#include "device/flush_domain.h"

namespace pgring::testing {

void WriteFile(const std::string& path, size_t bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path;
  std::string block(1 << 16, 'x');
  for (size_t done = 0; done < bytes; done += block.size()) {
    ASSERT_EQ(::write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
  }
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

void FlushDomainTest::SetUp() {
  // The checks need a disk-backed file system with FIEMAP and unwritten
  // extents (ext4, xfs); tmpfs or overlay cannot show either.
  auto disk = DisksUnder(dir_.path());
  if (!disk.ok()) GTEST_SKIP() << "the test directory is on no disk: " << disk.status();
  WriteFile(dir_.Join("probe"), 1 << 16);
  if (!CheckFullyWritten(dir_.Join("probe")).ok()) {
    GTEST_SKIP() << "the test file system does not map extents (FIEMAP)";
  }
  int fd = ::open(dir_.Join("falloc").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const bool can_fallocate = ::posix_fallocate(fd, 0, 1 << 20) == 0;
  ::close(fd);
  if (!can_fallocate) GTEST_SKIP() << "the test file system cannot fallocate";
}

}  // namespace pgring::testing
