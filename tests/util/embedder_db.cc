#include "util/embedder_db.h"

#include <gtest/gtest.h>

namespace pgring::testing {

EmbedderDb::EmbedderDb(const std::string& path, const std::vector<std::string>& families,
                       rocksdb::DBOptions options) {
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> d = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()}};
  for (const std::string& f : families) d.emplace_back(f, rocksdb::ColumnFamilyOptions());
  rocksdb::Status s = rocksdb::DB::Open(options, path, d, &handles_, &db_);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) db_ = nullptr;
}

void EmbedderDb::Close() {
  if (db_ == nullptr) return;
  for (auto* h : handles_) EXPECT_TRUE(db_->DestroyColumnFamilyHandle(h).ok());
  handles_.clear();
  EXPECT_TRUE(db_->Close().ok());
  delete db_;
  db_ = nullptr;
}

}  // namespace pgring::testing
