// flush_domain_test.cc — the flush-domain proof (pgring/flush_domain.h and
// device/flush_domain.h): files on one disk whose every byte is allocated
// and written share a flush; holes, fallocated (unwritten) extents, a
// missing path, ext4's data=journal are refused, naming why; a RocksDB sync
// covers the partition only on a file system whose fdatasync flushes the
// disk's cache (ext4 barrier=0 is refused). How the fio engine resolves its
// options from these checks is tested in tests/fio/shared_flush_test.cc.
#include "device/flush_domain.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "pgring/flush_domain.h"
#include "util/flush_domain_fixture.h"

namespace pgring::testing {
namespace {

TEST_F(FlushDomainTest, WrittenFilesOnOneDiskShareAFlush) {
  WriteFile(dir_.Join("data"), 1 << 20);
  WriteFile(dir_.Join("log"), 1 << 20);
  FlushDomainCheck c = CheckSharedFlush(dir_.Join("data"), dir_.Join("log"));
  EXPECT_TRUE(c.shared) << c.why;
  EXPECT_NE(c.why.find("one cache"), std::string::npos) << c.why;
}

TEST_F(FlushDomainTest, AnUnwrittenExtentIsRefusedByName) {
  WriteFile(dir_.Join("log"), 1 << 20);
  absl::Status s = CheckFullyWritten(dir_.Join("falloc"));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("unwritten (fallocated) extent at byte 0"), std::string::npos) << s;
  FlushDomainCheck c = CheckSharedFlush(dir_.Join("falloc"), dir_.Join("log"));
  EXPECT_FALSE(c.shared);
  EXPECT_NE(c.why.find("unwritten"), std::string::npos) << c.why;
  // The log partition is checked as well as the data.
  c = CheckSharedFlush(dir_.Join("log"), dir_.Join("falloc"));
  EXPECT_FALSE(c.shared) << c.why;
}

TEST_F(FlushDomainTest, AHoleIsRefusedWithItsOffset) {
  WriteFile(dir_.Join("log"), 1 << 20);
  const std::string sparse = dir_.Join("sparse");
  WriteFile(sparse, 1 << 16);
  ASSERT_EQ(::truncate(sparse.c_str(), 1 << 20), 0);  // a hole after 64 KiB
  absl::Status s = CheckFullyWritten(sparse);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("hole at byte 65536"), std::string::npos) << s;
  EXPECT_FALSE(CheckSharedFlush(sparse, dir_.Join("log")).shared);
  // A file that is one hole from the start.
  const std::string holes = dir_.Join("holes");
  int fd = ::open(holes.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
  ::close(fd);
  s = CheckFullyWritten(holes);
  EXPECT_NE(s.message().find("hole at byte 0"), std::string::npos) << s;
}

TEST_F(FlushDomainTest, AMissingPathIsNotShared) {
  WriteFile(dir_.Join("log"), 1 << 16);
  FlushDomainCheck c = CheckSharedFlush(dir_.Join("nope"), dir_.Join("log"));
  EXPECT_FALSE(c.shared);
  EXPECT_NE(c.why.find("nope"), std::string::npos) << c.why;
}

TEST_F(FlushDomainTest, AFileIsOnTheWholeDiskOfItsFileSystem) {
  struct stat st;
  ASSERT_EQ(::stat(dir_.path().c_str(), &st), 0);
  auto disk = WholeDiskOf(dir_.path());
  ASSERT_TRUE(disk.ok()) << disk.status();
  // Either the file system's own device is a whole disk, or it is a
  // partition and the disk is another device.
  const std::string own = absl::StrFormat("%u:%u", major(st.st_dev), minor(st.st_dev));
  const std::string partition_attr = absl::StrFormat("/sys/dev/block/%s/partition", own);
  if (::access(partition_attr.c_str(), F_OK) == 0) {
    EXPECT_NE(*disk, own);
  } else {
    EXPECT_EQ(*disk, own);
  }
}

// A RocksDB directory on the partition's disk: its syncs flush that disk,
// so they cover the partition's completed writes. The directory need not
// exist yet (mkfs makes it); the partition file must be fully written.
TEST_F(FlushDomainTest, ARocksDbSyncOnTheSameDiskCoversThePartition) {
  if (absl::Status fs = CheckSyncFlushesTheCache(dir_.path()); !fs.ok()) {
    GTEST_SKIP() << "the test file system's fdatasync is not known to flush the cache: " << fs;
  }
  WriteFile(dir_.Join("log"), 1 << 20);
  const FlushDomainCheck yes = CheckSyncCoversPartition(dir_.Join("no/such/db"), dir_.Join("log"));
  EXPECT_TRUE(yes.shared) << yes.why;
  EXPECT_NE(yes.why.find(dir_.path()), std::string::npos) << yes.why;
  const FlushDomainCheck no = CheckSyncCoversPartition(dir_.Join("db"), dir_.Join("falloc"));
  EXPECT_FALSE(no.shared);
  EXPECT_NE(no.why.find("unwritten"), std::string::npos) << no.why;
  const FlushDomainCheck missing = CheckSyncCoversPartition(dir_.Join("db"), dir_.Join("nope"));
  EXPECT_FALSE(missing.shared);
}

// ext4 mounted with data=journal turns O_DIRECT writes into journalled
// buffered ones: the data reaches the disk through the journal, at the
// file's own fdatasync, and the log partition's flush does not cover it. A
// small ext4 image is mounted on a loop device each way; the check must
// refuse data=journal, naming it, and accept data=ordered (the default) on
// the same image, so that a refusal for another reason cannot pass.
class Ext4DataModeTest : public ::testing::TestWithParam<const char*> {
 protected:
  static bool Run(const std::string& cmd) {
    return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a loop device needs root";
    if (!Run("command -v mkfs.ext4") || !Run("command -v mount")) {
      GTEST_SKIP() << "mkfs.ext4 or mount is missing";
    }
    image_ = dir_.Join("ext4.img");
    mnt_ = dir_.Join("mnt");
    ASSERT_TRUE(Run("truncate -s 64M " + image_));
    ASSERT_TRUE(Run("mkfs.ext4 -q -F " + image_));
    ASSERT_EQ(::mkdir(mnt_.c_str(), 0755), 0);
    const std::string opts = std::string("loop,") + GetParam();
    if (!Run("mount -t ext4 -o " + opts + " " + image_ + " " + mnt_)) {
      GTEST_SKIP() << "cannot mount an ext4 image on a loop device here (mount -o " << opts
                   << "): no loop devices in this container?";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) EXPECT_TRUE(Run("umount " + mnt_)) << "umount " << mnt_;
  }
  TempDir dir_;
  std::string image_, mnt_;
  bool mounted_ = false;
};

TEST_P(Ext4DataModeTest, DataJournalIsRefusedByName) {
  const std::string data = mnt_ + "/data", log = mnt_ + "/log";
  WriteFile(data, 1 << 20);
  WriteFile(log, 1 << 20);
  ASSERT_TRUE(CheckFullyWritten(data).ok());
  const absl::Status s = CheckDirectIoReachesTheDisk(data);
  const FlushDomainCheck both = CheckSharedFlush(data, log);
  if (std::string(GetParam()) == "data=journal") {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("data=journal"), std::string::npos) << s;
    EXPECT_FALSE(both.shared);
    EXPECT_NE(both.why.find("data=journal"), std::string::npos) << both.why;
  } else {
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_TRUE(both.shared) << both.why;
  }
}

