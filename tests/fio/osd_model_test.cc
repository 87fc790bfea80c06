// osd_model_test.cc — the fio engine's OSD model against Ceph's rules: the
// per-PG log target, calc_trim_to_aggressive(), dups from
// PGLog::IndexedLog::trim(), the full info on trimming writes, the prefill,
// and that a store written through the model holds exactly what the model
// expects (CheckStore), on both backends.
#include "osd_model.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <random>

#include "util/store_fixture.h"
#include "small_osd_config.h"

namespace pgring::fio {
namespace {

using pgring::testing::StoreFixture;

// Small Ceph-shaped settings so that a few thousand writes trim many times:

TEST(OsdModelRules, TargetIsCephsPerOsdBudgetClamped) {
  EngineConfig c;  // Ceph's defaults: 300000 per OSD, clamped to [250, 10000]
  c.pgs = 128;
  EXPECT_EQ(c.TargetLogEntries(), 2343u);
  c.pgs = 100;
  EXPECT_EQ(c.TargetLogEntries(), 3000u);
  c.pgs = 10;
  EXPECT_EQ(c.TargetLogEntries(), 10000u);  // osd_max_pg_log_entries
  c.pgs = 2000;
  EXPECT_EQ(c.TargetLogEntries(), 250u);    // osd_min_pg_log_entries
}

TEST(OsdModelRules, StableModMatchesCeph) {
  // ceph_stable_mod(x, b, bmask) with bmask = next power of two - 1.
  EXPECT_EQ(CephStableMod(0x1234, 128), 0x1234u & 127);
  for (uint32_t x = 0; x < 4096; ++x) {
    const uint32_t m = CephStableMod(x, 12);  // bmask 15
    EXPECT_LT(m, 12u);
    EXPECT_EQ(m, (x & 15) < 12 ? (x & 15) : (x & 7));
  }
}

TEST(OsdModelRules, ObjectsSpreadOverPgs) {
  EngineConfig c;
  OsdModel model(c);
  std::vector<int> hits(c.pgs);
  for (uint64_t obj = 0; obj < 128 * 64; ++obj) ++hits[model.PgOf(obj)];
  for (int h : hits) {
    EXPECT_GT(h, 20);   // 64 expected per PG
    EXPECT_LT(h, 120);
  }
}

TEST(OsdModelRules, PayloadsAreDeterministicAndSized) {
  EngineConfig c;
  for (uint64_t v = 1; v < 500; ++v) {
    const std::string e = EntryPayload(c, 3, v);
    EXPECT_GE(e.size(), c.entry_min);
    EXPECT_LE(e.size(), c.entry_max);
    EXPECT_EQ(e, EntryPayload(c, 3, v));
    EXPECT_NE(e, EntryPayload(c, 4, v));
  }
  EXPECT_EQ(DupPayload(c, 1, 2).size(), 57u);  // Ceph's pg_log_dup_t, the default
  EngineConfig sized = c;
  sized.dup_size = 90;
  sized.oi_attr_len = 250;
  EXPECT_EQ(DupPayload(sized, 1, 2).size(), 90u);
  EXPECT_EQ(OnodePayload(sized, 9, 2).size(), c.onode_size + 250u);
  EXPECT_EQ(InfoPayload(c, 1, 2, true).size(), c.info_size);
  EXPECT_EQ(InfoPayload(c, 1, 2, false).size(), c.fastinfo_size);
  EXPECT_EQ(OnodePayload(c, 9, 2).size(), c.onode_size);
  EXPECT_EQ(OnodeKey(0x2a), "onode.000000000000002a");
}

class OsdModelStoreTest : public StoreFixture, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    MkfsAndOpen(GetParam());
  }

  // Submits one write with an open gate and waits for its commit.
  absl::Status Write(OsdModel& model, uint64_t object, uint32_t pool = 0) {
    auto gate = std::make_shared<CommitGate>();
    gate->Open();
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    absl::Status result;
    auto op = model.SubmitWrite(store_.get(), object, gate, [&](OsdModel::WriteOp, absl::Status s) {
      std::lock_guard<std::mutex> lk(mu);
      result = s;
      done = true;
      cv.notify_all();
    }, pool);
    if (!op.ok()) return op.status();
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return done; });
    return result;
  }

  void ExpectStoreMatches(const OsdModel& model) {
    const CheckResult r = model.CheckStore(*store_);
    EXPECT_EQ(r.error_count, 0u) << (r.errors.empty() ? "" : r.errors.front());
    EXPECT_EQ(r.pgs, model.config().TotalPgs());
  }
};

