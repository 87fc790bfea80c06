#include "log/ring_layout.h"

#include <algorithm>
#include <cassert>

namespace pgring {

void MapRange(const PgChunkList& chunks, const Geometry& g, uint64_t lpos,
              uint64_t len, std::vector<Extent>* out) {
  assert(lpos >= chunks.base && lpos + len <= RingEnd(chunks, g));
  while (len > 0) {
    uint64_t rel = lpos - chunks.base;
    uint64_t idx = rel / g.chunk_size;
    uint64_t off = rel % g.chunk_size;
    uint64_t n = std::min<uint64_t>(len, g.chunk_size - off);
    uint64_t dev = g.ChunkOffset(chunks.chunks[idx]) + off;
    if (!out->empty() && out->back().device_offset + out->back().length == dev) {
      out->back().length += n;  // physically adjacent chunks: one I/O
    } else {
      out->push_back(Extent{dev, n});
    }
    lpos += n;
    len -= n;
  }
}

ChunkPos Locate(const PgChunkList& chunks, const Geometry& g, uint64_t lpos) {
  if (lpos < chunks.base || lpos >= RingEnd(chunks, g)) return ChunkPos{};
  uint64_t rel = lpos - chunks.base;
  return ChunkPos{chunks.chunks[rel / g.chunk_size], rel % g.chunk_size};
}

}  // namespace pgring
