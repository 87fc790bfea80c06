#include "util/store_fixture.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "util/rocksdb_keys.h"

namespace pgring::testing {

void StoreFixture::SetUp() {
  db_path_ = dir_.Join("db");
  device_ = std::make_shared<MemoryBlockDevice>(kDeviceSize);
}

void StoreFixture::UseFileDevice(uint64_t size) {
  device_path_ = dir_.Join("partition");
  MakeFile(device_path_, size);
  device_.reset();
}

void StoreFixture::Mkfs(const MkfsOptions& o) {
  OpenHooks h;
  h.device = device_;
  h.env = env_;
  ASSERT_OK(MkfsWithHooks(device_path_.empty() ? "mem" : device_path_, meta(), o, h));
}

absl::Status StoreFixture::Open(const Options& o) {
  store_.reset();
  OpenHooks h;
  h.device = device_;
  h.env = env_;
  auto s = OpenWithHooks(device_path_.empty() ? "mem" : device_path_, meta(), o, h);
  if (!s.ok()) return s.status();
  store_ = std::move(s).value();
  return absl::OkStatus();
}

void StoreFixture::Reopen() {
  if (store_) ASSERT_OK(store_->Close());
  ASSERT_OK(Open(options_));
}

void StoreFixture::MkfsAndOpen(Backend backend) {
  MkfsOptions m = DefaultMkfs();
  m.backend = backend;
  Mkfs(m);
  ASSERT_OK(Open(options_));
  ASSERT_EQ(store_->backend(), backend);
}

void StoreFixture::RawDbWrite(const std::function<void(rocksdb::WriteBatch*)>& fill) {
  ASSERT_EQ(store_, nullptr) << "close the store before writing behind its back";
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), db_path_, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteBatch b;
  fill(&b);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  ASSERT_TRUE(db->Write(wo, &b).ok());
}

absl::Status StoreFixture::Append(const PgId& pg, uint64_t from, uint64_t to, uint32_t epoch,
                                  size_t size) {
  Transaction t;
  for (uint64_t v = from; v <= to; ++v) t.AppendEntry(pg, V(epoch, v), TestPayload(v, size));
  t.SetInfo(pg, "info@" + std::to_string(to));
  return store_->Commit(std::move(t));
}

absl::Status StoreFixture::Create(const PgId& pg) {
  Transaction t;
  t.CreatePg(pg);
  return store_->Commit(std::move(t));
}

absl::Status StoreFixture::Do(const std::function<void(Transaction*)>& fill) {
  Transaction t;
  fill(&t);
  return store_->Commit(std::move(t));
}

std::vector<uint64_t> StoreFixture::Versions(const PgId& pg) {
  auto r = store_->ReadEntries(pg);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<uint64_t> out;
  if (!r.ok()) return out;
  for (auto& e : *r) {
    EXPECT_EQ(e.payload, TestPayload(e.version.version));
    out.push_back(e.version.version);
  }
  return out;
}

std::string TestPayload(uint64_t v, size_t n) {
  std::string s = "entry-" + std::to_string(v) + "-";
  while (s.size() < n) s += static_cast<char>('a' + (v + s.size()) % 26);
  return s;
}

std::vector<uint64_t> Range(uint64_t a, uint64_t b) {
  std::vector<uint64_t> v;
  for (uint64_t i = a; i <= b; ++i) v.push_back(i);
  return v;
}

std::map<std::string, std::string> StoreFixture::DumpDb() {
  if (store_) EXPECT_OK(store_->Close());
  store_.reset();
  return ReadAllKeys(db_path_);
}

}  // namespace pgring::testing
