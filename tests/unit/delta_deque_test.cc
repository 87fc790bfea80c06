#include "util/delta_deque.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>

namespace pgring {
namespace {

using D = DeltaDeque<3>;

void ExpectSame(const D& d, const std::deque<D::Value>& model, int op) {
  ASSERT_EQ(d.size(), model.size()) << "op " << op;
  if (model.empty()) return;
  ASSERT_EQ(d.front(), model.front()) << "op " << op;
  ASSERT_EQ(d.back(), model.back()) << "op " << op;
  size_t i = 0;
  for (D::Cursor c = d.At(0); !c.done(); c.Next(), ++i) {
    ASSERT_EQ(c.index(), i);
    ASSERT_EQ(c.value(), model[i]) << "op " << op << " at " << i;
  }
  ASSERT_EQ(i, model.size());
}

// Values with small steps, large ones, steps back and wraps past 2^64, pushed
// and popped at both ends at random against a plain deque: every read (the
// ends, random access, a cursor from anywhere, the partition point) returns
// exactly what was pushed and not popped.
TEST(DeltaDeque, HoldsExactlyWhatWasPushedAndNotPopped) {
  std::mt19937_64 rng(7);
  D d;
  std::deque<D::Value> model;
  D::Value last{1000, 0, 5};
  auto next = [&] {
    D::Value v = last;
    switch (rng() % 8) {
      case 0: v[1] += rng(); break;                // any distance, wrapping
      case 1: v[2] -= rng() % 1000; break;          // a step back
      case 2: v[1] += uint64_t{1} << 40; break;
      default: v[1] += rng() % 500; v[2] += rng() % 3; break;
    }
    v[0] += 1 + rng() % 3;  // field 0 strictly increases: the search key
    return last = v;
  };
  for (int op = 0; op < 20000; ++op) {
    const int what = static_cast<int>(rng() % 100);
    if (what < 55 || model.empty()) {
      const D::Value v = next();
      d.push_back(v);
      model.push_back(v);
    } else if (what < 80) {
      ASSERT_EQ(d.pop_front(), model.front()) << op;
      model.pop_front();
    } else if (what < 95) {
      ASSERT_EQ(d.pop_back(), model.back()) << op;
      model.pop_back();
      if (!model.empty()) last = model.back();
    } else if (!model.empty()) {
      // Undo a pop at the front: a value just below the first.
      D::Value v = model.front();
      v[0] -= 1;
      if (v[0] > 0 && (model.size() < 2 || v[0] != model[0][0])) {
        d.push_front(v);
        model.push_front(v);
      }
    }
    if (op % 97 == 0) ExpectSame(d, model, op);
    if (!model.empty()) {
      const size_t i = rng() % model.size();
      ASSERT_EQ(d[i], model[i]) << op;
      const uint64_t key = model[i][0];
      const size_t want = static_cast<size_t>(
          std::lower_bound(model.begin(), model.end(), key,
                           [](const D::Value& v, uint64_t k) { return v[0] < k; }) -
          model.begin());
      ASSERT_EQ(d.PartitionPoint([&](size_t, const D::Value& v) { return v[0] < key; }), want);
      ASSERT_EQ(d.PartitionPoint([&](size_t, const D::Value&) { return true; }), model.size());
      ASSERT_EQ(d.PartitionPoint([&](size_t, const D::Value&) { return false; }), 0u);
    }
  }
  ExpectSame(d, model, -1);
  while (!model.empty()) {
    ASSERT_EQ(d.pop_back(), model.back());
    model.pop_back();
  }
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.MemoryBytes(), D().MemoryBytes());
}

// PartitionPoint hands the predicate each value's index.
TEST(DeltaDeque, PartitionPointPassesIndices) {
  D d;
  for (uint64_t i = 0; i < 300; ++i) d.push_back({i * 2, 0, 0});
  for (int k = 0; k < 10; ++k) d.pop_front();
  for (size_t cut : {size_t{0}, size_t{1}, size_t{53}, size_t{54}, size_t{200}, size_t{290}}) {
    EXPECT_EQ(d.PartitionPoint([&](size_t i, const D::Value& v) {
                EXPECT_EQ(v[0], (i + 10) * 2);
                return i < cut;
              }),
              cut);
  }
}

// A saved place resumes across pushes at the back and pops at the front,
// and not once its value is popped or the deque changed otherwise.
TEST(DeltaDeque, MarksResumeUntilTheirValueGoesOrTheDequeIsRewritten) {
  D d;
  for (uint64_t i = 0; i < 200; ++i) d.push_back({i, i * 7, 1});
  const D::Mark m = d.Save(d.At(100));
  for (uint64_t i = 200; i < 400; ++i) d.push_back({i, i * 7, 1});
  for (int k = 0; k < 90; ++k) d.pop_front();
  D::Cursor c;
  ASSERT_TRUE(d.Resume(m, &c));
  EXPECT_EQ(c.index(), 10u);
  EXPECT_EQ(c.value(), (D::Value{100, 700, 1}));
  c.Next();
  EXPECT_EQ(c.value(), (D::Value{101, 707, 1}));
  EXPECT_FALSE(d.Save(d.At(d.size())).valid);  // the end is no place
  for (int k = 0; k < 11; ++k) d.pop_front();
  EXPECT_FALSE(d.Resume(m, &c));  // its value is gone
  const D::Mark back = d.Save(d.At(5));
  d.pop_back();
  EXPECT_FALSE(d.Resume(back, &c));
  const D::Mark front = d.Save(d.At(5));
  d.push_front({0, 0, 0});
  EXPECT_FALSE(d.Resume(front, &c));
  const D::Mark cleared = d.Save(d.At(5));
  d.clear();
  d.push_back({1, 1, 1});
  EXPECT_FALSE(d.Resume(cleared, &c));
}

// Neighbours a few bytes apart take a few bytes each, and MemoryBytes()
// agrees with what glibc's allocator holds for them.
TEST(DeltaDeque, CloseNeighboursTakeAFewBytesAndMemoryBytesAgrees) {
  const size_t before = mallinfo2().uordblks;
  auto d = std::make_unique<D>();
  for (uint64_t i = 0; i < 100000; ++i) d->push_back({i, i * 300, 200 + i % 50});
  const size_t after = mallinfo2().uordblks;
  if (after <= before) GTEST_SKIP() << "malloc statistics unavailable (sanitizer allocator)";
  const double measured = static_cast<double>(after - before) / d->size();
  const double reported = static_cast<double>(d->MemoryBytes()) / d->size();
  // 1 + 2 + 1 bytes of deltas, the blocks' headers ~1.
  EXPECT_LT(measured, 6.0);
  EXPECT_NEAR(reported, measured, 0.3);
}

}  // namespace
}  // namespace pgring
