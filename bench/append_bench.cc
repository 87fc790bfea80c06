// append_bench — the append path end to end, through the public Store API,
// for both backends, on the in-memory device (Device::InMemory + RocksDB's
// in-memory Env: CPU cost only) and on a real file (O_DIRECT + io_uring,
// fdatasync, RocksDB WAL fsync; under $PGRING_BENCH_DIR or the temp dir).
//
// Workload, per timed iteration: one transaction appending `batch` entries
// of `entry` payload bytes to one PG picked at random among `pgs`. Every PG's
// log is kept bounded as an OSD keeps it: after it passes kLogEntries +
// kTrimMin entries the same transaction trims it back to kLogEntries (Ceph's
// osd_min_pg_log_entries = 250 and osd_pg_log_trim_min = 100), so a store
// that runs forever stays the same size. Before timing, every PG is created
// and filled to between kLogEntries and kLogEntries + kTrimMin entries, so
// the timed loop is in steady state (trims, chunk turnover, RocksDB deletes)
// from its first iteration.
//
// Modes: "group" = kGroupCommit with kDepth transactions in flight (an OSD
// under load; throughput); "sync_each" = kSyncEach, one transaction at a
// time, each waited for (the time column is the commit latency).
//
// The store of a case is made once and reused by every run google-benchmark
// makes of that case; counters are deltas over the run. The time column is
// wall time (UseRealTime: the work happens on pgring's and RocksDB's
// threads); the CPU column is the whole process's CPU time per transaction.
//
// Counters:
//   entries_per_s, payload_B_per_s   rates over wall time
//   rdb_B_per_append      RocksDB bytes written (WAL + flush + compaction,
//                         from rocksdb::Statistics) per appended entry
//   rdb_wal_B_per_append  the WAL part of it
//   rdb_keys_per_append   RocksDB keys written (puts and deletes) per entry
//   dev_B_per_payload_B   bytes written to the partition per payload byte
//   write_amp             (partition + RocksDB bytes) per payload byte
//   txns_per_group        transactions per commit group (RocksDB write)
//   dev_flushes_per_txn   partition flushes (fdatasync) per transaction
//   wal_syncs_per_txn     RocksDB WAL syncs per transaction
//   news_per_txn          with PGRING_BENCH_COUNT_ALLOCS=1 in the environment:
//                         calls to operator new per transaction, whole process
//                         (pgring, RocksDB, the harness; not aligned_alloc)
// Runs shorter than a memtable flush see WAL bytes only; the fio main job
// (scripts/main-job.sh) measures the long run with flushes and compactions.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_util.h"
#include "pgring/store.h"

// Counting operator new (opt-in, so the default run pays one predictable
// branch per allocation). Replaces the global one for the whole process,
// RocksDB included.
namespace {
std::atomic<uint64_t> g_news{0};
const bool g_count_news = std::getenv("PGRING_BENCH_COUNT_ALLOCS") != nullptr;
}  // namespace

void* operator new(std::size_t n) {
  if (g_count_news) g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}
// GCC flags free() of operator new's memory once inlined; here it is ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace pgring {
namespace {

using bench::BenchStore;
using bench::DeviceKind;

constexpr uint64_t kLogEntries = 250;  // osd_min_pg_log_entries
constexpr uint64_t kTrimMin = 100;     // osd_pg_log_trim_min
constexpr int kDepth = 32;             // transactions in flight ("group")
constexpr uint32_t kChunkSize = 128 << 10;

struct AppendCase {
  Backend backend;
  DeviceKind device;
  DurabilityMode mode;
  int entry;
  int batch;
  int pgs;

  std::string Name() const {
    return absl::StrCat("Append/", bench::BackendName(backend), "/", bench::DeviceName(device), "/",
                        mode == DurabilityMode::kSyncEach ? "sync_each" : "group",
                        "/entry:", entry, "/batch:", batch, "/pgs:", pgs);
  }
};

PgId Pg(int i) { return PgId{1, static_cast<uint32_t>(i), -1}; }

// A store of one case plus the workload's state (each PG's next and first
// live version).
class AppendFixture {
 public:
  static absl::StatusOr<std::unique_ptr<AppendFixture>> Create(const AppendCase& c) {
    std::unique_ptr<AppendFixture> f(new AppendFixture(c));
    bench::BenchStoreConfig cfg;
    cfg.backend = c.backend;
    cfg.device = c.device;
    cfg.chunk_size = kChunkSize;
    cfg.options.durability = c.mode;
    cfg.options.reserve_chunks_per_pg = 1;
    cfg.device_size = DeviceSize(c, cfg.options.reserve_chunks_per_pg);
    auto bs = BenchStore::Create(cfg);
    if (!bs.ok()) return bs.status();
    f->bs_ = std::move(bs).value();
    if (absl::Status s = f->Prefill(); !s.ok()) return s;
    return f;
  }

