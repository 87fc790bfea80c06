#include "log/unhomed_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>

namespace pgring {
namespace {

constexpr uint64_t k4G = uint64_t{1} << 32;

void ExpectSame(const UnhomedRuns& runs, const std::deque<UnhomedRun>& model, int op) {
  ASSERT_EQ(runs.size(), model.size()) << "op " << op;
  for (size_t i = 0; i < model.size(); ++i) {
    ASSERT_EQ(runs[i], model[i]) << "op " << op << " run " << i;
  }
  ASSERT_TRUE(std::equal(runs.begin(), runs.end(), model.begin(), model.end())) << "op " << op;
}

// Runs as a PG makes them (ring and stream positions rising, a record's
// data ending past its start), pushed and popped at random against a plain
// deque, with gaps that cross 4 GiB now and then: the list always returns
// exactly the runs pushed and not popped.
TEST(UnhomedRuns, HoldsWhatWasPushedAndNotPopped) {
  std::mt19937_64 rng(11);
  UnhomedRuns runs;
  std::deque<UnhomedRun> model;
  uint64_t pushed = 0, popped = 0;
  // A walker's place saved at a random run: resumed later it stands on the
  // same run while that run is held.
  UnhomedRuns::Mark mark;
  uint64_t marked = 0;  // pushed before the marked run
  uint64_t ring = 1000, stream = 5 << 20;
  for (int op = 0; op < 50000; ++op) {
    if (rng() % 3 != 0 || model.empty()) {
      ring += 1 + rng() % 4000;
      // Mostly near (records of one PG among others'), sometimes 4 GiB on.
      stream += rng() % 1000 == 0 ? k4G + rng() % 4096 : 24 + rng() % 40000;
      // Some in compressed records, whose data_end is the record's end.
      const UnhomedRun r{ring, stream, stream + 24 + rng() % 5000, rng() % 4 == 0};
      runs.push_back(r);
      model.push_back(r);
      ++pushed;
    } else {
      const size_t n = 1 + rng() % std::min<size_t>(model.size(), 50);
      for (size_t i = 0; i < n; ++i) {
        runs.pop_front();
        model.pop_front();
        ++popped;
      }
    }
    ExpectSame(runs, model, op);
    UnhomedRuns::Walker w;
    if (runs.Resume(mark, &w)) {
      ASSERT_GE(marked, popped) << "op " << op;
      ASSERT_EQ(w.index(), marked - popped);
      ASSERT_EQ(w.run(), model[marked - popped]) << "op " << op;
      w.Next();
      if (!w.done()) ASSERT_EQ(w.run(), model[marked - popped + 1]) << "op " << op;
    } else {
      ASSERT_TRUE(op == 0 || marked < popped || !mark.valid) << "op " << op;
    }
    if (model.empty()) continue;
    if (rng() % 10 == 0) {
      const size_t i = rng() % model.size();
      mark = runs.Save(runs.WalkFrom(i));
      marked = popped + i;
    }
    // The search matches a bisection of the model, near the newest and
    // anywhere.
    const uint64_t at = model.front().ring_end - 1 + rng() % (ring - model.front().ring_end + 2);
    const size_t want = std::upper_bound(model.begin(), model.end(), at,
                                         [](uint64_t a, const UnhomedRun& r) {
                                           return a < r.ring_end;
                                         }) -
                        model.begin();
    ASSERT_EQ(runs.FirstEndingPast(at), want) << "op " << op << " at " << at;
    ASSERT_EQ(runs.FirstEndingPast(model.back().ring_end - 1), model.size() - 1);
    ASSERT_EQ(runs.FirstEndingPast(model.back().ring_end), model.size());
  }
}

// Runs as a written-once stream makes them, one record of the PG every
// ~150 KB of stream (1,024 PGs sharing it), take about seven bytes each;
// runs far apart (past 4 GiB) cost a few bytes more and stay exact.
TEST(UnhomedRuns, AboutSevenBytesARunAndExactAtAnyDistance) {
  UnhomedRuns runs;
  for (uint64_t i = 1; i <= 6400; ++i) {
    runs.push_back({i * 300, (10 << 20) + i * 150000, (10 << 20) + i * 150000 + 300 + i % 40});
  }
  EXPECT_LT(static_cast<double>(runs.bytes()) / runs.size(), 8.0);
  const UnhomedRun far{6401 * 300, (10 << 20) + 2 * k4G, (10 << 20) + 2 * k4G + 300};
  runs.push_back(far);
  EXPECT_EQ(runs.back(), far);
  EXPECT_EQ(runs[6399], (UnhomedRun{6400 * 300, (10 << 20) + 6400 * 150000,
                                    (10 << 20) + 6400 * 150000 + 300 + 0}));
  EXPECT_EQ(runs.front(), (UnhomedRun{300, (10 << 20) + 150000, (10 << 20) + 150000 + 301}));
  for (int i = 0; i < 6400; ++i) runs.pop_front();
  EXPECT_EQ(runs.front(), far);
}

// A compressed run keeps its flag and its record's length (up to the
// largest record).
TEST(UnhomedRuns, KeepsWhetherARunsRecordIsCompressed) {
  const uint64_t largest = 24 + (uint64_t{1} << 24) - 1;
  UnhomedRuns runs = {UnhomedRun{100, 4096, 4096 + largest, true},
                      UnhomedRun{200, 4096 + largest, 4096 + largest + 60, false},
                      UnhomedRun{300, 9 << 24, (9 << 24) + 80, true},
                      UnhomedRun{400, 4096 + 5 * k4G, 4096 + 5 * k4G + 100, true}};
  EXPECT_EQ((UnhomedRun{100, 4096, 4096 + largest, true}), runs[0]);
  EXPECT_FALSE(runs[1].compressed);
  EXPECT_TRUE(runs[2].compressed);
  EXPECT_TRUE(runs[3].compressed);
  EXPECT_EQ(runs[3].data_end, 4096 + 5 * k4G + 100);
}

// What the store's readers do with it: bisect by ring_end, walk back with
// std::prev, copy it.
TEST(UnhomedRuns, IteratesAsARandomAccessRange) {
  const UnhomedRuns runs = {{1300, 8192, 8192 + 700}, {1500, 16384, 16384 + 300},
                            {2000, 20480, 20480 + 600}};
  auto it = std::upper_bound(runs.begin(), runs.end(), uint64_t{1400},
                             [](uint64_t at, const UnhomedRun& r) { return at < r.ring_end; });
  ASSERT_EQ(it - runs.begin(), 1);
  EXPECT_EQ(it->stream_pos, 16384u);
  EXPECT_EQ(std::prev(it)->ring_end, 1300u);
  EXPECT_EQ((*(it + 1)).data_end, 20480u + 600);
  UnhomedRuns copy = runs;
  copy.pop_front();
  EXPECT_EQ(runs.size(), 3u);
  EXPECT_EQ(copy.front(), runs[1]);
}

}  // namespace
}  // namespace pgring
