#include "util/store_fixture.h"

#include "util/rocksdb_keys.h"

namespace pgring::testing {

void StoreFixture::SetUp() {
  db_path_ = dir_.Join("db");
  device_ = std::make_shared<MemoryBlockDevice>(kDeviceSize);
}

void StoreFixture::Mkfs(const MkfsOptions& o) {
  OpenHooks h;
  h.device = device_;
  h.env = env_;
  ASSERT_OK(MkfsWithHooks("mem", meta(), o, h));
}

absl::Status StoreFixture::Open(const Options& o) {
  store_.reset();
  OpenHooks h;
  h.device = device_;
  h.env = env_;
  auto s = OpenWithHooks("mem", meta(), o, h);
  if (!s.ok()) return s.status();
  store_ = std::move(s).value();
  return absl::OkStatus();
}

void StoreFixture::Reopen() {
  if (store_) ASSERT_OK(store_->Close());
  ASSERT_OK(Open(options_));
}

std::map<std::string, std::string> StoreFixture::DumpDb() {
  if (store_) EXPECT_OK(store_->Close());
  store_.reset();
  return ReadAllKeys(db_path_);
}

}  // namespace pgring::testing
