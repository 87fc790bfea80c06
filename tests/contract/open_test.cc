// Mkfs and Store::Open on real files through the public API: round trips
// with both I/O engines, the refusals (existing label, device in use, missing
// device or RocksDB, garbage, bad sizes), and shared-DB mode where the
// embedder's keys commit in the same batch as pgring's pointers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pgring/store.h"
#include "util/embedder_db.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kPartitionSize = 16ull << 20;
constexpr uint32_t kChunkSize = 64 << 10;

PgId Pg(uint32_t seed) { return PgId{1, seed, -1}; }
Version V(uint64_t v) { return Version{1, v}; }
std::string Payload(uint64_t v) { return "payload-" + std::to_string(v) + std::string(150, 'x'); }

MkfsOptions Mkfs64k(bool force = false) {
  MkfsOptions m;
  m.chunk_size = kChunkSize;
  m.force = force;
  return m;
}

absl::Status Append(Store* s, const PgId& pg, uint64_t from, uint64_t to) {
  Transaction t;
  for (uint64_t v = from; v <= to; ++v) t.AppendEntry(pg, V(v), Payload(v));
  t.SetInfo(pg, "info@" + std::to_string(to));
  return s->Commit(std::move(t));
}
absl::Status Create(Store* s, const PgId& pg) {
  Transaction t;
  t.CreatePg(pg);
  return s->Commit(std::move(t));
}
void ExpectEntries(Store* s, const PgId& pg, uint64_t from, uint64_t to) {
  auto r = s->ReadEntries(pg);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), to - from + 1);
  for (uint64_t v = from; v <= to; ++v) {
    EXPECT_EQ((*r)[v - from].version, V(v));
    EXPECT_EQ((*r)[v - from].payload, Payload(v));
  }
  auto info = s->ReadInfo(pg);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(*info, "info@" + std::to_string(to));
}

void WriteFile(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(fd);
}

class OpenTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeFile(dev_, kPartitionSize); }
  static Options Opts(IoEngine engine = IoEngine::kPsync) {
    Options o;
    o.log_sink = NullLogSink();
    o.io_engine = engine;
    return o;
  }
  MetadataLocation Db() const { return MetadataLocation::OwnDb(db_); }
  absl::StatusOr<std::unique_ptr<Store>> OpenStore(IoEngine engine = IoEngine::kPsync) {
    return Store::Open(dev_, Db(), Opts(engine));
  }

  TempDir dir_;
  const std::string dev_ = dir_.Join("partition");
  const std::string db_ = dir_.Join("db");
};

class OpenEngineTest : public OpenTest, public ::testing::WithParamInterface<IoEngine> {};

TEST_P(OpenEngineTest, MkfsOpenCommitReopen) {
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  {
    auto s = OpenStore(GetParam());
    ASSERT_OK(s);
    ASSERT_OK(Create(s->get(), Pg(1)));
    ASSERT_OK(Create(s->get(), Pg(2)));
    ASSERT_OK(Append(s->get(), Pg(1), 1, 20));
    ASSERT_OK(Append(s->get(), Pg(2), 1, 3));
    Transaction d;
    d.AppendDup(Pg(2), V(7), "dup7");
    ASSERT_OK((*s)->Commit(std::move(d)));
    ExpectEntries(s->get(), Pg(1), 1, 20);
    ASSERT_OK((*s)->Close());
  }
  {
    auto s = OpenStore(GetParam());
    ASSERT_OK(s);
    EXPECT_EQ(*(*s)->ListPgs(), (std::vector<PgId>{Pg(1), Pg(2)}));
    ExpectEntries(s->get(), Pg(1), 1, 20);
    ExpectEntries(s->get(), Pg(2), 1, 3);
    auto dups = (*s)->ReadDups(Pg(2));
    ASSERT_OK(dups);
    ASSERT_EQ(dups->size(), 1u);
    EXPECT_EQ((*dups)[0].payload, "dup7");
    // Keep going after the reopen, across the partially filled tail block.
    ASSERT_OK(Append(s->get(), Pg(1), 21, 40));
    // Destructor closes.
  }
  // Reopen with the other engine: the engine is not part of the format.
  auto s = OpenStore(GetParam() == IoEngine::kIoUring ? IoEngine::kPsync : IoEngine::kIoUring);
  ASSERT_OK(s);
  ExpectEntries(s->get(), Pg(1), 1, 40);
  EXPECT_GT((*s)->GetStoreStats().total_chunks, 200u);
}

