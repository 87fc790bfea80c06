// The HDD model's counts (tools/fio_engine/write_requests.h): the engine
// reports, per client write, the write requests the data file and RocksDB's
// files receive and how many do not continue the one before (each a seek
// on a disk). RocksDB's are counted under its own writes, through the
// file-system wrapper the engine opens it with, so a real RocksDB writes
// here.
#include "write_requests.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb_io_counter.h"
#include "util/test_util.h"

namespace pgring::fio {
namespace {

TEST(WriteRequestsTest, CountsTheRequestsThatDoNotContinueTheOneBefore) {
  WriteRequests w;
  w.Issued(0, 8192, 4096);   // the first: a seek (the head is anywhere)
  w.Issued(0, 12288, 4096);  // continues it
  w.Issued(0, 16384, 512);   // continues it
  w.Issued(0, 4096, 4096);   // back: a seek
  w.Issued(1, 8192, 4096);   // where file 0 would go on, but another file
  w.Issued(1, 12288, 100);   // continues file 1
  w.Issued(1, 12400, 100);   // a gap of 12 bytes
  EXPECT_EQ(w.Read().requests, 7u);
  EXPECT_EQ(w.Read().noncontiguous, 4u);
}

// Synced single-key writes to RocksDB are one WAL append each, each where
// the last ended: RocksDB's log costs a disk no seek until it writes
// another file (a flush's SST, the MANIFEST), as the model says.
TEST(WriteRequestsTest, RocksDbWalAppendsContinueEachOtherAndAFlushSeeks) {
  testing::TempDir dir;
  auto fs = std::make_shared<RocksDbIoCounter>();
  std::shared_ptr<rocksdb::Env> env = RocksDbIoCounter::NewEnv(fs);
  rocksdb::Options o;
  o.create_if_missing = true;
  o.env = env.get();
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir.Join("db"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);

  const auto& c = fs->counts();
  const uint64_t requests0 = c.requests.Read().requests;
  const uint64_t seeks0 = c.requests.Read().noncontiguous;
  rocksdb::WriteOptions sync;
  sync.sync = true;
  constexpr int kWrites = 200;
  for (int i = 0; i < kWrites; ++i) {
    ASSERT_TRUE(db->Put(sync, "key" + std::to_string(i), std::string(100, 'v')).ok());
  }
  const uint64_t wal_requests = c.requests.Read().requests - requests0;
  const uint64_t wal_seeks = c.requests.Read().noncontiguous - seeks0;
  EXPECT_GE(wal_requests, static_cast<uint64_t>(kWrites));
  // At most the first append after the open's other files.
  EXPECT_LE(wal_seeks, 1u) << wal_requests << " WAL requests";

  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  EXPECT_GT(c.bytes[RocksDbIoCounter::kSst].load(), 0u);
  // The SST is another file, and the MANIFEST after it another again.
  EXPECT_GE(c.requests.Read().noncontiguous - seeks0 - wal_seeks, 2u);
  ASSERT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace pgring::fio
