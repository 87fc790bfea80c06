// mapping_table.h — a PG's in-memory index from version to ring position.
// One per PG for entries and one for dups.
//
// Each slot is 16 bytes: the version (8 + 4 bytes) and the low 32 bits of
// the logical position (lpos) of the record that holds the item. The full
// position is rebuilt from an anchor the caller passes (the ring's head):
// a live record lies in [head, head + 2^32), because a ring is at most
// Limits::max_chunks_per_pg * chunk_size <= 4 GiB long.
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
  struct Slot {
    uint64_t version;
    uint32_t epoch;
    uint32_t pos_low;
    Version v() const { return Version{epoch, version}; }
  };
  static_assert(sizeof(Slot) == 16);

  void Append(const Version& v, uint64_t pos) {
    slots_.push_back(Slot{v.version, v.epoch, static_cast<uint32_t>(pos)});
  }
  void PushBack(const Slot& s) { slots_.push_back(s); }
  void PushFront(const Slot& s) { slots_.push_front(s); }

  size_t size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }
  const Slot& at(size_t i) const { return slots_[i]; }
  const Slot& front() const { return slots_.front(); }
  const Slot& back() const { return slots_.back(); }

  // The position of slot `i`, given an anchor <= every live position.
  static uint64_t Pos(const Slot& s, uint64_t anchor) {
    return anchor + static_cast<uint32_t>(s.pos_low - static_cast<uint32_t>(anchor));
  }

  // Index of the first slot with version >= v (size() if none).
  size_t LowerBound(const Version& v) const;
  // Index of the first slot with version > v (size() if none).
  size_t UpperBound(const Version& v) const;

  Slot PopFront() {
    Slot s = slots_.front();
    slots_.pop_front();
    return s;
  }
  Slot PopBack() {
    Slot s = slots_.back();
    slots_.pop_back();
    return s;
  }
  void Clear() { slots_.clear(); }

  // Heap bytes held (slots plus the deque's block map), for the statistics.
  size_t MemoryBytes() const;

 private:
  std::deque<Slot> slots_;
};

}  // namespace pgring

#endif  // PGRING_LOG_MAPPING_TABLE_H_
