// I/O errors at the store level (issue 14, item 4): a partition write, flush
// or read, or a RocksDB WAL append or sync, fails with EIO in the middle of a
// random workload of transactions over a few PGs (appends, info, dups, trims,
// rewinds, resets, creates and removals), in every store mode (the RocksDB
// backend; the ring with per-PG rings; the ring behind the log stream) and
// every durability mode. For each fault, at several points of the workload:
//
//  (a) the transaction that hit the fault gets a non-OK status whose message
//      names the operation that failed (the store adds it: the injected
//      error says only "Input/output error");
//  (b) callbacks in submission order are OK...OK then failed...failed:
//      nothing depending on the failed I/O, and nothing submitted after it,
//      is acknowledged OK. The failure is sticky: Submit returns
//      kFailedPrecondition naming the first error and calls no callback,
//      Sync returns the error. Reads answer what was submitted or fail,
//      never with other data. A read error fails only that read;
//  (c) Close returns (a Watchdog turns a hang into a failure with every
//      thread's stack);
//  (d) a reopen with the fault removed finds the state after some prefix of
//      the submitted transactions that holds every one acknowledged OK
//      (kUnsynced: every one before the last Sync() that returned OK),
//      byte-exact per the model (LogModel::Diff, and ranged reads at
//      random bounds), with every chunk owned once; the store then takes
//      new transactions. Rounds cycle through three reopens: after a power
//      loss that keeps a random part of what was not flushed/synced; after
//      one that drops all of it, in the round whose fault leaves the device
//      or WAL dead (a failed flush or sync made nothing durable: whatever
//      the store acknowledged on one is lost there); after a process
//      restart (what reached the partition and the RocksDB files stays, so
//      the state may go past the last acknowledgement). Even rounds fail
//      one call (the device works again after: the store must stay failed
//      anyway), odd rounds every call from the fault point on.
//
// A read error (kInternal, "Input/output error") fails the read or the
// open with the device's error, never as damage (kDataLoss); at open it
// says what was read (the label, a PG's ring, the stream), whatever the
// recovery policy (kMarkDamaged must not mark a PG for it), and changes
// nothing: the next open finds every committed transaction.
//
// QueuedWriteErrorTest holds writes (the fault device completes writes
// inline, so the random workload never has two in flight): a ring write
// fails while the PG's next write is queued behind it and then succeeds,
// and reads of what the failed write carried get its error, not the hole;
// a PG's write fails while another PG's is held, and Close waits for the
// held one (its completion calls into the store).
//
// The partition is the in-memory FaultInjectionDevice (FailOps); RocksDB is
// real, in a temporary directory, through FaultInjectionFileSystem
// (FailAppends/FailSyncs on the WAL, "*.log"): PowerLossRig. At the end one
// line "CAMPAIGN io_error: ..." gives the totals. PGRING_IO_ERROR_ROUNDS
// (default 3) sets the fault points per case; the long form
// (tests/campaigns/run_campaigns.sh --long io_errors) runs 60.
#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device/fault_injection_device.h"
#include "util/log_model.h"
#include "util/campaign_tally.h"
#include "util/held_write_device.h"
#include "util/power_loss_rig.h"
#include "util/random_workload.h"
#include "util/sync.h"
#include "util/test_util.h"
#include "util/watchdog.h"

