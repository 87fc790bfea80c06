// store_fixture.h — a store on an in-memory partition with its own RocksDB in
// a temporary directory, for the store tests.
#ifndef PGRING_TESTS_UTIL_STORE_FIXTURE_H_
#define PGRING_TESTS_UTIL_STORE_FIXTURE_H_

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/memory_block_device.h"
#include "pgring/store.h"
#include "store/open_store.h"
#include "util/test_util.h"

namespace rocksdb {
class WriteBatch;
}

namespace pgring::testing {

class StoreFixture : public ::testing::Test {
 protected:
  static constexpr uint64_t kDeviceSize = 64ull << 20;
  static constexpr uint32_t kChunkSize = 64 << 10;

  void SetUp() override;
  void TearDown() override { store_.reset(); }

  // Puts the store on a real partition instead of the memory device: a file
  // of `size` bytes in the test's directory, opened by path the way an
  // embedder opens one (O_DIRECT, Options::io_engine). Call before Mkfs().
  void UseFileDevice(uint64_t size = kDeviceSize);

  // mkfs on the memory device and the DB dir.
  void Mkfs(const MkfsOptions& o = DefaultMkfs());
  absl::Status Open(const Options& o);
  void Reopen();  // close and open with options_
  // mkfs for `backend` with the default options, then open with options_.
  void MkfsAndOpen(Backend backend);
  // Closes the store and returns every key and value of its RocksDB.
  std::map<std::string, std::string> DumpDb();
  // Writes to the store's RocksDB behind its back (the store must be closed).
  void RawDbWrite(const std::function<void(rocksdb::WriteBatch*)>& fill);

  // Transactions the store tests commit again and again.
  // Entries from..to of `pg` (payloads TestPayload(v, size)) and its info.
  absl::Status Append(const PgId& pg, uint64_t from, uint64_t to, uint32_t epoch = 1,
                      size_t size = 200);
  absl::Status Create(const PgId& pg);
  absl::Status Do(const std::function<void(Transaction*)>& fill);
  // The versions of `pg`'s entries; checks every payload is TestPayload's.
  std::vector<uint64_t> Versions(const PgId& pg);
  static MkfsOptions DefaultMkfs() {
    MkfsOptions m;
    m.chunk_size = kChunkSize;
    return m;
  }
  // Per-PG rings: the tests of what a ring does write exact ring bytes and
  // positions; the suites that run every layout set it (SetLayout), and
  // log_stream_test tests the stream.
  static Options DefaultOptions() {
    Options o;
    o.log_sink = NullLogSink();
    o.reserve_chunks_per_pg = 1;
    o.log_layout = LogLayout::kPerPgRings;
    return o;
  }
  MetadataLocation meta() const { return MetadataLocation::OwnDb(db_path_); }

  TempDir dir_;
  std::string db_path_;
  // The memory device; null after UseFileDevice().
  std::shared_ptr<BlockDevice> device_;
  // The partition file after UseFileDevice(); empty on the memory device.
  std::string device_path_;
  // Env for the store's RocksDB (null: the default). Set before Mkfs().
  rocksdb::Env* env_ = nullptr;
  Options options_ = DefaultOptions();
  std::unique_ptr<Store> store_;
};

inline PgId Pg(uint32_t seed, int64_t pool = 1) { return PgId{pool, seed, -1}; }
inline Version V(uint32_t e, uint64_t v) { return Version{e, v}; }
// An entry payload of `n` bytes that names its version.
std::string TestPayload(uint64_t v, size_t n = 200);
// a, a+1, ..., b.
std::vector<uint64_t> Range(uint64_t a, uint64_t b);

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_STORE_FIXTURE_H_
