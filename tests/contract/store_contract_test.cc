// The backend contract: every check here runs on both backends (Backend::kRing
// and Backend::kRocksDb, chosen at mkfs) through the public API — every
// operation, its exact errors, that a refused transaction changes nothing,
// that what was committed is there after a reopen, bounds, reads of
// transactions not yet committed, commit gates, read-only stores and damaged
// PGs. Where a scenario also pins down what one backend keeps in RocksDB, that
// check is marked and runs for that backend only. What only one backend has
// (chunks, ring wrap, the tail-block policy; BlueStore's key layout, the
// RocksDB configuration) stays in ring_store_test.cc and
// rocksdb_backend_test.cc.
#include <gmock/gmock.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "format/metadata_keys.h"
#include "store/rocksdb/rocksdb_log_store.h"
#include "util/rocksdb_keys.h"
#include "util/store_fixture.h"
#include "util/sync.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

class StoreContractTest : public StoreFixture, public ::testing::WithParamInterface<StoreMode> {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    SetLayout(GetParam(), &options_);
    MkfsAndOpen(BackendOf(GetParam()));
  }
  bool IsRing() const { return BackendOf(GetParam()) == Backend::kRing; }
  bool IsRocksDb() const { return GetParam() == StoreMode::kRocksDb; }

  // PgStats::entry_bytes and dup_bytes, the PG's live payload bytes.
  void ExpectPayloadBytes(const PgId& pg, uint64_t entry_bytes, uint64_t dup_bytes) {
    auto st = store_->GetPgStats(pg);
    ASSERT_OK(st);
    EXPECT_EQ(st->entry_bytes, entry_bytes);
    EXPECT_EQ(st->dup_bytes, dup_bytes);
  }

  // Damages `pg`'s committed log behind the closed store's back, the way
  // each backend can be damaged: the RocksDB backend's PG keeps its keys but
  // loses its _state key; a byte inside `needle` (an entry's payload, which
  // must occur once on the partition) is flipped in the ring's record.
  void DamagePg(const PgId& pg, const std::string& needle) {
    ASSERT_EQ(store_, nullptr);
    if (IsRocksDb()) {
      RawDbWrite([&](rocksdb::WriteBatch* b) {
        ASSERT_TRUE(b->Delete(PgLogKeyPrefix(pg) + "_state").ok());
      });
      return;
    }
    auto* mem = static_cast<MemoryBlockDevice*>(device_.get());
    const std::string all = mem->ReadRaw(0, mem->size());
    const size_t at = all.find(needle);
    ASSERT_NE(at, std::string::npos) << "the payload is not on the partition";
    ASSERT_EQ(all.find(needle, at + 1), std::string::npos) << "the payload is there twice";
    std::string b = all.substr(at + needle.size() / 2, 1);
    b[0] = static_cast<char>(b[0] ^ 0x01);
    mem->WriteRaw(at + needle.size() / 2, b);
  }
};

TEST_P(StoreContractTest, AppendReadReopen) {
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
  EXPECT_EQ((*part)[2].payload, TestPayload(5));
  auto st = store_->GetPgStats(Pg(1));
  ASSERT_OK(st);
  EXPECT_EQ(st->entries, 10u);
  ExpectPayloadBytes(Pg(1), 2000, 0);
  EXPECT_EQ(st->first_version, V(1, 1));
  EXPECT_EQ(st->last_version, V(1, 10));
  EXPECT_EQ(st->info_bytes, 7u);
  // Per-PG rings keep 2 KB in one chunk; behind the stream the 2 KB are
  // all in the stream (records are written once: home_bytes 0) and the ring
  // takes none; the RocksDB backend has no chunks.
  EXPECT_EQ(st->chunks, GetParam() == StoreMode::kRing ? 1u : 0u);
  // A PG without info, and an empty PG, survive a reopen too.
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Create(Pg(3)));
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(2), V(1, 1), TestPayload(1)); }));
  Reopen();
  EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{Pg(1), Pg(2), Pg(3)}));
  EXPECT_EQ(Versions(Pg(2)), Range(1, 1));
  EXPECT_CODE(store_->ReadInfo(Pg(2)), kNotFound);
  EXPECT_TRUE(store_->ReadEntries(Pg(3))->empty());
}

