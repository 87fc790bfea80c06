// Campaign 6 (issue 6): concurrency. See docs/RELIABILITY.md,
// "6. Concurrency".
//
// Writer threads run random transactions (every operation, pipelined up to
// 4 deep, some invalid) on one store at once, each on its own PGs (its own
// pool), so each checks every Submit's code against its own LogModel; reader
// threads meanwhile read random PGs of every writer (entries, dups, info,
// stats, the PG list) and check what can be checked of a moving target: OK
// or kNotFound, versions strictly increasing, payloads well formed. The run
// is cut into epochs; between epochs every thread is joined (quiesced), the
// whole store is checked against the union of the writers' models, and
// mostly the store is closed and reopened (with a random durability mode and
// tail-block policy) and checked again. Both backends. Must be TSan-clean:
// the test itself never writes RocksDB (pgring issues its RocksDB writes
// from its one commit thread; see tests/tsan.supp).
//
// Knobs: PGRING_CONC_TXNS (transactions per writer over the run, default
// 240), PGRING_CONC_EPOCHS (default 4), PGRING_CONC_WRITERS (default 4),
// PGRING_CONC_READERS (default 2), PGRING_CONC_READ_PAUSE_US (each reader's
// pause between reads, default 0: a tight loop, which starved the ring
// backend's writers under a reader-preferring lock, see docs/RELIABILITY.md).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "campaigns/campaign_util.h"
#include <rocksdb/env.h>

#include "util/fault_injection_fs.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/store_fixture.h"
#include "util/sync.h"

