#include "log/ring_layout.h"

#include <gtest/gtest.h>

namespace pgring {
namespace {

TEST(RingLayout, MapsAcrossChunksAndMergesAdjacent) {
  Geometry g;
  g.chunk_size = 65536;
  g.data_offset = 4096;
  PgChunkList c;
  c.base = 3 * 65536;
  c.chunks = {9, 2, 3};
  std::vector<Extent> ex;
  // From the last 4 KiB of chunk 9 through chunk 2 into chunk 3: 2 and 3 are
  // physically adjacent, so they merge.
  MapRange(c, g, c.base + 65536 - 4096, 4096 + 65536 + 8192, &ex);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].device_offset, 4096 + 9ull * 65536 + 65536 - 4096);
  EXPECT_EQ(ex[0].length, 4096u);
  EXPECT_EQ(ex[1].device_offset, 4096 + 2ull * 65536);
  EXPECT_EQ(ex[1].length, 65536u + 8192u);
  EXPECT_EQ(RingEnd(c, g), c.base + 3 * 65536);
  EXPECT_EQ(LapOf(c.base + 65536, g), 4u);
  ChunkPos p = Locate(c, g, c.base + 65536 + 10);
  EXPECT_EQ(p.chunk, 2);
  EXPECT_EQ(p.offset, 10u);
  EXPECT_EQ(Locate(c, g, c.base - 1).chunk, -1);
}

// The first chunk goes to the back only once wholly before the bound; the
// front chunks go back, one by one, while more than the reserve remain.
TEST(RingLayout, ReusesAndGivesBackOnlyChunksWhollyBefore) {
  Geometry g = MakeGeometry(4096, 1 << 20, 64);
  const uint64_t c0 = 3ull << 20;
  PgChunkList c;
  c.base = c0;
  c.chunks = {7, 8, 9};
  EXPECT_FALSE(ReuseFirst(&c, g, c0 + (1 << 20) - 1));
  EXPECT_EQ(c.chunks, (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_TRUE(ReuseFirst(&c, g, c0 + (1 << 20)));
  EXPECT_EQ(c.chunks, (std::vector<uint32_t>{8, 9, 7}));
  EXPECT_EQ(c.base, c0 + (1 << 20));
  PgChunkList empty;
  EXPECT_FALSE(ReuseFirst(&empty, g, ~uint64_t{0}));

  std::vector<uint32_t> freed;
  GiveBackBefore(&c, g, c.base + (2 << 20) - 1, 0, &freed);  // only chunk 8 lies wholly before
  EXPECT_EQ(freed, (std::vector<uint32_t>{8}));
  EXPECT_EQ(c.chunks, (std::vector<uint32_t>{9, 7}));
  EXPECT_EQ(c.base, c0 + (2 << 20));
  GiveBackBefore(&c, g, ~uint64_t{0}, 1, &freed);  // the reserve stays
  EXPECT_EQ(freed, (std::vector<uint32_t>{8, 9}));
  EXPECT_EQ(c.chunks, (std::vector<uint32_t>{7}));
  EXPECT_EQ(c.base, c0 + (3 << 20));
}

}  // namespace
}  // namespace pgring
