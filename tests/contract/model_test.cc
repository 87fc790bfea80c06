// Model-based test: long random sequences of every operation over many PGs,
// checked against LogModel (the specification), with close/reopen and a
// change of tail-block policy at random points; after each reopen every
// PG's floor on versions is probed (an append at its last version). PGRING_MODEL_OPS scales it
// up (the CI default is short; the long form is documented in the README).
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>

#include "util/sync.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/store_fixture.h"

namespace pgring::testing {
namespace {

int OpsPerSeed() {
  const char* e = std::getenv("PGRING_MODEL_OPS");
  return e != nullptr ? std::atoi(e) : 1500;
}

// Both backends (the ring starting in each layout), several seeds each.
class ModelTest : public StoreFixture,
                  public ::testing::WithParamInterface<std::tuple<StoreMode, uint64_t>> {};

TEST_P(ModelTest, RandomOperationsMatchTheModel) {
  const auto [mode, seed] = GetParam();
  const Backend backend = BackendOf(mode);
  SetLayout(mode, &options_);
  // A small stream and few home blocks: wraps, full-stream fallbacks and
  // forced homes within the short form; one block kept in memory of the
  // three that wait, so reads and homes read bytes back from the stream.
  options_.stream.max_chunks = 2;
  options_.stream.home_bytes = 3 * 4096;
  options_.stream.resident_bytes = 4096;
  SCOPED_TRACE("seed " + std::to_string(seed));
  options_.limits.max_entries_per_pg = 200;
  options_.limits.max_dups_per_pg = 150;
  options_.limits.max_total_entries = 2000;
  options_.limits.max_payload_bytes = 64 << 10;
  MkfsOptions mkfs = DefaultMkfs();
  mkfs.backend = backend;
  Mkfs(mkfs);
  ASSERT_OK(Open(options_));
  ASSERT_EQ(store_->backend(), backend);
  LogModel model(options_.limits);
  WorkloadParams wp;
  wp.max_pgs = 10;
  RandomWorkload work(seed, wp);
  auto& rng = work.rng();
  const int ops = OpsPerSeed();
  int refused = 0, reopens = 0;
  uint64_t stream_reads = 0;  // unhomed bytes read back, across reopens
  for (int i = 0; i < ops; ++i) {
    // Sometimes several transactions in flight at once (pipelined).
    int depth = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<std::unique_ptr<pgring::Notification>> done;
    std::vector<absl::Status> results(depth);
    std::string mismatch;
    for (int d = 0; d < depth; ++d, ++i) {
      Transaction t = work.Next(model);
      // The model has no notion of space; a full ring is checked apart.
      absl::StatusCode want = model.Apply(t);
      done.push_back(std::make_unique<pgring::Notification>());
      pgring::Notification* n = done.back().get();
      absl::Status* r = &results[d];
      absl::Status s = store_->Submit(std::move(t), [n, r](absl::Status st) {
        *r = st;
        n->Notify();
      });
      if (!s.ok()) {
        ++refused;
        done.back()->Notify();
      }
      if (s.code() != want) {
        mismatch = "op " + std::to_string(i) + ": store says " + s.ToString() +
                   ", model says " + absl::StatusCodeToString(want);
        break;
      }
    }
    // Wait for every callback before failing: they point into `done`.
    for (auto& n : done) n->WaitForNotification();
    ASSERT_EQ(mismatch, "");
    for (size_t d = 0; d < done.size(); ++d) ASSERT_OK(results[d]);
    if (std::uniform_int_distribution<int>(0, 99)(rng) < 3) {
      options_.tail_block_policy = std::uniform_int_distribution<int>(0, 1)(rng)
                                       ? TailBlockPolicy::kNeverRewrite
                                       : TailBlockPolicy::kRewriteTailBlock;
      options_.durability = static_cast<DurabilityMode>(std::uniform_int_distribution<int>(0, 2)(rng));
      // The ring's layout changes across reopens too: per-PG rings home
      // what a stream left, the stream takes over from per-PG rings.
      if (backend == Backend::kRing && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        options_.log_layout = options_.log_layout == LogLayout::kStream ? LogLayout::kPerPgRings
                                                                        : LogLayout::kStream;
      }
      stream_reads += store_->GetStoreStats().stream_reads;
      Reopen();
      ++reopens;
      ASSERT_EQ(model.Diff(*store_, i), "") << "after reopen at op " << i;
      ASSERT_EQ(model.ProbeFloors(*store_), "") << "after reopen at op " << i;
    } else if (i % 50 < 4) {
      ASSERT_EQ(model.Diff(*store_, i), "") << "at op " << i;
      ASSERT_EQ(model.ProbeFloors(*store_), "") << "at op " << i;
    }
  }
  Reopen();
  ASSERT_EQ(model.Diff(*store_), "");
  ASSERT_EQ(model.ProbeFloors(*store_), "");
  // No chunk owned twice, none leaked: owned chunks == free map complement.
  auto* ring = store_.get();
  StoreStats st = ring->GetStoreStats();
  uint64_t owned = 0;
  auto pgs = store_->ListPgs();
  ASSERT_OK(pgs);
  for (const auto& id : *pgs) owned += store_->GetPgStats(id)->chunks;
  EXPECT_EQ(owned + st.stream_chunks + st.free_chunks, st.total_chunks);
  EXPECT_GT(refused, 0);
  // In the stream layout, reads and homes took bytes out of memory back.
  if (std::get<0>(GetParam()) == StoreMode::kRingStream) EXPECT_GT(stream_reads, 0u);
  RecordProperty("reopens", reopens);
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, ModelTest,
    ::testing::Combine(kAllStoreModes, ::testing::Values(1, 2, 3, 4)),
    [](const ::testing::TestParamInfo<std::tuple<StoreMode, uint64_t>>& i) {
      return StoreModeName(std::get<0>(i.param)) + "_" + std::to_string(std::get<1>(i.param));
    });

}  // namespace
}  // namespace pgring::testing
