// What only the log stream (LogLayout::kStream) does: one stream write for
// the records staged while the previous one was in flight, whole-block
// homes, forced homes of PGs that pin the stream, transactions that find
// the stream full writing to the rings instead, per-PG rings taking over a
// store that has a stream, and damage to the stream or its pointer. Every
// operation's contract runs in this layout too (store_contract_test,
// model_test).
#include <gmock/gmock.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/memory_block_device.h"
#include "format/label.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "pgring/verify.h"
#include "store/open_store.h"
#include "store/ring/log_stream.h"
#include "store/ring/ring_store.h"
#include "store/store_core.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/forwarding_device.h"
#include "util/store_fixture.h"
#include "util/sync.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

// Holds every write to the chunks while closed; Open() lets them through,
// in order. The label region's writes pass (a store's first stream record
// is preceded by its format version 2, written synchronously).
class GatedDevice final : public ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf, IoCallback done) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_ && offset >= kLabelRegionSize) {
        held_.push_back(Held{offset, std::move(buf), std::move(done)});
        held_cv_.notify_all();
        return;
      }
    }
    ForwardingDevice::WriteAsync(offset, std::move(buf), std::move(done));
  }

  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
  }
  size_t held() {
    std::lock_guard<std::mutex> l(mu_);
    return held_.size();
  }
  // Waits (at most 10 s) until at least n writes are held and returns how
  // many are: the stream's writes are issued by the commit thread, some
  // time after Submit returned.
  size_t WaitHeld(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    held_cv_.wait_for(l, std::chrono::seconds(10), [&] { return held_.size() >= n; });
    return held_.size();
  }
  void Open() {
    std::deque<Held> h;
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = false;
      h.swap(held_);
    }
    for (auto& w : h) ForwardingDevice::WriteAsync(w.offset, std::move(w.buf), std::move(w.done));
  }

 private:
  struct Held {
    uint64_t offset;
    std::shared_ptr<AlignedBuffer> buf;
    IoCallback done;
  };
  std::mutex mu_;
  std::condition_variable held_cv_;
  bool closed_ = false;
  std::deque<Held> held_;
};

// Counts the blocks written again with the records they held: a block of
// the chunks whose first kRecordHeaderSize bytes are what an earlier write
// put there (not zeros) is the same record's header, or the same record's
// bytes, written twice. A chunk given back and taken again holds other
// records (another stamp, lap or sequence) and is not counted.
class RewriteWatchDevice final : public ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf, IoCallback done) override {
    if (offset >= kLabelRegionSize) {
      std::lock_guard<std::mutex> l(mu_);
      for (size_t at = 0; at + kBlock <= buf->size(); at += kBlock) {
        std::string head(buf->data() + at, kRecordHeaderSize);
        if (head == std::string(kRecordHeaderSize, '\0')) continue;
        auto [it, fresh] = heads_.try_emplace(offset + at, head);
        if (!fresh && it->second == head) ++rewrites_;
        it->second = std::move(head);
      }
    }
    ForwardingDevice::WriteAsync(offset, std::move(buf), std::move(done));
  }

  uint64_t rewrites() {
    std::lock_guard<std::mutex> l(mu_);
    return rewrites_;
  }

 private:
  static constexpr size_t kBlock = 4096;
  std::mutex mu_;
  std::map<uint64_t, std::string> heads_;  // block offset -> its first bytes
  uint64_t rewrites_ = 0;
};

// Transactions submitted without waiting for their commits.
class InFlight {
 public:
  absl::Status Submit(Store* store, Transaction t) {
    auto* c = calls_.emplace_back(std::make_unique<Call>()).get();
    return store->Submit(std::move(t), [c](absl::Status s) {
      c->status = s;
      c->done.Notify();
    });
  }
  // Waits for every commit; the first failure.
  absl::Status Wait() {
    absl::Status first;
    for (auto& c : calls_) {
      c->done.WaitForNotification();
      if (first.ok()) first = c->status;
    }
    return first;
  }

 private:
  struct Call {
    Notification done;
    absl::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls_;
};

std::string PolicyName(const ::testing::TestParamInfo<TailBlockPolicy>& i) {
  return i.param == TailBlockPolicy::kNeverRewrite ? "Never" : "Rewrite";
}

class LogStreamTest : public StoreFixture {
 protected:
  // Entries 1.from to 1.(to - 1) of PGs first to first + 3, 1000 bytes
  // each: one transaction a PG, each version's four in flight together.
  void AppendToFour(uint32_t first, uint64_t from, uint64_t to) {
    for (uint64_t v = from; v < to; ++v) {
      InFlight txns;
      for (uint32_t p = first; p < first + 4; ++p) {
        Transaction t;
        t.AppendEntry(Pg(p), V(1, v), TestPayload(v, 1000));
        ASSERT_OK(txns.Submit(store_.get(), std::move(t)));
      }
      ASSERT_OK(txns.Wait());
    }
  }
  // A first stream record (PG 99's), so that the format version 2 it writes
  // first is not counted in what a test measures.
  void WarmUp() {
    ASSERT_OK(Create(Pg(99)));
    ASSERT_OK(One(Pg(99), 1));
    ASSERT_GT(Stats().stream_records, 0u);
  }
  void SetUp() override {
    StoreFixture::SetUp();
    options_.log_layout = LogLayout::kStream;
    options_.stream.bypass_when_idle = false;  // one commit at a time: the stream idles
  }
  void MkfsAndOpenStream() {
    Mkfs();
    ASSERT_OK(Open(options_));
  }
  StoreStats Stats() { return store_->GetStoreStats(); }
  // The versions of `pg`'s entries, each payload checked as One() wrote it.
  std::vector<uint64_t> VersionsOf(const PgId& pg, size_t size) {
    std::vector<uint64_t> out;
    auto e = store_->ReadEntries(pg);
    EXPECT_OK(e);
    if (!e.ok()) return out;
    for (const LogEntry& x : *e) {
      EXPECT_EQ(x.payload, TestPayload(x.version.version, size));
      out.push_back(x.version.version);
    }
    return out;
  }
  uint64_t Unhomed(const PgId& pg) { return store_->GetPgStats(pg)->unhomed_bytes; }
  // The format version the partition's label says (0 when it cannot be read).
  uint32_t LabelVersion() {
    auto region = ReadLabelRegion(device_.get(), "mem");
    EXPECT_OK(region);
    if (!region.ok()) return 0;
    auto label = Label::Decode(*region);
    EXPECT_OK(label);
    return label.ok() ? label->format_version : 0;
  }
  // A new store with PGs 1 and 2 and one entry each, each in a stream record
  // of its own (`compressed` of them compressed), closed.
  void TwoPgsARecordEach(uint64_t compressed = 0) {
    MkfsAndOpenStream();
    ASSERT_OK(Create(Pg(1)));
    ASSERT_OK(Create(Pg(2)));
    ASSERT_OK(One(Pg(1), 1, 300));  // a stream record holding only PG 1's bytes
    ASSERT_OK(One(Pg(2), 1, 300));
    ASSERT_EQ(Stats().stream_compressed_records, compressed);
    ASSERT_OK(store_->Close());
    store_.reset();
  }
  // One entry of `size` bytes for `pg`.
  absl::Status One(const PgId& pg, uint64_t v, size_t size = 200) {
    return Do([&](Transaction* t) { t->AppendEntry(pg, V(1, v), TestPayload(v, size)); });
  }
};

// RocksDB holds only pointers in the stream layout too: a transaction whose
// records all go to the stream writes the stream's pointer and no PG's
// (its records continue each PG's log past its pointer's tail), one that
// trims also its PG's pointer, however many entries it carries; and the
// keys are the store's, the PGs' and the stream's, nothing per entry.
// Counted by RocksDB's own ticker, and by reading every key back.
// A PG whose records all go to the stream keeps its pointer until its ring
// takes a chunk (its chunk list changes): many transactions later it lags
// them, and a reopen reads the records past its tail from the stream, then
// appends after them with the right sequence.
TEST_F(LogStreamTest, APointerManyGroupsOlderThanItsRecordsReadsThemAll) {
  options_.stream.home_bytes = 0;  // nothing goes home by count
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  constexpr uint64_t kRecords = 300;
  for (uint64_t v = 1; v <= kRecords; ++v) ASSERT_OK(One(Pg(1), v, 100));
  auto ptr = PgPointer::Decode(DumpDb().at(PgPointerKey(Pg(1))));  // closes the store
  ASSERT_OK(ptr);
  EXPECT_LT(ptr->tail_seq + 20, kRecords + 1) << "the pointer lags the PG's last 20 records";
  ASSERT_OK(Open(options_));
  EXPECT_EQ(VersionsOf(Pg(1), 100), Range(1, kRecords));
  EXPECT_GT(store_->GetPgStats(Pg(1))->ring_bytes_used, ptr->tail);
  ASSERT_OK(One(Pg(1), kRecords + 1, 100));
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 100), Range(1, kRecords + 1));
}