namespace pgring::testing {
namespace {

using OpKind = FaultInjectionDevice::OpKind;

enum class Fault {
  kPartitionWrite,       // a ring, home or stream write fails
  kPartitionFlush,       // a partition flush (fdatasync) fails
  kPartitionRead,        // reads of the partition fail (ReadEntries & co.)
  kPartitionReadAtOpen,  // a read at open (label, stream, rings) fails
  kRocksDbWalWrite,      // an append to RocksDB's WAL fails
  kRocksDbWalSync,       // a sync of RocksDB's WAL fails
};

std::string FaultName(Fault f) {
  switch (f) {
    case Fault::kPartitionWrite: return "PartitionWrite";
    case Fault::kPartitionFlush: return "PartitionFlush";
    case Fault::kPartitionRead: return "PartitionRead";
    case Fault::kPartitionReadAtOpen: return "PartitionReadAtOpen";
    case Fault::kRocksDbWalWrite: return "RocksDbWalWrite";
    case Fault::kRocksDbWalSync: return "RocksDbWalSync";
  }
  return "?";
}

std::string DurabilityName(DurabilityMode m) {
  switch (m) {
    case DurabilityMode::kSyncEach: return "SyncEach";
    case DurabilityMode::kGroupCommit: return "Group";
    case DurabilityMode::kUnsynced: return "Unsynced";
  }
  return "?";
}

// Faults that fail the store (sticky) rather than one read.
bool FailsStore(Fault f) {
  return f != Fault::kPartitionRead && f != Fault::kPartitionReadAtOpen;
}

// What the message of the first failed transaction must name.
std::vector<std::string> ExpectedOpNames(Fault f) {
  switch (f) {
    case Fault::kPartitionWrite: return {"ring write", "log stream write"};
    // The stream's writes are write-through (durable when done) where the
    // gates do not share the flush: their flush fails with them.
    case Fault::kPartitionFlush: return {"partition flush", "write-through flush"};
    case Fault::kRocksDbWalWrite:
    case Fault::kRocksDbWalSync: return {"RocksDB write"};
    default: return {};
  }
}

// The error the device reports: EIO's code, and no word of what failed.
absl::Status InjectedEio() { return absl::InternalError("Input/output error (injected)"); }

int Rounds() {
  const char* e = std::getenv("PGRING_IO_ERROR_ROUNDS");
  int n = e != nullptr ? std::atoi(e) : 3;
  return n > 0 ? n : 3;
}

struct Case {
  StoreMode store;
  DurabilityMode durability;
  Fault fault;
  uint64_t seed;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& i) {
  return StoreModeName(i.param.store) + "_" + DurabilityName(i.param.durability) + "_" +
         FaultName(i.param.fault);
}

// Figures of the whole run, printed once at the end ("CAMPAIGN io_error:").
struct Tally {
  std::mutex mu;
  uint64_t rounds = 0, store_failures = 0, txns_submitted = 0, acked_then_checked = 0;
  uint64_t failed_txns = 0, recovered_beyond_ack = 0, refused_submits = 0;
  uint64_t read_errors = 0, open_read_errors = 0, opens_past_fault = 0;
  uint64_t restarts[3] = {};
};
Tally& GlobalTally() { return TallyOf<Tally>(); }

void PrintTally(const Tally& t) {
  if (t.rounds == 0) return;
  std::printf("CAMPAIGN io_error: rounds=%llu store_failures=%llu txns_submitted=%llu "
              "failed_txns=%llu refused_submits=%llu acked_txns_checked=%llu "
              "recovered_beyond_ack=%llu read_errors=%llu open_read_errors=%llu "
              "opens_past_fault=%llu restarts{process=%llu,power_drop=%llu,"
              "power_random=%llu}\n",
              (unsigned long long)t.rounds, (unsigned long long)t.store_failures,
              (unsigned long long)t.txns_submitted, (unsigned long long)t.failed_txns,
              (unsigned long long)t.refused_submits, (unsigned long long)t.acked_then_checked,
              (unsigned long long)t.recovered_beyond_ack, (unsigned long long)t.read_errors,
              (unsigned long long)t.open_read_errors, (unsigned long long)t.opens_past_fault,
              (unsigned long long)t.restarts[0], (unsigned long long)t.restarts[1],
              (unsigned long long)t.restarts[2]);
}
[[maybe_unused]] const bool kTallyPrinted = PrintTallyAtEnd<Tally>(PrintTally);

// The embedder's key every transaction of a round writes, with its number.
constexpr char kSeqKey[] = "osd.seq";

// How a round reopens the store after its fault.
enum class Restart { kProcess, kPowerLossDrop, kPowerLossRandom };

class IoErrorTest : public ::testing::TestWithParam<Case> {
 protected:
  static constexpr std::chrono::seconds kDeadline{120};
  static constexpr size_t kMaxRoundTxns = 150;

  IoErrorTest() : model_(StoreOptions().limits), rng_(GetParam().seed * 7919 + 1) {
    WorkloadParams wp;
    wp.max_pgs = 5;
    wp.keep_entries = 30;
    wp.keep_dups = 20;
    wp.max_payload = 400;
    wp.large_payload_rate = 0.03;
    work_ = std::make_unique<RandomWorkload>(GetParam().seed, wp);
  }

  Options StoreOptions() const {
    Options o;
    o.durability = GetParam().durability;
    SetLayout(GetParam().store, &o);
    o.log_sink = NullLogSink();
    o.reserve_chunks_per_pg = 1;
    o.unsynced_max_delay = std::chrono::milliseconds(5);
    o.limits.max_payload_bytes = 64 << 10;
    // A small stream that homes a block at a time and force-homes early: the
    // faults fall on stream writes, home writes and forced homes.
    o.stream.max_chunks = 2;
    o.stream.home_bytes = 4096;
    o.stream.force_home_percent = 5;
    o.stream.max_forced_homes = 2;
    return o;
  }

  void SetUp() override {
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    m.backend = BackendOf(GetParam().store);
    ASSERT_OK(rig_.Mkfs(m));
    ASSERT_OK(rig_.Open(StoreOptions()));
  }

  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }

