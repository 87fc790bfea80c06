// Functional tests of the ring store: every operation, its errors, and that
// what was committed is there after a reopen.
#include <rocksdb/db.h>

#include <atomic>

#include "util/sync.h"
#include "absl/time/clock.h"

#include <string>

#include "util/store_fixture.h"

namespace pgring::testing {
namespace {

std::string Payload(uint64_t v, size_t n = 200) {
  std::string s = "entry-" + std::to_string(v) + "-";
  while (s.size() < n) s += static_cast<char>('a' + (v + s.size()) % 26);
  return s;
}

class RingStoreTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    Mkfs();
    ASSERT_OK(Open(options_));
  }
  absl::Status Append(const PgId& pg, uint64_t from, uint64_t to, uint32_t epoch = 1,
                      size_t size = 200) {
    Transaction t;
    for (uint64_t v = from; v <= to; ++v) t.AppendEntry(pg, V(epoch, v), Payload(v, size));
    t.SetInfo(pg, "info@" + std::to_string(to));
    return store_->Commit(std::move(t));
  }
  absl::Status Create(const PgId& pg) {
    Transaction t;
    t.CreatePg(pg);
    return store_->Commit(std::move(t));
  }
  std::vector<uint64_t> Versions(const PgId& pg) {
    auto r = store_->ReadEntries(pg);
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<uint64_t> out;
    if (!r.ok()) return out;
    for (auto& e : *r) {
      EXPECT_EQ(e.payload, Payload(e.version.version));
      out.push_back(e.version.version);
    }
    return out;
  }
  static std::vector<uint64_t> Range(uint64_t a, uint64_t b) {
    std::vector<uint64_t> v;
    for (uint64_t i = a; i <= b; ++i) v.push_back(i);
    return v;
  }
};

TEST_F(RingStoreTest, AppendReadReopen) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 10));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 10));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@10");
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 10));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@10");
  auto part = store_->ReadEntries(Pg(1), V(1, 3), V(1, 5));
  ASSERT_OK(part);
  ASSERT_EQ(part->size(), 3u);
  EXPECT_EQ((*part)[0].version, V(1, 3));
}

TEST_F(RingStoreTest, ErrorsChangeNothing) {
  ASSERT_OK(Create(Pg(1)));
  EXPECT_CODE(Create(Pg(1)), kAlreadyExists);
  ASSERT_OK(Append(Pg(1), 1, 5));
  // A later op fails: the whole transaction is refused, earlier ops undone.
  Transaction t;
  t.AppendEntry(Pg(1), V(1, 6), Payload(6));
  t.Trim(Pg(1), V(1, 3));
  t.AppendEntry(Pg(1), V(1, 6), Payload(6));  // not increasing
  EXPECT_CODE(store_->Commit(std::move(t)), kInvalidArgument);
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  EXPECT_CODE(Append(Pg(2), 1, 1), kNotFound);
  EXPECT_CODE(store_->ReadEntries(Pg(2)), kNotFound);
  Transaction trim_past;
  trim_past.Trim(Pg(1), V(1, 99));
  EXPECT_CODE(store_->Commit(std::move(trim_past)), kOutOfRange);
  EXPECT_CODE(store_->ReadEntries(Pg(1), V(1, 9), V(1, 12)), kOutOfRange);
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
}

TEST_F(RingStoreTest, TrimRewindReset) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 20));
  Transaction t;
  t.Trim(Pg(1), V(1, 5));
  ASSERT_OK(store_->Commit(std::move(t)));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 20));
  // Divergent tail: rewind to 15 and append replacements in a new epoch.
  Transaction r;
  r.Rewind(Pg(1), V(1, 15));
  r.AppendEntry(Pg(1), V(2, 16), Payload(16));
  r.AppendEntry(Pg(1), V(2, 17), Payload(17));
  ASSERT_OK(store_->Commit(std::move(r)));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 17));
  EXPECT_EQ((*store_->ReadEntries(Pg(1))).back().version, V(2, 17));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(6, 17));
  EXPECT_EQ((*store_->ReadEntries(Pg(1))).back().version, V(2, 17));
  Transaction below;
  below.Rewind(Pg(1), V(1, 2));
  EXPECT_CODE(store_->Commit(std::move(below)), kOutOfRange);
  // Replace the whole log.
  Transaction x;
  x.ResetLog(Pg(1));
  x.AppendEntry(Pg(1), V(3, 1), Payload(1));
  x.AppendEntry(Pg(1), V(3, 2), Payload(2));
  ASSERT_OK(store_->Commit(std::move(x)));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 2));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 2));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@20");
}

