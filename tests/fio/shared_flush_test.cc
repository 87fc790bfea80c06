// shared_flush_test.cc — how the fio engine resolves pgring_shared_flush and
// pgring_sync_covers (EngineConfig::ResolveSharedFlush) from the library's
// flush-domain checks (tests/unit/flush_domain_test.cc): only for files on
// one disk whose every byte is allocated and written, never for holes or
// fallocated (unwritten) extents, never for the RocksDB backend; =on refuses
// to start when it cannot be proven, naming why.
#include <gtest/gtest.h>

#include <string>

#include "device/flush_domain.h"
#include "engine_config.h"
#include "util/flush_domain_fixture.h"

namespace pgring::testing {
namespace {

using fio::EngineConfig;

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

}  // namespace
}  // namespace pgring::testing