TEST_F(LogStreamTest, RocksDbHoldsOnlyPointers) {
  options_.stream.home_bytes = 0;  // every record stays in the stream
  MkfsAndOpenStream();
  for (uint32_t p = 1; p <= 3; ++p) ASSERT_OK(Create(Pg(p)));
  WarmUp();
  // A PG's first record also takes its first chunk (a chunk-list key): one
  // each before counting.
  for (uint32_t p = 1; p <= 3; ++p) ASSERT_OK(One(Pg(p), 1));
  auto keys_written = [&] {
    std::map<std::string, std::string> t;
    EXPECT_TRUE(store_->GetMapProperty("pgring.rocksdb_tickers", &t));
    return std::stoull(t.at("rocksdb.number.keys.written"));
  };
  auto keys_of = [&](auto&& fill) {
    const uint64_t before = keys_written();
    const uint64_t records = Stats().stream_records;
    EXPECT_OK(Do(fill));
    EXPECT_EQ(Stats().stream_records, records + 1);  // it went to the stream
    return keys_written() - before;
  };
  // One entry: the stream's pointer alone.
  EXPECT_EQ(keys_of([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 2), TestPayload(2)); }), 1u);
  // Forty entries and a trim of one PG: the trim points are the PG
  // pointer's, so it is written too.
  EXPECT_EQ(keys_of([](Transaction* t) {
              for (uint64_t v = 3; v <= 42; ++v) t->AppendEntry(Pg(1), V(1, v), TestPayload(v));
              t->Trim(Pg(1), V(1, 20));
            }),
            2u);
  // Three PGs: the stream's pointer alone.
  EXPECT_EQ(keys_of([](Transaction* t) {
              for (uint32_t p = 1; p <= 3; ++p) t->AppendEntry(Pg(p), V(1, 50), TestPayload(50));
            }),
            1u);
  EXPECT_GT(Unhomed(Pg(1)), 0u);
  // The pointers lag their records, and a reopen reads them from the
  // stream.
  auto lagging = PgPointer::Decode(DumpDb().at(PgPointerKey(Pg(3))));
  ASSERT_OK(lagging);
  ASSERT_OK(Open(options_));
  EXPECT_LT(lagging->tail, store_->GetPgStats(Pg(3))->ring_bytes_used);
  auto e = store_->ReadEntries(Pg(3));
  ASSERT_OK(e);
  ASSERT_FALSE(e->empty());
  EXPECT_EQ(e->back().version, V(1, 50));
  EXPECT_EQ(e->back().payload, TestPayload(50));

  rocksdb::DB* db = CoreOf(*store_).metadata_db().db();
  std::unique_ptr<rocksdb::Iterator> it(
      db->NewIterator(rocksdb::ReadOptions(), CoreOf(*store_).metadata_db().cf()));
  std::vector<std::string> keys;
  for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
  ASSERT_TRUE(it->status().ok());
  std::vector<std::string> want = {std::string(kMetaKey), std::string(kStreamPointerKey),
                                   std::string(kStreamChunksKey)};
  for (uint32_t p : {1u, 2u, 3u, 99u}) {
    want.push_back(PgPointerKey(Pg(p)));
    want.push_back(PgChunksKey(Pg(p)));
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(keys, want);
}

// The stream records of the transactions submitted while a stream write
// was held go out in one write.
TEST_F(LogStreamTest, RecordsStagedDuringAWriteGoOutInOne) {
  auto gated = std::make_shared<GatedDevice>(device_);
  device_ = gated;
  MkfsAndOpenStream();
  for (uint32_t p = 1; p <= 20; ++p) ASSERT_OK(Create(Pg(p)));
  WarmUp();
  const StoreStats before = Stats();
  gated->Close();
  InFlight txns;
  for (int i = 0; i < 20; ++i) {
    Transaction t;
    t.AppendEntry(Pg(i + 1), V(1, 1), TestPayload(1));
    ASSERT_OK(txns.Submit(store_.get(), std::move(t)));
    // The first transaction's stream write is held (the commit thread
    // issues it); the others are staged behind it.
    if (i == 0) ASSERT_EQ(gated->WaitHeld(1), 1u);
  }
  EXPECT_EQ(gated->held(), 1u);
  gated->Open();
  ASSERT_OK(txns.Wait());
  const StoreStats after = Stats();
  EXPECT_EQ(after.stream_records - before.stream_records, 20u);
  EXPECT_EQ(after.stream_writes - before.stream_writes, 2u);
  EXPECT_EQ(after.home_writes - before.home_writes, 0u);  // nothing has a block to home
  EXPECT_EQ(after.device_writes - before.device_writes, 2u);
  for (uint32_t p = 1; p <= 20; ++p) EXPECT_GT(Unhomed(Pg(p)), 0u);
  Reopen();
  for (uint32_t p = 1; p <= 20; ++p) EXPECT_EQ(Versions(Pg(p)), Range(1, 1));
}

// A PG's records reach its ring in whole blocks once home_bytes of them
// are unhomed (that no home writes a block twice is HomeToTailTest's); a
// transaction whose bytes all go home writes no stream record.
TEST_F(LogStreamTest, HomesWholeBlocks) {
  options_.stream.home_bytes = 2 * 4096;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  WarmUp();
  const StoreStats before = Stats();
  uint64_t homes = 0;
  for (uint64_t v = 1; v <= 200; ++v) {
    ASSERT_OK(One(Pg(1), v, 300));
    const uint64_t unhomed = Unhomed(Pg(1));
    // Less than home_bytes of whole blocks past the last block boundary homed.
    EXPECT_LT(unhomed, 3u * 4096) << v;
    // Not the forced homes of PG 99, which pins the stream's head.
    const StoreStats now = Stats();
    homes = (now.home_writes - before.home_writes) - (now.forced_homes - before.forced_homes);
  }
  // ~200 records of ~330 bytes = ~16 blocks: one home per 2 blocks.
  EXPECT_GE(homes, 7u);
  EXPECT_LE(homes, 9u);
  const StoreStats after = Stats();
  // A write that crosses a chunk boundary is two device writes: 66 KB of
  // records through 64 KiB chunks cross one or two.
  const uint64_t planned = (after.stream_writes - before.stream_writes) + homes +
                           (after.forced_homes - before.forced_homes);
  EXPECT_GE(after.device_writes - before.device_writes, planned);
  EXPECT_LE(after.device_writes - before.device_writes, planned + 2);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 200));
}

// A stream write that ends inside a block with every placed record in it
// ends the block with a pad record, so the next write starts on a fresh
// block instead of writing that one again: one 3,000-byte record per write
// is one block per write, never two. Recovery reads through the pads.
TEST_F(LogStreamTest, WritesEndWithAPadAndNeverRewriteABlock) {
  options_.stream.home_bytes = 64 * 4096;  // nothing goes home during the test
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  WarmUp();
  const StoreStats before = Stats();
  for (uint64_t v = 1; v <= 10; ++v) ASSERT_OK(One(Pg(1), v, 3000));
  const StoreStats after = Stats();
  EXPECT_EQ(after.stream_writes - before.stream_writes, 10u);
  EXPECT_EQ(after.stream_bytes_written - before.stream_bytes_written, 10u * 4096);
  EXPECT_EQ(after.home_writes, before.home_writes);
  // Each record and its pad fill one block (the first goes past the warm-up
  // record's pad; the last one's pad is taken by the next record).
  EXPECT_GT(after.stream_bytes_used - before.stream_bytes_used, 9u * 4096);
  EXPECT_LT(after.stream_bytes_used - before.stream_bytes_used, 11u * 4096);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 3000), Range(1, 10));
  // The pointer's tail sequence counts the pads: the stream goes on after
  // reopen, and reads back again.
  ASSERT_OK(One(Pg(1), 11, 3000));
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 3000), Range(1, 11));
}

// A PG's unhomed bytes past resident_bytes leave memory once their stream
// write is done; reads of old entries, a forced home (which writes them to
// the ring) and a reopen read them back from the stream. The head moves
// into the bytes out of memory with every trim. Under both tail-block
// policies.
class ResidentBoundTest : public LogStreamTest,
                          public ::testing::WithParamInterface<TailBlockPolicy> {
 protected:
  uint64_t Resident(const PgId& pg) { return store_->GetPgStats(pg)->unhomed_resident_bytes; }
  // At most the bound, and the block the newest record ends in.
  static constexpr uint64_t kMaxResident = (2 + 1) * 4096;
};

TEST_P(ResidentBoundTest, OldUnhomedBytesAreReadBackFromTheStream) {
  options_.tail_block_policy = GetParam();
  options_.stream.resident_bytes = 2 * 4096;
  options_.stream.home_bytes = 256 << 20;  // nothing goes home but by force
  options_.stream.max_chunks = 32;      // 2 MiB, forced homes past 1 MiB
  options_.stream.force_home_percent = 50;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  // Each transaction an entry of ~330 record bytes and a trim that keeps
  // the last 120: ~40 KB unhomed, the head moving all the time.
  auto append = [&](const PgId& pg, uint64_t v, size_t size, uint64_t keep) {
    return Do([&](Transaction* t) {
      t->AppendEntry(pg, V(1, v), TestPayload(v, size));
      if (v > keep) t->Trim(pg, V(1, v - keep));
    });
  };
  for (uint64_t v = 1; v <= 300; ++v) {
    ASSERT_OK(append(Pg(1), v, 300, 120));
    ASSERT_LE(Resident(Pg(1)), kMaxResident) << v;
  }
  EXPECT_EQ(Stats().forced_homes, 0u);
  EXPECT_GT(Unhomed(Pg(1)), 3 * kMaxResident);
  EXPECT_EQ(Stats().unhomed_resident_bytes, Resident(Pg(1)) + Resident(Pg(2)));
  const uint64_t reads = Stats().stream_reads;
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(181, 300));
  EXPECT_GT(Stats().stream_reads, reads);
  // The newest entries are resident: reading them reads nothing back.
  const uint64_t reads_before_tail = Stats().stream_reads;
  auto last = store_->ReadEntries(Pg(1), V(1, 299));
  ASSERT_OK(last);
  ASSERT_EQ(last->size(), 2u);
  EXPECT_EQ((*last)[1].payload, TestPayload(300, 300));
  EXPECT_EQ(Stats().stream_reads, reads_before_tail);

  Reopen();
  EXPECT_LE(Resident(Pg(1)), kMaxResident);
  EXPECT_GT(Unhomed(Pg(1)), 3 * kMaxResident);
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(181, 300));

  // PG 2 fills the stream; PG 1, pinning its head, is homed by force with
  // the bytes read back.
  const StoreStats before = Stats();
  uint64_t v2 = 0;
  while (Stats().forced_homes == before.forced_homes && v2 < 4000) {
    ASSERT_OK(append(Pg(2), ++v2, 1000, 50));
    ASSERT_LE(Resident(Pg(2)), kMaxResident) << v2;
  }
  const StoreStats after = Stats();
  EXPECT_GE(after.forced_homes - before.forced_homes, 1u);
  EXPECT_EQ(Unhomed(Pg(1)), 0u);
  EXPECT_GT(after.stream_reads, before.stream_reads);
  EXPECT_GT(after.stream_bytes_read - before.stream_bytes_read, 4 * kMaxResident);
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(181, 300));
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(181, 300));
  EXPECT_EQ(VersionsOf(Pg(2), 1000), Range(v2 - 49, v2));
  ASSERT_OK(append(Pg(1), 301, 300, 120));
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(182, 301));
}

