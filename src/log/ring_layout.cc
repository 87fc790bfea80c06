#include "log/ring_layout.h"

#include <algorithm>
#include <cassert>

namespace pgring {

bool ReuseFirst(PgChunkList* c, const Geometry& g, uint64_t before) {
  if (c->chunks.empty() || c->base + g.chunk_size > before) return false;
  const uint32_t first = c->chunks.front();
  c->chunks.erase(c->chunks.begin());
  c->chunks.push_back(first);
  c->base += g.chunk_size;
  return true;
}

void GiveBackBefore(PgChunkList* c, const Geometry& g, uint64_t before, size_t keep,
                    std::vector<uint32_t>* freed) {
  while (c->chunks.size() > keep && c->base + g.chunk_size <= before) {
    freed->push_back(c->chunks.front());
    c->chunks.erase(c->chunks.begin());
    c->base += g.chunk_size;
  }
}

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