// Store::PlugWrites on a real partition: with io_uring a transaction
// submitted under the plug cannot commit (its ring write has not even been
// sent) until UnplugWrites; then it commits and survives a reopen. With
// psync the plug changes nothing. Per-PG rings: in the stream layout Submit
// issues no partition write (the commit thread does) and the plug is moot.
TEST_P(OpenEngineTest, PluggedTransactionsCommitAtUnplug) {
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  Options o = Opts(GetParam());
  o.log_layout = LogLayout::kPerPgRings;
  auto s = Store::Open(dev_, Db(), o);
  ASSERT_OK(s);
  ASSERT_OK(Create(s->get(), Pg(1)));
  Store* store = s->get();
  std::mutex mu;
  std::condition_variable cv;
  int committed = 0;
  store->PlugWrites();
  for (uint64_t v = 1; v <= 4; ++v) {
    Transaction t;
    t.AppendEntry(Pg(1), V(v), Payload(v));
    ASSERT_OK(store->Submit(std::move(t), [&](absl::Status st) {
      EXPECT_OK(st);
      std::lock_guard<std::mutex> l(mu);
      ++committed;
      cv.notify_all();
    }));
  }
  if (GetParam() == IoEngine::kIoUring) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> l(mu);
    EXPECT_EQ(committed, 0) << "a transaction committed before its plugged write was sent";
  }
  store->UnplugWrites();
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return committed == 4; }))
        << committed << " of 4 committed after UnplugWrites";
  }
  ASSERT_OK(store->Close());
  s->reset();
  auto again = OpenStore(GetParam());
  ASSERT_OK(again);
  auto e = (*again)->ReadEntries(Pg(1));
  ASSERT_OK(e);
  ASSERT_EQ(e->size(), 4u);
  for (uint64_t v = 1; v <= 4; ++v) EXPECT_EQ((*e)[v - 1].payload, Payload(v));
}

INSTANTIATE_TEST_SUITE_P(Engines, OpenEngineTest,
                         ::testing::Values(IoEngine::kIoUring, IoEngine::kPsync),
                         [](const ::testing::TestParamInfo<IoEngine>& i) {
                           return i.param == IoEngine::kIoUring ? std::string("IoUring")
                                                                : std::string("Psync");
                         });

TEST_F(OpenTest, MkfsRefusesAnExistingStoreWithoutForce) {
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  {
    auto s = OpenStore();
    ASSERT_OK(s);
    ASSERT_OK(Create(s->get(), Pg(1)));
    ASSERT_OK(Append(s->get(), Pg(1), 1, 5));
  }
  absl::Status again = Mkfs(dev_, Db(), Mkfs64k());
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_THAT(std::string(again.message()), HasSubstr(dev_));
  EXPECT_THAT(std::string(again.message()), HasSubstr("without force"));
  // A fresh RocksDB does not help: the label alone is enough to refuse.
  EXPECT_CODE(Mkfs(dev_, MetadataLocation::OwnDb(dir_.Join("db2")), Mkfs64k()), kAlreadyExists);
  // Nor does a fresh partition with the old RocksDB.
  const std::string dev2 = dir_.Join("partition2");
  MakeFile(dev2, kPartitionSize);
  absl::Status db_refused = Mkfs(dev2, Db(), Mkfs64k());
  EXPECT_EQ(db_refused.code(), absl::StatusCode::kAlreadyExists) << db_refused;
  EXPECT_THAT(std::string(db_refused.message()), HasSubstr("RocksDB at " + db_));
  // The refusals changed nothing.
  {
    auto s = OpenStore();
    ASSERT_OK(s);
    ExpectEntries(s->get(), Pg(1), 1, 5);
  }
  // With force: a new, empty store.
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k(/*force=*/true)));
  auto s = OpenStore();
  ASSERT_OK(s);
  EXPECT_TRUE((*s)->ListPgs()->empty());
  EXPECT_CODE((*s)->ReadEntries(Pg(1)), kNotFound);
  EXPECT_EQ((*s)->GetStoreStats().free_chunks, (*s)->GetStoreStats().total_chunks);
  ASSERT_OK(Create(s->get(), Pg(1)));
  ASSERT_OK(Append(s->get(), Pg(1), 1, 2));
  ExpectEntries(s->get(), Pg(1), 1, 2);
}