TEST_P(StoreContractTest, ErrorsChangeNothing) {
  ASSERT_OK(Create(Pg(1)));
  EXPECT_CODE(Create(Pg(1)), kAlreadyExists);
  ASSERT_OK(Append(Pg(1), 1, 5));
  // A later op fails: the whole transaction is refused, earlier ops undone.
  Transaction t;
  t.AppendEntry(Pg(1), V(1, 6), TestPayload(6));
  t.Trim(Pg(1), V(1, 3));
  t.SetInfo(Pg(1), "refused info");
  t.AppendDup(Pg(1), V(1, 1), "d");
  t.AppendEntry(Pg(1), V(1, 6), TestPayload(6));  // not increasing
  t.batch()->Put("osd.refused", "x");
  EXPECT_CODE(store_->Commit(std::move(t)), kInvalidArgument);
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@5");
  EXPECT_TRUE(store_->ReadDups(Pg(1))->empty());
  ExpectPayloadBytes(Pg(1), 1000, 0);
  EXPECT_CODE(Append(Pg(2), 1, 1), kNotFound);
  EXPECT_CODE(store_->ReadEntries(Pg(2)), kNotFound);
  EXPECT_CODE(store_->ReadInfo(Pg(2)), kNotFound);
  EXPECT_CODE(store_->ReadDups(Pg(2)), kNotFound);
  EXPECT_CODE(store_->GetPgStats(Pg(2)), kNotFound);
  EXPECT_CODE(Do([](Transaction* x) { x->Trim(Pg(1), V(1, 99)); }), kOutOfRange);
  EXPECT_CODE(Do([](Transaction* x) { x->TrimDups(Pg(1), V(1, 1)); }), kOutOfRange);
  EXPECT_CODE(store_->ReadEntries(Pg(1), V(1, 9), V(1, 12)), kOutOfRange);
  EXPECT_CODE(store_->ReadEntries(Pg(1), V(1, 4), V(1, 2)), kInvalidArgument);
  // Create then fail in one transaction: the PG does not exist after.
  EXPECT_CODE(Do([](Transaction* x) {
                x->CreatePg(Pg(7));
                x->AppendEntry(Pg(7), V(1, 1), "a");
                x->RemovePg(Pg(1));
                x->AppendEntry(Pg(7), V(1, 1), "again");
              }),
              kInvalidArgument);
  EXPECT_CODE(store_->ReadEntries(Pg(7)), kNotFound);
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@5");
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{Pg(1)});
  // The refused transaction's embedder key was not written either.
  auto all = DumpDb();
  EXPECT_EQ(all.count("osd.refused"), 0u);
  if (IsRocksDb()) {
    EXPECT_EQ(PgLogKeysOf(all, Pg(1)).size(), 5u + 2u);  // 5 entries, _info, _state
  }
}

