// Power loss over many generations (issue 14, item 2): one store per case,
// crashed again and again. Each generation reopens the store after the
// previous crash (from the second on, often with another durability mode,
// tail-block policy and log layout), arms one crash point, runs the random
// workload on from the state the previous recovery matched, loses power,
// builds the crash image, reopens, and checks the strict oracle of
// crash_test (tests/util/crash_rig.h): the recovered state is the model
// after some prefix of every transaction submitted since mkfs that holds
// every one acknowledged durable — in the durable modes each whose callback
// returned OK, in kUnsynced each before the last OK Sync(), and in every
// mode the whole state the previous recovery found — with the embedder's
// keys from the same prefix, every chunk owned once and none leaked. The
// next generation goes on from that prefix's model.
//
// Crash points per generation: the k-th device write or flush from the
// generation's start, a torn multi-block write (TearNextWrite armed before
// a random transaction: the write keeps 1-3 logical blocks, then the power
// goes), or the k-th RocksDB sync (the only kind for the RocksDB backend,
// which writes no partition after mkfs). k is drawn from the I/O a
// generation's workload did in the generations before; a point past the
// workload's end loses the power at the end. The crash image drops, keeps,
// or chooses per block among the unflushed writes; RocksDB loses its
// unsynced data whole or a random part of each file.
//
// The workload (tests/util/random_workload.h) creates and removes PGs (more
// removals than crash_test's), trims, rewinds and resets, on a small
// partition (8 MiB, 128 chunks of 64 KiB), so chunks freed by trims and
// removals are allocated again, across reopens and crashes. After every
// crash the test reads the chunk lists in RocksDB; a case fails unless some
// chunk was found under another owner (PG stamp or the stream) or at
// another lap than after an earlier crash, and unless PGs were removed and
// more created than can live at once. The tally also gives a lower bound on
// the chunks allocated (rises of the owned count seen around each
// submission). Between generations the store also loses and regains its
// stream (kStream <-> kPerPgRings), which homes or replays what the stream
// held. Every three generations in four wait for RocksDB's compactions
// after the reopen (one the power stops costs a second at close).
//
// PGRING_CRASH_GENERATIONS (default 20) sets the generations per case;
// PGRING_CRASH_GEN_TXNS (default 24) the transactions each generation
// submits at most. The long form: tests/campaigns/run_campaigns.sh --long
// power_loss_generations (docs/RELIABILITY.md, "2. Power loss"). One line
// "CAMPAIGN power_loss_generations: ..." gives the totals at the end.
//
// A failure names the case (its seed) and the generation; the run is
// deterministic up to thread timing.
#include <algorithm>
#include <chrono>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device/fault_injection_device.h"
#include "format/metadata_keys.h"
#include "util/campaign_tally.h"
#include "util/crash_rig.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

int EnvInt(const char* name, int def) {
  const char* e = std::getenv(name);
  int n = e != nullptr ? std::atoi(e) : def;
  return n > 0 ? n : def;
}
int Generations() { return EnvInt("PGRING_CRASH_GENERATIONS", 20); }
size_t GenTxns() { return static_cast<size_t>(EnvInt("PGRING_CRASH_GEN_TXNS", 24)); }

struct Tally {
  std::mutex mu;
  uint64_t cases = 0, generations = 0, device_points = 0, torn_points = 0, rocksdb_points = 0;
  uint64_t tears_fired = 0, after_end = 0, recovered = 0, lost = 0;
  uint64_t durable_checked = 0, txns_submitted = 0, txns_recovered = 0;
  uint64_t mode_changes = 0, policy_changes = 0, layout_changes = 0;
  uint64_t pgs_removed = 0, pgs_created = 0, chunk_allocs = 0, partition_chunks = 0;
  uint64_t chunk_owner_reuses = 0, chunk_lap_reuses = 0;
  uint64_t forced_homes = 0, stream_full_fallbacks = 0, home_writes = 0;
  std::array<uint64_t, kCrashTallyKinds> in_flight{};
  std::array<uint64_t, kCrashTallyKinds> submitted{};
};
Tally& GlobalTally() { return TallyOf<Tally>(); }

