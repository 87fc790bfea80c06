// Crash-consistency test: power loss injected at I/O points of random
// workloads, on the partition (unflushed writes dropped, kept, or chosen per
// logical block — which tears multi-block writes) and in RocksDB (unsynced
// WAL data dropped, through FaultInjectionFileSystem). After each crash the
// store must open and hold exactly the state after some prefix of the
// submitted transactions (and nothing partial: the embedder's keys come from
// the same prefix), with every chunk owned once and none leaked. The prefix
// must include, in the durable modes, every transaction whose callback had
// returned OK before the crash, in the batch the power went in too; in
// kUnsynced, every transaction before the last Sync() that returned OK.
// Nothing acknowledged is excused.
//
// Both backends: the ring with crash points at device I/O and at RocksDB
// syncs, the RocksDB backend at RocksDB syncs (it does no device I/O).
//
// Shared-flush cases (Options::gated_writes_share_flush): the log partition
// and an OSD data partition are two views of one fault-injecting device (one
// cache). Every transaction also writes a data block and waits for it with a
// CommitGate opened when the write completes, unflushed; the store's flush
// must make it durable. Besides the log state, every transaction in the
// recovered prefix must find its data block on the disk.
//
// Timing cases (issue 14, item 3; docs/RELIABILITY.md, "Real timing"): the
// same on the fault device's timed mode (writes complete out of order after
// delays, a flush covers only what completed before it began, the power
// goes with writes in flight and flushes in progress), at 512 and 4096-byte
// blocks and with 512-byte tears inside 4096-byte blocks, over every
// layout, tail-block policy and durability mode; same oracle.
//
// PGRING_CRASH_POINTS (default 24) sets how many crash points each case
// tries (a Timing case a sixth of them, at least 4); the long campaign raises it (see the README and
// docs/RELIABILITY.md, "2. Power loss"). PGRING_CRASH_TXNS (default 60) sets
// the length of each case's workload.
//
// Kinds of power loss: at the k-th device write/flush (ring cases), at the
// k-th RocksDB sync (WAL, MANIFEST, directory), and, for every fourth device
// point, at a write torn between logical blocks (TearNextWrite armed before
// the transaction the point maps to: the first multi-block write from there
// keeps 1-3 blocks, then the power goes). The crash image then drops, keeps,
// or chooses per block among the unflushed writes, and RocksDB's unsynced
// data is dropped whole or in part.
//
// Coverage tally: for each crash point, the kinds of operation in the
// transactions that were in flight (submitted, not yet known durable) when
// the power went, including chunk grow/shrink (a touched PG's chunk count
// rose or fell at staging). At the end of the run one line
// "CAMPAIGN power_loss: ..." gives the totals (a global test environment;
// with ctest, one line per test).
#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>

#include "util/sync.h"
#include "device/fault_injection_device.h"
#include "device/memory_block_device.h"
#include "store/open_store.h"
#include "util/fault_injection_fs.h"
#include "util/partition_view.h"
#include "util/campaign_tally.h"
#include "util/crash_rig.h"
#include "util/power_loss_rig.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/test_util.h"

