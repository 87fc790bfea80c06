// mapping_table.h — a PG's in-memory index from version to where a backend
// finds the item. One per PG for entries and one for dups.
//
// Each item costs 12 bytes in memory: the low 32 bits of its version, its
// payload size (the PG's statistics sum them) and a 32-bit locator the
// backend chooses. The ring backend keeps the low 32 bits of the logical
// position (lpos) of the record that holds the item, and rebuilds the full
// position from an anchor (the ring's head, see Pos()): a live record lies in
// [head, head + 2^32), because a ring is at most Limits::max_chunks_per_pg *
// chunk_size <= 4 GiB long. The RocksDB backend, which finds items by their
// keys, needs none. Epochs and the versions' high 32 bits change rarely, so
// they are kept as runs (first item, epoch, high bits) beside the items.
//
// Versions are strictly increasing, so lookups are binary searches (O(log n));
// trim pops from the front and rewind from the back (O(1) each), as a deque.
#ifndef PGRING_LOG_MAPPING_TABLE_H_
#define PGRING_LOG_MAPPING_TABLE_H_

#include <cstdint>
#include <deque>

#include "pgring/types.h"

namespace pgring {

class MappingTable {
 public:
  // One item, as the table hands it out.
  struct Slot {
    uint64_t version;
    uint32_t epoch;
    uint32_t locator;  // the backend's (see above)
    uint32_t size;     // payload bytes
    Version v() const { return Version{epoch, version}; }
  };

  void Append(const Version& v, uint64_t locator, uint32_t size) {
    PushBack(Slot{v.version, v.epoch, static_cast<uint32_t>(locator), size});
  }
  void PushBack(const Slot& s);
  void PushFront(const Slot& s);

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  Slot at(size_t i) const;
  Slot front() const { return at(0); }
  Slot back() const { return at(items_.size() - 1); }

  // The ring position of `s` whose locator is the low 32 bits of an lpos,
  // given an anchor <= every live position.
  static uint64_t Pos(const Slot& s, uint64_t anchor) {
    return anchor + static_cast<uint32_t>(s.locator - static_cast<uint32_t>(anchor));
  }

  // Index of the first slot with version >= v (size() if none).
  size_t LowerBound(const Version& v) const;
  // Index of the first slot with version > v (size() if none).
  size_t UpperBound(const Version& v) const;

  Slot PopFront();
  Slot PopBack();
  void Clear();

  // Heap bytes held (items, epoch runs, the deques' block overhead).
  size_t MemoryBytes() const;

 private:
  struct Item {
    uint32_t version_lo;
    uint32_t locator;
    uint32_t size;
  };
  static_assert(sizeof(Item) == 12);
  // Items from `first` on (to the next run) share the epoch and the
  // version's high 32 bits.
  struct Run {
    uint64_t first;  // absolute index of the run's first item
    uint32_t epoch;
    uint32_t version_hi;
  };
  const Run& RunOf(uint64_t absolute) const;
  static Item ItemOf(const Slot& s) {
    return Item{static_cast<uint32_t>(s.version), s.locator, s.size};
  }
  static bool SameRun(const Run& r, const Slot& s) {
    return r.epoch == s.epoch && r.version_hi == static_cast<uint32_t>(s.version >> 32);
  }

  std::deque<Item> items_;
  std::deque<Run> runs_;  // ordered by `first`; runs_[0].first <= base_
  uint64_t base_ = 0;          // absolute index of items_[0]
};

}  // namespace pgring

#endif  // PGRING_LOG_MAPPING_TABLE_H_