TEST_F(RingStoreTest, Dups) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  for (uint64_t v = 1; v <= 10; ++v) t.AppendDup(Pg(1), V(1, v), "dup" + std::to_string(v));
  ASSERT_OK(store_->Commit(std::move(t)));
  Transaction trim;
  trim.TrimDups(Pg(1), V(1, 4));
  ASSERT_OK(store_->Commit(std::move(trim)));
  for (int pass = 0; pass < 2; ++pass) {
    auto d = store_->ReadDups(Pg(1));
    ASSERT_OK(d);
    ASSERT_EQ(d->size(), 6u);
    EXPECT_EQ(d->front().version, V(1, 5));
    EXPECT_EQ(d->front().payload, "dup5");
    Reopen();
  }
}

TEST_F(RingStoreTest, RingWrapsAndGivesChunksBack) {
  ASSERT_OK(Create(Pg(1)));
  uint64_t free_before = store_->GetStoreStats().free_chunks;
  uint64_t v = 0;
  for (int round = 0; round < 200; ++round) {
    ASSERT_OK(Append(Pg(1), v + 1, v + 20));
    v += 20;
    Transaction t;
    t.Trim(Pg(1), V(1, v - 40 > v ? 0 : (v > 40 ? v - 40 : 0)));
    if (v > 40) ASSERT_OK(store_->Commit(std::move(t)));
  }
  // 200 rounds x 20 entries x ~250 bytes = ~1 MB through a 64 KiB-chunk ring
  // holding 40 entries: the ring must have wrapped, not grown.
  auto st = store_->GetPgStats(Pg(1));
  ASSERT_OK(st);
  EXPECT_LE(st->chunks, 2u);
  EXPECT_GT(st->bytes_written, 10u * kChunkSize);
  EXPECT_EQ(Versions(Pg(1)), Range(v - 39, v));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(v - 39, v));
  Transaction rm;
  rm.RemovePg(Pg(1));
  ASSERT_OK(store_->Commit(std::move(rm)));
  EXPECT_EQ(store_->GetStoreStats().free_chunks, free_before);
  EXPECT_CODE(store_->ReadEntries(Pg(1)), kNotFound);
  Reopen();
  EXPECT_EQ(store_->GetStoreStats().free_chunks, free_before);
  EXPECT_TRUE(store_->ListPgs()->empty());
}

TEST_F(RingStoreTest, EmbedderKeysCommitWithTheLog) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  t.AppendEntry(Pg(1), V(1, 1), Payload(1));
  t.batch()->Put("osd.onode.obj1", "onode-value");
  ASSERT_OK(store_->Commit(std::move(t)));
  store_.reset();
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), db_path_, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string v;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "osd.onode.obj1", &v).ok());
  EXPECT_EQ(v, "onode-value");
}

TEST_F(RingStoreTest, BoundsAreHardAndRecoverable) {
  options_.limits.max_entries_per_pg = 50;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 50));
  EXPECT_CODE(Append(Pg(1), 51, 51), kResourceExhausted);
  Transaction t;
  t.Trim(Pg(1), V(1, 10));
  ASSERT_OK(store_->Commit(std::move(t)));
  ASSERT_OK(Append(Pg(1), 51, 60));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(11, 60));
}

TEST_F(RingStoreTest, PartitionFullThenTrimFrees) {
  // One PG that never trims fills the partition (64 MiB of 64 KiB chunks).
  ASSERT_OK(Create(Pg(0)));
  ASSERT_OK(Create(Pg(1)));
  uint64_t v = 0;
  absl::Status s;
  for (uint64_t batch : {50, 1}) {
    s = absl::OkStatus();
    while (s.ok()) {
      s = Append(Pg(0), v + 1, v + batch, 1, 8000);
      if (s.ok()) v += batch;
    }
    EXPECT_CODE(s, kResourceExhausted);
  }
  EXPECT_EQ(store_->GetStoreStats().free_chunks, 0u);
  EXPECT_CODE(Append(Pg(1), 1, 1), kResourceExhausted);
  // Whatever was committed is intact, and the refused appends left nothing.
  Reopen();
  EXPECT_EQ(store_->GetPgStats(Pg(0))->last_version, V(1, v));
  EXPECT_EQ(store_->GetPgStats(Pg(1))->entries, 0u);
  // Trimming gives chunks back and work resumes.
  Transaction t;
  t.Trim(Pg(0), V(1, v - 100));
  ASSERT_OK(store_->Commit(std::move(t)));
  EXPECT_GT(store_->GetStoreStats().free_chunks, 900u);
  ASSERT_OK(Append(Pg(1), 1, 10));
  ASSERT_OK(Append(Pg(0), v + 1, v + 10));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 10));
  EXPECT_EQ(store_->GetPgStats(Pg(0))->entries, 110u);
}

TEST_F(RingStoreTest, NeverRewritePolicyKeepsBlocksAligned) {
  options_.tail_block_policy = TailBlockPolicy::kNeverRewrite;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  for (uint64_t v = 1; v <= 30; ++v) ASSERT_OK(Append(Pg(1), v, v));
  auto st = store_->GetPgStats(Pg(1));
  ASSERT_OK(st);
  EXPECT_EQ(st->ring_bytes_used % 4096, 0u);
  EXPECT_EQ(st->bytes_written, 30u * 4096);
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 30));
  // Switching policy on an existing store is allowed: recovery is the same.
  options_.tail_block_policy = TailBlockPolicy::kRewriteTailBlock;
  Reopen();
  ASSERT_OK(Append(Pg(1), 31, 31));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 31));
}

