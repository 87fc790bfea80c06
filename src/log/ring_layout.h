// ring_layout.h — how a PG's logical ring positions map onto the partition.
//
// A PG's log is an ordered list of chunks. Positions in it are "lpos": a
// 64-bit byte offset in the PG's log stream that only grows. chunks[i] holds
// lpos [base + i*chunk_size, base + (i+1)*chunk_size). When the tail needs
// room, the first chunk (if it lies wholly behind the committed head) moves to
// the back (base += chunk_size): that is the ring. Otherwise a free chunk is
// added; chunks behind the head beyond the reserve are given back.
#ifndef PGRING_LOG_RING_LAYOUT_H_
#define PGRING_LOG_RING_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/label.h"
#include "format/metadata_keys.h"

namespace pgring {

struct Geometry {
  uint32_t block_size = 4096;
  uint32_t chunk_size = 1 << 20;
  uint64_t data_offset = 4096;
  uint64_t chunk_count = 0;

  uint64_t ChunkOffset(uint32_t chunk) const {
    return data_offset + static_cast<uint64_t>(chunk) * chunk_size;
  }
  uint64_t AlignDown(uint64_t x) const { return x - x % block_size; }
  uint64_t AlignUp(uint64_t x) const { return AlignDown(x + block_size - 1); }
};

// The geometry of a store whose label (or its copy in the metadata) says
// `block_size`, `chunk_size` and `chunk_count`: chunks start right after the
// label region.
inline Geometry MakeGeometry(uint32_t block_size, uint32_t chunk_size, uint64_t chunk_count) {
  Geometry g;
  g.block_size = block_size;
  g.chunk_size = chunk_size;
  g.data_offset = kLabelRegionSize;
  g.chunk_count = chunk_count;
  return g;
}

// A piece of a logical range on the device.
struct Extent {
  uint64_t device_offset;
  uint64_t length;
};

// lpos just past the ring's last chunk.
inline uint64_t RingEnd(const PgChunkList& c, const Geometry& g) { return c.End(g.chunk_size); }

// The ring's two moves at its front, shared by the PG rings and the log
// stream. ReuseFirst moves the first chunk to the back (the next lap) if it
// lies wholly before `before` (the head, and the durable head: no pointer
// that may survive a crash reads it); false if not.
bool ReuseFirst(PgChunkList* c, const Geometry& g, uint64_t before);
// GiveBackBefore appends to `freed` and drops the chunks that lie wholly
// before `before`, while more than `keep` remain.
void GiveBackBefore(PgChunkList* c, const Geometry& g, uint64_t before, size_t keep,
                    std::vector<uint32_t>* freed);

// The lap a record starting at `lpos` is stamped with.
inline uint32_t LapOf(uint64_t lpos, const Geometry& g) {
  return static_cast<uint32_t>(lpos / g.chunk_size);
}

// Appends to `out` the device extents of logical [lpos, lpos + len), which
// must lie within [chunks.base, RingEnd). Extents split at chunk boundaries.
void MapRange(const PgChunkList& chunks, const Geometry& g, uint64_t lpos,
              uint64_t len, std::vector<Extent>* out);

// The chunk number and offset within it of `lpos` (for error messages).
struct ChunkPos {
  int64_t chunk = -1;  // -1: outside the ring
  uint64_t offset = 0;
};
ChunkPos Locate(const PgChunkList& chunks, const Geometry& g, uint64_t lpos);

}  // namespace pgring

#endif  // PGRING_LOG_RING_LAYOUT_H_