void PrintTally(const Tally& t) {
  if (t.cases == 0) return;
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf(
      "CAMPAIGN power_loss_generations: cases=%llu generations=%llu device=%llu torn=%llu "
      "(tears_fired=%llu) rocksdb_sync=%llu after_workload=%llu recovered=%llu lost=%llu "
      "durable_txns_checked=%llu txns_submitted=%llu txns_recovered=%llu "
      "reopens_changing{mode=%llu,policy=%llu,layout=%llu} pgs_created=%llu pgs_removed=%llu "
      "chunk_allocs>=%llu partition_chunks=%llu (laps>=%.1f) "
      "chunks_reused_seen{other_owner=%llu,same_owner_other_lap=%llu} home_writes=%llu "
      "forced_homes=%llu stream_full_fallbacks=%llu in_flight_op_kinds{%s} "
      "submitted_op_kinds{%s}\n",
      u(t.cases), u(t.generations), u(t.device_points), u(t.torn_points), u(t.tears_fired),
      u(t.rocksdb_points), u(t.after_end), u(t.recovered), u(t.lost), u(t.durable_checked),
      u(t.txns_submitted), u(t.txns_recovered), u(t.mode_changes), u(t.policy_changes),
      u(t.layout_changes), u(t.pgs_created), u(t.pgs_removed), u(t.chunk_allocs),
      u(t.partition_chunks),
      t.partition_chunks ? static_cast<double>(t.chunk_allocs) / t.partition_chunks : 0.0,
      u(t.chunk_owner_reuses), u(t.chunk_lap_reuses),
      u(t.home_writes), u(t.forced_homes), u(t.stream_full_fallbacks),
      CrashTallyKinds(t.in_flight).c_str(), CrashTallyKinds(t.submitted).c_str());
}
[[maybe_unused]] const bool kTallyPrinted = PrintTallyAtEnd<Tally>(PrintTally);

struct GenCase {
  std::string name;
  Backend backend = Backend::kRing;
  // Each generation after the first reopens in one of these, drawn at
  // random (the first generation takes the first of each).
  std::vector<DurabilityMode> modes;
  std::vector<TailBlockPolicy> policies;
  std::vector<LogLayout> layouts;
  uint64_t seed = 1;
  // The disk (CrashConfig): block size; the timed device; its tear unit.
  uint32_t block_size = 4096;
  bool timed = false;
  uint32_t tear_unit = 0;
};

void PrintTo(const GenCase& c, std::ostream* os) { *os << c.name << " seed " << c.seed; }

std::string Name(const ::testing::TestParamInfo<GenCase>& i) {
  return i.param.name + "_" + std::to_string(i.param.seed);
}

template <typename T>
T Pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[rng() % v.size()];
}

const char* ModeName(DurabilityMode m) {
  return m == DurabilityMode::kSyncEach ? "sync-each"
         : m == DurabilityMode::kGroupCommit ? "group" : "unsynced";
}

enum class PointKind { kDevice, kTorn, kRocksDb };