TEST_P(StoreContractTest, TrimRewindReset) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 20));
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 5)); }));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 20));
  // Trimming again to an older point is a no-op.
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 3)); }));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 20));
  // Divergent tail: rewind to 15 and append replacements in a new epoch.
  ASSERT_OK(Do([](Transaction* r) {
    r->Rewind(Pg(1), V(1, 15));
    r->AppendEntry(Pg(1), V(2, 16), TestPayload(16));
    r->AppendEntry(Pg(1), V(2, 17), TestPayload(17));
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 17));
  EXPECT_EQ((*store_->ReadEntries(Pg(1))).back().version, V(2, 17));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(6, 17));
  EXPECT_EQ((*store_->ReadEntries(Pg(1))).back().version, V(2, 17));
  EXPECT_CODE(Do([](Transaction* t) { t->Rewind(Pg(1), V(1, 2)); }), kOutOfRange);
  // The trim point survives the reopen: appends at or below it are refused.
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(2, 17)); }));
  Reopen();
  EXPECT_TRUE(store_->ReadEntries(Pg(1))->empty());
  EXPECT_CODE(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 17), "x"); }), kInvalidArgument);
  EXPECT_CODE(Do([](Transaction* t) { t->Rewind(Pg(1), V(2, 16)); }), kOutOfRange);
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 18), TestPayload(18)); }));
  // A rewind below every entry keeps its version after a reopen.
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(1), V(2, 30), TestPayload(30));
    t->Rewind(Pg(1), V(2, 25));
  }));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(18, 18));
  EXPECT_CODE(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 25), "x"); }), kInvalidArgument);
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 26), TestPayload(26)); }));
  // Replace the whole log.
  ASSERT_OK(Do([](Transaction* x) {
    x->AppendDup(Pg(1), V(1, 1), "dup");
    x->ResetLog(Pg(1));
    x->AppendEntry(Pg(1), V(3, 1), TestPayload(1));
    x->AppendEntry(Pg(1), V(3, 2), TestPayload(2));
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 2));
  EXPECT_TRUE(store_->ReadDups(Pg(1))->empty());
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 2));
  EXPECT_TRUE(store_->ReadDups(Pg(1))->empty());
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@20");
  if (IsRocksDb()) {
    // Nothing of the old log is left: the two entries, _info and _state.
    auto keys = PgLogKeysOf(DumpDb(), Pg(1));
    EXPECT_EQ(keys.size(), 2u + 2u);
    EXPECT_EQ(keys.count(CephKeyName(3, 1)), 1u);
    EXPECT_EQ(keys.count(CephKeyName(3, 2)), 1u);
  }
}

// A rewind below every live entry leaves its floor only in its marker; the
// marker must survive a reopen (and the head must not pass it) until an
// entry is appended after it.
TEST_P(StoreContractTest, RewindBelowEveryEntryKeepsItsFloorAcrossReopen) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  for (uint64_t v = 5; v <= 10; ++v) t.AppendEntry(Pg(1), V(1, v), TestPayload(v));
  ASSERT_OK(store_->Commit(std::move(t)));
  Transaction r;
  r.Rewind(Pg(1), V(1, 3));
  ASSERT_OK(store_->Commit(std::move(r)));
  for (int pass = 0; pass < 2; ++pass) {
    Transaction low;
    low.AppendEntry(Pg(1), V(1, 2), TestPayload(2));
    SCOPED_TRACE(pass);
    EXPECT_CODE(store_->Commit(std::move(low)), kInvalidArgument);
    Reopen();
  }
  ASSERT_OK(Append(Pg(1), 4, 4));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(4, 4));
  Transaction low;
  low.AppendEntry(Pg(1), V(1, 4), TestPayload(4));
  EXPECT_CODE(store_->Commit(std::move(low)), kInvalidArgument);
}

// A rewind to a version no entry has, then a trim of every entry below it:
// the floor (appends must be above the rewind's version) is then kept by
// nothing but the rewind, and must survive a reopen however the head moves
// (infos and dups written after it). Issue 14: the ring backend dropped the
// rewind's record behind its head and, reopened, took the trim point for
// the floor, accepting 1'3 where the RocksDB backend refused it.
TEST_P(StoreContractTest, RewindToAMissingVersionThenTrimKeepsItsFloorAcrossReopen) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Do([](Transaction* t) {
    for (uint64_t v : {1, 2, 5}) t->AppendEntry(Pg(1), V(1, v), TestPayload(v));
  }));
  ASSERT_OK(Do([](Transaction* t) { t->Rewind(Pg(1), V(1, 3)); }));
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 2)); }));
  auto refused_at_the_floor = [&](const std::string& when) {
    SCOPED_TRACE(when);
    absl::Status s = Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 3), TestPayload(3)); });
    EXPECT_CODE(s, kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("not after the last version 1'3"));
  };
  refused_at_the_floor("before reopen");
  Reopen();
  refused_at_the_floor("after reopen");
  // The head moves on (infos, dups and their trims) with no entry above the
  // floor: it must not leave the floor behind.
  for (uint64_t i = 1; i <= 40; ++i) {
    ASSERT_OK(Do([&](Transaction* t) {
      t->SetInfo(Pg(1), TestPayload(1000 + i, 2000));
      t->AppendDup(Pg(1), V(1, i), TestPayload(i, 1000));
      if (i > 4) t->TrimDups(Pg(1), V(1, i - 4));
    }));
  }
  Reopen();
  refused_at_the_floor("after the head moved and a reopen");
  EXPECT_EQ(Versions(Pg(1)), std::vector<uint64_t>{});
  ASSERT_OK(Append(Pg(1), 4, 4));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(4, 4));
}

