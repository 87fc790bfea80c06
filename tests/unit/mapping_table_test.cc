#include "log/mapping_table.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <memory>

namespace pgring {
namespace {

TEST(MappingTable, SlotIsSixteenBytes) { EXPECT_EQ(sizeof(MappingTable::Slot), 16u); }

TEST(MappingTable, BoundsAndPositions) {
  MappingTable t;
  const uint64_t base = (7ull << 32) - 1000;  // positions cross a 2^32 boundary
  for (uint64_t i = 0; i < 100; ++i) t.Append(Version{static_cast<uint32_t>(1 + i / 50), i}, base + i * 100);
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

// Measures the heap the table really takes (glibc's allocator statistics),
// and that MemoryBytes(), which the store reports, agrees.
TEST(MappingTable, MemoryIsAboutSixteenBytesPerEntry) {
  size_t before = mallinfo2().uordblks;
  auto t = std::make_unique<MappingTable>();
  for (uint64_t i = 0; i < 100000; ++i) t->Append(Version{1, i}, i * 300);
  size_t after = mallinfo2().uordblks;
  if (after <= before) GTEST_SKIP() << "malloc statistics unavailable (sanitizer allocator)";
  double measured = static_cast<double>(after - before) / t->size();
  double reported = static_cast<double>(t->MemoryBytes()) / t->size();
  // The slot is 16 bytes; the deque adds ~1 byte (block headers, its map).
  EXPECT_LT(measured, 17.5);
  EXPECT_NEAR(reported, measured, 0.5);
}

}  // namespace
}  // namespace pgring