// Waits until the store's RocksDB runs and has pending no flush or
// compaction.
void WaitForRocksDbIdle(const Store* store) {
  for (int i = 0; i < 10000; ++i) {
    bool idle = true;
    for (const char* p : {"rocksdb.num-running-compactions", "rocksdb.compaction-pending",
                          "rocksdb.num-running-flushes", "rocksdb.mem-table-flush-pending"}) {
      std::string v;
      if (store->GetProperty(p, &v) && v != "0") idle = false;
    }
    if (idle) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Who held which chunk at which lap, as the ring backend's chunk lists in
// RocksDB say after each crash: a chunk found again under another owner (a
// PG's stamp, or the stream) or at another lap was freed and reused.
class ChunkOwners {
 public:
  // Reads pgring's keys (crash image, before recovery); counts reuses.
  void Sample(const std::map<std::string, std::string>& keys, uint32_t chunk_size) {
    auto note = [&](const std::string& owner, const PgChunkList& list) {
      for (size_t i = 0; i < list.chunks.size(); ++i) {
        const uint64_t lap = (list.base + i * chunk_size) / chunk_size;
        auto [it, fresh] = seen_.try_emplace(list.chunks[i], owner, lap);
        if (fresh) continue;
        if (it->second.first != owner) {
          ++owner_reuses_;
        } else if (it->second.second != lap) {
          ++lap_reuses_;
        }
        it->second = {owner, lap};
      }
    };
    for (const auto& [key, value] : keys) {
      if (key == kStreamChunksKey) {
        auto list = PgChunkList::Decode(value);
        if (list.ok()) note("stream", *list);
        continue;
      }
      if (!key.starts_with(kPgChunksPrefix)) continue;
      auto list = PgChunkList::Decode(value);
      auto ptr = keys.find(std::string(kPgPointerPrefix) + key.substr(kPgChunksPrefix.size()));
      if (!list.ok() || ptr == keys.end()) continue;
      auto p = PgPointer::Decode(ptr->second);
      if (p.ok()) note("pg stamp " + std::to_string(p->stamp), *list);
    }
  }
  uint64_t owner_reuses() const { return owner_reuses_; }
  uint64_t lap_reuses() const { return lap_reuses_; }

 private:
  std::map<uint32_t, std::pair<std::string, uint64_t>> seen_;
  uint64_t owner_reuses_ = 0, lap_reuses_ = 0;
};

class CrashGenerationsTest : public ::testing::TestWithParam<GenCase> {};

TEST_P(CrashGenerationsTest, EveryGenerationRecoversWhatWasAcknowledged) {
  const GenCase& c = GetParam();
  const int generations = Generations();
  const size_t txns = GenTxns();
  CrashConfig cfg;
  cfg.backend = c.backend;
  cfg.mode = c.modes.front();
  cfg.policy = c.policies.front();
  cfg.layout = c.layouts.front();
  cfg.device_size = 8ull << 20;  // 128 chunks: freed ones come round again soon
  cfg.block_size = c.block_size;
  cfg.timed = c.timed;
  cfg.tear_unit = c.tear_unit;
  cfg.device_seed = c.seed;
  CrashRig r(cfg);
  r.Fresh();
  ASSERT_FALSE(HasFatalFailure());

  std::mt19937_64 rng(c.seed * 104729);
  WorkloadParams wp = CrashWorkloadParams();
  wp.remove_rate = 0.04;  // PGs removed and created again within a few generations
  RandomWorkload work(c.seed, wp);
  // The state the last recovery matched (global index, model).
  std::pair<size_t, LogModel> state{0, LogModel(r.options().limits)};
  // I/O per transaction seen so far, per durability mode (for drawing
  // crash points).
  std::map<DurabilityMode, std::pair<double, double>> io_per_txn;  // device ops, syncs
  uint64_t chunk_allocs = 0, removed = 0, created = 0;  // removed, created: recovered ones
  uint64_t removes_submitted = 0;
  ChunkOwners owners;
  {
    std::lock_guard<std::mutex> l(GlobalTally().mu);
    ++GlobalTally().cases;
  }
  for (int g = 0; g < generations; ++g) {
    FaultInjectionDevice* dev = r.dev();
    FaultInjectionFileSystem* fs = r.fs();
    const Options& o = r.options();
    // Arm this generation's crash point.
    PointKind kind = PointKind::kRocksDb;
    if (c.backend == Backend::kRing) {
      const uint64_t d = rng() % 10;
      kind = d < 5 ? PointKind::kDevice : d < 7 ? PointKind::kTorn : PointKind::kRocksDb;
    }
    // RocksDB's compactions after the reopen done first, except in every
    // fourth generation: a compaction the power stops makes RocksDB sleep a
    // second before it closes.
    if (g % 4 != 3) WaitForRocksDbIdle(r.store());
    auto [io, fresh] = io_per_txn.try_emplace(o.durability, 4.0, 2.0);
    double& dev_ops_per_txn = io->second.first;
    double& syncs_per_txn = io->second.second;
    const uint64_t dev_base = dev->op_count(), sync_base = fs->sync_count();
    std::function<void(size_t)> before;
    std::string what = "generation " + std::to_string(g) + " (" + ModeName(o.durability) +
                       (c.backend == Backend::kRing
                            ? std::string(", ") +
                                  (o.tail_block_policy == TailBlockPolicy::kNeverRewrite
                                       ? "never-rewrite"
                                       : "rewrite-tail") +
                                  (o.log_layout == LogLayout::kStream ? ", stream" : ", per-PG")
                            : std::string()) +
                       ", from txn " + std::to_string(state.first) + "): ";
    if (kind == PointKind::kRocksDb) {
      const uint64_t span = std::max<uint64_t>(3, static_cast<uint64_t>(syncs_per_txn * txns));
      const uint64_t k = 1 + rng() % span;
      fs->SetCrashAfterSyncs(k, [dev] { dev->CrashNow(); });
      what += "RocksDB sync " + std::to_string(k);
    } else {
      dev->SetOnCrash([fs] { fs->SetActive(false); });
      if (kind == PointKind::kTorn) {
        const size_t at = state.first + rng() % txns;
        const uint32_t keep = 1 + static_cast<uint32_t>(rng() % 3);
        before = [dev, at, keep](size_t i) {
          if (i == at) dev->TearNextWrite(keep);
        };
        what += "torn write (keep " + std::to_string(keep) + " blocks) from txn " +
                std::to_string(at);
      } else {
        const uint64_t span = std::max<uint64_t>(3, static_cast<uint64_t>(dev_ops_per_txn * txns));
        const uint64_t k = 1 + rng() % span;
        dev->SetCrashAfterOps(k);
        what += "device op " + std::to_string(k);
      }
    }
    SCOPED_TRACE(c.name + " seed " + std::to_string(c.seed) + ", " + what);

    CrashSnapshots snaps;
    std::vector<uint32_t> masks;
    CrashWorkResult res = r.Work(&work, state.second, state.first, txns, &snaps, &masks, before);
    const bool crashed = dev->crashed() || fs->crashed();
    // A valid transaction is refused only once the power is gone.
    ASSERT_TRUE(crashed || res.error.ok()) << what << ": refused with the power on: " << res.error;
    const size_t done = res.submitted - state.first;
    if (!crashed && done > 0) {
      dev_ops_per_txn = std::max(0.5, static_cast<double>(dev->op_count() - dev_base) / done);
      syncs_per_txn = std::max(0.5, static_cast<double>(fs->sync_count() - sync_base) / done);
    }
    chunk_allocs += res.chunk_allocs;
    StoreStats before_crash = r.store()->GetStoreStats();
    r.PowerLoss(static_cast<FaultInjectionDevice::CrashImage>(rng() % 3), c.seed * 1000 + g,
                rng() % 2);
    ASSERT_FALSE(HasFatalFailure());

    // The next generation's options: recovery already runs with them.
    Options& next = r.options();
    const Options prev = next;
    next.durability = Pick(rng, c.modes);
    next.tail_block_policy = Pick(rng, c.policies);
    next.log_layout = Pick(rng, c.layouts);
    std::pair<size_t, LogModel> match{0, LogModel(next.limits)};
    std::map<std::string, std::string> keys;
    r.Verify(res.durable, snaps, what, c.seed, /*keep_open=*/true, &match, &keys);
    owners.Sample(keys, 64 << 10);
    for (size_t i = 0; i < masks.size() && state.first + i < match.first; ++i) {
      removed += (masks[i] >> kTRemove) & 1;
      created += (masks[i] >> kTCreate) & 1;
    }
    for (uint32_t m : masks) removes_submitted += (m >> kTRemove) & 1;
    {
      Tally& t = GlobalTally();
      std::lock_guard<std::mutex> l(t.mu);
      ++t.generations;
      (kind == PointKind::kRocksDb ? t.rocksdb_points
       : kind == PointKind::kTorn  ? t.torn_points
                                   : t.device_points)++;
      if (kind == PointKind::kTorn && crashed) ++t.tears_fired;
      t.txns_submitted += masks.size();
      for (uint32_t m : masks) {
        for (int k = 0; k < kCrashTallyKinds; ++k) t.submitted[k] += (m >> k) & 1;
      }
      if (!crashed || res.durable >= res.submitted) {
        ++t.after_end;
      } else {
        uint32_t u = 0;
        for (size_t i = res.durable - state.first; i < masks.size(); ++i) u |= masks[i];
        for (int k = 0; k < kCrashTallyKinds; ++k) t.in_flight[k] += (u >> k) & 1;
      }
      t.mode_changes += prev.durability != next.durability;
      t.policy_changes += prev.tail_block_policy != next.tail_block_policy;
      t.layout_changes += prev.log_layout != next.log_layout;
      t.home_writes += before_crash.home_writes;
      t.forced_homes += before_crash.forced_homes;
      t.stream_full_fallbacks += before_crash.stream_full_fallbacks;
      if (HasFatalFailure()) {
        ++t.lost;
      } else {
        ++t.recovered;
        t.durable_checked += res.durable - state.first;
        t.txns_recovered += match.first - state.first;
      }
    }
    if (HasFatalFailure()) return;
    state = std::move(match);
  }
  ASSERT_OK(r.store()->Close());
  const uint64_t partition_chunks = cfg.device_size / (64 << 10);
  {
    Tally& t = GlobalTally();
    std::lock_guard<std::mutex> l(t.mu);
    t.pgs_removed += removed;
    t.pgs_created += created;
    t.partition_chunks += c.backend == Backend::kRing ? partition_chunks : 0;
    t.chunk_allocs += c.backend == Backend::kRing ? chunk_allocs : 0;
    t.chunk_owner_reuses += owners.owner_reuses();
    t.chunk_lap_reuses += owners.lap_reuses();
  }
  // PGs went and came back, across generations: more created than can
  // live at once (the workload keeps at most 6). On the timed device the
  // workload follows the completion order, which no seed fixes: a run may
  // end with just 6 (seen once in 20 generations), and its few removals may
  // all be in flight at the crashes (seen once under a loaded machine: 2
  // submitted, none durable), so there removals submitted are required and
  // the recovered counts go to the tally.
  if (c.timed) {
    EXPECT_GT(removes_submitted, 0u);
  } else {
    EXPECT_GT(removed, 0u);
    EXPECT_GT(created, 6u);
  }
  // Chunks came round again: one found, after some crash, under another
  // owner or at another lap than after an earlier one.
  if (c.backend == Backend::kRing && generations >= 20) {
    EXPECT_GT(owners.owner_reuses() + owners.lap_reuses(), 0u)
        << "no chunk was seen reused across the crashes";
  }
}

std::vector<GenCase> Cases() {
  using DM = DurabilityMode;
  using TP = TailBlockPolicy;
  using LL = LogLayout;
  const std::vector<TP> both_policies{TP::kRewriteTailBlock, TP::kNeverRewrite};
  const std::vector<TP> never_first{TP::kNeverRewrite, TP::kRewriteTailBlock};
  const std::vector<DM> all_modes{DM::kGroupCommit, DM::kSyncEach, DM::kUnsynced};
  std::vector<GenCase> out;
  // Per-PG rings, both policies, one mode each.
  out.push_back({"PerPg_Group", Backend::kRing, {DM::kGroupCommit}, both_policies,
                 {LL::kPerPgRings}, 1});
  out.push_back({"PerPg_Unsynced", Backend::kRing, {DM::kUnsynced}, never_first,
                 {LL::kPerPgRings}, 2});
  // The stream, both policies.
  out.push_back({"Stream_SyncEach", Backend::kRing, {DM::kSyncEach}, never_first,
                 {LL::kStream}, 3});
  // Everything changes across reopens: mode, policy, layout.
  out.push_back({"Mixed_StreamFirst", Backend::kRing, all_modes, both_policies,
                 {LL::kStream, LL::kPerPgRings}, 4});
  out.push_back({"Mixed_PerPgFirst", Backend::kRing,
                 {DM::kUnsynced, DM::kGroupCommit, DM::kSyncEach}, never_first,
                 {LL::kPerPgRings, LL::kStream}, 5});
  // The timed device (crash_test's "Timing" cases), everything changing
  // across reopens: 512-byte blocks, and 4096-byte blocks torn at 512.
  GenCase timed512{"Timed512_Mixed", Backend::kRing, all_modes, both_policies,
                   {LL::kStream, LL::kPerPgRings}, 7};
  timed512.block_size = 512;
  timed512.timed = true;
  out.push_back(timed512);
  GenCase tear{"Timed4096_Tear512_Mixed", Backend::kRing,
               {DM::kSyncEach, DM::kUnsynced, DM::kGroupCommit}, never_first,
               {LL::kPerPgRings, LL::kStream}, 8};
  tear.timed = true;
  tear.tear_unit = 512;
  out.push_back(tear);
  // The RocksDB backend, crashes at RocksDB syncs, mode changes.
  out.push_back({"RocksDbBackend_Mixed", Backend::kRocksDb, all_modes,
                 {TP::kRewriteTailBlock}, {LL::kPerPgRings}, 6});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Generations, CrashGenerationsTest, ::testing::ValuesIn(Cases()), Name);

}  // namespace
}  // namespace pgring::testing