// What a PG keeps in memory for its live items written once (the mapping
// table's entries and dups, the runs of its records in the stream) stays
// within 16 bytes a live item plus a fixed budget a PG (docs/DESIGN.md,
// "What stays in memory"), written as an OSD writes: one entry a
// transaction, each PG's records among every other PG's, every 100 writes
// a trim that turns 100 entries into dups.
TEST_F(LogStreamTest, IndexStaysWithinSixteenBytesALiveItemPlusAPerPgBudget) {
  options_.stream.home_bytes = 0;  // every record stays in the stream
  MkfsAndOpenStream();
  constexpr uint32_t kPgs = 64;
  constexpr uint64_t kWrites = 1000, kKept = 600;
  for (uint32_t p = 1; p <= kPgs; ++p) ASSERT_OK(Create(Pg(p)));
  for (uint64_t v = 1; v <= kWrites; ++v) {
    InFlight txns;
    for (uint32_t p = 1; p <= kPgs; ++p) {
      Transaction t;
      t.AppendEntry(Pg(p), V(1, v), TestPayload(v, 200));
      if (v % 100 == 0 && v > kKept) {
        t.Trim(Pg(p), V(1, v - kKept));
        for (uint64_t u = v - kKept - 99; u <= v - kKept; ++u) {
          t.AppendDup(Pg(p), V(1, u), TestPayload(u, 57));
        }
      }
      ASSERT_OK(txns.Submit(store_.get(), std::move(t)));
    }
    ASSERT_OK(txns.Wait());
  }
  const StoreStats s = Stats();
  ASSERT_EQ(s.home_bytes_written, 0u);
  ASSERT_EQ(s.live_entries, kPgs * kKept);
  ASSERT_EQ(s.live_dups, kPgs * (kWrites - kKept));
  const uint64_t items = s.live_entries + s.live_dups;
  const uint64_t index = s.mapping_table_bytes + s.stream_index_bytes;
  constexpr uint64_t kPerPgBudget = 4096;
  EXPECT_LE(index, 16 * items + kPerPgBudget * kPgs)
      << index / static_cast<double>(items) << " bytes a live item";
}

// Bytes leave memory only once the stream write that carries them has
// completed: while it is held, every unhomed byte stays resident.
TEST_F(LogStreamTest, UnhomedBytesStayResidentUntilTheirStreamWriteIsDone) {
  auto gated = std::make_shared<GatedDevice>(device_);
  device_ = gated;
  options_.stream.resident_bytes = 4096;
  options_.stream.home_bytes = 256 << 20;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  auto resident = [&] { return store_->GetPgStats(Pg(1))->unhomed_resident_bytes; };
  for (uint64_t v = 1; v <= 10; ++v) ASSERT_OK(One(Pg(1), v, 3000));
  EXPECT_LE(resident(), 2u * 4096);
  gated->Close();
  constexpr int kTxns = 6;
  InFlight txns;
  for (int i = 0; i < kTxns; ++i) {
    Transaction t;
    t.AppendEntry(Pg(1), V(1, 11 + i), TestPayload(11 + i, 3000));
    ASSERT_OK(txns.Submit(store_.get(), std::move(t)));
  }
  // One stream write, issued by the commit thread and held: the others
  // wait for it.
  EXPECT_EQ(gated->WaitHeld(1), 1u);
  EXPECT_GE(resident(), kTxns * 3000u);
  gated->Open();
  ASSERT_OK(txns.Wait());
  ASSERT_OK(One(Pg(1), 11 + kTxns, 3000));
  EXPECT_LE(resident(), 2u * 4096);
  // Nothing went home: a run for each transaction's record.
  EXPECT_EQ(Stats().home_bytes_written, 0u);
  EXPECT_GE(store_->GetPgStats(Pg(1))->stream_records, 11u + kTxns);
  EXPECT_LE(store_->GetPgStats(Pg(1))->stream_records, 13u + kTxns);
  EXPECT_EQ(VersionsOf(Pg(1), 3000), Range(1, 11 + kTxns));
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 3000), Range(1, 11 + kTxns));
}

INSTANTIATE_TEST_SUITE_P(Policies, ResidentBoundTest,
                         ::testing::Values(TailBlockPolicy::kRewriteTailBlock,
                                           TailBlockPolicy::kNeverRewrite),
                         PolicyName);

// A PG that stops writing is homed with a partial block once the stream
// passes its fill threshold, and a stream far smaller than what goes
// through it never fails a write. Under both tail-block policies.
class ForcedHomeTest : public LogStreamTest,
                       public ::testing::WithParamInterface<TailBlockPolicy> {};

TEST_P(ForcedHomeTest, IdlePgIsForceHomedAndTheStreamNeverFails) {
  options_.tail_block_policy = GetParam();
  options_.stream.max_chunks = 2;  // 128 KiB
  options_.stream.force_home_percent = 50;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(One(Pg(1), 1));
  ASSERT_GT(Unhomed(Pg(1)), 0u);
  // 1 MiB through the stream from PG 2 (trimmed as it goes).
  for (uint64_t v = 1; v <= 1000; ++v) {
    ASSERT_OK(One(Pg(2), v, 1000));
    if (v > 100) {
      ASSERT_OK(Do([&](Transaction* t) { t->Trim(Pg(2), V(1, v - 100)); }));
    }
  }
  const StoreStats st = Stats();
  EXPECT_GE(st.forced_homes, 1u);
  EXPECT_EQ(Unhomed(Pg(1)), 0u);
  EXPECT_LE(st.stream_chunks, 2u);
  EXPECT_LE(st.stream_bytes_used, 2u * kChunkSize);
  EXPECT_EQ(st.stream_max_chunks, 2u);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 1));
  EXPECT_EQ(VersionsOf(Pg(2), 1000), Range(901, 1000));
  ASSERT_OK(One(Pg(1), 2));
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 2));
}

// A forced home writes at most forced_home_bytes: a PG whose records
// stayed in the stream long goes home over several transactions, its
// oldest whole blocks first and its partial block with the last; its
// entries read right at every step and after a reopen.
TEST_P(ForcedHomeTest, ForcedHomesWriteAtMostTheirBudget) {
  options_.tail_block_policy = GetParam();
  options_.stream.max_chunks = 2;  // 128 KiB
  options_.stream.home_bytes = 0;  // homed only by force
  options_.stream.force_home_percent = 50;
  options_.stream.max_forced_homes = 1;
  options_.stream.forced_home_bytes = 2 * 4096;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  for (uint64_t v = 1; v <= 40; v += 10) {  // ~10 blocks, in 4 stream writes
    ASSERT_OK(Do([&](Transaction* t) {
      for (uint64_t i = v; i < v + 10; ++i) t->AppendEntry(Pg(1), V(1, i), TestPayload(i, 1000));
    }));
  }
  const uint64_t block = 4096;
  ASSERT_GE(Unhomed(Pg(1)), 9 * block);
  uint64_t steps = 0;
  uint64_t v2 = 0;
  while (Unhomed(Pg(1)) > 0 && v2 < 2000) {
    const StoreStats before = Stats();
    const uint64_t unhomed_before = Unhomed(Pg(1));
    ++v2;
    ASSERT_OK(Do([&](Transaction* t) {
      t->AppendEntry(Pg(2), V(1, v2), TestPayload(v2, 1000));
      if (v2 > 10) t->Trim(Pg(2), V(1, v2 - 10));
    }));
    const StoreStats after = Stats();
    const uint64_t homes = after.forced_homes - before.forced_homes;
    ASSERT_LE(homes, 1u);
    if (homes == 0) continue;
    ++steps;
    // One forced home: at most two blocks written (a pad record's block
    // besides, under kNeverRewrite, when it takes the partial block).
    const uint64_t most = GetParam() == TailBlockPolicy::kNeverRewrite ? 3 : 2;
    EXPECT_LE(after.home_bytes_written - before.home_bytes_written, most * block);
    EXPECT_LT(Unhomed(Pg(1)), unhomed_before);
    if (Unhomed(Pg(1)) > 0) {
      // Homed to the end of the second block from the one homed ended in.
      EXPECT_GT(unhomed_before - Unhomed(Pg(1)), block) << "step " << steps;
      EXPECT_LE(unhomed_before - Unhomed(Pg(1)), 2 * block) << "step " << steps;
    }
    EXPECT_EQ(VersionsOf(Pg(1), 1000), Range(1, 40)) << "step " << steps;
    if (steps == 2) {
      // A pointer that says partly homed, recovered from the ring and the
      // stream.
      const uint64_t unhomed = Unhomed(Pg(1));
      Reopen();
      EXPECT_EQ(Unhomed(Pg(1)), unhomed);
      EXPECT_EQ(VersionsOf(Pg(1), 1000), Range(1, 40));
    }
  }
  EXPECT_EQ(Unhomed(Pg(1)), 0u);
  EXPECT_GE(steps, 5u);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 1000), Range(1, 40));
  ASSERT_OK(One(Pg(1), 41, 1000));
  EXPECT_EQ(VersionsOf(Pg(1), 1000), Range(1, 41));
}

