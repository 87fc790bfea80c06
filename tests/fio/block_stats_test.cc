// The engine's device counts (tools/fio_engine/block_stats.h): the report's
// requests, bytes and flushes per client write come from these stat files.
#include "block_stats.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace pgring::fio {
namespace {

TEST(BlockStatsTest, ParsesTheWriteFieldsOfAStatFile) {
  // 17 fields (Linux 5.5 on): reads 1-4, writes 5-8, in flight, io_ticks,
  // time in queue, discards 12-15, flushes 16-17.
  auto s = ParseBlockStat(
      "    1200        3    96000      500    45678       12   987654    30000        0     4000"
      "    34500        0        0        0        0      321       77\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->write_requests, 45678u);
  EXPECT_EQ(s->write_sectors, 987654u);
  EXPECT_TRUE(s->has_flushes);
  EXPECT_EQ(s->flushes, 321u);
  // 11 fields (older kernels): no flushes.
  auto old = ParseBlockStat("1 2 3 4 5 6 7 8 9 10 11\n");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->write_requests, 5u);
  EXPECT_EQ(old->write_sectors, 7u);
  EXPECT_FALSE(old->has_flushes);
  EXPECT_FALSE(ParseBlockStat("1 2 3 4 5 6 7 8 9 10\n"));   // too few
  EXPECT_FALSE(ParseBlockStat("1 2 3 4 x 6 7 8 9 10 11\n"));
  EXPECT_FALSE(ParseBlockStat(""));
}

std::string TempDir() {
  const char* base = std::getenv("PGRING_TEST_TMPDIR");
  std::filesystem::path p = std::filesystem::path(base ? base : "/tmp") /
                            ("block_stats_test." + std::to_string(getpid()));
  std::filesystem::create_directories(p);
  return p.string();
}

// A fake sysfs: /sys/dev/block/M:m links to the device's directory, a
// partition's directory is inside its disk's and has a "partition" file.
TEST(BlockStatsTest, MapsAPathToItsDeviceAndAPartitionToItsDisk) {
  const std::string dir = TempDir();
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  const std::filesystem::path root(dir);
  std::filesystem::create_directories(root / "devices/loop9/loop9p2");
  std::ofstream(root / "devices/loop9/loop9p2/partition") << "2\n";
  std::filesystem::create_directories(root / "dev-block");
  std::filesystem::create_symlink(
      root / "devices/loop9/loop9p2",
      root / "dev-block" / (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev))));
  auto dev = FindBlockDevice(dir, (root / "dev-block").string());
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(dev->name, "loop9p2");
  EXPECT_EQ(dev->disk, "loop9");
  // A device number with no entry: no block device, and the reason names it.
  auto none = FindBlockDevice(dir, (root / "empty").string());
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no block device"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Counts start when a device is added; a partition also counts its disk;
// a path on no block device is reported, not counted as zero.
TEST(BlockStatsTest, CountsFromWhenADeviceIsAdded) {
  const std::string dir = TempDir();
  const std::filesystem::path root(dir);
  auto write_stat = [&](const std::string& name, int requests, int sectors, int flushes) {
    std::filesystem::create_directories(root / "class" / name);
    std::ofstream(root / "class" / name / "stat")
        << "0 0 0 0 " << requests << " 0 " << sectors << " 0 0 0 0 0 0 0 0 " << flushes << " 0\n";
  };
  BlockStats stats((root / "class").string());
  // The test cannot choose the device the temp dir lives on: read which it
  // is, then fake that one's stat.
  auto real = FindBlockDevice(dir);
  if (!real.ok()) GTEST_SKIP() << "the test directory is on no block device: " << real.status();
  write_stat(real->name, 100, 800, 5);
  if (!real->disk.empty()) write_stat(real->disk, 10, 80, 1);
  stats.Add("data", dir);
  stats.Add("db", dir);  // the same device: one entry, two roles
  write_stat(real->name, 130, 800 + 8 * 30, 9);
  if (!real->disk.empty()) write_stat(real->disk, 12, 96, 3);
  std::map<std::string, std::string> unavailable;
  auto d = stats.Read(&unavailable);
  ASSERT_TRUE(d.count(real->name));
  EXPECT_EQ(d.at(real->name).counts.write_requests, 30u);
  EXPECT_EQ(d.at(real->name).counts.write_sectors, 240u);
  EXPECT_EQ(d.at(real->name).counts.flushes, 4u);
  EXPECT_EQ(d.at(real->name).roles, (std::set<std::string>{"data", "db"}));
  if (!real->disk.empty()) {
    EXPECT_EQ(d.at(real->disk).counts.flushes, 2u);
    EXPECT_EQ(d.at(real->disk).roles, (std::set<std::string>{"disk"}));
  }
  EXPECT_TRUE(unavailable.empty());
  stats.Add("log", dir + "/no-such-file");
  EXPECT_TRUE(stats.unavailable().count("log"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pgring::fio
