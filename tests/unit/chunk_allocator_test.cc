#include "alloc/chunk_allocator.h"

#include <gtest/gtest.h>

#include <set>

namespace pgring {
namespace {

TEST(ChunkAllocator, AllocatesEveryChunkOnceThenRunsOut) {
  ChunkAllocator a(130);  // not a multiple of 64: the last word is partial
  std::set<uint32_t> got;
  for (int i = 0; i < 130; ++i) {
    auto c = a.Allocate();
    ASSERT_TRUE(c.has_value());
    ASSERT_LT(*c, 130u);
    ASSERT_TRUE(got.insert(*c).second) << "chunk " << *c << " handed out twice";
  }
  EXPECT_FALSE(a.Allocate().has_value());
  EXPECT_EQ(a.free_count(), 0u);
  a.Release(77);
  EXPECT_EQ(a.free_count(), 1u);
  EXPECT_EQ(a.Allocate(), 77u);
}

TEST(ChunkAllocator, MarkOwnedRefusesConflictsAndRange) {
  ChunkAllocator a(10);
  EXPECT_TRUE(a.MarkOwned(3));
  EXPECT_FALSE(a.MarkOwned(3));
  EXPECT_FALSE(a.MarkOwned(10));
  EXPECT_TRUE(a.IsOwned(3));
  EXPECT_EQ(a.free_count(), 9u);
  for (int i = 0; i < 9; ++i) EXPECT_NE(a.Allocate(), 3u);
  EXPECT_FALSE(a.Allocate().has_value());
}

TEST(ChunkAllocator, NextFitSpreadsReuse) {
  ChunkAllocator a(8);
  auto c0 = a.Allocate();
  a.Release(*c0);
  // The cursor moved on: the chunk just released is not the next one given.
  EXPECT_NE(a.Allocate(), c0);
}

}  // namespace
}  // namespace pgring