TEST_F(RingStoreTest, ManyPgsManyThreads) {
  constexpr int kPgs = 16, kThreads = 4, kPerThread = 100;
  for (int i = 0; i < kPgs; ++i) ASSERT_OK(Create(Pg(i)));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int i = 0; i < kPerThread; ++i) {
        // Each thread owns PGs th, th+kThreads, ...
        int pg = th + kThreads * (i % (kPgs / kThreads));
        uint64_t v = i / (kPgs / kThreads) + 1;
        EXPECT_OK(Append(Pg(pg), v, v));
      }
    });
  }
  for (auto& t : threads) t.join();
  Reopen();
  for (int i = 0; i < kPgs; ++i) EXPECT_EQ(Versions(Pg(i)).size(), 25u) << i;
}

}  // namespace
}  // namespace pgring::testing

namespace pgring::testing {
namespace {

class CommitGateTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    Mkfs();
    ASSERT_OK(Open(options_));
    Transaction t;
    t.CreatePg(Pg(1));
    ASSERT_OK(store_->Commit(std::move(t)));
  }
};

TEST_F(CommitGateTest, CommitWaitsForTheEmbeddersWrite) {
  auto gate = std::make_shared<CommitGate>();
  std::atomic<int> committed{0};
  pgring::Notification second_done;
  Transaction t1;
  t1.AppendEntry(Pg(1), V(1, 1), "one");
  t1.WaitFor(gate);
  ASSERT_OK(store_->Submit(std::move(t1), [&](absl::Status s) {
    EXPECT_OK(s);
    EXPECT_EQ(committed.fetch_add(1), 0);  // in submission order
  }));
  Transaction t2;
  t2.AppendEntry(Pg(1), V(1, 2), "two");
  ASSERT_OK(store_->Submit(std::move(t2), [&](absl::Status s) {
    EXPECT_OK(s);
    EXPECT_EQ(committed.fetch_add(1), 1);
    second_done.Notify();
  }));
  // Neither may commit while the gate is closed (t2 is behind t1).
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(committed.load(), 0);
  gate->Open();
  second_done.WaitForNotification();
  Reopen();
  EXPECT_EQ(store_->ReadEntries(Pg(1))->size(), 2u);
}

TEST_F(CommitGateTest, AFailedEmbedderWriteFailsTheTransactionAndTheStore) {
  auto gate = std::make_shared<CommitGate>();
  Transaction t1;
  t1.AppendEntry(Pg(1), V(1, 1), "one");
  t1.WaitFor(gate);
  pgring::Notification done;
  absl::Status result;
  ASSERT_OK(store_->Submit(std::move(t1), [&](absl::Status s) {
    result = s;
    done.Notify();
  }));
  gate->Open(absl::InternalError("data write failed"));
  done.WaitForNotification();
  EXPECT_EQ(result.code(), absl::StatusCode::kInternal);
  Transaction t2;
  t2.AppendEntry(Pg(1), V(1, 2), "two");
  EXPECT_CODE(store_->Commit(std::move(t2)), kFailedPrecondition);
  EXPECT_CODE(store_->Close(), kInternal);  // Close reports the failure
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->ReadEntries(Pg(1))->empty());
  ASSERT_OK(store_->Commit([] {
    Transaction t;
    t.AppendEntry(Pg(1), V(1, 1), "again");
    return t;
  }()));
}

}  // namespace
}  // namespace pgring::testing

namespace pgring::testing {
namespace {

// A rewind below every live entry leaves its floor only in its marker; the
// marker must survive a reopen (and the head must not pass it) until an
// entry is appended after it.
TEST_F(RingStoreTest, RewindBelowEveryEntryKeepsItsFloorAcrossReopen) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  for (uint64_t v = 5; v <= 10; ++v) t.AppendEntry(Pg(1), V(1, v), Payload(v));
  ASSERT_OK(store_->Commit(std::move(t)));
  Transaction r;
  r.Rewind(Pg(1), V(1, 3));
  ASSERT_OK(store_->Commit(std::move(r)));
  for (int pass = 0; pass < 2; ++pass) {
    Transaction low;
    low.AppendEntry(Pg(1), V(1, 2), Payload(2));
    SCOPED_TRACE(pass);
    EXPECT_CODE(store_->Commit(std::move(low)), kInvalidArgument);
    Reopen();
  }
  ASSERT_OK(Append(Pg(1), 4, 4));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(4, 4));
  Transaction low;
  low.AppendEntry(Pg(1), V(1, 4), Payload(4));
  EXPECT_CODE(store_->Commit(std::move(low)), kInvalidArgument);
}

}  // namespace
}  // namespace pgring::testing