  Store* store() const { return bs_->store(); }
  BenchStore* bench_store() const { return bs_.get(); }

  // The next transaction: `batch` entries to a random PG, and a trim when
  // its log has grown kTrimMin past kLogEntries.
  Transaction Next() {
    const int i = static_cast<int>(rng_.Uniform(static_cast<uint64_t>(c_.pgs)));
    const PgId pg = Pg(i);
    Transaction t;
    for (int k = 0; k < c_.batch; ++k) t.AppendEntry(pg, Version{1, next_[i]++}, payload_);
    if (next_[i] - first_[i] >= kLogEntries + kTrimMin) {
      t.Trim(pg, Version{1, next_[i] - 1 - kLogEntries});
      first_[i] = next_[i] - kLogEntries;
    }
    return t;
  }

 private:
  explicit AppendFixture(const AppendCase& c)
      : c_(c), payload_(static_cast<size_t>(c.entry), 'e'), next_(c.pgs, 1), first_(c.pgs, 1) {}

  // The ring backend's partition: each PG's live log at its longest, in
  // whole chunks, plus one for a record straddling a chunk end, one being
  // filled and the reserve; then a quarter more for chunks whose release
  // waits for a commit. The RocksDB backend keeps only its label there.
  static uint64_t DeviceSize(const AppendCase& c, uint32_t reserve) {
    if (c.backend != Backend::kRing) return 16ull << 20;
    const uint64_t per_entry = static_cast<uint64_t>(c.entry) + 48;  // item + header share
    const uint64_t live = (kLogEntries + kTrimMin + static_cast<uint64_t>(c.batch)) * per_entry;
    const uint64_t chunks = (live + kChunkSize - 1) / kChunkSize + 2 + reserve;
    const uint64_t bytes = static_cast<uint64_t>(c.pgs) * chunks * kChunkSize;
    return (bytes + bytes / 4 + (16ull << 20)) / kChunkSize * kChunkSize;
  }

  // Creates the PGs and fills each to kLogEntries + [0, kTrimMin) entries,
  // so trims are spread evenly over the timed loop.
  absl::Status Prefill() {
    {
      Transaction t;
      for (int i = 0; i < c_.pgs; ++i) t.CreatePg(Pg(i));
      if (absl::Status s = store()->Commit(std::move(t)); !s.ok()) return s;
    }
    bench::InFlight inflight(8);
    Transaction t;
    size_t in_txn = 0;
    auto submit = [&]() -> absl::Status {
      absl::Status s = store()->Submit(std::move(t), inflight.Acquire());
      if (!s.ok()) inflight.Cancel();
      t = Transaction();
      in_txn = 0;
      return s;
    };
    for (int i = 0; i < c_.pgs; ++i) {
      const uint64_t n = kLogEntries + rng_.Uniform(kTrimMin);
      for (uint64_t k = 0; k < n; ++k) t.AppendEntry(Pg(i), Version{1, next_[i]++}, payload_);
      in_txn += n;
      if (in_txn >= 2048) {
        if (absl::Status s = submit(); !s.ok()) return s;
      }
    }
    if (in_txn > 0) {
      if (absl::Status s = submit(); !s.ok()) return s;
    }
    inflight.Drain();
    if (absl::Status s = inflight.status(); !s.ok()) return s;
    return store()->Sync();
  }