TEST_P(StoreContractTest, Dups) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  for (uint64_t v = 1; v <= 10; ++v) t.AppendDup(Pg(1), V(1, v), "dup" + std::to_string(v));
  ASSERT_OK(store_->Commit(std::move(t)));
  ASSERT_OK(Do([](Transaction* x) { x->TrimDups(Pg(1), V(1, 4)); }));
  EXPECT_CODE(Do([](Transaction* x) { x->AppendDup(Pg(1), V(1, 10), "again"); }), kInvalidArgument);
  for (int pass = 0; pass < 2; ++pass) {
    auto d = store_->ReadDups(Pg(1));
    ASSERT_OK(d);
    ASSERT_EQ(d->size(), 6u);
    EXPECT_EQ(d->front().version, V(1, 5));
    EXPECT_EQ(d->front().payload, "dup5");
    EXPECT_EQ(d->back().payload, "dup10");
    EXPECT_EQ(store_->GetPgStats(Pg(1))->dups, 6u);
    ExpectPayloadBytes(Pg(1), 0, 5 * 4 + 5);  // "dup5".."dup9", "dup10"
    Reopen();
  }
  // The dup trim point survives too.
  EXPECT_CODE(Do([](Transaction* x) { x->AppendDup(Pg(1), V(1, 3), "x"); }), kInvalidArgument);
}

TEST_P(StoreContractTest, RemovePgAndRecreate) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Append(Pg(1), 1, 30));
  ASSERT_OK(Append(Pg(2), 1, 3));
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendDup(Pg(1), V(1, 1), "d");
    t->Trim(Pg(1), V(1, 10));
  }));
  ASSERT_OK(Do([](Transaction* t) { t->RemovePg(Pg(1)); }));
  EXPECT_CODE(store_->ReadEntries(Pg(1)), kNotFound);
  EXPECT_CODE(Append(Pg(1), 31, 31), kNotFound);
  EXPECT_EQ(store_->GetStoreStats().live_entries, 3u);
  Reopen();
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{Pg(2)});
  {
    // No key of the removed PG is left in RocksDB.
    auto all = DumpDb();
    if (IsRocksDb()) {
      EXPECT_TRUE(PgLogKeysOf(all, Pg(1)).empty());
    } else {
      EXPECT_EQ(all.count(PgPointerKey(Pg(1))), 0u);
      EXPECT_EQ(all.count(PgChunksKey(Pg(1))), 0u);
    }
  }
  // Recreate with the same id, in one transaction with a removal: the new
  // PG starts empty and its writes survive the removal before them.
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 5));
  ASSERT_OK(Do([](Transaction* t) {
    t->RemovePg(Pg(1));
    t->CreatePg(Pg(1));
    t->AppendEntry(Pg(1), V(2, 3), TestPayload(3));
    t->SetInfo(Pg(1), "new");
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(3, 3));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(3, 3));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "new");
  EXPECT_EQ(store_->GetPgStats(Pg(1))->first_version, V(2, 3));
  EXPECT_EQ(Versions(Pg(2)), Range(1, 3));
  if (IsRocksDb()) {
    EXPECT_EQ(PgLogKeysOf(DumpDb(), Pg(1)).size(), 3u);  // the entry, _info, _state
  }
}

TEST_P(StoreContractTest, EmbedderKeysCommitWithTheLog) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  t.AppendEntry(Pg(1), V(1, 1), TestPayload(1));
  t.batch()->Put("osd.onode.obj1", "onode-value");
  ASSERT_OK(store_->Commit(std::move(t)));
  auto all = DumpDb();
  EXPECT_EQ(all["osd.onode.obj1"], "onode-value");
  if (IsRocksDb()) {
    EXPECT_EQ(PgLogKeysOf(all, Pg(1))[CephKeyName(1, 1)], TestPayload(1));
  }
  // And the entry is there after the reopen.
  ASSERT_OK(Open(options_));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 1));
}