INSTANTIATE_TEST_SUITE_P(Policies, ForcedHomeTest,
                         ::testing::Values(TailBlockPolicy::kRewriteTailBlock,
                                           TailBlockPolicy::kNeverRewrite),
                         PolicyName);

// Cleaning the stream (home_bytes 0; docs/DESIGN.md, "Cleaning the
// stream"): an idle PG whose live log is much smaller than what it has in
// the stream pins the stream's head; once the stream is full enough the
// cleaner states the PG's live log again at the tail, in one record, and
// the head passes its old records with nothing homed. The PG then reads
// the same, before and after a reopen, and keeps its dups, its info and a
// last version only a rewind marker holds.
TEST_F(LogStreamTest, CleaningRestatesAnIdlePgAndHomesNothing) {
  options_.stream.home_bytes = 0;           // records written once
  options_.stream.max_chunks = 8;           // 512 KiB
  options_.stream.force_home_percent = 90;  // cleaning from 67%, forced homes from 90%
  options_.stream.resident_bytes = 2 * 4096;  // PG 1's older records read from the stream
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  // PG 1, as an OSD's PG with old dups: 50 dups and an info, then entries
  // 2, 4, ..., 400 of 300 bytes; then its entries trimmed to 320 and
  // rewound to 395 (no entry holds it), its dups trimmed to 30. Its oldest
  // live dup keeps every record in the stream: ~14 KB live of ~75 KB.
  ASSERT_OK(Do([&](Transaction* t) {
    for (uint64_t d = 1; d <= 50; ++d) t->AppendDup(Pg(1), V(1, d), TestPayload(d, 60));
    t->SetInfo(Pg(1), "the info of PG 1");
  }));
  // Ten entries a transaction: a stream write each, one block.
  for (uint64_t v = 2; v <= 400; v += 20) {
    ASSERT_OK(Do([&](Transaction* t) {
      for (uint64_t e = v; e < v + 20; e += 2) t->AppendEntry(Pg(1), V(1, e), TestPayload(e, 300));
    }));
  }
  ASSERT_LT(Stats().stream_bytes_used, 8 * kChunkSize / 4);
  ASSERT_OK(Do([&](Transaction* t) {
    t->Trim(Pg(1), V(1, 320));
    t->TrimDups(Pg(1), V(1, 30));
    t->Rewind(Pg(1), V(1, 395));
  }));
  auto entries = store_->ReadEntries(Pg(1));
  auto dups = store_->ReadDups(Pg(1));
  ASSERT_OK(entries);
  ASSERT_OK(dups);
  ASSERT_EQ(entries->size(), 37u);  // 322..394
  ASSERT_EQ(dups->size(), 20u);
  const PgStats pg1 = *store_->GetPgStats(Pg(1));
  const uint64_t unhomed_before = Unhomed(Pg(1));
  auto expect_pg1_as_it_was = [&] {
    EXPECT_EQ(*store_->ReadEntries(Pg(1)), *entries);
    EXPECT_EQ(*store_->ReadDups(Pg(1)), *dups);
    EXPECT_EQ(*store_->ReadInfo(Pg(1)), "the info of PG 1");
    const PgStats now = *store_->GetPgStats(Pg(1));
    EXPECT_EQ(now.entries, pg1.entries);
    EXPECT_EQ(now.entry_bytes, pg1.entry_bytes);
    EXPECT_EQ(now.dups, pg1.dups);
    EXPECT_EQ(now.dup_bytes, pg1.dup_bytes);
    // The rewind's last version holds: 395 is refused, nothing changed.
    EXPECT_EQ(One(Pg(1), 395).code(), absl::StatusCode::kInvalidArgument);
  };
  expect_pg1_as_it_was();

  // PG 2 writes 1000-byte entries, keeping its last 50, until the stream
  // is past the cleaner's fill; then the cleaner has 10 s to clean.
  const uint64_t capacity = 8 * kChunkSize;
  const uint64_t read_before = Stats().stream_bytes_read;
  const uint64_t committed_before = Stats().transactions_committed;
  const uint64_t latencies_before = store_->GetMetrics().commit_latency_ns.count;
  uint64_t v2 = 0;
  while (Stats().stream_restates == 0 && v2 < 3000) {
    ASSERT_OK(Do([&](Transaction* t) {
      ++v2;
      t->AppendEntry(Pg(2), V(1, v2), TestPayload(v2, 1000));
      if (v2 > 50) t->Trim(Pg(2), V(1, v2 - 50));
    }));
    if (Stats().stream_bytes_used * 100 >= capacity * 70) {
      for (int i = 0; i < 10000 && Stats().stream_restates == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      ASSERT_GE(Stats().stream_restates, 1u) << "no restatement 10 s after the stream passed 70%";
    }
  }
  ASSERT_OK(store_->Sync());  // the restatement committed (counted when staged)
  const StoreStats st = Stats();
  ASSERT_GE(st.stream_restates, 1u);
  EXPECT_EQ(st.forced_homes, 0u);
  EXPECT_EQ(st.home_writes, 0u);
  EXPECT_EQ(st.home_bytes_written, 0u);
  // A restatement is the store's own transaction: transactions_committed
  // counts the caller's (what an OSD, and the fio engine's report, compare
  // with what they submitted).
  EXPECT_EQ(st.transactions_committed - committed_before, v2);
  EXPECT_EQ(store_->GetMetrics().commit_latency_ns.count - latencies_before, v2);
  // One record of PG 1's live log, under half of what it had in the stream.
  EXPECT_GT(st.stream_restated_bytes, pg1.entry_bytes + pg1.dup_bytes);
  EXPECT_LT(2 * st.stream_restated_bytes, unhomed_before);
  EXPECT_EQ(Unhomed(Pg(1)), st.stream_restated_bytes);
  // The cleaner read the records holding PG 1's live items, not the ~70 KB
  // between them (nothing else reads back from the stream meanwhile).
  EXPECT_GT(st.stream_bytes_read, read_before);
  EXPECT_LT(2 * (st.stream_bytes_read - read_before), unhomed_before);
  EXPECT_EQ(store_->GetPgStats(Pg(1))->ring_bytes_used, st.stream_restated_bytes);
  expect_pg1_as_it_was();

  Reopen();
  expect_pg1_as_it_was();
  EXPECT_EQ(VersionsOf(Pg(2), 1000), Range(v2 - 49, v2));
  ASSERT_OK(One(Pg(1), 396, 300));
  Reopen();
  auto after = store_->ReadEntries(Pg(1));
  ASSERT_OK(after);
  ASSERT_EQ(after->size(), entries->size() + 1);
  EXPECT_EQ(after->back().version, V(1, 396));
}

// Records written once, to the stream, take no chunk of the partition: more
// PGs than the partition has chunks each keep their log in the stream, with
// no ring chunk (before format version 4 each ring took a chunk for them,
// and the partition was full at its 1,023rd PG). A home takes chunks for the
// blocks it writes, and gives them back once the log is all in the stream
// again. Reopen, and a deep Verify, find every log as it was written.
TEST_F(LogStreamTest, RecordsOnlyInTheStreamTakeNoRingChunk) {
  UseFileDevice();
  options_.stream.home_bytes = 0;
  options_.stream.max_chunks = 256;        // 16 MiB of the 1,023 chunks
  options_.stream.force_home_percent = 100;
  MkfsAndOpenStream();
  constexpr uint32_t kPgs = 1500;
  const uint64_t chunks = (kDeviceSize - 4096) / kChunkSize;
  ASSERT_GT(kPgs, chunks);
  for (uint32_t from = 1; from <= kPgs; from += 100) {
    ASSERT_OK(Do([&](Transaction* t) {
      for (uint32_t p = from; p < from + 100; ++p) t->CreatePg(Pg(p));
    }));
  }
  for (uint64_t v = 1; v <= 2; ++v) {
    for (uint32_t from = 1; from <= kPgs; from += 100) {
      ASSERT_OK(Do([&](Transaction* t) {
        for (uint32_t p = from; p < from + 100; ++p) {
          t->AppendEntry(Pg(p), V(1, v), TestPayload(v, 200));
        }
      }));
    }
  }
  // One transaction writing to more PGs than the partition has chunks.
  ASSERT_OK(Do([&](Transaction* t) {
    for (uint32_t p = 1; p <= kPgs; ++p) t->AppendEntry(Pg(p), V(1, 3), TestPayload(3, 200));
  }));
  auto every_pg_as_written = [&] {
    for (uint32_t p = 1; p <= kPgs; ++p) {
      ASSERT_EQ(VersionsOf(Pg(p), 200), Range(1, 3)) << p;
      ASSERT_EQ(store_->GetPgStats(Pg(p))->chunks, 0u) << p;
    }
  };
  every_pg_as_written();
  EXPECT_EQ(Stats().total_chunks - Stats().free_chunks, Stats().stream_chunks);
  Reopen();
  every_pg_as_written();

  // PG 1 homed (home_bytes reached): its ring takes a chunk for the blocks
  // written; trimmed past them, it holds none again.
  options_.stream.home_bytes = 4096;
  Reopen();
  for (uint64_t v = 4; v <= 40; ++v) ASSERT_OK(One(Pg(1), v, 200));
  EXPECT_GT(Stats().home_writes, 0u);
  EXPECT_EQ(store_->GetPgStats(Pg(1))->chunks, 1u);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 40));
  options_.stream.home_bytes = 0;
  Reopen();
  ASSERT_OK(Do([&](Transaction* t) { t->Trim(Pg(1), V(1, 40)); }));
  ASSERT_OK(One(Pg(1), 41, 200));
  EXPECT_EQ(store_->GetPgStats(Pg(1))->chunks, 0u);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(41, 41));
  store_.reset();

  VerifyOptions deep;
  deep.deep = true;
  auto r = Verify(device_path_, meta(), deep);
  ASSERT_OK(r);
  EXPECT_EQ(r->errors, 0u);
  for (const VerifyProblem& p : r->problems) ADD_FAILURE() << p.kind << ": " << p.message;
}