  // Schedules the round's fault (not kPartitionReadAtOpen: see ReadAtOpen).
  void Arm(int round) {
    FaultInjectionDevice* dev = rig_.crash_device();
    // Even rounds: one failed call, after which the device or file works
    // again (the store must stay failed anyway); odd rounds: it stays dead.
    const uint64_t count = round % 2 == 0 ? 1 : UINT64_MAX;
    switch (GetParam().fault) {
      case Fault::kPartitionWrite:
        dev->FailOps(OpKind::kWrite, Uniform(0, 24), count, InjectedEio());
        break;
      case Fault::kPartitionFlush:
        dev->FailOps(OpKind::kFlush, Uniform(0, 6), count, InjectedEio());
        break;
      case Fault::kPartitionRead:
        dev->FailOps(OpKind::kRead, Uniform(0, 6), Uniform(1, 3), InjectedEio());
        break;
      case Fault::kRocksDbWalWrite:
        rig_.fs()->FailAppends(Uniform(0, 6), count, ".log");
        break;
      case Fault::kRocksDbWalSync:
        rig_.fs()->FailSyncs(Uniform(0, 6), count, ".log");
        break;
      case Fault::kPartitionReadAtOpen:
        break;
    }
  }

  void Disarm() {
    FaultInjectionDevice* dev = rig_.crash_device();
    for (OpKind k : {OpKind::kRead, OpKind::kWrite, OpKind::kFlush}) {
      dev->FailOps(k, 0, 0, absl::OkStatus());
    }
    rig_.fs()->FailAppends(0, 0);
    rig_.fs()->FailSyncs(0, 0);
  }

  // Reads every PG the model has and compares. Before a failure every read
  // must match; otherwise a read may also fail (non-OK), but never answer
  // other data. Returns the number of failed reads.
  int CheckReads(const LogModel& want, bool may_fail, const std::string& what) {
    Store* store = rig_.store();
    int failed = 0;
    auto bad = [&](const absl::Status& s, const char* call, const PgId& id) {
      if (may_fail) {
        // An I/O error, told as one: not as damage on the disk.
        EXPECT_FALSE(absl::IsDataLoss(s)) << what << ": " << call << "(" << id.ToString()
                                          << ") took an I/O error for damage: " << s;
        EXPECT_NE(s.message().find("Input/output error"), std::string_view::npos)
            << what << ": " << call << "(" << id.ToString() << ") lost the device's error: " << s;
        ++failed;
        return;
      }
      ADD_FAILURE() << what << ": " << call << "(" << id.ToString() << "): " << s;
    };
    for (const auto& [id, pg] : want.pgs()) {
      auto e = store->ReadEntries(id);
      if (!e.ok()) {
        bad(e.status(), "ReadEntries", id);
      } else {
        std::vector<LogEntry> m;
        for (const auto& [v, p] : pg.entries) m.push_back(LogEntry{v, p});
        EXPECT_TRUE(*e == m) << what << ": ReadEntries(" << id.ToString() << ") returned "
                             << e->size() << " entries, not the " << m.size() << " submitted";
      }
      // A ranged read at random bounds (the mapping table's lookup).
      if (!pg.entries.empty()) {
        auto lo = std::next(pg.entries.begin(), Uniform(0, pg.entries.size() - 1));
        auto hi = std::next(lo, Uniform(0, std::distance(lo, pg.entries.end()) - 1));
        auto r = store->ReadEntries(id, lo->first, hi->first);
        if (!r.ok()) {
          bad(r.status(), "ReadEntries(range)", id);
        } else {
          std::vector<LogEntry> m;
          for (auto it = lo; it != std::next(hi); ++it) m.push_back(LogEntry{it->first, it->second});
          EXPECT_TRUE(*r == m) << what << ": ReadEntries(" << id.ToString() << ", "
                               << lo->first.ToString() << ", " << hi->first.ToString()
                               << ") differs from the model";
        }
      }
      auto d = store->ReadDups(id);
      if (!d.ok()) {
        bad(d.status(), "ReadDups", id);
      } else {
        std::vector<LogEntry> m;
        for (const auto& [v, p] : pg.dups) m.push_back(LogEntry{v, p});
        EXPECT_TRUE(*d == m) << what << ": ReadDups(" << id.ToString() << ") differs";
      }
      auto info = store->ReadInfo(id);
      if (pg.info) {
        if (!info.ok()) {
          if (absl::IsNotFound(info.status())) {
            ADD_FAILURE() << what << ": ReadInfo(" << id.ToString() << ") lost the info";
          } else {
            bad(info.status(), "ReadInfo", id);
          }
        } else {
          EXPECT_EQ(*info, *pg.info) << what << ": ReadInfo(" << id.ToString() << ") differs";
        }
      } else {
        EXPECT_TRUE(absl::IsNotFound(info.status()))
            << what << ": ReadInfo(" << id.ToString() << ") has an info the model lacks: "
            << info.status();
      }
    }
    return failed;
  }