TEST_P(StoreContractTest, BoundsAreHardAndRecoverable) {
  options_.limits.max_entries_per_pg = 50;
  options_.limits.max_dups_per_pg = 5;
  options_.limits.max_total_entries = 60;
  options_.limits.max_payload_bytes = 1000;
  options_.limits.max_pgs = 2;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 50));
  EXPECT_CODE(Append(Pg(1), 51, 51), kResourceExhausted);
  EXPECT_CODE(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 51), std::string(1001, 'x')); }),
              kInvalidArgument);
  EXPECT_CODE(Do([](Transaction* t) { t->SetInfo(Pg(1), std::string(1001, 'x')); }),
              kInvalidArgument);
  EXPECT_CODE(Do([](Transaction* t) {
                for (int i = 1; i <= 6; ++i) t->AppendDup(Pg(1), V(1, i), "d");
              }),
              kResourceExhausted);
  ASSERT_OK(Create(Pg(2)));
  EXPECT_CODE(Create(Pg(3)), kResourceExhausted);
  ASSERT_OK(Append(Pg(2), 1, 10));
  EXPECT_CODE(Append(Pg(2), 11, 11), kResourceExhausted);  // 60 in the store
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 10)); }));
  ASSERT_OK(Append(Pg(1), 51, 60));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(11, 60));
  EXPECT_EQ(store_->GetStoreStats().live_entries, 60u);
  EXPECT_CODE(Append(Pg(2), 11, 11), kResourceExhausted);
}

TEST_P(StoreContractTest, ManyPgsManyThreads) {
  // Each thread owns PGs th, th+kThreads, ... of two sets: the PGs of set A
  // keep every entry; the PGs of set B are trimmed to their last 10 as they
  // go. Every append is read back at once.
  constexpr int kPgs = 16, kThreads = 4, kPerThread = 100;
  auto pg_a = [](int i) { return Pg(i); };
  auto pg_b = [](int i) { return Pg(100 + i); };
  for (int i = 0; i < kPgs; ++i) {
    ASSERT_OK(Create(pg_a(i)));
    ASSERT_OK(Create(pg_b(i)));
  }
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int i = 0; i < kPerThread; ++i) {
        int n = th + kThreads * (i % (kPgs / kThreads));
        uint64_t v = i / (kPgs / kThreads) + 1;
        for (const PgId& pg : {pg_a(n), pg_b(n)}) {
          EXPECT_OK(Append(pg, v, v));
          if (pg == pg_b(n) && v > 10) {
            EXPECT_OK(Do([&](Transaction* t) { t->Trim(pg, V(1, v - 10)); }));
          }
          auto r = store_->ReadEntries(pg);
          EXPECT_OK(r);
          if (r.ok()) {
            EXPECT_EQ(r->back().version, V(1, v));
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Reopen();
  for (int i = 0; i < kPgs; ++i) {
    EXPECT_EQ(Versions(pg_a(i)).size(), 25u) << i;
    EXPECT_EQ(Versions(pg_a(i)), Range(1, 25)) << i;
    EXPECT_EQ(Versions(pg_b(i)), Range(16, 25)) << i;
  }
}

TEST_P(StoreContractTest, ReadsReflectTransactionsNotYetCommitted) {
  // kUnsynced with a long delay: nothing commits until Sync.
  options_.durability = DurabilityMode::kUnsynced;
  options_.unsynced_max_delay = std::chrono::seconds(30);
  options_.max_group_size = 1 << 20;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 10));
  ASSERT_OK(Do([](Transaction* t) {
    t->Trim(Pg(1), V(1, 4));
    t->Rewind(Pg(1), V(1, 8));
    t->AppendEntry(Pg(1), V(2, 9), TestPayload(9));
    t->AppendDup(Pg(1), V(1, 1), "dup1");
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(5, 9));
  EXPECT_EQ(store_->ReadEntries(Pg(1))->back().version, V(2, 9));
  EXPECT_EQ(store_->ReadDups(Pg(1))->size(), 1u);
  EXPECT_EQ(store_->GetStoreStats().transactions_committed, 0u);
  ASSERT_OK(store_->Sync());
  EXPECT_EQ(store_->GetStoreStats().transactions_committed, 3u);
  // Half committed, half pending: entries 5..9 committed, 10..12 pending,
  // 5..6 trimmed by a pending transaction.
  ASSERT_OK(Append(Pg(1), 10, 12, 2));
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 6)); }));
  EXPECT_EQ(store_->GetStoreStats().transactions_committed, 3u);
  EXPECT_EQ(Versions(Pg(1)), Range(7, 12));
  auto mid = store_->ReadEntries(Pg(1), V(1, 8), V(2, 11));
  ASSERT_OK(mid);
  ASSERT_EQ(mid->size(), 4u);  // 1'8 and 2'9 committed, 2'10 and 2'11 pending
  EXPECT_EQ((*mid)[1].version, V(2, 9));
  EXPECT_EQ((*mid)[3].payload, TestPayload(11));
  Reopen();  // Close commits what was acknowledged
  EXPECT_EQ(Versions(Pg(1)), Range(7, 12));
}