TEST_P(OsdModelStoreTest, PrefillIsASteadyStateLog) {
  const EngineConfig c = SmallConfig();
  OsdModel model(c);
  ASSERT_OK(model.Setup(store_.get()));
  const uint64_t target = c.TargetLogEntries();
  ASSERT_EQ(target, 30u);
  for (uint32_t pg = 0; pg < c.pgs; ++pg) {
    const PgExpectation x = model.Expectation(pg);
    EXPECT_EQ(x.head, 60u);  // max(target, dups_tracked)
    EXPECT_EQ(x.entries(), target);
    EXPECT_EQ(x.dups(), 60u - target);
    EXPECT_EQ(x.last_dup + 1, x.first_entry);
  }
  ExpectStoreMatches(model);
}

// numjobs>1 without pgring_single_pool_mode: each job a pool of its own,
// with pgring_pgs PGs each, and Ceph's per-OSD log budget spread over all.
TEST_P(OsdModelStoreTest, EachPoolHasItsOwnPgs) {
  EngineConfig c = SmallConfig();
  c.pools = 2;
  EXPECT_EQ(c.TotalPgs(), 32u);
  EXPECT_EQ(c.TargetLogEntries(), 20u);  // 480 / 32 = 15, clamped to osd_min_pg_log_entries
  OsdModel model(c);
  ASSERT_EQ(model.slots(), 32u);
  ASSERT_OK(model.Setup(store_.get()));
  auto listed = store_->ListPgs();
  ASSERT_OK(listed.status());
  ASSERT_EQ(listed->size(), 32u);
  for (const PgId& id : *listed) {
    EXPECT_TRUE(id.pool == 1 || id.pool == 2) << id.ToString();
    EXPECT_LT(id.seed, 16u) << id.ToString();
  }
  // The same object in each pool: the same seed, two PGs.
  const uint32_t seed = model.PgOf(7);
  ASSERT_OK(Write(model, 7, 0));
  ASSERT_OK(Write(model, 7, 1));
  ASSERT_OK(Write(model, 7, 1));
  EXPECT_EQ(model.PgIdOf(seed).ToString(), (PgId{1, seed, -1}.ToString()));
  EXPECT_EQ(model.PgIdOf(16 + seed).ToString(), (PgId{2, seed, -1}.ToString()));
  EXPECT_EQ(model.Expectation(seed).writes, 1u);
  EXPECT_EQ(model.Expectation(16 + seed).writes, 2u);
  EXPECT_EQ(SlotOf(PgId{2, seed, -1}, c.pgs, c.pools), 16 + seed);
  EXPECT_EQ(SlotOf(PgId{3, seed, -1}, c.pgs, c.pools), std::nullopt);
  EXPECT_EQ(Write(model, 7, 2).code(), absl::StatusCode::kInvalidArgument);
  ExpectStoreMatches(model);
}

TEST_P(OsdModelStoreTest, TrimsAsCephAndTurnsTrimmedEntriesIntoDups) {
  const EngineConfig c = SmallConfig();
  OsdModel model(c);
  ASSERT_OK(model.Setup(store_.get()));
  std::mt19937_64 rng(42);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_OK(Write(model, rng() % 4096));
    if (i % 500 == 0) ExpectStoreMatches(model);
  }
  const uint64_t target = c.TargetLogEntries();
  uint64_t writes = 0;
  for (uint32_t pg = 0; pg < c.pgs; ++pg) {
    const PgExpectation x = model.Expectation(pg);
    writes += x.writes;
    // Each write commits before the next, so the trim is never held back:
    // the log holds target..target+trim_min entries.
    EXPECT_GE(x.entries(), target) << "PG " << pg;
    EXPECT_LE(x.entries(), target + c.osd_pg_log_trim_min) << "PG " << pg;
    // The dups are the trimmed entries within dups_tracked of the head as
    // of the last trim: right below the log, never older than that.
    EXPECT_EQ(x.last_dup + 1, x.first_entry) << "PG " << pg;
    EXPECT_LE(x.dups(), c.osd_pg_log_dups_tracked - target) << "PG " << pg;
    EXPECT_GE(x.first_dup + c.osd_pg_log_dups_tracked, x.head + 1 - c.osd_pg_log_trim_min)
        << "PG " << pg;
  }
  EXPECT_EQ(writes, 3000u);
  const ModelCounters& n = model.counters();
  EXPECT_EQ(n.entries.load(), 3000u);
  EXPECT_GT(n.trims.load(), 3000u / (c.osd_pg_log_trim_min + 1) - c.pgs);
  // No full_info_every: the full info goes exactly with the trims.
  EXPECT_EQ(n.full_infos.load(), n.trims.load());
  EXPECT_EQ(n.fast_infos.load() + n.full_infos.load(), 3000u);
  ExpectStoreMatches(model);
  // And after a restart.
  Reopen();
  ExpectStoreMatches(model);
}

