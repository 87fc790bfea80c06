// Where commit callbacks run (issue 14): a callback may Submit and may read
// (pgring/store.h), so it must never run on an I/O completion thread nor
// under a lock that a reader can hold while it waits for I/O. In kUnsynced
// acknowledgements used to run on the io_uring completion thread: a
// callback's Submit waited for the staging lock exclusively while a reader
// held it shared, waiting (for a ring write) on that very completion thread,
// and the writer-preferring lock then queued every other read and Submit
// behind them. A callback that read its own PG's newest entry waited on
// itself.
//
// Both cases through the public API on a real partition file with io_uring
// (the in-memory device completes writes inline, where none of this shows),
// in every durability mode, with a watchdog that turns a hang into a failure
// printing every thread's stack. Each PG has a chain of transactions: every
// callback submits its PG's next one, which also trims, so readers always
// find a record still being written. Readers check what they read by
// content: consecutive versions, each payload its own, and every
// acknowledged version there.
//
// PGRING_CALLBACK_TXNS (default 120) sets the transactions per PG (a
// quarter of it when the callbacks read).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/file_block_device.h"
#include "pgring/store.h"
#include "util/test_util.h"
#include "util/watchdog.h"

namespace pgring::testing {
namespace {

constexpr uint64_t kPartitionSize = 64ull << 20;
constexpr int kPgs = 8;
constexpr uint64_t kKeep = 16;  // entries each PG keeps (older ones are trimmed)
constexpr int kReaders = 2;
// Far beyond what the run needs (seconds, under TSan too): only a hang
// reaches it.
constexpr std::chrono::seconds kDeadline{120};

uint64_t TxnsPerPg() {
  const char* e = std::getenv("PGRING_CALLBACK_TXNS");
  const long long n = e != nullptr ? std::atoll(e) : 0;
  return n > 0 ? static_cast<uint64_t>(n) : 120;
}

PgId Pg(int i) { return PgId{1, static_cast<uint32_t>(i), -1}; }
Version V(uint64_t v) { return Version{1, v}; }
std::string Payload(int pg, uint64_t v) {
  return "pg" + std::to_string(pg) + "@" + std::to_string(v) + ":" + std::string(300, 'p');
}

std::string ModeName(DurabilityMode m) {
  return m == DurabilityMode::kSyncEach ? "SyncEach"
         : m == DurabilityMode::kGroupCommit ? "GroupCommit" : "Unsynced";
}

// What the callbacks do besides submitting their PG's next transaction.
enum class InCallback { kSubmitOnly, kSubmitThenRead };

class CallbackThreadTest : public ::testing::TestWithParam<DurabilityMode> {
 protected:
  void SetUp() override {
    MakeFile(dev_, kPartitionSize);
    // The deadlock needs writes completed on io_uring's completion thread:
    // skip, saying why, where io_uring is refused (never pass without it).
    FileBlockDeviceOptions probe;
    probe.use_io_uring = true;
    auto d = FileBlockDevice::Open(dev_, probe);
    ASSERT_OK(d);
    if (!(*d)->using_io_uring()) {
      GTEST_SKIP() << "io_uring is not available here: " << (*d)->io_uring_fallback_reason();
    }
    d->reset();
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    ASSERT_OK(Mkfs(dev_, MetadataLocation::OwnDb(db_), m));
  }

  Options StoreOptions() const {
    Options o;
    o.durability = GetParam();
    o.io_engine = IoEngine::kIoUring;
    o.unsynced_max_delay = std::chrono::milliseconds(5);
    o.reserve_chunks_per_pg = 1;
    o.log_sink = NullLogSink();
    return o;
  }

  struct Chain {
    int pg = 0;
    uint64_t next = 1;              // the chain's next version (one submitter at a time)
    std::atomic<uint64_t> acked{0};  // the newest version whose callback returned OK
  };

  void Fail(const std::string& what) {
    std::lock_guard<std::mutex> l(mu_);
    if (error_.empty()) error_ = what;
  }
  void ChainDone() {
    std::lock_guard<std::mutex> l(mu_);
    ++chains_done_;
    cv_.notify_all();
  }

  // Submits chain `c`'s next transaction; its callback submits the one
  // after (and, kSubmitThenRead, then reads the PG's newest entry, whose
  // write may still be in flight).
  void SubmitNext(Chain* c) {
    const uint64_t v = c->next++;
    Transaction t;
    if (v == 1) t.CreatePg(Pg(c->pg));
    t.AppendEntry(Pg(c->pg), V(v), Payload(c->pg, v));
    if (v > kKeep) t.Trim(Pg(c->pg), V(v - kKeep));
    t.SetInfo(Pg(c->pg), "info@" + std::to_string(v));
    absl::Status s = store_->Submit(std::move(t), [this, c, v](absl::Status st) {
      if (!st.ok()) {
        Fail("PG " + std::to_string(c->pg) + ": transaction " + std::to_string(v) +
             " failed: " + st.ToString());
        ChainDone();
        return;
      }
      c->acked.store(v);
      if (v == txns_) {
        ChainDone();
        return;
      }
      SubmitNext(c);
      if (in_callback_ == InCallback::kSubmitThenRead) {
        auto r = store_->ReadEntries(Pg(c->pg), V(v + 1), V(v + 1));
        if (!r.ok() || r->size() != 1 || (*r)[0].payload != Payload(c->pg, v + 1)) {
          Fail("PG " + std::to_string(c->pg) + ": a callback's read of entry " +
               std::to_string(v + 1) + " it had just submitted: " +
               (r.ok() ? std::to_string(r->size()) + " entries" : r.status().ToString()));
        }
      }
    });
    if (!s.ok()) {
      Fail("PG " + std::to_string(c->pg) + ": Submit of transaction " + std::to_string(v) +
           ": " + s.ToString());
      ChainDone();
    }
  }