// A damaged stream record under a PG's live items: the cleaner's read
// finds it (kDataLoss inside, logged), restates nothing, and leaves the PG
// as it was; reads of the damaged items say kDataLoss naming the PG, and no
// wrong entry is returned.
TEST_F(LogStreamTest, CleaningAPgWithADamagedRecordRestatesNothing) {
  options_.stream.compression = StreamCompression::kNone;  // the payload lies on the device
  options_.stream.home_bytes = 0;
  options_.stream.max_chunks = 8;
  options_.stream.force_home_percent = 100;  // the test cleans, not the thread
  options_.stream.resident_bytes = 4096;     // the dups' record read from the device
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  const std::string dup_payload(200, 'd');
  ASSERT_OK(Do([&](Transaction* t) { t->AppendDup(Pg(1), V(1, 1), dup_payload); }));
  for (uint64_t v = 1; v <= 60; ++v) ASSERT_OK(One(Pg(1), v, 300));
  ASSERT_OK(Do([&](Transaction* t) { t->Trim(Pg(1), V(1, 58)); }));
  auto* mem = static_cast<MemoryBlockDevice*>(device_.get());
  const std::string all = mem->ReadRaw(0, mem->size());
  const size_t at = all.find(dup_payload);
  ASSERT_NE(at, std::string::npos);
  std::string b = all.substr(at + 100, 1);
  b[0] = static_cast<char>(b[0] ^ 0x01);
  mem->WriteRaw(at + 100, b);

  ASSERT_OK(static_cast<RingStore*>(store_.get())->CleanStreamNowForTest());
  EXPECT_EQ(Stats().stream_restates, 0u);
  auto dups = store_->ReadDups(Pg(1));
  EXPECT_CODE(dups, kDataLoss);
  EXPECT_THAT(std::string(dups.status().message()), HasSubstr("1.1"));
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(59, 60));
}

// StreamOptions::max_chunks 0 (the default): three quarters of the
// partition's chunks, within [2, 4096].
TEST_F(LogStreamTest, BoundZeroIsThreeQuartersOfThePartition) {
  EXPECT_EQ(StreamOptions{}.max_chunks, 0u);
  EXPECT_EQ(LogStream::MaxChunksFor(0, 1000), 750u);
  EXPECT_EQ(LogStream::MaxChunksFor(0, 7), 5u);
  EXPECT_EQ(LogStream::MaxChunksFor(0, 2), 2u);
  EXPECT_EQ(LogStream::MaxChunksFor(0, 1 << 20), 4096u);
  EXPECT_EQ(LogStream::MaxChunksFor(16, 1000), 16u);
  options_.stream.max_chunks = 0;
  MkfsAndOpenStream();
  const StoreStats st = Stats();
  EXPECT_EQ(st.stream_max_chunks, st.total_chunks * 3 / 4);
}

// The PG rings' chunks, the stream's and the free ones are the partition's.
void ExpectChunksAddUp(Store* store, const StoreStats& st, std::vector<PgId> pgs) {
  uint64_t rings = 0;
  for (const PgId& pg : pgs) rings += store->GetPgStats(pg)->chunks;
  EXPECT_EQ(rings + st.stream_chunks + st.free_chunks, st.total_chunks);
}

// The stream gives back the chunks its head has passed: pinned by an idle
// PG it grows, and once that PG's records are trimmed its chunks return to
// the partition, all but the one holding its tail.
TEST_F(LogStreamTest, StreamGivesBackTheChunksItsHeadPassed) {
  options_.stream.max_chunks = 0;   // room for what PG 1 pins
  options_.stream.home_bytes = 0;  // and nothing homed but by force
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(One(Pg(1), 1));  // pins the stream's head
  for (uint64_t v = 1; v <= 400; ++v) {
    ASSERT_OK(Do([&](Transaction* t) {
      t->AppendEntry(Pg(2), V(1, v), TestPayload(v, 2000));
      if (v > 10) t->Trim(Pg(2), V(1, v - 10));
    }));
  }
  StoreStats st = Stats();
  EXPECT_EQ(st.forced_homes, 0u);
  EXPECT_GE(st.stream_chunks, 12u);  // ~800 KB of records behind PG 1's pin
  ExpectChunksAddUp(store_.get(), st, {Pg(1), Pg(2)});
  const uint64_t free_before = st.free_chunks;
  ASSERT_OK(Do([&](Transaction* t) { t->Trim(Pg(1), V(1, 1)); }));
  ASSERT_OK(One(Pg(2), 401, 2000));  // commits after the trim's pointer is durable
  st = Stats();
  EXPECT_LE(st.stream_chunks, 2u);  // PG 2's last ~20 KB
  EXPECT_GE(st.free_chunks, free_before + 10);
  ExpectChunksAddUp(store_.get(), st, {Pg(1), Pg(2)});
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(2, 1));
  EXPECT_EQ(VersionsOf(Pg(2), 2000), Range(391, 401));
  st = Stats();
  ExpectChunksAddUp(store_.get(), st, {Pg(1), Pg(2)});
}

// Rings that fill the partition drain the stream: once it holds more
// chunks than are free its head is homed by force (PG 1's one record here,
// which would pin it for ever), so that PG 2's ring grows into every chunk
// but the one holding the stream's tail before a write is refused.
TEST_F(LogStreamTest, PartitionPressureDrainsTheStream) {
  device_ = std::make_shared<MemoryBlockDevice>(4 << 20);
  options_.stream.home_bytes = 8192;         // homing by count: so PG 2's bytes go home
  options_.stream.max_chunks = 4096;         // no bound but the partition's
  options_.stream.force_home_percent = 100;  // and never homed for the stream's own fill
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(One(Pg(1), 1));
  const uint64_t total = Stats().total_chunks;
  uint64_t most_stream = 0;
  uint64_t v = 0;
  absl::Status refused;
  while (v < 10000) {
    refused = One(Pg(2), v + 1, 2000);
    if (!refused.ok()) break;
    ++v;
    const StoreStats st = Stats();
    most_stream = std::max(most_stream, st.stream_chunks);
    ExpectChunksAddUp(store_.get(), st, {Pg(1), Pg(2)});
  }
  ASSERT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("partition is full"));
  const StoreStats st = Stats();
  EXPECT_GE(st.forced_homes, 1u);
  EXPECT_EQ(Unhomed(Pg(1)), 0u);
  EXPECT_LE(most_stream, total / 2);
  EXPECT_GT(most_stream, 4u);
  EXPECT_EQ(st.free_chunks, 0u);
  EXPECT_LE(st.stream_chunks, 1u);
  EXPECT_GE(store_->GetPgStats(Pg(2))->chunks + store_->GetPgStats(Pg(1))->chunks, total - 1);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 1));
  EXPECT_EQ(VersionsOf(Pg(2), 2000), Range(1, v));
}

// With every forced home held back and the head pinned, a full stream
// sends whole transactions to the rings; nothing fails, nothing is lost.
TEST_F(LogStreamTest, FullStreamWritesToTheRings) {
  options_.stream.max_chunks = 2;
  options_.stream.force_home_percent = 100;
  options_.stream.max_forced_homes = 1;
  MkfsAndOpenStream();
  for (uint32_t p = 1; p <= 40; ++p) ASSERT_OK(Create(Pg(p)));
  uint64_t v = 0;
  for (int round = 0; round < 10; ++round) {
    for (uint32_t p = 1; p <= 40; ++p) {
      ASSERT_OK(Do([&](Transaction* t) {
        t->AppendEntry(Pg(p), V(1, v + 1), TestPayload(v + 1, 900));
      }));
    }
    ++v;
  }
  const StoreStats st = Stats();
  EXPECT_GT(st.stream_full_fallbacks, 0u);
  Reopen();
  for (uint32_t p = 1; p <= 40; ++p) EXPECT_EQ(VersionsOf(Pg(p), 900), Range(1, 10)) << p;
}

// Under kNeverRewrite a home to a PG's tail (an idle transaction's bypass,
// or a full stream's transactions) ends the partial block with a pad, so no
// later home writes that block again; under kRewriteTailBlock the next home
// rewrites it with its old records, which the watch counts.
class HomeToTailTest : public LogStreamTest,
                       public ::testing::WithParamInterface<TailBlockPolicy> {
 protected:
  void SetUp() override {
    LogStreamTest::SetUp();
    options_.tail_block_policy = GetParam();
    watch_ = std::make_shared<RewriteWatchDevice>(device_);
    device_ = watch_;
  }
  bool never() const { return GetParam() == TailBlockPolicy::kNeverRewrite; }
  std::shared_ptr<RewriteWatchDevice> watch_;
};

TEST_P(HomeToTailTest, IdleBypassNeverRewritesABlock) {
  options_.stream.bypass_when_idle = true;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  const StoreStats before = Stats();
  for (uint64_t v = 1; v <= 20; ++v) {
    ASSERT_OK(One(Pg(1), v, 300));
    EXPECT_EQ(Unhomed(Pg(1)), 0u) << v;  // each one bypassed the stream
  }
  EXPECT_EQ(Stats().stream_records, before.stream_records);
  if (never()) {
    EXPECT_EQ(watch_->rewrites(), 0u);
    EXPECT_EQ(store_->GetPgStats(Pg(1))->ring_bytes_used, 20u * 4096);  // a block each
  } else {
    EXPECT_GT(watch_->rewrites(), 10u);  // ~12 records a block: each block ~11 times again
  }
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 20));
  // The next records, through the stream now and home in whole blocks, go
  // on after the pads.
  options_.stream.bypass_when_idle = false;
  options_.stream.home_bytes = 8192;
  Reopen();
  for (uint64_t v = 21; v <= 60; ++v) ASSERT_OK(One(Pg(1), v, 300));
  if (never()) EXPECT_EQ(watch_->rewrites(), 0u);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 60));
}