  // One round: the workload runs until the armed fault fails the store (or,
  // for read faults, for a while), then the checks (a)-(c). Returns in
  // `*durable` how many of the round's transactions must survive, and fills
  // `snapshots_` with the model after each submitted transaction.
  void RunWorkload(int round, size_t* durable) {
    const Case& c = GetParam();
    const bool unsynced = c.durability == DurabilityMode::kUnsynced;
    const std::string what = "round " + std::to_string(round);
    Store* store = rig_.store();
    snapshots_.clear();
    snapshots_.emplace_back(0, model_);
    std::vector<absl::Status> results;  // per submitted transaction
    size_t submitted = 0;
    *durable = 0;
    absl::Status failure;  // the first error the store reported
    int read_failures = 0;
    const size_t read_round_txns = 40;
    while (submitted < kMaxRoundTxns) {
      if (!FailsStore(c.fault) && submitted >= read_round_txns) break;
      const int depth = 1 + static_cast<int>(Uniform(0, 3));
      std::vector<std::unique_ptr<pgring::Notification>> done;
      std::vector<std::shared_ptr<absl::Status>> res;
      bool refused = false;
      for (int d = 0; d < depth; ++d) {
        Transaction t = work_->Next(model_);
        // The embedder's key naming the transaction: no two prefixes of
        // the submission order look alike (see VerifyRecovered).
        t.batch()->Put(kSeqKey, std::to_string(++seq_));
        LogModel next = model_;
        if (next.Apply(t) != absl::StatusCode::kOk) continue;  // valid ones only
        auto n = std::make_unique<pgring::Notification>();
        auto r = std::make_shared<absl::Status>(absl::UnknownError("callback not called"));
        absl::Status s = store->Submit(std::move(t), [n = n.get(), r](absl::Status st) {
          *r = st;
          n->Notify();
        });
        if (!s.ok()) {
          // Only a failed store refuses a valid transaction.
          EXPECT_TRUE(absl::IsFailedPrecondition(s)) << what << ": Submit: " << s;
          if (failure.ok()) failure = s;
          refused = true;
          break;
        }
        done.push_back(std::move(n));
        res.push_back(r);
        model_ = std::move(next);
        ++submitted;
        snapshots_.emplace_back(submitted, model_);
      }
      const size_t first = submitted - done.size();
      for (size_t d = 0; d < done.size(); ++d) {
        done[d]->WaitForNotification();
        results.push_back(*res[d]);
        if (!res[d]->ok() && failure.ok()) failure = *res[d];
        // A durable mode's OK promises the transaction (and every one
        // before it) survives whatever comes after.
        if (!unsynced && res[d]->ok()) *durable = std::max(*durable, first + d + 1);
      }
      if (unsynced && failure.ok() && Uniform(0, 2) == 0) {
        absl::Status s = store->Sync();
        if (s.ok()) {
          *durable = submitted;
        } else {
          failure = s;
        }
      }
      // Reads reflect every submitted transaction.
      read_failures += CheckReads(model_, c.fault == Fault::kPartitionRead || !failure.ok(), what);
      if (refused || !failure.ok()) break;
      while (snapshots_.size() > 1 && snapshots_.front().first < *durable) snapshots_.pop_front();
    }
    {
      Tally& t = GlobalTally();
      std::lock_guard<std::mutex> l(t.mu);
      ++t.rounds;
      t.txns_submitted += submitted;
      t.read_errors += read_failures;
      if (FailsStore(c.fault) && !failure.ok()) ++t.store_failures;
      for (const absl::Status& r : results) t.failed_txns += !r.ok();
    }
    if (!FailsStore(c.fault)) {
      // A read error fails that read alone: every commit went through.
      EXPECT_TRUE(failure.ok()) << what << ": a read error failed the store: " << failure;
      EXPECT_GT(read_failures, 0) << what << ": the injected read error never reached a read";
      Disarm();
      CheckReads(model_, false, what + ", reads after the read errors");
      ASSERT_OK(store->Sync());
      *durable = submitted;
      return;
    }
    if (failure.ok()) {
      // The store never saw the fault (or ignored it): still check what a
      // reopen finds of what it acknowledged.
      ADD_FAILURE() << what << ": the fault never failed the store in " << submitted
                    << " transactions";
      return;
    }
    // (a) The first failed transaction names what failed. In kUnsynced every
    // transaction may have been acknowledged before the commit that failed:
    // then the first Sync or Submit to report the failure names it.
    auto first_failed = std::find_if(results.begin(), results.end(),
                                     [](const absl::Status& s) { return !s.ok(); });
    if (!unsynced) {
      ASSERT_NE(first_failed, results.end())
          << what << ": the store failed (" << failure << ") but no transaction did";
    }
    const absl::Status root = first_failed != results.end() ? *first_failed : failure;
    if (first_failed != results.end()) {
      EXPECT_FALSE(absl::IsFailedPrecondition(root)) << what << ": " << root;
    }
    std::string op_named;
    for (const std::string& op : ExpectedOpNames(c.fault)) {
      if (root.message().find(op) != std::string_view::npos) op_named = op;
    }
    EXPECT_NE(op_named, "") << what << ": the failure does not name the failed operation ("
                            << ExpectedOpNames(c.fault).front() << "): " << root;
    EXPECT_NE(root.message().find("Input/output error"), std::string_view::npos)
        << what << ": the device's error is lost: " << root;
    // (b) In submission order: OK...OK, then failed...failed.
    for (auto it = first_failed; it != results.end(); ++it) {
      EXPECT_FALSE(it->ok()) << what << ": transaction " << (it - results.begin())
                             << " acknowledged OK after transaction "
                             << (first_failed - results.begin()) << " failed with " << root;
    }
    // (b) Sticky: every later Submit is refused, naming the failure, and
    // calls no callback; Sync reports the failure.
    auto names_cause = [&](const absl::Status& s) {
      return s.message().find(op_named) != std::string_view::npos &&
             s.message().find("Input/output error") != std::string_view::npos;
    };
    for (int i = 0; i < 3; ++i) {
      Transaction t = work_->Next(model_);
      LogModel next = model_;
      if (next.Apply(t) != absl::StatusCode::kOk) continue;
      auto called = std::make_shared<std::atomic<bool>>(false);
      absl::Status s = store->Submit(std::move(t), [called](absl::Status) { *called = true; });
      EXPECT_TRUE(absl::IsFailedPrecondition(s)) << what << ": Submit after the failure: " << s;
      EXPECT_TRUE(names_cause(s)) << what << ": Submit's refusal does not name the failure ("
                                  << root << "): " << s;
      EXPECT_FALSE(*called) << what << ": a refused Submit called its callback";
      std::lock_guard<std::mutex> l(GlobalTally().mu);
      ++GlobalTally().refused_submits;
    }
    absl::Status sync = store->Sync();
    EXPECT_FALSE(sync.ok()) << what << ": Sync after the failure";
    EXPECT_TRUE(names_cause(sync)) << what << ": Sync does not report the failure (" << root
                                    << "): " << sync;
    // Reads still answer what was submitted, or fail.
    CheckReads(model_, true, what + ", after the failure");
  }