namespace pgring::testing {
namespace {

CampaignSummary* const kSummary = RegisterCampaignSummary("concurrency");

struct Writer {
  Writer(uint64_t seed, int64_t pool) : work(seed, Params(pool)), model(Limits()) {}
  static WorkloadParams Params(int64_t pool) {
    WorkloadParams wp;
    wp.max_pgs = 6;
    wp.keep_entries = 40;
    wp.keep_dups = 25;
    wp.pool = pool;
    return wp;
  }
  RandomWorkload work;
  LogModel model;
  std::string error;  // first problem, reported after the join
  uint64_t submitted = 0, refused = 0;
};

// A payload as RandomWorkload makes them: "<tag>:..." (dups keep a prefix).
bool WellFormed(const std::string& p) {
  size_t i = 0;
  while (i < p.size() && p[i] >= '0' && p[i] <= '9') ++i;
  return i > 0 && (i == p.size() || p[i] == ':');
}

class ConcurrencyTest : public StoreFixture,
                        public ::testing::WithParamInterface<std::tuple<Backend, uint64_t>> {
 protected:
  // One writer's share of an epoch.
  static void RunWriter(Store* store, Writer* w, uint64_t txns) {
    auto& rng = w->work.rng();
    uint64_t n = 0;
    while (n < txns && w->error.empty()) {
      int depth = std::uniform_int_distribution<int>(1, 4)(rng);
      std::vector<std::unique_ptr<pgring::Notification>> done;
      std::vector<absl::Status> results(depth);
      for (int d = 0; d < depth && n < txns; ++d, ++n) {
        Transaction t = w->work.Next(w->model);
        const std::string desc = std::to_string(t.ops().size()) + " ops";
        absl::StatusCode want = w->model.Apply(t);
        done.push_back(std::make_unique<pgring::Notification>());
        pgring::Notification* note = done.back().get();
        absl::Status* r = &results[done.size() - 1];
        absl::Status s = store->Submit(std::move(t), [note, r](absl::Status st) {
          *r = st;
          note->Notify();
        });
        ++w->submitted;
        if (!s.ok()) {
          ++w->refused;
          note->Notify();
        }
        if (s.code() != want) {
          w->error = "txn " + std::to_string(w->submitted) + " (" + desc + "): store says " +
                     s.ToString() + ", model says " + absl::StatusCodeToString(want);
          break;
        }
      }
      for (auto& note : done) note->WaitForNotification();
      for (const absl::Status& r : results) {
        if (!r.ok() && w->error.empty()) w->error = "commit failed: " + r.ToString();
      }
    }
  }

  struct ReaderStats {
    uint64_t reads = 0, entries = 0;
    std::string error;
  };
  static void RunReader(const Store* store, int writers, uint64_t seed, uint64_t pause_us,
                        const std::atomic<bool>* stop, ReaderStats* out) {
    std::mt19937_64 rng(seed);
    auto fail = [&](const std::string& e) {
      if (out->error.empty()) out->error = e;
    };
    auto check_list = [&](const absl::StatusOr<std::vector<LogEntry>>& r, const PgId& id,
                          const char* what) {
      ++out->reads;
      if (!r.ok()) {
        if (!absl::IsNotFound(r.status())) fail(id.ToString() + " " + what + ": " + r.status().ToString());
        return;
      }
      for (size_t i = 0; i < r->size(); ++i) {
        if (i > 0 && !((*r)[i - 1].version < (*r)[i].version)) {
          fail(id.ToString() + " " + what + ": versions not increasing");
        }
        if (!WellFormed((*r)[i].payload)) fail(id.ToString() + " " + what + ": malformed payload");
      }
      out->entries += r->size();
    };
    while (!stop->load(std::memory_order_acquire)) {
      if (pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % (2 * pause_us)));
      PgId id{10 + static_cast<int64_t>(rng() % writers), static_cast<uint32_t>(rng() % 12), -1};
      switch (rng() % 6) {
        case 0:
        case 1: check_list(store->ReadEntries(id), id, "ReadEntries"); break;
        case 2: check_list(store->ReadDups(id), id, "ReadDups"); break;
        case 3: {
          ++out->reads;
          auto i = store->ReadInfo(id);
          if (i.ok() && !WellFormed(*i)) fail(id.ToString() + " ReadInfo: malformed");
          if (!i.ok() && !absl::IsNotFound(i.status())) fail("ReadInfo: " + i.status().ToString());
          break;
        }
        case 4: {
          ++out->reads;
          auto s = store->GetPgStats(id);
          if (!s.ok() && !absl::IsNotFound(s.status())) fail("GetPgStats: " + s.status().ToString());
          if (s.ok() && s->damaged) fail(id.ToString() + " is marked damaged");
          break;
        }
        default: {
          ++out->reads;
          auto l = store->ListPgs();
          if (!l.ok()) fail("ListPgs: " + l.status().ToString());
          store->GetStoreStats();
          break;
        }
      }
    }
  }

  // Destroyed after TearDown() has closed the store.
  std::shared_ptr<FaultInjectionFileSystem> fifs_;
  std::unique_ptr<rocksdb::Env> env_holder_;

