// flush_domain_test.cc — when the fio engine lets the store's partition
// flush cover the data writes (tools/fio_engine/flush_domain.h and
// EngineConfig::ResolveSharedFlush): only for files on one disk whose every
// byte is allocated and written, never for holes or fallocated (unwritten)
// extents, never for the RocksDB backend; pgring_shared_flush=on refuses to
// start when it cannot be proven, naming why.
#include "flush_domain.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "engine_config.h"
#include "util/test_util.h"

namespace pgring::fio {
namespace {

using pgring::testing::TempDir;

// Writes `bytes` of data (allocated and written blocks, synced).
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

class FlushDomainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The checks need a disk-backed file system with FIEMAP and unwritten
    // extents (ext4, xfs); tmpfs or overlay cannot show either.
    auto disk = WholeDiskOf(dir_.path());
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
  TempDir dir_;
};

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

TEST_F(FlushDomainTest, TheEngineResolvesTheOption) {
  WriteFile(dir_.Join("data"), 1 << 20);
  WriteFile(dir_.Join("log"), 1 << 20);
  EngineConfig c;
  c.log_dev = dir_.Join("log");
  c.backend = Backend::kRing;

  c.shared_flush = EngineConfig::SharedFlush::kAuto;
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data")}).ok());
  EXPECT_TRUE(c.share_flush) << c.share_flush_why;
  // Every data file must qualify.
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data"), dir_.Join("falloc")}).ok());
  EXPECT_FALSE(c.share_flush);
  EXPECT_NE(c.share_flush_why.find("unwritten"), std::string::npos) << c.share_flush_why;

  c.shared_flush = EngineConfig::SharedFlush::kOn;
  absl::Status s = c.ResolveSharedFlush({dir_.Join("falloc")});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("pgring_shared_flush=on"), std::string::npos) << s;
  EXPECT_NE(s.message().find("unwritten"), std::string::npos) << s;

  c.shared_flush = EngineConfig::SharedFlush::kOff;
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data")}).ok());
  EXPECT_FALSE(c.share_flush);

  c.backend = Backend::kRocksDb;
  c.shared_flush = EngineConfig::SharedFlush::kAuto;
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data")}).ok());
  EXPECT_FALSE(c.share_flush);
  EXPECT_NE(c.share_flush_why.find("RocksDB backend"), std::string::npos);
  c.shared_flush = EngineConfig::SharedFlush::kOn;
  EXPECT_EQ(c.ResolveSharedFlush({dir_.Join("data")}).code(), absl::StatusCode::kInvalidArgument);
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

TEST_F(FlushDomainTest, TheEngineResolvesSyncCovers) {
  if (absl::Status fs = CheckSyncFlushesTheCache(dir_.path()); !fs.ok()) {
    GTEST_SKIP() << "the test file system's fdatasync is not known to flush the cache: " << fs;
  }
  WriteFile(dir_.Join("data"), 1 << 20);
  WriteFile(dir_.Join("log"), 1 << 20);
  EngineConfig c;
  c.log_dev = dir_.Join("log");
  c.db_path = dir_.Join("db");
  c.backend = Backend::kRing;
  c.sync_covers = EngineConfig::SyncCovers::kAuto;
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data")}).ok());
  EXPECT_TRUE(c.sync_covers_partition) << c.sync_covers_why;

  c.sync_covers = EngineConfig::SyncCovers::kOff;
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data")}).ok());
  EXPECT_FALSE(c.sync_covers_partition);
  EXPECT_EQ(c.sync_covers_why, "pgring_sync_covers=off");

  c.log_dev = dir_.Join("falloc");
  c.sync_covers = EngineConfig::SyncCovers::kOn;
  absl::Status s = c.ResolveSharedFlush({dir_.Join("data")});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("pgring_sync_covers=on"), std::string::npos) << s;
  EXPECT_NE(s.message().find("unwritten"), std::string::npos) << s;

  c.log_dev = dir_.Join("log");
  c.backend = Backend::kRocksDb;
  c.sync_covers = EngineConfig::SyncCovers::kAuto;
  ASSERT_TRUE(c.ResolveSharedFlush({dir_.Join("data")}).ok());
  EXPECT_FALSE(c.sync_covers_partition);
  EXPECT_NE(c.sync_covers_why.find("RocksDB backend"), std::string::npos) << c.sync_covers_why;
  c.sync_covers = EngineConfig::SyncCovers::kOn;
  EXPECT_EQ(c.ResolveSharedFlush({dir_.Join("data")}).code(), absl::StatusCode::kInvalidArgument);
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
}  // namespace pgring::fio
