// preallocate_test.cc — pgring_preallocate's layout of partition files
// (tools/fio_engine/preallocate.h): a missing file is created full-sized
// and written, holes and fallocated (unwritten) extents are filled with
// zeros, data already there is kept, a laid-out file is left alone, and
// what cannot be laid out is refused by name.
#include "preallocate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "device/flush_domain.h"
#include "util/flush_domain_fixture.h"

namespace pgring::testing {
namespace {

using fio::PreallocateZeroed;

uint64_t SizeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_size);
}

TEST_F(FlushDomainTest, PreallocateCreatesAWrittenFile) {
  const std::string path = dir_.Join("log.part");
  auto p = PreallocateZeroed(path, (4 << 20) + 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->block_device);
  EXPECT_EQ(p->size, (4u << 20) + 4096);  // rounded up to 4 KiB
  EXPECT_EQ(SizeOf(path), p->size);
  EXPECT_EQ(p->zeroed_bytes, p->size);
  EXPECT_TRUE(CheckFullyWritten(path).ok()) << CheckFullyWritten(path);
  // Laid out already: nothing to write the second time.
  auto again = PreallocateZeroed(path, 0);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->zeroed_bytes, 0u);
  EXPECT_EQ(again->size, p->size);
}

TEST_F(FlushDomainTest, PreallocateFillsHolesAndKeepsData) {
  const std::string path = dir_.Join("sparse");
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const std::string data(8192, 'x');
  ASSERT_EQ(pwrite(fd, data.data(), data.size(), 1 << 20), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(ftruncate(fd, 2 << 20), 0);
  close(fd);
  ASSERT_FALSE(CheckFullyWritten(path).ok());

  auto p = PreallocateZeroed(path, 3 << 20);  // grows it too
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(SizeOf(path), 3u << 20);
  EXPECT_EQ(p->zeroed_bytes, (3u << 20) - data.size());
  EXPECT_TRUE(CheckFullyWritten(path).ok()) << CheckFullyWritten(path);
  std::string back(data.size(), '\0');
  const int rfd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(rfd, 0);
  ASSERT_EQ(pread(rfd, back.data(), back.size(), 1 << 20), static_cast<ssize_t>(back.size()));
  EXPECT_EQ(back, data);
  char zero = 1;
  ASSERT_EQ(pread(rfd, &zero, 1, 0), 1);
  EXPECT_EQ(zero, 0);
  close(rfd);

  // Never shrinks: a smaller size leaves the file as it is.
  auto smaller = PreallocateZeroed(path, 1 << 20);
  ASSERT_TRUE(smaller.ok()) << smaller.status();
  EXPECT_EQ(SizeOf(path), 3u << 20);
  EXPECT_EQ(smaller->zeroed_bytes, 0u);
}

TEST_F(FlushDomainTest, PreallocateWritesUnwrittenExtents) {
  // "falloc": 1 MiB fallocated, which reads as zeros but is not written.
  const std::string path = dir_.Join("falloc");
  ASSERT_FALSE(CheckFullyWritten(path).ok());
  auto p = PreallocateZeroed(path, 0);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->zeroed_bytes, 1u << 20);
  EXPECT_TRUE(CheckFullyWritten(path).ok()) << CheckFullyWritten(path);
}

TEST(Preallocate, RefusesWhatItCannotLayOut) {
  TempDir dir;
  auto missing = PreallocateZeroed(dir.Join("nothing"), 0);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument) << missing.status();
  EXPECT_NE(missing.status().message().find("pgring_log_size"), std::string::npos);
  auto directory = PreallocateZeroed(dir.path(), 1 << 20);
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument) << directory.status();
  auto chardev = PreallocateZeroed("/dev/null", 1 << 20);
  EXPECT_EQ(chardev.status().code(), absl::StatusCode::kInvalidArgument) << chardev.status();
  auto no_dir = PreallocateZeroed(dir.Join("no/such/dir"), 1 << 20);
  EXPECT_FALSE(no_dir.ok());
}

TEST(Preallocate, LeavesABlockDeviceAlone) {
  std::string dev;
  for (const char* d : {"/dev/loop0", "/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/ram0"}) {
    struct stat st {};
    if (stat(d, &st) == 0 && S_ISBLK(st.st_mode)) {
      dev = d;
      break;
    }
  }
  if (dev.empty()) GTEST_SKIP() << "no block device to try";
  auto p = PreallocateZeroed(dev, 1ull << 40);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->block_device);
  EXPECT_EQ(p->zeroed_bytes, 0u);
}

}  // namespace
}  // namespace pgring::testing
