// flush_domain_test.cc — the flush-domain proof (pgring/flush_domain.h and
// device/flush_domain.h): files on one disk whose every byte is allocated
// and written share a flush; holes, fallocated (unwritten) extents, a
// missing path, ext4's data=journal are refused, naming why; a RocksDB sync
// covers the partition only on a file system whose fdatasync flushes the
// disk's cache (ext4 barrier=0 is refused); stacked devices (LVs) are the
// disks under them, on a sysfs tree of the test's making and, where the
// kernel has device-mapper, on two real linear targets. How the fio engine resolves its
// options from these checks is tested in tests/fio/shared_flush_test.cc.
#include "device/flush_domain.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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
  auto disks = DisksUnder(dir_.path());
  ASSERT_TRUE(disks.ok()) << disks.status();
  ASSERT_EQ(disks->size(), 1u) << "a test file system on a stacked device";
  const std::string* disk = &disks->front();
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

// A sysfs tree laid out as the kernel lays out ceph-volume's usual OSD: two
// disks, sda (8:0, partitions sda1 8:1 and sda2 8:2) and sdb (8:16,
// partition sdb1 8:17); LVs dm-0 (253:0, "block") and dm-1 (253:1, "db") in
// one volume group on sda2; dm-2 (253:2) on sdb1; dm-3 (253:3) striped over
// sda1 and sdb1; dm-4 (253:4), a dm-crypt device over dm-0. Links as sysfs
// has them: dev/block/MAJ:MIN -> the device's directory, slaves/NAME -> the
// directory of each device it is stacked on.
class SysfsTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    root_ = dir_.Join("sys");
    const fs::path block = fs::path(root_) / "devices" / "block";
    Device(block / "sda", "8:0");
    Device(block / "sda" / "sda1", "8:1", /*partition=*/true);
    Device(block / "sda" / "sda2", "8:2", true);
    Device(block / "sdb", "8:16");
    Device(block / "sdb" / "sdb1", "8:17", true);
    const fs::path virt = fs::path(root_) / "devices" / "virtual" / "block";
    Device(virt / "dm-0", "253:0", false, {block / "sda" / "sda2"});
    Device(virt / "dm-1", "253:1", false, {block / "sda" / "sda2"});
    Device(virt / "dm-2", "253:2", false, {block / "sdb" / "sdb1"});
    Device(virt / "dm-3", "253:3", false, {block / "sda" / "sda1", block / "sdb" / "sdb1"});
    Device(virt / "dm-4", "253:4", false, {virt / "dm-0"});
  }
  void Device(const std::filesystem::path& dir, const std::string& majmin, bool partition = false,
              std::vector<std::filesystem::path> slaves = {}) {
    namespace fs = std::filesystem;
    fs::create_directories(dir / "slaves");
    std::ofstream(dir / "dev") << majmin << "\n";
    if (partition) std::ofstream(dir / "partition") << "1\n";
    for (const fs::path& s : slaves) fs::create_directory_symlink(s, dir / "slaves" / s.filename());
    fs::create_directories(fs::path(root_) / "dev" / "block");
    fs::create_directory_symlink(dir, fs::path(root_) / "dev" / "block" / majmin);
  }
  std::vector<std::string> Disks(const std::string& majmin) {
    auto d = DisksUnderDevice(root_, majmin);
    EXPECT_TRUE(d.ok()) << majmin << ": " << d.status();
    return d.ok() ? *d : std::vector<std::string>{"error"};
  }
  TempDir dir_;
  std::string root_;
};

TEST_F(SysfsTreeTest, DisksAndPartitionsAreTheirDisk) {
  EXPECT_EQ(Disks("8:0"), std::vector<std::string>{"8:0"});
  EXPECT_EQ(Disks("8:2"), std::vector<std::string>{"8:0"});
  EXPECT_EQ(Disks("8:17"), std::vector<std::string>{"8:16"});
}

// Two LVs of one volume group on one disk are that disk: one cache.
TEST_F(SysfsTreeTest, LogicalVolumesAreTheDisksUnderThem) {
  EXPECT_EQ(Disks("253:0"), std::vector<std::string>{"8:0"});
  EXPECT_EQ(Disks("253:1"), std::vector<std::string>{"8:0"});
  EXPECT_EQ(Disks("253:2"), std::vector<std::string>{"8:16"});
  EXPECT_EQ(Disks("253:3"), (std::vector<std::string>{"8:0", "8:16"}));
  EXPECT_EQ(Disks("253:4"), std::vector<std::string>{"8:0"});  // stacked twice
}