namespace pgring::testing {

// Sanitizer builds run every thread several times slower (see the timed
// cases' dry run below).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizerSlowsThreads = true;
#else
constexpr bool kSanitizerSlowsThreads = false;
#endif
namespace {

int CrashPoints() {
  const char* e = std::getenv("PGRING_CRASH_POINTS");
  return e != nullptr ? std::atoi(e) : 24;
}

int CrashTxns() {
  const char* e = std::getenv("PGRING_CRASH_TXNS");
  int n = e != nullptr ? std::atoi(e) : 60;
  return n > 0 ? n : 60;
}

// Figures of the whole run, printed once at the end.
struct Tally {
  std::mutex mu;
  uint64_t cases = 0, points = 0, device_points = 0, torn_points = 0, rocksdb_points = 0;
  uint64_t tears_fired = 0, after_end = 0, recovered = 0, lost = 0;
  uint64_t restates = 0;  // the stream cleaner's, in the write-once cases
  uint64_t durable_checked = 0, txns_submitted = 0;
  // The timed device: crash points that fell with writes in flight (and how
  // many writes), and with a flush in progress.
  uint64_t timed_points = 0, points_writes_in_flight = 0, writes_in_flight = 0;
  uint64_t points_flush_in_progress = 0;
  uint64_t blocks_torn_inside = 0;  // the sub-block model's torn blocks
  std::array<uint64_t, kCrashTallyKinds> in_flight{};
  std::array<uint64_t, kCrashTallyKinds> submitted{};
};
Tally& GlobalTally() { return TallyOf<Tally>(); }

void PrintTally(const Tally& t) {
  if (t.cases == 0) return;
  const std::string kinds = CrashTallyKinds(t.in_flight), subm = CrashTallyKinds(t.submitted);
  std::printf("CAMPAIGN power_loss: cases=%llu crash_points=%llu device=%llu torn=%llu "
              "(tears_fired=%llu) rocksdb_sync=%llu after_workload=%llu recovered=%llu "
              "durable_txns_checked=%llu lost=%llu in_flight_op_kinds{%s} "
              "submitted_txns=%llu submitted_op_kinds{%s} timed{points=%llu,"
              "with_writes_in_flight=%llu,writes_in_flight=%llu,with_flush_in_progress=%llu,"
              "blocks_torn_inside=%llu} stream_restates=%llu\n",
              (unsigned long long)t.cases, (unsigned long long)t.points,
              (unsigned long long)t.device_points, (unsigned long long)t.torn_points,
              (unsigned long long)t.tears_fired, (unsigned long long)t.rocksdb_points,
              (unsigned long long)t.after_end, (unsigned long long)t.recovered,
              (unsigned long long)t.durable_checked, (unsigned long long)t.lost, kinds.c_str(),
              (unsigned long long)t.txns_submitted, subm.c_str(),
              (unsigned long long)t.timed_points, (unsigned long long)t.points_writes_in_flight,
              (unsigned long long)t.writes_in_flight,
              (unsigned long long)t.points_flush_in_progress,
              (unsigned long long)t.blocks_torn_inside, (unsigned long long)t.restates);
}
[[maybe_unused]] const bool kTallyPrinted = PrintTallyAtEnd<Tally>(PrintTally);

struct Case {
  DurabilityMode mode;
  TailBlockPolicy policy;
  bool crash_in_rocksdb;  // crash point counted in RocksDB syncs, not device ops
  uint64_t seed;
  Backend backend = Backend::kRing;
  bool shared_flush = false;  // with gated data writes sharing the flush
  // Options::metadata_sync_flushes_partition, and the RocksDB files on the
  // same simulated disk as the partition: each RocksDB sync flushes it.
  bool sync_covers = false;
  LogLayout layout = LogLayout::kPerPgRings;
  bool write_once = false;  // CrashConfig::write_once
  // The disk (CrashConfig): block size, timed device, tear unit.
  uint32_t block_size = 4096;
  bool timed = false;
  uint32_t tear_unit = 0;
};

std::string Name(const ::testing::TestParamInfo<Case>& i) {
  const Case& c = i.param;
  std::string s = c.backend == Backend::kRocksDb ? "RocksDbBackend_" : "";
  if (c.timed) {
    s += "Timed" + std::to_string(c.block_size) + "_";
    if (c.tear_unit != 0) s += "Tear" + std::to_string(c.tear_unit) + "_";
  }
  s += c.mode == DurabilityMode::kSyncEach ? "SyncEach"
       : c.mode == DurabilityMode::kGroupCommit ? "Group" : "Unsynced";
  if (c.backend == Backend::kRing) {
    s += c.policy == TailBlockPolicy::kRewriteTailBlock ? "_Rewrite" : "_NeverRewrite";
  }
  s += c.crash_in_rocksdb ? "_RocksDbCrash" : "_DeviceCrash";
  if (c.shared_flush) s += "_SharedFlush";
  if (c.sync_covers) s += "_SyncCovers";
  if (c.layout == LogLayout::kStream) s += "_Stream";
  if (c.write_once) s += "WriteOnce";
  return s + "_" + std::to_string(c.seed);
}

class CrashTest : public ::testing::TestWithParam<Case> {
 protected:
  const size_t kTxns = static_cast<size_t>(CrashTxns());

  static CrashConfig Config() {
    const Case& c = GetParam();
    CrashConfig cfg;
    cfg.backend = c.backend;
    cfg.mode = c.mode;
    cfg.policy = c.policy;
    cfg.layout = c.layout;
    cfg.write_once = c.write_once;
    cfg.shared_flush = c.shared_flush;
    cfg.sync_covers = c.sync_covers;
    cfg.block_size = c.block_size;
    cfg.timed = c.timed;
    cfg.tear_unit = c.tear_unit;
    cfg.device_seed = c.seed;
    return cfg;
  }