TEST_P(HomeToTailTest, FullStreamNeverRewritesABlock) {
  options_.stream.max_chunks = 2;
  options_.stream.force_home_percent = 100;
  options_.stream.max_forced_homes = 1;
  MkfsAndOpenStream();
  for (uint32_t p = 1; p <= 40; ++p) ASSERT_OK(Create(Pg(p)));
  for (uint64_t v = 1; v <= 10; ++v) {
    for (uint32_t p = 1; p <= 40; ++p) {
      ASSERT_OK(Do([&](Transaction* t) { t->AppendEntry(Pg(p), V(1, v), TestPayload(v, 900)); }));
    }
  }
  ASSERT_GT(Stats().stream_full_fallbacks, 0u);
  if (never()) {
    EXPECT_EQ(watch_->rewrites(), 0u);
  } else {
    EXPECT_GT(watch_->rewrites(), 0u);
  }
  Reopen();
  for (uint32_t p = 1; p <= 40; ++p) EXPECT_EQ(VersionsOf(Pg(p), 900), Range(1, 10)) << p;
}

// Under kNeverRewrite behind the stream a record that would leave its
// block less room than a pad record pads itself to the block's end, so
// the pad a home to the tail adds always fits the block: no PG's tail is
// ever 1 to kMinPadRecord - 1 bytes short of a block boundary. The ring
// takes chunks only for the blocks homed: none past the one holding the
// last homed byte, none short of it.
TEST_F(LogStreamTest, NeverRewriteRecordsLeaveRoomForTheirPad) {
  options_.tail_block_policy = TailBlockPolicy::kNeverRewrite;
  options_.stream.home_bytes = 4096;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  // Untrimmed, the ring's bytes in use run from lpos 0 to the tail.
  constexpr uint64_t kRecords = 2000;
  uint64_t tail = 0;
  for (uint64_t v = 1; v <= kRecords; ++v) {
    ASSERT_OK(One(Pg(1), v, 1 + (v * 37) % 211));
    auto st = store_->GetPgStats(Pg(1));
    ASSERT_OK(st);
    tail = st->ring_bytes_used;
    const uint64_t short_of_block = (4096 - tail % 4096) % 4096;
    ASSERT_TRUE(short_of_block == 0 || short_of_block >= kMinPadRecord)
        << "record " << v << ": tail " << tail << " is " << short_of_block
        << " bytes short of its block's end";
    const uint64_t homed = tail - st->unhomed_bytes;
    ASSERT_EQ(st->chunks, (homed + kChunkSize - 1) / kChunkSize) << "record " << v;
  }
  auto db = DumpDb();  // closes the store
  auto ptr = PgPointer::Decode(db.at(PgPointerKey(Pg(1))));
  ASSERT_OK(ptr);
  EXPECT_EQ(ptr->head, 0u);
  EXPECT_LE(ptr->tail, tail);  // records past it continue in the stream
  ASSERT_OK(Open(options_));
  EXPECT_EQ(store_->GetPgStats(Pg(1))->ring_bytes_used, tail);
  auto e = store_->ReadEntries(Pg(1));
  ASSERT_OK(e);
  ASSERT_EQ(e->size(), kRecords);
  for (const LogEntry& x : *e) {
    const uint64_t v = x.version.version;
    EXPECT_EQ(x.payload, TestPayload(v, 1 + (v * 37) % 211)) << v;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, HomeToTailTest,
                         ::testing::Values(TailBlockPolicy::kRewriteTailBlock,
                                           TailBlockPolicy::kNeverRewrite),
                         PolicyName);

// Per-PG rings opened on a store with a stream home what is left in it
// (max_forced_homes PGs per transaction), then give its chunks back and
// delete its keys; the stream takes over again at the next open.
TEST_F(LogStreamTest, PerPgRingsHomeAndDropAStream) {
  MkfsAndOpenStream();
  for (uint32_t p = 1; p <= 10; ++p) {
    ASSERT_OK(Create(Pg(p)));
    ASSERT_OK(One(Pg(p), 1));
  }
  ASSERT_GT(Stats().stream_chunks, 0u);
  options_.log_layout = LogLayout::kPerPgRings;
  options_.stream.max_forced_homes = 4;
  Reopen();
  ASSERT_GT(Stats().stream_chunks, 0u);
  ASSERT_OK(One(Pg(1), 2));  // homes PG 1 and 4 pinned PGs
  EXPECT_GT(Stats().stream_chunks, 0u);
  ASSERT_OK(One(Pg(1), 3));
  ASSERT_OK(One(Pg(1), 4));  // the last pinned PGs: the stream goes
  EXPECT_EQ(Stats().stream_chunks, 0u);
  for (uint32_t p = 1; p <= 10; ++p) EXPECT_EQ(Unhomed(Pg(p)), 0u);
  auto db = DumpDb();
  EXPECT_EQ(db.count(std::string(kStreamPointerKey)), 0u);
  EXPECT_EQ(db.count(std::string(kStreamChunksKey)), 0u);
  ASSERT_OK(Open(options_));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 4));
  for (uint32_t p = 2; p <= 10; ++p) EXPECT_EQ(Versions(Pg(p)), Range(1, 1));
  options_.log_layout = LogLayout::kStream;
  Reopen();
  ASSERT_OK(One(Pg(2), 2));
  EXPECT_GT(Unhomed(Pg(2)), 0u);
  Reopen();
  EXPECT_EQ(Versions(Pg(2)), Range(1, 2));
}

// A store opened in the stream layout says format version 4 before its
// stream can hold anything (an older pgring refuses it by its label),
// written at open; once 4 it stays 4 in either layout. A version-2 store
// (an older pgring's stream, every pointer exact) and a version-3 one (every
// unhomed byte with a ring chunk) become 4 the same way.
TEST_F(LogStreamTest, OpeningInTheStreamLayoutMarksFormatVersion4) {
  options_.stream.compression = StreamCompression::kNone;  // version 5: the next test
  options_.log_layout = LogLayout::kPerPgRings;
  Mkfs();
  EXPECT_EQ(LabelVersion(), kFormatVersion);
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(One(Pg(1), 1));
  EXPECT_EQ(LabelVersion(), 1u);
  options_.log_layout = LogLayout::kStream;
  Reopen();
  EXPECT_EQ(LabelVersion(), kStreamFormatVersion);
  auto meta = StoreMeta::Decode(DumpDb().at(std::string(kMetaKey)));
  ASSERT_OK(meta);
  EXPECT_EQ(meta->format_version, kStreamFormatVersion);
  ASSERT_OK(Open(options_));
  ASSERT_OK(One(Pg(1), 2));
  options_.log_layout = LogLayout::kPerPgRings;
  Reopen();
  EXPECT_EQ(LabelVersion(), kStreamFormatVersion);
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 2));

  store_.reset();
  auto region = ReadLabelRegion(device_.get(), "mem");
  ASSERT_OK(region);
  auto label = Label::Decode(*region);
  ASSERT_OK(label);
  label->format_version = 2;
  ASSERT_OK(WriteLabelRegion(device_.get(), *label));
  ASSERT_OK(Open(options_));  // per-PG rings: a version-2 store stays 2
  EXPECT_EQ(LabelVersion(), 2u);
  options_.log_layout = LogLayout::kStream;
  Reopen();
  EXPECT_EQ(LabelVersion(), kStreamFormatVersion);
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 2));

  store_.reset();
  region = ReadLabelRegion(device_.get(), "mem");
  ASSERT_OK(region);
  label = Label::Decode(*region);
  ASSERT_OK(label);
  label->format_version = 3;
  ASSERT_OK(WriteLabelRegion(device_.get(), *label));
  Reopen();
  EXPECT_EQ(LabelVersion(), kStreamFormatVersion);
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 2));
}

// Opened with compression, a stream store is version 5 (label and
// pgring.meta) before its stream holds a compressed record, and stays 5
// when opened without compression again: its stream may still hold them,
// read side by side with plain ones.
TEST_F(LogStreamTest, OpeningWithCompressionMarksFormatVersion5) {
  auto meta_version = [&] {
    auto meta = StoreMeta::Decode(DumpDb().at(std::string(kMetaKey)));
    EXPECT_OK(meta);
    return meta->format_version;
  };
  options_.stream.compression = StreamCompression::kNone;
  Mkfs();
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 20, 1, 300));
  EXPECT_EQ(LabelVersion(), kStreamFormatVersion);
  const uint64_t plain = store_->GetStoreStats().stream_records;
  EXPECT_GT(plain, 0u);
  options_.stream.compression = StreamCompression::kLz4;
  Reopen();
  EXPECT_EQ(LabelVersion(), kFormatVersionCompressed);
  EXPECT_EQ(meta_version(), kFormatVersionCompressed);
  ASSERT_OK(Open(options_));
  ASSERT_OK(Append(Pg(1), 21, 40, 1, 300));
  options_.stream.compression = StreamCompression::kNone;
  Reopen();
  EXPECT_EQ(LabelVersion(), kFormatVersionCompressed);
  ASSERT_OK(Open(options_));
  ASSERT_OK(Append(Pg(1), 41, 50, 1, 300));
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 50));
  Reopen();
  ASSERT_OK(Open(options_));
  EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 50));
}