TEST_P(StoreContractTest, ReadOnlyRefusesWrites) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 3));
  options_.read_only = true;
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 3));
  EXPECT_CODE(Append(Pg(1), 4, 4), kFailedPrecondition);
}

// One PG's log damaged behind the store's back (see DamagePg): kRefuse
// refuses the open naming the PG; kMarkDamaged opens, the other PG works and
// the damaged one can only be removed, after which kRefuse opens again. The
// kinds of damage and their messages are each backend's own (damage_test.cc,
// rocksdb_backend_test.cc).
TEST_P(StoreContractTest, DamagedPgIsRefusedOrIsolated) {
  // DamagePg finds the payload on the partition: not in a compressed record
  // (LogStreamTest.DamagedCompressedStreamRecordCostsOnlyItsPgs damages one).
  options_.stream.compression = StreamCompression::kNone;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Append(Pg(1), 1, 3, 1, 300));  // payloads found nowhere else
  ASSERT_OK(Append(Pg(2), 1, 3));
  ASSERT_OK(store_->Close());
  store_.reset();
  DamagePg(Pg(1), TestPayload(2, 300));
  auto s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("PG 1.1: "));
  EXPECT_EQ(store_, nullptr);
  // kMarkDamaged: PG 1 is marked, PG 2 works; PG 1 can only be removed.
  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->GetPgStats(Pg(1))->damaged);
  EXPECT_FALSE(store_->GetPgStats(Pg(2))->damaged);
  EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{Pg(1), Pg(2)}));
  EXPECT_CODE(store_->ReadEntries(Pg(1)), kDataLoss);
  EXPECT_CODE(store_->ReadInfo(Pg(1)), kDataLoss);
  EXPECT_CODE(store_->ReadDups(Pg(1)), kDataLoss);
  EXPECT_CODE(Append(Pg(1), 4, 4), kDataLoss);
  EXPECT_EQ(Versions(Pg(2)), Range(1, 3));
  ASSERT_OK(Append(Pg(2), 4, 4));
  ASSERT_OK(Do([](Transaction* t) { t->RemovePg(Pg(1)); }));
  options_.recovery_policy = RecoveryPolicy::kRefuse;
  Reopen();
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{Pg(2)});
  EXPECT_EQ(Versions(Pg(2)), Range(1, 4));
}

TEST_P(StoreContractTest, CommitWaitsForTheEmbeddersWrite) {
  ASSERT_OK(Create(Pg(1)));
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
  // Neither may commit while the gate is closed (t2 is behind t1); reads
  // already see both.
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(committed.load(), 0);
  auto r = store_->ReadEntries(Pg(1));
  ASSERT_OK(r);
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].payload, "one");
  EXPECT_EQ((*r)[1].payload, "two");
  gate->Open();
  second_done.WaitForNotification();
  Reopen();
  EXPECT_EQ(store_->ReadEntries(Pg(1))->size(), 2u);
}

TEST_P(StoreContractTest, AFailedEmbedderWriteFailsTheTransactionAndTheStore) {
  ASSERT_OK(Create(Pg(1)));
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

INSTANTIATE_TEST_SUITE_P(Backends, StoreContractTest, kAllStoreModes, StoreModeParamName);

}  // namespace
}  // namespace pgring::testing