  // The embedder's keys in the store's RocksDB ("osd." ones), read with
  // the store closed; the store is opened again after.
  std::map<std::string, std::string> EmbedderKeys() {
    std::map<std::string, std::string> kv;
    EXPECT_OK(rig_.Close());  // a store that recovered closes cleanly
    auto db = rig_.OpenDbReadOnly();
    EXPECT_OK(db.status());
    if (db.ok()) {
      std::unique_ptr<rocksdb::Iterator> it((*db)->NewIterator(rocksdb::ReadOptions()));
      for (it->Seek("osd."); it->Valid() && it->key().starts_with("osd."); it->Next()) {
        kv[it->key().ToString()] = it->value().ToString();
      }
    }
    EXPECT_OK(rig_.Open(StoreOptions()));
    return kv;
  }

  // (d): the recovered state is the model after a prefix of the round's
  // submitted transactions covering the first `durable`: what a reader sees
  // (LogModel::Diff) and the embedder's keys, committed in the same batches
  // (which also tell prefixes apart that a reader cannot: a transaction can
  // change only a PG's version floor, e.g. a rewind to a version no entry
  // has).
  void VerifyRecovered(size_t durable, const std::string& what) {
    std::string diffs;
    std::vector<const std::pair<size_t, LogModel>*> candidates;
    for (const auto& snap : snapshots_) {
      if (snap.first < durable) continue;
      std::string d = snap.second.Diff(*rig_.store());
      if (d.empty()) {
        candidates.push_back(&snap);
      } else {
        diffs += "\n  vs state after " + std::to_string(snap.first) + " txns: " + d;
      }
    }
    ASSERT_FALSE(candidates.empty()) << what << ": the recovered state is no prefix holding the "
                                     << durable << " acknowledged transactions:" << diffs;
    const std::map<std::string, std::string> kv = EmbedderKeys();
    if (HasFatalFailure()) return;
    const std::pair<size_t, LogModel>* found = nullptr;
    for (const auto* c : candidates) {
      if (c->second.kv() == kv) found = c;
    }
    ASSERT_NE(found, nullptr) << what << ": the embedder's keys are from no prefix the logs match ("
                              << kSeqKey << " = " << (kv.count(kSeqKey) ? kv.at(kSeqKey) : "none")
                              << ", logs match " << candidates.size() << " prefixes from "
                              << candidates.front()->first << ")";
    const size_t match_index = found->first;
    model_ = found->second;
    Store* store = rig_.store();
    {
      Tally& t = GlobalTally();
      std::lock_guard<std::mutex> l(t.mu);
      t.acked_then_checked += durable;
      t.recovered_beyond_ack += match_index - durable;
    }
    // Chunks: owned once (open checks it) and none leaked.
    auto pgs = store->ListPgs();
    ASSERT_OK(pgs);
    if (BackendOf(GetParam().store) == Backend::kRing) {
      uint64_t owned = 0;
      for (const auto& id : *pgs) owned += store->GetPgStats(id)->chunks;
      StoreStats st = store->GetStoreStats();
      ASSERT_EQ(owned + st.stream_chunks + st.free_chunks, st.total_chunks) << what;
    }
    CheckReads(model_, false, what + ", after the reopen");
  }

