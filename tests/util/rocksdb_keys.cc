#include "util/rocksdb_keys.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdio>
#include <memory>

#include "format/metadata_keys.h"

namespace pgring::testing {

std::map<std::string, std::string> ReadAllKeys(const std::string& path) {
  std::map<std::string, std::string> out;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return out;
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) out[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return out;
}

std::map<std::string, std::string> PgLogKeysOf(const std::map<std::string, std::string>& all,
                                             const PgId& pg) {
  const std::string prefix = "pgring.log." + EncodePgKey(pg) + ".";
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : all) {
    if (k.compare(0, prefix.size(), prefix) == 0) out[k.substr(prefix.size())] = v;
  }
  return out;
}

std::string CephKeyName(uint32_t epoch, uint64_t version) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%010u.%020llu", epoch, static_cast<unsigned long long>(version));
  return buf;
}

}  // namespace pgring::testing