// A transaction that finds no transaction in flight writes to its PGs'
// rings (one write, as per-PG rings); one that finds one in flight joins
// the stream.
TEST_F(LogStreamTest, IdleStreamIsBypassed) {
  options_.stream.bypass_when_idle = true;
  auto gated = std::make_shared<GatedDevice>(device_);
  device_ = gated;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  const StoreStats before = Stats();
  ASSERT_OK(One(Pg(1), 1));
  EXPECT_EQ(Stats().stream_records, before.stream_records);
  EXPECT_EQ(Unhomed(Pg(1)), 0u);
  EXPECT_EQ(Stats().device_writes - before.device_writes, 1u);
  // The first finds nothing in flight (its ring write is then held); the
  // second finds the first in flight and goes to the stream. (The commit
  // thread writes both: in one round when the second came before it
  // started one, else the stream record once the ring write is let go.)
  gated->Close();
  InFlight txns;
  for (uint32_t p = 1; p <= 2; ++p) {
    Transaction t;
    t.AppendEntry(Pg(p), V(1, 2), TestPayload(2));
    ASSERT_OK(txns.Submit(store_.get(), std::move(t)));
  }
  EXPECT_GE(gated->WaitHeld(1), 1u);
  gated->Open();
  ASSERT_OK(txns.Wait());
  EXPECT_EQ(Stats().stream_records - before.stream_records, 1u);
  EXPECT_EQ(Unhomed(Pg(1)), 0u);
  EXPECT_GT(Unhomed(Pg(2)), 0u);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 200), Range(1, 2));
  EXPECT_EQ(VersionsOf(Pg(2), 200), Range(2, 2));
}

// Where the gates do not share the partition's flush, the commit thread's
// writes are write-through (durable when done), so a group commits with no
// flush of the partition between its records and its RocksDB sync. With
// gated_writes_share_flush, the control, every group flushes. Power loss
// with the writes in the device's volatile cache is the crash tests' part
// (StreamPowerLossTest and the campaigns run this layout).
TEST_F(LogStreamTest, GroupsMakeNoFlushWhenTheStreamWritesThrough) {
  UseFileDevice();
  Mkfs();
  uint32_t first = 1;
  for (bool share : {false, true}) {
    SCOPED_TRACE(share ? "gates share the flush" : "write-through");
    store_.reset();
    options_.gated_writes_share_flush = share;
    options_.stream.home_bytes = 4096;  // home writes in the rounds too
    ASSERT_OK(Open(options_));
    for (uint32_t p = first; p < first + 4; ++p) ASSERT_OK(Create(Pg(p)));
    const StoreMetrics before = store_->GetMetrics();
    AppendToFour(first, 2, 22);
    ASSERT_FALSE(HasFatalFailure());
    const StoreMetrics after = store_->GetMetrics();
    const uint64_t group_flushes = after.flush_latency_ns.count - before.flush_latency_ns.count;
    EXPECT_GT(after.stats.home_writes - before.stats.home_writes, 10u);
    if (share) {
      EXPECT_GE(group_flushes, 20u) << "the control: each group flushes the partition";
    } else {
      EXPECT_EQ(group_flushes, 0u) << "a group flushed records its round had made durable";
    }
    Reopen();
    for (uint32_t p = first; p < first + 4; ++p) EXPECT_EQ(VersionsOf(Pg(p), 1000), Range(2, 21));
    first += 4;
  }
}

// The stream layout's home writes are the commit thread's, as its stream
// writes are: issued and reaped by it (CommitWriter), so the partition's
// completion thread never wakes for them, and a group's critical path wakes
// no thread the floor does not. Per-PG rings, whose ring writes complete on
// that thread, are the control that shows the count sees it wake.
TEST_F(LogStreamTest, HomeWritesWakeNoDeviceThread) {
  UseFileDevice();
  auto partition_switches = [] {
    uint64_t n = 0;
    for (const auto& [name, switches] : ThreadSwitches()) {
      if (name == "io:partition") n += switches;
    }
    return n;
  };
  Mkfs();
  uint32_t first = 1;  // each layout its own PGs
  for (LogLayout layout : {LogLayout::kStream, LogLayout::kPerPgRings}) {
    SCOPED_TRACE(layout == LogLayout::kStream ? "stream" : "per-PG rings");
    store_.reset();
    options_.log_layout = layout;
    options_.stream.bypass_when_idle = true;
    options_.stream.home_bytes = 4096;  // a home write every block
    ASSERT_OK(Open(options_));
    for (uint32_t p = first; p < first + 4; ++p) ASSERT_OK(Create(Pg(p)));
    // Settled: the device's thread has started and waits.
    uint64_t before = partition_switches();
    for (int settle = 0; settle < 100; ++settle) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const uint64_t now = partition_switches();
      if (now == before) break;
      before = now;
    }
    const StoreStats start = Stats();
    AppendToFour(first, 2, 42);
    ASSERT_FALSE(HasFatalFailure());
    const uint64_t woke = partition_switches() - before;
    if (layout == LogLayout::kStream) {
      EXPECT_GT(Stats().home_writes - start.home_writes, 20u);
      EXPECT_LE(woke, 2u) << "the partition's thread woke for the commit thread's writes";
    } else {
      EXPECT_GT(woke, 20u) << "the control: per-PG rings' writes complete on that thread";
    }
    for (uint32_t p = first; p < first + 4; ++p) EXPECT_EQ(VersionsOf(Pg(p), 1000), Range(2, 41));
    first += 4;
  }
}

// Stream options out of their ranges are refused at open, naming the option
// and its range; the ends of each range open, and 0 where it means a default.
// The byte sizes are 64-bit: a value past 4 GiB is refused, not cut to its
// low 32 bits (2^32 + 4096 would be one block).
TEST_F(LogStreamTest, StreamOptionsOutOfRangeAreRefused) {
  Mkfs();
  using Set = void (*)(StreamOptions*, uint64_t);
  struct Case {
    Set set;
    uint64_t lo, hi;
    const char* name;
    const char* zero = "";  // the message's words for 0, where 0 is allowed below lo
    bool bytes = false;
  };
  constexpr uint64_t kMaxBytes = 256 << 20;
  for (const Case& c :
       {Case{[](StreamOptions* o, uint64_t v) { o->max_chunks = static_cast<uint32_t>(v); }, 2,
             4096, "stream.max_chunks", "0 (three quarters of the partition) or "},
        Case{[](StreamOptions* o, uint64_t v) { o->home_bytes = v; }, 512, kMaxBytes,
             "stream.home_bytes", "0 (never home by count) or ", true},
        Case{[](StreamOptions* o, uint64_t v) { o->resident_bytes = v; }, 512, kMaxBytes,
             "stream.resident_bytes", "", true},
        Case{[](StreamOptions* o, uint64_t v) { o->force_home_percent = static_cast<uint32_t>(v); },
             1, 100, "stream.force_home_percent"},
        Case{[](StreamOptions* o, uint64_t v) { o->max_forced_homes = static_cast<uint32_t>(v); },
             1, 1024, "stream.max_forced_homes"},
        Case{[](StreamOptions* o, uint64_t v) { o->forced_home_bytes = v; }, 512, kMaxBytes,
             "stream.forced_home_bytes", "", true}}) {
    std::vector<uint64_t> bad = {c.hi + 1};
    if (c.lo > 0) bad.push_back(c.lo - 1);
    if (c.bytes) {
      bad.push_back((uint64_t{1} << 32) + 4096);
      bad.push_back(UINT64_MAX);
    }
    for (uint64_t b : bad) {
      Options o = options_;
      c.set(&o.stream, b);
      auto st = Open(o);
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.name << " " << b;
      EXPECT_THAT(std::string(st.message()),
                  HasSubstr(absl::StrCat(c.name, " is ", b, "; it must be ", c.zero, "in [", c.lo,
                                         ", ", c.hi, "]")));
    }
    std::vector<uint64_t> good = {c.lo, c.hi};
    if (*c.zero != '\0') good.push_back(0);
    if (c.bytes) good.push_back(4097);  // not whole blocks: rounded down
    for (uint64_t g : good) {
      Options o = options_;
      c.set(&o.stream, g);
      const absl::Status st = Open(o);
      EXPECT_TRUE(st.ok()) << c.name << " " << g << ": " << st;  // the range's ends open
      store_.reset();
    }
  }
}

class StreamBytesTest : public LogStreamTest {
 protected:
  // A fresh store on a memory partition of `block`-byte logical blocks,
  // with its own RocksDB.
  void MkfsAndOpenWithBlock(uint32_t block) {
    options_.stream.max_chunks = 16;  // the bound these tests' sizes assume
    store_.reset();
    device_ = std::make_shared<MemoryBlockDevice>(kDeviceSize, block);
    db_path_ = dir_.Join(absl::StrCat("db-", block));
    MkfsAndOpenStream();
  }
};

// A home_bytes of 8 KiB homes a PG's records in 8 KiB writes on a
// partition of 512-byte blocks as on one of 4096: the same workload makes
// the same home writes of the same size (in block units, 512-byte blocks
// would make 1 KiB homes and eight times as many).
TEST_F(StreamBytesTest, HomesAreTheSameBytesAtEitherBlockSize) {
  options_.stream.home_bytes = 8192;
  struct Homes {
    uint64_t writes, bytes;
  };
  auto run = [&](uint32_t block) -> Homes {
    MkfsAndOpenWithBlock(block);
    EXPECT_OK(Create(Pg(1)));
    const StoreStats before = Stats();
    for (uint64_t v = 1; v <= 200; ++v) EXPECT_OK(One(Pg(1), v, 300));
    const StoreStats after = Stats();
    EXPECT_EQ(after.forced_homes, before.forced_homes) << block;
    // What is left: less than home_bytes past the last block homed, and
    // the block the tail is in.
    EXPECT_LT(Unhomed(Pg(1)), 8192u + block) << block;
    Reopen();
    EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 200)) << block;
    return {after.home_writes - before.home_writes,
            after.home_bytes_written - before.home_bytes_written};
  };
  const Homes big = run(4096);
  const Homes small = run(512);
  // ~200 records of ~330 bytes = ~66 KB: one home per 8 KiB.
  EXPECT_GE(big.writes, 7u);
  EXPECT_LE(big.writes, 8u);
  // Each home is 8 KiB of whole blocks at either size; where the tail
  // stops in the last home's blocks may differ by a home.
  EXPECT_LE(small.writes, big.writes + 1);
  EXPECT_GE(small.writes + 1, big.writes);
  EXPECT_EQ(big.bytes, big.writes * 8192);
  EXPECT_EQ(small.bytes, small.writes * 8192);
}