TEST_F(OpenTest, SecondOpenWhileOpenIsUnavailable) {
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  auto first = OpenStore();
  ASSERT_OK(first);
  auto second = OpenStore();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr(dev_));
  // Mkfs, even forced, cannot take a partition that is in use either.
  EXPECT_CODE(Mkfs(dev_, Db(), Mkfs64k(/*force=*/true)), kUnavailable);
  // The first store is unaffected; once it is closed the partition opens.
  ASSERT_OK(Create(first->get(), Pg(1)));
  ASSERT_OK((*first)->Close());
  first->reset();
  auto third = OpenStore();
  ASSERT_OK(third);
  EXPECT_EQ(*(*third)->ListPgs(), std::vector<PgId>{Pg(1)});
}

TEST_F(OpenTest, MissingDevicePathIsNotFound) {
  const std::string missing = dir_.Join("no-such-partition");
  auto s = Store::Open(missing, Db(), Opts());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound) << s.status();
  EXPECT_THAT(std::string(s.status().message()), HasSubstr(missing));
  EXPECT_CODE(Mkfs(missing, Db(), Mkfs64k()), kNotFound);
}

TEST_F(OpenTest, MissingRocksDbIsNotFound) {
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  const std::string missing = dir_.Join("no-such-db");
  auto s = Store::Open(dev_, MetadataLocation::OwnDb(missing), Opts());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound) << s.status();
  EXPECT_THAT(std::string(s.status().message()), HasSubstr(missing));
  // ...and open did not create one.
  EXPECT_NE(::access(missing.c_str(), F_OK), 0);
  // Read-only (the debug tool) likewise.
  Options ro = Opts();
  ro.read_only = true;
  auto r = Store::Open(dev_, MetadataLocation::OwnDb(missing), ro);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  // An empty directory holds no RocksDB either.
  ASSERT_EQ(::mkdir(missing.c_str(), 0755), 0);
  EXPECT_CODE(Store::Open(dev_, MetadataLocation::OwnDb(missing), Opts()), kNotFound);
  EXPECT_CODE(Store::Open(dev_, MetadataLocation::OwnDb(missing), ro), kNotFound);
}

TEST_F(OpenTest, RandomBytesPartitionIsRefused) {
  std::mt19937_64 rng(42);
  std::string junk(kPartitionSize, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  WriteFile(dev_, junk);
  auto s = OpenStore();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("has no pgring label"));
  EXPECT_THAT(std::string(s.status().message()), HasSubstr(dev_));
}

TEST_F(OpenTest, PartitionSizeNotAMultipleOf4096IsInvalid) {
  MakeFile(dev_, kPartitionSize + 100);
  EXPECT_CODE(Mkfs(dev_, Db(), Mkfs64k()), kInvalidArgument);
  // A store made on a good file that was later extended by a few bytes.
  MakeFile(dev_, kPartitionSize);
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  ASSERT_EQ(::truncate(dev_.c_str(), kPartitionSize + 100), 0);
  EXPECT_CODE(OpenStore(), kInvalidArgument);
}

TEST_F(OpenTest, PartitionTooSmallForFourChunksIsInvalid) {
  MakeFile(dev_, 4096 + 3 * kChunkSize);
  absl::Status s = Mkfs(dev_, Db(), Mkfs64k());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("at least 4"));
  // Exactly four chunks is enough.
  MakeFile(dev_, 4096 + 4 * kChunkSize);
  ASSERT_OK(Mkfs(dev_, Db(), Mkfs64k()));
  auto st = OpenStore();
  ASSERT_OK(st);
  EXPECT_EQ((*st)->GetStoreStats().total_chunks, 4u);
}