// ext4 mounted with barrier=0 (shown as nobarrier) ends fdatasync without
// a cache flush, so a RocksDB sync there covers nothing; with barrier=1 (the
// default) on the same image it does.
class Ext4BarrierTest : public Ext4DataModeTest {};

TEST_P(Ext4BarrierTest, NoBarrierIsRefusedByName) {
  WriteFile(mnt_ + "/log", 1 << 20);
  const absl::Status s = CheckSyncFlushesTheCache(mnt_);
  const FlushDomainCheck covers = CheckSyncCoversPartition(mnt_ + "/db", mnt_ + "/log");
  if (std::string(GetParam()) == "barrier=0") {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("barrier"), std::string::npos) << s;
    EXPECT_FALSE(covers.shared);
  } else {
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_TRUE(covers.shared) << covers.why;
  }
}

INSTANTIATE_TEST_SUITE_P(Mounts, Ext4DataModeTest,
                         ::testing::Values("data=journal", "data=ordered"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param) == "data=journal" ? "Journal"
                                                                         : "Ordered";
                         });
INSTANTIATE_TEST_SUITE_P(Mounts, Ext4BarrierTest, ::testing::Values("barrier=0", "barrier=1"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param) == "barrier=0" ? "NoBarrier" : "Barrier";
                         });

}  // namespace
}  // namespace pgring::testing
