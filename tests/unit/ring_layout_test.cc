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

}  // namespace
}  // namespace pgring
