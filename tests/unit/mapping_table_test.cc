#include "log/mapping_table.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <memory>
#include <vector>

namespace pgring {
namespace {


TEST(MappingTable, BoundsAndPositions) {
  MappingTable t;
  const uint64_t base = (7ull << 32) - 1000;  // positions cross a 2^32 boundary
  for (uint64_t i = 0; i < 100; ++i) {
    t.Append(Version{static_cast<uint32_t>(1 + i / 50), i}, base + i * 100, 200);
  }
  EXPECT_EQ(t.LowerBound(Version{1, 10}), 10u);
  EXPECT_EQ(t.UpperBound(Version{1, 10}), 11u);
  EXPECT_EQ(t.LowerBound(Version{2, 0}), 50u);  // epoch 2 starts at version 50
  EXPECT_EQ(t.LowerBound(Version{9, 0}), 100u);
  EXPECT_EQ(t.UpperBound(Version::Min()), 0u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(MappingTable::Pos(t.at(i), base), base + i * 100);
  }
  t.PopFront();
  t.PopBack();
  EXPECT_EQ(t.size(), 98u);
  EXPECT_EQ(t.front().v(), (Version{1, 1}));
  EXPECT_EQ(MappingTable::Pos(t.back(), base + 100), base + 98 * 100);
}

TEST(MappingTable, EpochRunsFollowPushAndPop) {
  MappingTable t;
  // Epochs 1,1,2,2,2,3 at versions 0..5.
  const uint32_t epochs[] = {1, 1, 2, 2, 2, 3};
  for (uint64_t i = 0; i < 6; ++i) t.Append(Version{epochs[i], i}, i * 10, 200);
  auto f = t.PopFront();
  EXPECT_EQ(f.v(), (Version{1, 0}));
  auto f2 = t.PopFront();
  EXPECT_EQ(t.front().v(), (Version{2, 2}));
  t.PushFront(f2);  // undo
  t.PushFront(f);
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(t.at(i).v(), (Version{epochs[i], i})) << i;
  auto b = t.PopBack();
  EXPECT_EQ(b.v(), (Version{3, 5}));
  t.PopBack();
  t.PopBack();
  t.Append(Version{4, 9}, 90, 200);
  EXPECT_EQ(t.back().v(), (Version{4, 9}));
  EXPECT_EQ(t.at(2).v(), (Version{2, 2}));
  EXPECT_EQ(t.LowerBound(Version{3, 0}), 3u);  // items: 1.0 1.1 2.2 4.9
  EXPECT_EQ(t.UpperBound(Version{2, 3}), 3u);
  t.Clear();
  EXPECT_TRUE(t.empty());
  t.Append(Version{5, 1}, 0, 200);
  EXPECT_EQ(t.front().v(), (Version{5, 1}));
}

// Versions whose high 32 bits change (kept in runs, as epochs are) and
// payload sizes come back exactly through every push and pop.
TEST(MappingTable, HighVersionBitsAndSizesSurvivePushAndPop) {
  MappingTable t;
  const uint64_t v0 = (3ull << 32) - 2;  // versions cross 2^32 * 3 inside epoch 7
  for (uint64_t i = 0; i < 5; ++i) t.Append(Version{7, v0 + i}, i, static_cast<uint32_t>(100 + i));
  t.Append(Version{8, (9ull << 32) + 1}, 5, 1u << 20);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(t.at(i).v(), (Version{7, v0 + i})) << i;
    EXPECT_EQ(t.at(i).size, 100 + i) << i;
  }
  EXPECT_EQ(t.back().v(), (Version{8, (9ull << 32) + 1}));
  EXPECT_EQ(t.back().size, 1u << 20);
  EXPECT_EQ(t.LowerBound(Version{7, 3ull << 32}), 2u);
  EXPECT_EQ(t.UpperBound(Version{7, (3ull << 32) + 5}), 5u);
  auto f0 = t.PopFront(), f1 = t.PopFront(), f2 = t.PopFront();
  EXPECT_EQ(f2.v(), (Version{7, 3ull << 32}));
  EXPECT_EQ(t.front().v(), (Version{7, (3ull << 32) + 1}));
  t.PushFront(f2);
  t.PushFront(f1);
  t.PushFront(f0);
  auto b = t.PopBack();
  t.PushBack(b);
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(t.at(i).v(), (Version{7, v0 + i})) << i;
    EXPECT_EQ(t.at(i).size, 100 + i) << i;
    EXPECT_EQ(t.at(i).locator, i) << i;
  }
  EXPECT_EQ(t.back().size, 1u << 20);
}

// A cursor from any slot reads what at() reads, through epoch changes and
// after pops at the front (its epoch follows the runs).
TEST(MappingTable, CursorReadsWhatAtReads) {
  MappingTable t;
  for (uint64_t i = 0; i < 500; ++i) {
    t.Append(Version{static_cast<uint32_t>(1 + i / 37), 1000 + i}, 4096 + i * 250, 100 + i % 7);
  }
  for (int k = 0; k < 45; ++k) t.PopFront();
  for (size_t from : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{300}, t.size() - 1}) {
    size_t i = from;
    for (MappingTable::Cursor c = t.At(from); !c.done(); c.Next(), ++i) {
      ASSERT_EQ(c.index(), i);
      const MappingTable::Slot a = t.at(i), b = c.slot();
      ASSERT_EQ(a.v(), b.v()) << from << " " << i;
      ASSERT_EQ(a.locator, b.locator);
      ASSERT_EQ(a.size, b.size);
    }
    ASSERT_EQ(i, t.size());
  }
  std::vector<Version> seen;
  t.ForEach(10, 20, [&](const MappingTable::Slot& s) { seen.push_back(s.v()); });
  ASSERT_EQ(seen.size(), 10u);
  EXPECT_EQ(seen.front(), t.at(10).v());
  EXPECT_EQ(seen.back(), t.at(19).v());
}

// Measures the heap the table really takes (glibc's allocator statistics),
// and that MemoryBytes(), which the store reports, agrees.
TEST(MappingTable, MemoryIsAboutFiveBytesPerEntry) {
  size_t before = mallinfo2().uordblks;
  auto t = std::make_unique<MappingTable>();
  for (uint64_t i = 0; i < 100000; ++i) t->Append(Version{1, i}, i * 300, 200);
  size_t after = mallinfo2().uordblks;
  if (after <= before) GTEST_SKIP() << "malloc statistics unavailable (sanitizer allocator)";
  double measured = static_cast<double>(after - before) / t->size();
  double reported = static_cast<double>(t->MemoryBytes()) / t->size();
  // Deltas of 1 + 2 + 1 bytes (version, locator, size); blocks add ~1.2.
  EXPECT_LT(measured, 6.0);
  EXPECT_NEAR(reported, measured, 0.3);
}

}  // namespace
}  // namespace pgring
