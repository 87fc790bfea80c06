// engine_config_test.cc — EngineConfig::Validate()'s refusals: a RocksDB
// directory that would default to somewhere under /dev (devtmpfs, RAM), and
// the minimum sizes of the payloads, the dup and the onode with its attr.
#include "engine_config.h"

#include <gtest/gtest.h>

#include <string>

namespace pgring::fio {
namespace {

TEST(EngineConfigValidate, RefusesARocksDbDefaultingUnderDev) {
  EngineConfig c;
  c.log_dev = "/dev/nvme0n1p3";
  absl::Status s = c.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("pgring_db"), std::string::npos) << s;
  EXPECT_NE(s.message().find("/dev/nvme0n1p3.db"), std::string::npos) << s;
  EXPECT_NE(s.message().find("devtmpfs"), std::string::npos) << s;
  // The same through a /dev symlink, and through a path that only looks
  // outside /dev.
  c.log_dev = "/dev/disk/by-id/nvme-x-part3";
  EXPECT_EQ(c.Validate().code(), absl::StatusCode::kInvalidArgument);
  c.log_dev = "/tmp/../dev/sdb";
  EXPECT_EQ(c.Validate().code(), absl::StatusCode::kInvalidArgument);
  // A RocksDB directory of its own is fine.
  c.db_path = "/srv/pgring/db";
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
  // So is a file partition, and /dev only as a prefix of a name.
  c.db_path.clear();
  c.log_dev = "/srv/pgring/log.part";
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
  c.log_dev = "/devices/log.part";
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
}

TEST(EngineConfigValidate, SizesHaveTheirFloor) {
  EngineConfig c;
  c.log_dev = "/srv/log.part";
  ASSERT_TRUE(c.Validate().ok());
  c.dup_size = 15;
  EXPECT_EQ(c.Validate().code(), absl::StatusCode::kInvalidArgument);
  c.dup_size = 16;
  EXPECT_TRUE(c.Validate().ok());
  // The onode value is onode + object-info attr: an attr alone is fine.
  c.onode_size = 0;
  c.oi_attr_len = 8;
  EXPECT_EQ(c.Validate().code(), absl::StatusCode::kInvalidArgument);
  c.oi_attr_len = 250;
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_EQ(c.OnodeValueSize(), 250u);
}

}  // namespace
}  // namespace pgring::fio