  // A read error at open: the open fails with the device's error (or opens
  // before reaching it), changes nothing; without it the store opens whole.
  void ReadAtOpen(int round) {
    const std::string what = "round " + std::to_string(round) + " (read error at open)";
    // Some committed transactions first, then a clean close.
    for (int i = 0; i < 12; ++i) {
      Transaction t = work_->Next(model_);
      LogModel next = model_;
      if (next.Apply(t) != absl::StatusCode::kOk) continue;
      ASSERT_OK(rig_.store()->Commit(std::move(t)));
      model_ = std::move(next);
    }
    ASSERT_OK(rig_.store()->Sync());
    Options o = StoreOptions();
    // A read error is no damage: kMarkDamaged must fail the open too.
    o.recovery_policy = round % 2 == 0 ? RecoveryPolicy::kRefuse : RecoveryPolicy::kMarkDamaged;
    const uint64_t skip = Uniform(0, 6);
    for (uint64_t k = 0; k <= skip; ++k) {
      SCOPED_TRACE(what + ", skip " + std::to_string(k));
      rig_.crash_device()->FailOps(OpKind::kRead, k, round % 2 == 0 ? 1 : UINT64_MAX,
                                   InjectedEio());
      absl::Status s;
      {
        Watchdog dog(kDeadline, what + ": open");
        s = rig_.Open(o);
      }
      Disarm();
      {
        std::lock_guard<std::mutex> l(GlobalTally().mu);
        ++(s.ok() ? GlobalTally().opens_past_fault : GlobalTally().open_read_errors);
      }
      if (s.ok()) {
        // The error fell after open's reads: the store must be whole.
        std::string d = model_.Diff(*rig_.store());
        ASSERT_EQ(d, "") << what;
        auto pgs = rig_.store()->ListPgs();
        ASSERT_OK(pgs);
        for (const PgId& id : *pgs) {
          EXPECT_FALSE(rig_.store()->GetPgStats(id)->damaged)
              << what << ": PG " << id.ToString() << " marked damaged by a read error";
        }
        break;
      }
      EXPECT_FALSE(absl::IsDataLoss(s)) << what << ": a read error reported as damage: " << s;
      // It says what open was reading: the label, a PG's ring, the stream.
      bool says_what = false;
      for (const char* part : {": reading the label", "PG ", "log stream"}) {
        says_what |= s.message().find(part) != std::string_view::npos;
      }
      EXPECT_TRUE(says_what) << what << ": open's error does not say what it read: " << s;
      EXPECT_NE(s.message().find("Input/output error"), std::string_view::npos)
          << what << ": open's error does not carry the device's: " << s;
    }
    Disarm();
    {
      Watchdog dog(kDeadline, what + ": reopen");
      ASSERT_OK(rig_.Open(StoreOptions()));
    }
    ASSERT_EQ(model_.Diff(*rig_.store()), "") << what;
    CheckReads(model_, false, what + ", after the reopen");
  }