  const AppendCase c_;
  const std::string payload_;
  std::vector<uint64_t> next_, first_;
  bench::FastRng rng_{42};
  std::unique_ptr<BenchStore> bs_;
};

// The one live fixture; replaced when a different case runs.
std::unique_ptr<AppendFixture>& TheFixture() {
  static auto* f = new std::unique_ptr<AppendFixture>;
  return *f;
}
std::string& TheFixtureName() {
  static auto* n = new std::string;
  return *n;
}

AppendFixture* FixtureFor(const AppendCase& c, benchmark::State& state) {
  const std::string name = c.Name();
  if (TheFixtureName() != name || TheFixture() == nullptr) {
    TheFixture().reset();  // close the previous case's store first (file lock)
    TheFixtureName() = name;
    auto f = AppendFixture::Create(c);
    if (!f.ok()) {
      TheFixtureName().clear();
      state.SkipWithError(absl::StrCat("setup: ", f.status().ToString()).c_str());
      return nullptr;
    }
    TheFixture() = std::move(f).value();
  }
  return TheFixture().get();
}

void BM_Append(benchmark::State& state, AppendCase c) {
  AppendFixture* f = FixtureFor(c, state);
  if (f == nullptr) return;
  Store* store = f->store();
  const StoreStats s0 = store->GetStoreStats();
  const bench::RocksDbCounters r0 = f->bench_store()->rocksdb_counters();
  const uint64_t news0 = g_news.load();
  uint64_t txns = 0;
  absl::Status failure;
  if (c.mode == DurabilityMode::kSyncEach) {
    for (auto _ : state) {
      absl::Status s = store->Commit(f->Next());
      if (!s.ok()) {
        failure = s;
        break;
      }
      ++txns;
    }
  } else {
    bench::InFlight inflight(kDepth);
    for (auto _ : state) {
      Transaction t = f->Next();
      absl::Status s = store->Submit(std::move(t), inflight.Acquire());
      if (!s.ok()) {
        inflight.Cancel();
        failure = s;
        break;
      }
      ++txns;
    }
    // The last kDepth commits finish outside the timer (negligible next to
    // the thousands of transactions a run makes).
    inflight.Drain();
    if (failure.ok()) failure = inflight.status();
  }
  if (!failure.ok()) {
    state.SkipWithError(failure.ToString().c_str());
    return;
  }
  const StoreStats s1 = store->GetStoreStats();
  const bench::RocksDbCounters rd = f->bench_store()->rocksdb_counters() - r0;
  const double entries = static_cast<double>(txns) * c.batch;
  const double payload = static_cast<double>(s1.payload_bytes_appended - s0.payload_bytes_appended);
  const double dev = static_cast<double>(s1.device_bytes_written - s0.device_bytes_written);
  const double groups = static_cast<double>(s1.commit_groups - s0.commit_groups);
  using benchmark::Counter;
  state.counters["entries_per_s"] = Counter(entries, Counter::kIsRate);
  state.counters["payload_B_per_s"] = Counter(payload, Counter::kIsRate);
  if (entries > 0) {
    state.counters["rdb_B_per_append"] = static_cast<double>(rd.total_bytes()) / entries;
    state.counters["rdb_wal_B_per_append"] = static_cast<double>(rd.wal_bytes) / entries;
    state.counters["rdb_keys_per_append"] = static_cast<double>(rd.keys_written) / entries;
  }
  if (payload > 0) {
    state.counters["dev_B_per_payload_B"] = dev / payload;
    state.counters["write_amp"] = (dev + static_cast<double>(rd.total_bytes())) / payload;
  }
  const double committed = static_cast<double>(s1.transactions_committed - s0.transactions_committed);
  if (groups > 0) state.counters["txns_per_group"] = committed / groups;
  if (committed > 0) {
    state.counters["dev_flushes_per_txn"] =
        static_cast<double>(s1.device_flushes - s0.device_flushes) / committed;
    state.counters["wal_syncs_per_txn"] = static_cast<double>(rd.wal_syncs) / committed;
    if (g_count_news) {
      state.counters["news_per_txn"] = static_cast<double>(g_news.load() - news0) / committed;
    }
  }
}

std::vector<AppendCase> Cases() {
  std::vector<AppendCase> cases;
  for (Backend b : {Backend::kRing, Backend::kRocksDb}) {
    for (DeviceKind d : {DeviceKind::kMemory, DeviceKind::kFile}) {
      const auto g = DurabilityMode::kGroupCommit;
      // Entry sizes at 128 PGs, one entry per transaction.
      for (int e : {64, 200, 1024, 4096}) cases.push_back({b, d, g, e, 1, 128});
      // Batch sizes (entries per transaction, one PG).
      for (int n : {8, 32}) cases.push_back({b, d, g, 200, n, 128});
      // PG counts.
      for (int p : {8, 1024}) cases.push_back({b, d, g, 200, 1, p});
      // Commit latency, one transaction at a time.
      cases.push_back({b, d, DurabilityMode::kSyncEach, 200, 1, 128});
    }
  }
  return cases;
}

}  // namespace
}  // namespace pgring

int main(int argc, char** argv) {
  for (const pgring::AppendCase& c : pgring::Cases()) {
    benchmark::RegisterBenchmark(c.Name().c_str(), pgring::BM_Append, c)
        ->UseRealTime()
        ->MeasureProcessCPUTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  pgring::TheFixture().reset();
  pgring::bench::RemoveScratch();
  return 0;
}