TEST_F(SysfsTreeTest, AnUnknownDeviceOrABrokenSlaveIsNamed) {
  auto none = DisksUnderDevice(root_, "7:99");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("7:99"), std::string::npos) << none.status();
  namespace fs = std::filesystem;
  const fs::path dm0 = fs::path(root_) / "devices" / "virtual" / "block" / "dm-0";
  fs::create_directory_symlink(dir_.Join("gone"), dm0 / "slaves" / "gone");
  auto broken = DisksUnderDevice(root_, "253:0");
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(broken.status().message().find("slaves/gone"), std::string::npos) << broken.status();
}

TEST_F(SysfsTreeTest, AStackingCycleIsRefused) {
  namespace fs = std::filesystem;
  const fs::path virt = fs::path(root_) / "devices" / "virtual" / "block";
  Device(virt / "dm-5", "253:5");
  Device(virt / "dm-6", "253:6", false, {virt / "dm-5"});
  fs::create_directory_symlink(virt / "dm-6", virt / "dm-5" / "slaves" / "dm-6");
  auto cycle = DisksUnderDevice(root_, "253:5");
  EXPECT_EQ(cycle.status().code(), absl::StatusCode::kFailedPrecondition) << cycle.status();
  EXPECT_NE(cycle.status().message().find("stacked more than"), std::string::npos)
      << cycle.status();
}

// Two linear device-mapper targets over one loop device: the block and DB
// LVs of one disk. Needs root and a kernel with device-mapper; skipped, with
// the reason, where either is missing.
TEST(DeviceMapperTest, TwoLinearTargetsOnOneLoopDeviceShareAFlush) {
  if (::geteuid() != 0) GTEST_SKIP() << "device-mapper and loop devices need root";
  auto run = [](const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; };
  if (!run("command -v dmsetup") || !run("command -v losetup")) {
    GTEST_SKIP() << "dmsetup or losetup is missing";
  }
  if (!run("dmsetup version")) {
    GTEST_SKIP() << "the kernel has no device-mapper here (dmsetup version fails: no "
                    "/dev/mapper/control); the sysfs walk is tested on a tree (SysfsTreeTest)";
  }
  TempDir dir;
  const std::string image = dir.Join("disk.img");
  ASSERT_TRUE(run("truncate -s 64M " + image));
  FILE* p = ::popen(("losetup --find --show " + image).c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[64] = {};
  const bool got = std::fgets(buf, sizeof(buf), p) != nullptr;
  ::pclose(p);
  if (!got) GTEST_SKIP() << "no free loop device";
  std::string loop(buf);
  loop.erase(loop.find_last_not_of("\n") + 1);
  const std::string a = "pgring-test-block-" + std::to_string(::getpid());
  const std::string b = "pgring-test-db-" + std::to_string(::getpid());
  // 64 MiB = 131072 sectors: two LVs of 65536 sectors each.
  const bool made = run("dmsetup create " + a + " --table '0 65536 linear " + loop + " 0'") &&
                    run("dmsetup create " + b + " --table '0 65536 linear " + loop + " 65536'");
  auto disks_a = DisksUnder("/dev/mapper/" + a);
  auto disks_b = DisksUnder("/dev/mapper/" + b);
  auto disks_loop = DisksUnder(loop);
  FlushDomainCheck c = CheckSharedFlush("/dev/mapper/" + a, "/dev/mapper/" + b);
  run("dmsetup remove " + a);
  run("dmsetup remove " + b);
  run("losetup -d " + loop);
  ASSERT_TRUE(made) << "dmsetup create failed on " << loop;
  ASSERT_TRUE(disks_a.ok()) << disks_a.status();
  ASSERT_TRUE(disks_loop.ok()) << disks_loop.status();
  EXPECT_EQ(*disks_a, *disks_loop);
  EXPECT_EQ(*disks_b, *disks_loop);
  EXPECT_TRUE(c.shared) << c.why;
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