  PowerLossRig rig_;
  LogModel model_;
  std::mt19937_64 rng_;
  std::unique_ptr<RandomWorkload> work_;
  std::deque<std::pair<size_t, LogModel>> snapshots_;
  uint64_t seq_ = 0;  // the last kSeqKey value submitted
};

TEST_P(IoErrorTest, FailedIoAcknowledgesNothingAndReopenRecovers) {
  const Case& c = GetParam();
  const int rounds = Rounds();
  for (int round = 0; round < rounds; ++round) {
    const std::string what = "round " + std::to_string(round);
    SCOPED_TRACE(what);
    if (c.fault == Fault::kPartitionReadAtOpen) {
      ReadAtOpen(round);
      if (HasFatalFailure()) return;
      continue;
    }
    Arm(round);
    size_t durable = 0;
    {
      Watchdog dog(kDeadline, what + ": workload with " + FaultName(c.fault));
      RunWorkload(round, &durable);
    }
    if (HasFatalFailure()) return;
    // (c) Close returns.
    {
      Watchdog dog(kDeadline, what + ": Close after " + FaultName(c.fault));
      absl::Status s = rig_.store()->Close();
      if (FailsStore(c.fault)) EXPECT_FALSE(s.ok()) << what << ": Close of a failed store";
    }
    Disarm();
    // Round 1's fault leaves the device or file dead (Arm): a power loss
    // that drops what was not flushed then takes whatever the store
    // acknowledged on the failed flushes or syncs.
    constexpr Restart kRestarts[] = {Restart::kPowerLossRandom, Restart::kPowerLossDrop,
                                     Restart::kProcess};
    const Restart restart = kRestarts[round % 3];
    {
      std::lock_guard<std::mutex> l(GlobalTally().mu);
      ++GlobalTally().restarts[static_cast<int>(restart)];
    }
    {
      Watchdog dog(kDeadline, what + ": reopen");
      switch (restart) {
        case Restart::kProcess:
          break;
        case Restart::kPowerLossDrop:
          ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kDropUnflushed));
          break;
        case Restart::kPowerLossRandom:
          ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kRandomPerBlock));
          break;
      }
      absl::Status s = rig_.Open(StoreOptions());
      ASSERT_TRUE(s.ok()) << what << ": reopen after the fault (restart "
                          << static_cast<int>(restart) << "): " << s;
    }
    VerifyRecovered(durable, what + " (restart " + std::to_string(static_cast<int>(restart)) + ")");
    if (HasFatalFailure()) return;
  }
  // The store takes new transactions, and keeps them across a clean reopen.
  for (int i = 0; i < 10; ++i) {
    Transaction t = work_->Next(model_);
    LogModel next = model_;
    if (next.Apply(t) != absl::StatusCode::kOk) continue;
    ASSERT_OK(rig_.store()->Commit(std::move(t)));
    model_ = std::move(next);
  }
  ASSERT_OK(rig_.store()->Sync());
  ASSERT_OK(rig_.store()->Close());
  ASSERT_OK(rig_.Open(StoreOptions()));
  ASSERT_EQ(model_.Diff(*rig_.store()), "");
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  uint64_t seed = 1;
  for (StoreMode store : {StoreMode::kRing, StoreMode::kRingStream, StoreMode::kRocksDb}) {
    for (DurabilityMode d : {DurabilityMode::kSyncEach, DurabilityMode::kGroupCommit,
                             DurabilityMode::kUnsynced}) {
      for (Fault f : {Fault::kPartitionWrite, Fault::kPartitionFlush, Fault::kPartitionRead,
                      Fault::kPartitionReadAtOpen, Fault::kRocksDbWalWrite,
                      Fault::kRocksDbWalSync}) {
        // The RocksDB backend writes, flushes and reads nothing of the
        // partition after open (its label, read at open, is all it has).
        if (store == StoreMode::kRocksDb &&
            (f == Fault::kPartitionWrite || f == Fault::kPartitionFlush ||
             f == Fault::kPartitionRead)) {
          continue;
        }
        out.push_back(Case{store, d, f, seed++});
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Faults, IoErrorTest, ::testing::ValuesIn(Cases()), CaseName);

// A write that fails while later writes of the same PG are queued behind it
// (a real device completes writes later, on another thread; the fault
// device completes them inline, so the workload above never has two writes
// of one PG in flight). The PG's next write then succeeds, after the hole
// the failed one left: a read of the entries the failed write carried must
// fail with the write's error, not read the hole and call it damage
// (kDataLoss) or, worse, answer something else.
class QueuedWriteErrorTest : public ::testing::TestWithParam<StoreMode> {};

TEST_P(QueuedWriteErrorTest, ReadsOfAFailedWriteFailWithItsError) {
  std::shared_ptr<HeldWriteDevice> holder;
  PowerLossRig rig(16 << 20, [&](std::shared_ptr<BlockDevice> base) {
    holder = std::make_shared<HeldWriteDevice>(std::move(base));
    return holder;
  });
  MkfsOptions m;
  m.chunk_size = 64 << 10;
  ASSERT_OK(rig.Mkfs(m));
  Options o;
  SetLayout(GetParam(), &o);
  o.log_sink = NullLogSink();
  o.reserve_chunks_per_pg = 1;
  ASSERT_OK(rig.Open(o));
  Store* store = rig.store();
  const PgId pg{1, 1, -1};
  auto payload = [](uint64_t v) { return std::string(3000, static_cast<char>('a' + v % 26)); };
  {
    Transaction t;
    t.CreatePg(pg);
    for (uint64_t v = 1; v <= 4; ++v) t.AppendEntry(pg, Version{1, v}, payload(v));
    ASSERT_OK(store->Commit(std::move(t)));
  }
  // T1 writes several blocks and its write is held; T2, queued behind it on
  // the same PG, writes after T1's blocks.
  holder->HoldNextWrite();
  Watchdog dog(std::chrono::seconds(120), "a held write that fails");
  pgring::Notification n1, n2;
  absl::Status r1, r2;
  {
    Transaction t;
    for (uint64_t v = 5; v <= 9; ++v) t.AppendEntry(pg, Version{1, v}, payload(v));
    ASSERT_OK(store->Submit(std::move(t), [&](absl::Status s) {
      r1 = s;
      n1.Notify();
    }));
  }
  {
    Transaction t;
    t.AppendEntry(pg, Version{1, 10}, payload(10));
    ASSERT_OK(store->Submit(std::move(t), [&](absl::Status s) {
      r2 = s;
      n2.Notify();
    }));
  }
  // Issued by Submit in per-PG rings, by the commit thread in the stream
  // layout.
  holder->WaitUntilHeld();
  holder->FailHeldWrite(InjectedEio());
  n1.WaitForNotification();
  n2.WaitForNotification();
  EXPECT_FALSE(r1.ok());
  EXPECT_FALSE(r2.ok());
  auto e = store->ReadEntries(pg);
  if (e.ok()) {
    // What was submitted, and nothing else.
    ASSERT_EQ(e->size(), 10u);
    for (const LogEntry& le : *e) EXPECT_EQ(le.payload, payload(le.version.version));
  } else {
    EXPECT_FALSE(absl::IsDataLoss(e.status()))
        << "a read of entries whose write failed calls it damage: " << e.status();
    EXPECT_NE(e.status().message().find("ring write"), std::string_view::npos) << e.status();
    EXPECT_NE(e.status().message().find("Input/output error"), std::string_view::npos)
        << e.status();
  }
  // What was committed before reads back whole, or fails the same way: a
  // read waits for every write of the PG before the bytes it finds in
  // memory, the failed one included (behind the stream, the failed write
  // may even be the first of the block holding the last committed entries,
  // which besides it only the stream holds). Until the reopen.
  auto first = store->ReadEntries(pg, Version{1, 1}, Version{1, 4});
  if (first.ok()) {
    ASSERT_EQ(first->size(), 4u);
    for (const LogEntry& le : *first) EXPECT_EQ(le.payload, payload(le.version.version));
  } else {
    EXPECT_FALSE(absl::IsDataLoss(first.status())) << first.status();
    EXPECT_NE(first.status().message().find("ring write"), std::string_view::npos)
        << first.status();
  }
  store->Close().IgnoreError();
  ASSERT_OK(rig.Open(o));
  auto after = rig.store()->ReadEntries(pg);
  ASSERT_OK(after);
  ASSERT_EQ(after->size(), 4u);
  for (const LogEntry& le : *after) EXPECT_EQ(le.payload, payload(le.version.version));
}

// The store fails (a write of one PG fails) while a write of another PG is
// still in flight: Close must wait for it. Its completion calls back into
// the store, which must still be there (returning first let the caller
// destroy the store under the device's completion).
TEST_P(QueuedWriteErrorTest, CloseWaitsForWritesInFlightWhenTheStoreFailed) {
  std::shared_ptr<HeldWriteDevice> holder;
  PowerLossRig rig(16 << 20, [&](std::shared_ptr<BlockDevice> base) {
    holder = std::make_shared<HeldWriteDevice>(std::move(base));
    return holder;
  });
  MkfsOptions m;
  m.chunk_size = 64 << 10;
  ASSERT_OK(rig.Mkfs(m));
  Options o;
  SetLayout(GetParam(), &o);
  o.stream.home_bytes = 2 * 4096;  // T2 homes its whole blocks at once
  o.log_sink = NullLogSink();
  ASSERT_OK(rig.Open(o));
  Store* store = rig.store();
  const PgId a{1, 1, -1}, b{1, 2, -1};
  {
    Transaction t;
    t.CreatePg(a);
    t.CreatePg(b);
    ASSERT_OK(store->Commit(std::move(t)));
  }
  Watchdog dog(std::chrono::seconds(120), "Close of a failed store with a write in flight");
  // T1 (PG a): its write is held (behind the stream: the stream's, which
  // the commit thread issued and waits for). T2 (PG b): its write fails
  // (behind the stream: the write homing its whole blocks, issued by Submit
  // at once; its stream record waits for T1's): the store has failed.
  // Behind the stream T2's callback comes once the commit thread's write
  // returns; with per-PG rings at once.
  holder->HoldNextWrite();
  pgring::Notification n1, n2;
  absl::Status r1, r2;
  {
    Transaction t;
    t.AppendEntry(a, Version{1, 1}, std::string(500, 'a'));
    ASSERT_OK(store->Submit(std::move(t), [&](absl::Status s) {
      r1 = s;
      n1.Notify();
    }));
  }
  holder->WaitUntilHeld();
  rig.crash_device()->FailOps(OpKind::kWrite, 0, 1, InjectedEio());
  {
    Transaction t;
    t.AppendEntry(b, Version{1, 1}, std::string(12000, 'b'));
    ASSERT_OK(store->Submit(std::move(t), [&](absl::Status s) {
      r2 = s;
      n2.Notify();
    }));
  }
  if (GetParam() == StoreMode::kRing) {
    n2.WaitForNotification();
    EXPECT_FALSE(r2.ok());
  }
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    store->Close().IgnoreError();
    closed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(closed.load()) << "Close returned while a write of the store was in flight";
  holder->ReleaseHeldWrite();
  closer.join();
  n1.WaitForNotification();
  EXPECT_FALSE(r1.ok());
  n2.WaitForNotification();
  EXPECT_FALSE(r2.ok());
  ASSERT_OK(rig.Open(o));
  EXPECT_EQ(rig.store()->ReadEntries(a)->size(), 0u);
  EXPECT_EQ(rig.store()->ReadEntries(b)->size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Layouts, QueuedWriteErrorTest,
                         ::testing::Values(StoreMode::kRing, StoreMode::kRingStream),
                         StoreModeParamName);

}  // namespace
}  // namespace pgring::testing