TEST_P(OsdModelStoreTest, FullInfoEveryNthWrite) {
  EngineConfig c = SmallConfig();
  c.full_info_every = 4;
  c.prefill = false;
  c.osd_min_pg_log_entries = c.osd_max_pg_log_entries = 1000;  // no trims
  OsdModel model(c);
  ASSERT_OK(model.Setup(store_.get()));
  for (int i = 0; i < 64; ++i) ASSERT_OK(Write(model, 0));
  EXPECT_EQ(model.counters().trims.load(), 0u);
  EXPECT_EQ(model.counters().full_infos.load(), 16u);
  ExpectStoreMatches(model);
}

TEST_P(OsdModelStoreTest, NeverTrimsPastTheLastCommittedVersion) {
  EngineConfig c = SmallConfig();
  OsdModel model(c);
  ASSERT_OK(model.Setup(store_.get()));
  const uint32_t pg = model.PgOf(7);
  const PgExpectation start = model.Expectation(pg);
  // Hold every commit: the log passes target + trim_min, but trimming would
  // pass last_update_ondisk (Ceph's limit), which stays at the prefill head.
  std::vector<std::shared_ptr<CommitGate>> gates;
  std::mutex mu;
  std::condition_variable cv;
  int committed = 0;
  for (int i = 0; i < 40; ++i) {
    auto gate = std::make_shared<CommitGate>();
    gates.push_back(gate);
    ASSERT_OK(model.SubmitWrite(store_.get(), 7, gate, [&](OsdModel::WriteOp, absl::Status s) {
      EXPECT_OK(s);
      std::lock_guard<std::mutex> lk(mu);
      ++committed;
      cv.notify_all();
    }));
    EXPECT_LE(model.Expectation(pg).first_entry, start.head + 1) << "write " << i;
  }
  for (auto& g : gates) g->Open();
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return committed == 40; });
  }
  ASSERT_OK(Write(model, 7));  // now the trim catches up
  EXPECT_LE(model.Expectation(pg).entries(), c.TargetLogEntries() + 1);
  ExpectStoreMatches(model);
}

TEST_P(OsdModelStoreTest, ContinuesAnExistingStore) {
  const EngineConfig c = SmallConfig();
  {
    OsdModel model(c);
    ASSERT_OK(model.Setup(store_.get()));
    for (int i = 0; i < 500; ++i) ASSERT_OK(Write(model, static_cast<uint64_t>(i) * 13));
  }
  Reopen();
  OsdModel again(c);
  ASSERT_OK(again.Setup(store_.get()));
  ExpectStoreMatches(again);
  for (int i = 0; i < 500; ++i) ASSERT_OK(Write(again, static_cast<uint64_t>(i) * 7));
  ExpectStoreMatches(again);
}

TEST_P(OsdModelStoreTest, CheckStoreSeesAWriteItDidNotMake) {
  const EngineConfig c = SmallConfig();
  OsdModel model(c);
  ASSERT_OK(model.Setup(store_.get()));
  ASSERT_OK(Write(model, 1));
  // A second model that believes in one more write than the store holds.
  OsdModel ahead(c);
  ASSERT_OK(ahead.Setup(store_.get()));
  ASSERT_OK(Write(ahead, 1));
  const CheckResult r = model.CheckStore(*store_);
  EXPECT_GT(r.error_count, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, OsdModelStoreTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return std::string(BackendName(i.param));
                         });

}  // namespace
}  // namespace pgring::fio