  // A reader: the whole log of every PG in turn, checked by content, until
  // every chain has ended.
  void Read(const std::vector<std::unique_ptr<Chain>>& chains) {
    while (!stop_readers_.load()) {
      for (const auto& c : chains) {
        const uint64_t acked = c->acked.load();  // before the read: it must see it
        auto r = store_->ReadEntries(Pg(c->pg));
        if (!r.ok()) {
          Fail("reader: PG " + std::to_string(c->pg) + ": " + r.status().ToString());
          return;
        }
        for (size_t i = 0; i < r->size(); ++i) {
          const LogEntry& e = (*r)[i];
          if ((i > 0 && e.version.version != (*r)[i - 1].version.version + 1) ||
              e.payload != Payload(c->pg, e.version.version)) {
            Fail("reader: PG " + std::to_string(c->pg) + ": entry " + e.version.ToString() +
                 " at index " + std::to_string(i) + " is out of order or not its own payload");
            return;
          }
        }
        if (acked > 0 && (r->empty() || r->back().version.version < acked)) {
          Fail("reader: PG " + std::to_string(c->pg) + ": acknowledged entry " +
               std::to_string(acked) + " missing from a later read");
          return;
        }
      }
    }
  }

  void Run(InCallback what) {
    in_callback_ = what;
    // A callback that reads waits for a write, and holds back every
    // callback after it: fewer transactions keep it as quick (its deadlock
    // came at the first callback).
    txns_ = what == InCallback::kSubmitThenRead ? std::max<uint64_t>(TxnsPerPg() / 4, 2)
                                                : TxnsPerPg();
    auto s = Store::Open(dev_, MetadataLocation::OwnDb(db_), StoreOptions());
    ASSERT_OK(s);
    store_ = *std::move(s);
    std::vector<std::unique_ptr<Chain>> chains;
    for (int i = 0; i < kPgs; ++i) {
      chains.push_back(std::make_unique<Chain>());
      chains.back()->pg = i;
    }
    {
      Watchdog dog(kDeadline, ModeName(GetParam()) + ": " + std::to_string(kPgs) +
                                  " chains of " + std::to_string(txns_) +
                                  " transactions whose callbacks submit, with readers");
      for (auto& c : chains) SubmitNext(c.get());
      std::vector<std::thread> readers;
      for (int i = 0; i < kReaders; ++i) readers.emplace_back([&] { Read(chains); });
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return chains_done_ == kPgs; });
      }
      stop_readers_.store(true);
      for (auto& t : readers) t.join();
      ASSERT_OK(store_->Sync());
    }
    ASSERT_EQ(error_, "");
    // Every chain ran to its end, and the store holds each PG's last kKeep
    // entries, before and after a reopen.
    for (int reopen = 0; reopen < 2; ++reopen) {
      for (const auto& c : chains) {
        ASSERT_EQ(c->acked.load(), txns_) << "PG " << c->pg;
        auto r = store_->ReadEntries(Pg(c->pg));
        ASSERT_OK(r);
        ASSERT_EQ(r->size(), std::min(txns_, kKeep)) << "PG " << c->pg;
        for (const LogEntry& e : *r) EXPECT_EQ(e.payload, Payload(c->pg, e.version.version));
        EXPECT_EQ(r->back().version, V(txns_));
      }
      ASSERT_OK(store_->Close());
      store_.reset();
      if (reopen == 0) {
        auto s2 = Store::Open(dev_, MetadataLocation::OwnDb(db_), StoreOptions());
        ASSERT_OK(s2);
        store_ = *std::move(s2);
      }
    }
  }

  TempDir dir_;
  const std::string dev_ = dir_.Join("partition");
  const std::string db_ = dir_.Join("db");
  std::unique_ptr<Store> store_;
  InCallback in_callback_ = InCallback::kSubmitOnly;
  uint64_t txns_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  int chains_done_ = 0;
  std::string error_;
  std::atomic<bool> stop_readers_{false};
};

// The issue's case: callbacks submit while readers of the same PGs wait for
// ring writes in flight.
TEST_P(CallbackThreadTest, CallbacksThatSubmitNeverDeadlockWithReaders) {
  Run(InCallback::kSubmitOnly);
}

// A callback that reads the entry it has just submitted waits for that
// entry's ring write: on the completion thread it would wait on itself.
TEST_P(CallbackThreadTest, CallbacksThatSubmitAndReadNeverWaitOnThemselves) {
  Run(InCallback::kSubmitThenRead);
}

INSTANTIATE_TEST_SUITE_P(Modes, CallbackThreadTest,
                         ::testing::Values(DurabilityMode::kSyncEach,
                                           DurabilityMode::kGroupCommit,
                                           DurabilityMode::kUnsynced),
                         [](const auto& i) { return ModeName(i.param); });

}  // namespace
}  // namespace pgring::testing