  LogModel Union(const std::vector<std::unique_ptr<Writer>>& ws) const {
    LogModel all{Limits()};
    for (const auto& w : ws) {
      for (const auto& [id, pg] : w->model.pgs()) all.mutable_pgs()[id] = pg;
    }
    return all;
  }
};

TEST_P(ConcurrencyTest, DisjointWritersConcurrentReadersReopen) {
  const auto [backend, seed] = GetParam();
  kSummary->Declare("lost");
  const int writers = static_cast<int>(EnvKnob("PGRING_CONC_WRITERS", 4));
  const int readers = static_cast<int>(EnvKnob("PGRING_CONC_READERS", 2));
  const uint64_t epochs = EnvKnob("PGRING_CONC_EPOCHS", 4);
  const uint64_t txns = EnvKnob("PGRING_CONC_TXNS", 240);
  const char* pause_env = std::getenv("PGRING_CONC_READ_PAUSE_US");
  const uint64_t pause_us = pause_env != nullptr ? std::strtoull(pause_env, nullptr, 10) : 0;
  options_.limits.max_payload_bytes = 64 << 10;
  // No power loss here: the fault-injecting FS only skips the real fsyncs
  // (speed on a shared CI machine).
  fifs_ = std::make_shared<FaultInjectionFileSystem>();
  fifs_->set_skip_real_syncs(true);
  env_holder_ = rocksdb::NewCompositeEnv(fifs_);
  env_ = env_holder_.get();
  MkfsOptions mkfs = DefaultMkfs();
  mkfs.backend = backend;
  Mkfs(mkfs);
  ASSERT_OK(Open(options_));
  std::vector<std::unique_ptr<Writer>> ws;
  for (int i = 0; i < writers; ++i) ws.push_back(std::make_unique<Writer>(seed * 100 + i, 10 + i));
  std::mt19937_64 rng(seed);
  uint64_t reads = 0, entries_read = 0, reopens = 0, checked = 0;
  for (uint64_t epoch = 0; epoch < epochs; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    const uint64_t share = (txns + epochs - 1) / epochs;
    std::atomic<bool> stop{false};
    std::vector<ReaderStats> rs(readers);
    std::vector<std::thread> threads;
    Store* store = store_.get();
    for (int r = 0; r < readers; ++r) {
      threads.emplace_back(RunReader, store, writers, rng(), pause_us, &stop, &rs[r]);
    }
    std::vector<std::thread> wthreads;
    for (int i = 0; i < writers; ++i) {
      // Uneven shares, so writers finish at different times.
      uint64_t n = share / 2 + rng() % (share / 2 + 1);
      wthreads.emplace_back(RunWriter, store, ws[i].get(), n);
    }
    for (auto& t : wthreads) t.join();
    stop.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    for (const auto& w : ws) ASSERT_EQ(w->error, "") << "writer of pool " << &w - &ws[0] + 10;
    for (const auto& r : rs) {
      ASSERT_EQ(r.error, "") << "reader";
      reads += r.reads;
      entries_read += r.entries;
    }
    // Quiesced: check everything, then mostly close and reopen.
    LogModel all = Union(ws);
    std::string d = all.Diff(*store_);
    if (!d.empty()) kSummary->Add("lost");
    ASSERT_EQ(d, "") << "before reopen";
    checked += all.live_items();
    if (rng() % 4 != 0) {
      options_.durability = static_cast<DurabilityMode>(rng() % 3);
      options_.tail_block_policy = static_cast<TailBlockPolicy>(rng() % 2);
      Reopen();
      ++reopens;
      d = all.Diff(*store_);
      if (!d.empty()) kSummary->Add("lost");
      ASSERT_EQ(d, "") << "after reopen";
      checked += all.live_items();
    }
  }
  uint64_t submitted = 0, refused = 0;
  for (const auto& w : ws) {
    submitted += w->submitted;
    refused += w->refused;
  }
  EXPECT_GT(submitted, 0u);
  kSummary->Add("runs");
  kSummary->Add("writer_threads", writers);
  kSummary->Add("reader_threads", readers);
  kSummary->Add("txns_submitted", submitted);
  kSummary->Add("txns_refused_as_modelled", refused);
  kSummary->Add("concurrent_reads", reads);
  kSummary->Add("entries_read_concurrently", entries_read);
  kSummary->Add("reopens", reopens);
  kSummary->Add("entries_checked", checked);
  ASSERT_OK(store_->Close());
  store_.reset();
}

INSTANTIATE_TEST_SUITE_P(
    Campaign, ConcurrencyTest,
    ::testing::Combine(::testing::Values(Backend::kRing, Backend::kRocksDb), ::testing::Values(1, 2)),
    [](const ::testing::TestParamInfo<std::tuple<Backend, uint64_t>>& i) {
      return std::string(std::get<0>(i.param) == Backend::kRing ? "Ring" : "RocksDb") + "_" +
             std::to_string(std::get<1>(i.param));
    });

}  // namespace
}  // namespace pgring::testing
