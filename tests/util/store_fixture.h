// store_fixture.h — a store on an in-memory partition with its own RocksDB in
// a temporary directory, for the store tests.
#ifndef PGRING_TESTS_UTIL_STORE_FIXTURE_H_
#define PGRING_TESTS_UTIL_STORE_FIXTURE_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "device/memory_block_device.h"
#include "pgring/store.h"
#include "store/open_store.h"
#include "util/test_util.h"

namespace pgring::testing {

class StoreFixture : public ::testing::Test {
 protected:
  static constexpr uint64_t kDeviceSize = 64ull << 20;
  static constexpr uint32_t kChunkSize = 64 << 10;

  void SetUp() override;
  void TearDown() override { store_.reset(); }

  // mkfs on the memory device and the DB dir.
  void Mkfs(const MkfsOptions& o = DefaultMkfs());
  absl::Status Open(const Options& o);
  void Reopen();  // close and open with options_
  // Closes the store and returns every key and value of its RocksDB.
  std::map<std::string, std::string> DumpDb();
  static MkfsOptions DefaultMkfs() {
    MkfsOptions m;
    m.chunk_size = kChunkSize;
    return m;
  }
  static Options DefaultOptions() {
    Options o;
    o.log_sink = NullLogSink();
    o.reserve_chunks_per_pg = 1;
    return o;
  }
  MetadataLocation meta() const { return MetadataLocation::OwnDb(db_path_); }

  TempDir dir_;
  std::string db_path_;
  std::shared_ptr<BlockDevice> device_;
  // Env for the store's RocksDB (null: the default). Set before Mkfs().
  rocksdb::Env* env_ = nullptr;
  Options options_ = DefaultOptions();
  std::unique_ptr<Store> store_;
};

inline PgId Pg(uint32_t seed, int64_t pool = 1) { return PgId{pool, seed, -1}; }
inline Version V(uint32_t e, uint64_t v) { return Version{e, v}; }

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_STORE_FIXTURE_H_