  // The case's workload from a fresh store (model empty, index 0).
  CrashWorkResult Work(CrashRig* r, CrashSnapshots* snapshots,
                       std::vector<uint32_t>* masks = nullptr,
                       const std::function<void(size_t)>& before_submit = {}) {
    RandomWorkload work(GetParam().seed, CrashWorkloadParams());
    return r->Work(&work, LogModel(r->options().limits), 0, kTxns, snapshots, masks,
                   before_submit, GetParam().seed);
  }
};

TEST_P(CrashTest, EveryCommittedTransactionSurvives) {
  const Case& c = GetParam();
  // A dry run counts the I/O points of the workload.
  uint64_t total_ops = 0;
  // The timed device really keeps writes in flight together (so they can
  // complete out of order, and flushes overlap them). Not required in the
  // sanitizer builds, whose instrumentation slows the submitting threads so
  // much that a write's 0-300 us delay can end before the next write is
  // issued (seen under TSan and, on a loaded machine, ASan: 1 in flight at
  // most). The default build holds every timed case to it, over up to
  // three dry runs: on a loaded machine one run of a case's workload has
  // also seen 1 in flight at most (ctest running two tests on two cores).
  // A stream written once has no home writes to issue beside its one stream
  // write a round, so its writes overlap only now and then (a forced home's):
  // its timed cases do not require it (on a loaded machine one saw none).
  const bool want_overlap = c.timed && !kSanitizerSlowsThreads && !c.write_once;
  uint64_t max_in_flight = 0;
  // Restatements over every run of the case (the cleaner runs beside the
  // workload, so one run may make none).
  uint64_t restates = 0;
  for (int attempt = 0; attempt < (want_overlap ? 3 : 1) && max_in_flight < 2; ++attempt) {
    CrashRig r(Config());
    r.Fresh();
    ASSERT_FALSE(HasFatalFailure());
    CrashSnapshots snaps;
    uint64_t before = c.crash_in_rocksdb ? r.fs()->sync_count() : r.dev()->op_count();
    Work(&r, &snaps);
    restates += r.store()->GetStoreStats().stream_restates;
    ASSERT_OK(r.store()->Close());
    total_ops = (c.crash_in_rocksdb ? r.fs()->sync_count() : r.dev()->op_count()) - before;
    if (c.timed) max_in_flight = r.dev()->model_stats().max_writes_in_flight;
  }
  if (want_overlap) EXPECT_GE(max_in_flight, 2u);
  // Enough points to crash at. In kUnsynced RocksDB syncs come once per
  // unsynced_max_delay (or max_group_size), not per group, so a slow run of
  // the workload makes few of them (3 under TSan, seen once); the points
  // below then repeat them.
  const bool few_syncs = c.crash_in_rocksdb && c.mode == DurabilityMode::kUnsynced;
  ASSERT_GT(total_ops, few_syncs ? 1u : 3u);
  // The timed cases are many (every disk x layout x policy x mode): fewer
  // points each, at least one of each kind of image and a torn write.
  const int points = c.timed ? std::max(4, CrashPoints() / 6) : CrashPoints();
  std::mt19937_64 rng(c.seed * 7919);
  {
    std::lock_guard<std::mutex> l(GlobalTally().mu);
    ++GlobalTally().cases;
  }
  for (int p = 0; p < points; ++p) {
    uint64_t k = 1 + (points >= static_cast<int>(total_ops) ? p % total_ops
                                                              : rng() % total_ops);
    // Every fourth device point is a torn multi-block write instead: armed
    // before the transaction the point maps to.
    const bool tear = !c.crash_in_rocksdb && p % 4 == 3;
    const uint32_t tear_keep = 1 + static_cast<uint32_t>(rng() % 3);
    const size_t tear_txn = static_cast<size_t>((k - 1) * kTxns / total_ops);
    std::string what = tear ? "torn write (keep " + std::to_string(tear_keep) +
                                  " blocks) from txn " + std::to_string(tear_txn)
                            : "crash point " + std::to_string(k) + " of " +
                                  std::to_string(total_ops);
    SCOPED_TRACE(what);
    CrashRig r(Config());
    r.Fresh();
    ASSERT_FALSE(HasFatalFailure());
    FaultInjectionDevice* dev = r.dev();
    FaultInjectionFileSystem* fs = r.fs();
    std::function<void(size_t)> before;
    if (c.crash_in_rocksdb) {
      fs->SetCrashAfterSyncs(k, [dev] { dev->CrashNow(); });
    } else {
      dev->SetOnCrash([fs] { fs->SetActive(false); });
      if (tear) {
        before = [dev, tear_txn, tear_keep](size_t i) {
          if (i == tear_txn) dev->TearNextWrite(tear_keep);
        };
      } else {
        dev->SetCrashAfterOps(k);
      }
    }
    CrashSnapshots snaps;
    std::vector<uint32_t> masks;
    const size_t durable = Work(&r, &snaps, &masks, before).durable;
    // Power is lost (if the workload finished first, now).
    const bool crashed_in_workload = dev->crashed() || fs->crashed();
    restates += r.store()->GetStoreStats().stream_restates;
    r.PowerLoss(static_cast<FaultInjectionDevice::CrashImage>(p % 3), c.seed + p, p % 2);
    ASSERT_FALSE(HasFatalFailure());
    {
      Tally& t = GlobalTally();
      std::lock_guard<std::mutex> l(t.mu);
      ++t.points;
      (c.crash_in_rocksdb ? t.rocksdb_points : tear ? t.torn_points : t.device_points)++;
      if (tear && crashed_in_workload) ++t.tears_fired;
      if (c.timed) {
        ++t.timed_points;
        const FaultInjectionDevice::ModelStats st = dev->model_stats();
        t.points_writes_in_flight += st.writes_in_flight_at_crash > 0;
        t.writes_in_flight += st.writes_in_flight_at_crash;
        t.points_flush_in_progress += st.flushes_in_progress_at_crash > 0;
        t.blocks_torn_inside += st.blocks_torn_inside_by_last_image;
      }
      t.txns_submitted += masks.size();
      for (uint32_t m : masks) {
        for (int kind = 0; kind < kCrashTallyKinds; ++kind) t.submitted[kind] += (m >> kind) & 1;
      }
      if (!crashed_in_workload || durable >= masks.size()) {
        ++t.after_end;
      } else {
        uint32_t u = 0;
        for (size_t i = durable; i < masks.size(); ++i) u |= masks[i];
        for (int kind = 0; kind < kCrashTallyKinds; ++kind) t.in_flight[kind] += (u >> kind) & 1;
      }
    }
    r.Verify(durable, snaps, what, c.seed);
    {
      Tally& t = GlobalTally();
      std::lock_guard<std::mutex> l(t.mu);
      if (::testing::Test::HasFatalFailure()) {
        ++t.lost;
      } else {
        ++t.recovered;
        t.durable_checked += durable;
      }
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The power went around the stream cleaner's restatements in the
  // write-once cases: how many, over the campaign, is in its CAMPAIGN line
  // (the cleaner runs beside the workload and restates only PGs whose live
  // log is sparse, so a case may make none; StreamCleaningPowerLossTest
  // holds one in flight deterministically).
  {
    Tally& t = GlobalTally();
    std::lock_guard<std::mutex> l(t.mu);
    t.restates += restates;
  }
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  uint64_t seed = 1;
  const auto modes = {DurabilityMode::kGroupCommit, DurabilityMode::kSyncEach,
                      DurabilityMode::kUnsynced};
  for (auto mode : modes) {
    for (auto policy : {TailBlockPolicy::kRewriteTailBlock, TailBlockPolicy::kNeverRewrite}) {
      for (bool rocks : {false, true}) out.push_back(Case{mode, policy, rocks, seed++});
    }
  }
  // Shared flush (ring only): the data writes are device ops too, so device
  // crash points also fall between a data write and the flush.
  for (auto mode : modes) {
    for (bool rocks : {false, true}) {
      out.push_back(Case{mode, TailBlockPolicy::kRewriteTailBlock, rocks, seed++, Backend::kRing,
                         /*shared_flush=*/true});
    }
  }
  // The log stream: the ring cases again with records unhomed in the
  // stream when the power goes.
  for (auto mode : modes) {
    for (auto policy : {TailBlockPolicy::kRewriteTailBlock, TailBlockPolicy::kNeverRewrite}) {
      for (bool rocks : {false, true}) {
        Case c{mode, policy, rocks, seed++};
        c.layout = LogLayout::kStream;
        out.push_back(c);
      }
    }
  }
  // The RocksDB backend writes nothing to the partition after mkfs, so its
  // crash points are RocksDB syncs (its WAL and MANIFEST); the tail-block
  // policy does not apply to it. Two seeds per mode, as the ring gets two
  // cases with RocksDB crash points per mode.
  for (auto mode : modes) {
    for (int i = 0; i < 2; ++i) {
      out.push_back(Case{mode, TailBlockPolicy::kRewriteTailBlock, true, seed++, Backend::kRocksDb});
    }
  }
  // metadata_sync_flushes_partition: a group's records (and, with the shared
  // flush, its data writes) made durable by the previous group's RocksDB
  // sync instead of a partition flush. The option does nothing in kUnsynced
  // mode. Crash points fall on device writes and flushes, and on RocksDB
  // syncs, which now flush the device too.
  for (auto mode : {DurabilityMode::kGroupCommit, DurabilityMode::kSyncEach}) {
    for (bool shared : {true, false}) {
      for (bool rocks : {false, true}) {
        out.push_back(Case{mode, TailBlockPolicy::kRewriteTailBlock, rocks, seed++, Backend::kRing,
                           shared, /*sync_covers=*/true});
      }
    }
  }
  // The log stream with the shared flush and with the RocksDB sync as the
  // flush (its writes not held during the sync, the default):
  // one stream write then carries records the data writes' flush or the
  // previous group's sync must cover.
  for (auto mode : modes) {
    for (bool rocks : {false, true}) {
      Case c{mode, TailBlockPolicy::kRewriteTailBlock, rocks, seed++, Backend::kRing,
             /*shared_flush=*/true};
      c.layout = LogLayout::kStream;
      out.push_back(c);
    }
  }
  for (auto mode : {DurabilityMode::kGroupCommit, DurabilityMode::kSyncEach}) {
    for (bool shared : {true, false}) {
      for (bool rocks : {false, true}) {
        Case c{mode, TailBlockPolicy::kRewriteTailBlock, rocks, seed++, Backend::kRing, shared,
               /*sync_covers=*/true};
        c.layout = LogLayout::kStream;
        out.push_back(c);
      }
    }
  }
  // The log stream written once (home_bytes 0), cleaned by restating the
  // PGs that pin it: the power goes around restatements too.
  for (auto mode : modes) {
    for (auto policy : {TailBlockPolicy::kRewriteTailBlock, TailBlockPolicy::kNeverRewrite}) {
      for (bool rocks : {false, true}) {
        Case c{mode, policy, rocks, seed++};
        c.layout = LogLayout::kStream;
        c.write_once = true;
        out.push_back(c);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Campaign, CrashTest, ::testing::ValuesIn(Cases()), Name);

// The timed device (issue 14, item 3): writes complete on the device's
// completion thread after random delays, out of order; a flush covers only
// what completed before it began; the power goes with writes in flight and
// flushes in progress. Three disks: 4096-byte blocks, 512-byte blocks (the
// atomic unit being the logical block in both), and 4096-byte blocks that
// tear at 512 bytes inside a block (the sub-block model). Each over every
// layout, tail-block policy and durability mode, with device crash points;
// the 4096-byte disk also with RocksDB-sync crash points, which stop the
// device at an instant no device op chooses.
std::vector<Case> TimedCases() {
  std::vector<Case> out;
  uint64_t seed = 1001;
  struct Disk {
    uint32_t block_size, tear_unit;
  };
  for (Disk d : {Disk{4096, 0}, Disk{512, 0}, Disk{4096, 512}}) {
    for (auto layout : {LogLayout::kPerPgRings, LogLayout::kStream}) {
      for (auto policy : {TailBlockPolicy::kRewriteTailBlock, TailBlockPolicy::kNeverRewrite}) {
        for (auto mode : {DurabilityMode::kGroupCommit, DurabilityMode::kSyncEach,
                          DurabilityMode::kUnsynced}) {
          for (bool rocks : {false, true}) {
            if (rocks && (d.block_size != 4096 || d.tear_unit != 0)) continue;
            Case c{mode, policy, rocks, seed++};
            c.layout = layout;
            c.block_size = d.block_size;
            c.timed = true;
            c.tear_unit = d.tear_unit;
            out.push_back(c);
          }
        }
      }
    }
  }
  // The stream written once, device crash points on each disk.
  for (Disk d : {Disk{4096, 0}, Disk{512, 0}, Disk{4096, 512}}) {
    for (auto policy : {TailBlockPolicy::kRewriteTailBlock, TailBlockPolicy::kNeverRewrite}) {
      for (auto mode : {DurabilityMode::kGroupCommit, DurabilityMode::kSyncEach,
                        DurabilityMode::kUnsynced}) {
        Case c{mode, policy, false, seed++};
        c.layout = LogLayout::kStream;
        c.write_once = true;
        c.block_size = d.block_size;
        c.timed = true;
        c.tear_unit = d.tear_unit;
        out.push_back(c);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Timing, CrashTest, ::testing::ValuesIn(TimedCases()), Name);

}  // namespace
}  // namespace pgring::testing

namespace pgring::testing {
namespace {

// Targeted crash cases for the two rules that keep a crash from finding a
// committed pointer aimed at overwritten records. kUnsynced with a long
// delay holds the first transaction uncommitted while the second is staged.
class ChunkReuseCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    ASSERT_OK(rig_.Mkfs(m));
    options_.log_sink = NullLogSink();
    options_.reserve_chunks_per_pg = 1;
    options_.max_group_size = 1 << 20;  // kUnsynced: commit only on Sync/close
    ASSERT_OK(Open());
  }
  absl::Status Open() {
    absl::Status s = rig_.Open(options_);
    store_ = rig_.store();
    return s;
  }
  void PowerLoss() {
    ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kKeepAll));
    store_ = nullptr;
  }
  PowerLossRig rig_;
  Options options_;
  Store* store_ = nullptr;
};

TEST_F(ChunkReuseCrashTest, RingReusesAChunkOnlyBehindTheDurableHead) {
  const PgId pg{1, 1, -1};
  std::string payload(1000, 'x');
  Transaction c;
  c.CreatePg(pg);
  uint64_t v = 0;
  for (; v < 100; ++v) c.AppendEntry(pg, Version{1, v + 1}, payload);  // chunk 0 and part of 1
  ASSERT_OK(store_->Commit(std::move(c)));
  options_.reserve_chunks_per_pg = 4;  // keep chunk 0 in the ring after the trim
  options_.durability = DurabilityMode::kUnsynced;
  options_.unsynced_max_delay = std::chrono::seconds(30);
  ASSERT_OK(Open());
  // T1 trims everything (staged head past chunk 0) but is not committed yet;
  // T2 needs a chunk. Reusing chunk 0 would overwrite what the committed
  // pointer still points at.
  Transaction t1;
  t1.Trim(pg, Version{1, v});
  ASSERT_OK(store_->Commit(std::move(t1)));  // acknowledged, not durable
  Transaction t2;
  for (int i = 0; i < 40; ++i, ++v) t2.AppendEntry(pg, Version{1, v + 1}, payload);
  ASSERT_OK(store_->Commit(std::move(t2)));
  PowerLoss();
  options_.durability = DurabilityMode::kGroupCommit;
  ASSERT_OK(Open());
  auto e = store_->ReadEntries(pg);
  ASSERT_OK(e);
  EXPECT_EQ(e->size(), 100u);
}

TEST_F(ChunkReuseCrashTest, FreedChunksWaitForTheDurableRemoval) {
  const PgId a{1, 1, -1}, b{1, 2, -1};
  std::string payload(1000, 'a');
  Transaction c;
  c.CreatePg(a);
  for (uint64_t v = 1; v <= 200; ++v) c.AppendEntry(a, Version{1, v}, payload);
  ASSERT_OK(store_->Commit(std::move(c)));
  options_.durability = DurabilityMode::kUnsynced;
  options_.unsynced_max_delay = std::chrono::seconds(30);
  ASSERT_OK(Open());
  Transaction rm;
  rm.RemovePg(a);
  ASSERT_OK(store_->Commit(std::move(rm)));  // acknowledged, not durable
  // Fill the partition with B: it must not get A's chunks yet.
  Transaction cb;
  cb.CreatePg(b);
  ASSERT_OK(store_->Commit(std::move(cb)));
  absl::Status s;
  for (uint64_t v = 1; s.ok() && v < 20000; ++v) {
    Transaction t;
    t.AppendEntry(b, Version{1, v}, std::string(4000, 'b'));
    s = store_->Commit(std::move(t));
  }
  EXPECT_CODE(s, kResourceExhausted);
  PowerLoss();
  options_.durability = DurabilityMode::kGroupCommit;
  ASSERT_OK(Open());
  auto e = store_->ReadEntries(a);
  ASSERT_OK(e);
  EXPECT_EQ(e->size(), 200u);
  for (const auto& le : *e) ASSERT_EQ(le.payload, payload);
}

}  // namespace
}  // namespace pgring::testing