TEST_F(OpenTest, MkfsSizeLargerThanTheDeviceIsInvalid) {
  MkfsOptions m = Mkfs64k();
  m.size = kPartitionSize * 2;
  EXPECT_CODE(Mkfs(dev_, Db(), m), kInvalidArgument);
}

// The embedder owns the RocksDB: pgring lives in one column family, the
// embedder's object metadata in another, and both commit in one batch.
class SharedDbTest : public OpenTest {
 protected:
  void OpenDb() {
    embedder_ = std::make_unique<EmbedderDb>(db_, std::vector<std::string>{"pgring", "osd_onodes"});
    ASSERT_NE(embedder_->db(), nullptr);
  }
  void CloseDb() { embedder_.reset(); }
  void TearDown() override { CloseDb(); }
  rocksdb::DB* db_handle() const { return embedder_->db(); }
  rocksdb::ColumnFamilyHandle* pgring_cf() const { return embedder_->handle(1); }
  rocksdb::ColumnFamilyHandle* osd_cf() const { return embedder_->handle(2); }
  MetadataLocation Shared() const { return embedder_->location(1); }

  std::unique_ptr<EmbedderDb> embedder_;
};

TEST_F(SharedDbTest, EmbedderKeysAndLogCommitTogether) {
  OpenDb();
  ASSERT_OK(Mkfs(dev_, Shared(), Mkfs64k()));
  {
    auto s = Store::Open(dev_, Shared(), Opts());
    ASSERT_OK(s);
    ASSERT_OK(Create(s->get(), Pg(1)));
    Transaction t;
    t.AppendEntry(Pg(1), V(1), Payload(1));
    t.SetInfo(Pg(1), "info@1");
    ASSERT_TRUE(t.batch()->Put(osd_cf(), "onode.obj1", "onode-v1").ok());
    ASSERT_OK((*s)->Commit(std::move(t)));
    ASSERT_OK((*s)->Close());
  }
  CloseDb();
  OpenDb();
  std::string v;
  ASSERT_TRUE(db_handle()->Get(rocksdb::ReadOptions(), osd_cf(), "onode.obj1", &v).ok());
  EXPECT_EQ(v, "onode-v1");
  // pgring's keys are in its column family, none in the default one.
  ASSERT_TRUE(db_handle()->Get(rocksdb::ReadOptions(), pgring_cf(), "pgring.meta", &v).ok());
  {
    std::unique_ptr<rocksdb::Iterator> it(db_handle()->NewIterator(rocksdb::ReadOptions()));
    it->Seek("pgring.");
    EXPECT_FALSE(it->Valid() && it->key().starts_with("pgring.")) << it->key().ToString();
  }
  auto s = Store::Open(dev_, Shared(), Opts());
  ASSERT_OK(s);
  ExpectEntries(s->get(), Pg(1), 1, 1);
  // A second transaction after the reopen, again with an embedder key.
  Transaction t;
  t.AppendEntry(Pg(1), V(2), Payload(2));
  t.SetInfo(Pg(1), "info@2");
  ASSERT_TRUE(t.batch()->Put(osd_cf(), "onode.obj2", "onode-v2").ok());
  ASSERT_OK((*s)->Commit(std::move(t)));
  ASSERT_TRUE(db_handle()->Get(rocksdb::ReadOptions(), osd_cf(), "onode.obj2", &v).ok());
  EXPECT_EQ(v, "onode-v2");
  ASSERT_OK((*s)->Close());
  s->reset();
  // The store in a shared DB is still the same store through a reopen of both.
  CloseDb();
  OpenDb();
  auto again = Store::Open(dev_, Shared(), Opts());
  ASSERT_OK(again);
  ExpectEntries(again->get(), Pg(1), 1, 2);
}

}  // namespace
}  // namespace pgring::testing