// The default resident_bytes and forced_home_bytes are bytes too: on either
// block size a PG keeps its newest 64 KiB of unhomed bytes in memory, and a
// forced home of a PG with more writes 32 KiB.
TEST_F(StreamBytesTest, DefaultResidentAndForcedHomeBytesAtEitherBlockSize) {
  for (uint32_t block : {4096u, 512u}) {
    SCOPED_TRACE(absl::StrCat(block, "-byte blocks"));
    options_.stream.home_bytes = 0;  // homed only by force
    options_.stream.max_forced_homes = 1;
    MkfsAndOpenWithBlock(block);
    ASSERT_OK(Create(Pg(1)));
    ASSERT_OK(Create(Pg(2)));
    // ~106 KB, one stream write (block-padded) each: an eighth of the
    // stream's bound at 4096-byte blocks.
    for (uint64_t v = 1; v <= 32; ++v) ASSERT_OK(One(Pg(1), v, 3300));
    ASSERT_EQ(Stats().forced_homes, 0u);
    ASSERT_GT(Unhomed(Pg(1)), 96u << 10);
    const uint64_t resident = store_->GetPgStats(Pg(1))->unhomed_resident_bytes;
    EXPECT_GE(resident, 64u << 10);
    EXPECT_LE(resident, (64u << 10) + block);  // and the block the tail is in
    // PG 2 fills the stream (trimmed as it goes) until PG 1, pinning its
    // head, is homed by force: its oldest 32 KiB.
    StoreStats before = Stats();
    uint64_t v2 = 0;
    while (Stats().forced_homes == before.forced_homes && v2 < 4000) {
      before = Stats();
      ++v2;
      ASSERT_OK(Do([&](Transaction* t) {
        t->AppendEntry(Pg(2), V(1, v2), TestPayload(v2, 3000));
        if (v2 > 10) t->Trim(Pg(2), V(1, v2 - 10));
      }));
    }
    const StoreStats after = Stats();
    ASSERT_EQ(after.forced_homes - before.forced_homes, 1u);
    EXPECT_EQ(after.home_bytes_written - before.home_bytes_written, 32u << 10);
    EXPECT_EQ(VersionsOf(Pg(1), 3300), Range(1, 32));
  }
}

// An idle transaction on a PG with whole blocks waiting in the stream does
// not home them early: it joins the stream, and the blocks go home once
// home_bytes of them are there, as under load.
TEST_F(LogStreamTest, IdleBypassLeavesWholeBlocksInTheStream) {
  options_.stream.bypass_when_idle = true;
  options_.stream.home_bytes = 4 * 4096;
  auto gated = std::make_shared<GatedDevice>(device_);
  device_ = gated;
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  // PG 2's transaction is held in flight, so PG 1's three join the stream:
  // more than one whole block of PG 1 is then not homed.
  gated->Close();
  InFlight txns;
  auto submit = [&](uint32_t p, uint64_t v, size_t size) {
    Transaction t;
    t.AppendEntry(Pg(p), V(1, v), TestPayload(v, size));
    ASSERT_OK(txns.Submit(store_.get(), std::move(t)));
  };
  submit(2, 1, 200);
  for (uint64_t v = 1; v <= 3; ++v) submit(1, v, 3000);
  gated->Open();
  ASSERT_OK(txns.Wait());
  const uint64_t waiting = Unhomed(Pg(1));
  ASSERT_GT(waiting, 4096u);
  ASSERT_LT(waiting, 4u * 4096u);
  const StoreStats before = Stats();
  ASSERT_OK(One(Pg(1), 4, 3000));  // nothing in flight
  EXPECT_EQ(Stats().stream_records - before.stream_records, 1u);
  EXPECT_EQ(Stats().home_writes, before.home_writes);
  EXPECT_GT(Unhomed(Pg(1)), waiting);
  Reopen();
  EXPECT_EQ(VersionsOf(Pg(1), 3000), Range(1, 4));
}

// A stream pointer older than what the PGs' pointers need (its tail before
// their records): refused naming the PG and the stream range looked at.
// (Records a stream pointer does not cover and no PG pointer counts are
// uncommitted, as a transaction whose batch never reached RocksDB.)
TEST_F(LogStreamTest, StreamPointerOlderThanThePgsIsRefused) {
  MkfsAndOpenStream();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(One(Pg(1), 1));
  ASSERT_OK(One(Pg(1), 2));
  auto old_db = DumpDb();
  const std::string old_ptr = old_db.at(std::string(kStreamPointerKey));
  ASSERT_OK(Open(options_));
  ASSERT_OK(Do([](Transaction* t) {  // the trim writes PG 1's pointer
    t->AppendEntry(Pg(1), V(1, 3), TestPayload(3));
    t->Trim(Pg(1), V(1, 1));
  }));
  ASSERT_OK(store_->Close());
  store_.reset();
  RawDbWrite([&](rocksdb::WriteBatch* b) {
    ASSERT_TRUE(b->Put(std::string(kStreamPointerKey), old_ptr).ok());
  });
  auto s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("PG 1.1: its ring bytes ["));
  EXPECT_THAT(std::string(s.message()), HasSubstr("are not in the log stream"));
  // Under kMarkDamaged only that PG is lost.
  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->GetPgStats(Pg(1))->damaged);
}

// Damage inside one stream record costs only the PGs whose bytes it held:
// the read goes on from the next record a PG's pointer names.
TEST_F(LogStreamTest, DamagedStreamRecordCostsOnlyItsPgs) {
  options_.stream.compression = StreamCompression::kNone;  // the payload lies on the device
  ASSERT_NO_FATAL_FAILURE(TwoPgsARecordEach());
  auto* mem = static_cast<MemoryBlockDevice*>(device_.get());
  const std::string all = mem->ReadRaw(0, mem->size());
  const std::string needle = TestPayload(1, 300);
  const size_t at = all.find(needle);  // PG 1's record in the stream
  ASSERT_NE(at, std::string::npos);
  std::string b = all.substr(at + 10, 1);
  b[0] = static_cast<char>(b[0] ^ 0x01);
  mem->WriteRaw(at + 10, b);
  auto s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("PG 1.1: "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("log stream: record at lpos 0"));
  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->GetPgStats(Pg(1))->damaged);
  EXPECT_FALSE(store_->GetPgStats(Pg(2))->damaged);
  EXPECT_EQ(VersionsOf(Pg(2), 300), Range(1, 1));
}

// The same in a compressed stream: a byte flipped inside the compressed
// record holding PG 1's live bytes is found (its CRC) and located (the
// record's stream lpos); it costs PG 1 alone, and no wrong entry is read.
// Then the same flip with the record's CRC made to match again: the lz4
// block decodes to other items or fails to, and either way no wrong entry
// of PG 1 is ever returned.
TEST_F(LogStreamTest, DamagedCompressedStreamRecordCostsOnlyItsPgs) {
  for (bool fix_crc : {false, true}) {
    SCOPED_TRACE(fix_crc ? "CRC made to match" : "CRC as written");
    options_.stream.compression = StreamCompression::kLz4;
    options_.recovery_policy = RecoveryPolicy::kRefuse;
    if (fix_crc) {  // a new store
      device_ = std::make_shared<MemoryBlockDevice>(kDeviceSize);
      db_path_ = dir_.Join("db-crc-made-to-match");
    }
    ASSERT_NO_FATAL_FAILURE(TwoPgsARecordEach(/*compressed=*/2));
    auto* mem = static_cast<MemoryBlockDevice*>(device_.get());
    const std::string all = mem->ReadRaw(0, mem->size());
    // The stream's first record: stamp 0xFFFFFFFF, lap 0, seq 1.
    std::string first("\xff\xff\xff\xff", 4);
    first += std::string(4, '\0') + std::string("\x01", 1) + std::string(7, '\0');
    const size_t at = all.find(first);
    ASSERT_NE(at, std::string::npos);
    const size_t rec = at - 8;
    ASSERT_EQ(kRecordStreamLz4, static_cast<uint8_t>(all[rec + 4]));
    ASSERT_EQ(std::string::npos, all.find(TestPayload(1, 300)));  // only compressed
    const RecordHeader h = DecodeRecordHeader(all.data() + rec);
    std::string record = all.substr(rec, kRecordHeaderSize + h.length);
    record[kRecordHeaderSize + h.length / 2] ^= 0x01;
    if (fix_crc) {
      EncodeFixed32(record.data(),
                    crc32c::Mask(crc32c::Value(record.data() + 4, record.size() - 4)));
    }
    mem->WriteRaw(rec, record);
    auto s = Open(options_);
    if (fix_crc && s.ok()) {
      // The block still decoded, to items that pass every check: PG 1's
      // entry must then be the one written, never other bytes.
      EXPECT_EQ(VersionsOf(Pg(1), 300), Range(1, 1));
      EXPECT_EQ(VersionsOf(Pg(2), 300), Range(1, 1));
      continue;
    }
    EXPECT_CODE(s, kDataLoss);
    EXPECT_THAT(std::string(s.message()), HasSubstr("PG 1.1: "));
    // The stream record's CRC finds it; past a CRC made to match, the
    // checks of what it decodes to (here PG 1's own record's CRC).
    EXPECT_THAT(std::string(s.message()),
                HasSubstr(fix_crc ? "record at lpos 0" : "log stream: record at lpos 0"));
    options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
    ASSERT_OK(Open(options_));
    EXPECT_TRUE(store_->GetPgStats(Pg(1))->damaged);
    EXPECT_FALSE(store_->GetPgStats(Pg(2))->damaged);
    EXPECT_CODE(store_->ReadEntries(Pg(1)), kDataLoss);
    EXPECT_EQ(VersionsOf(Pg(2), 300), Range(1, 1));
    ASSERT_OK(store_->Close());
    store_.reset();
  }
}

}  // namespace
}  // namespace pgring::testing
