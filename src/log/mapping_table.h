// mapping_table.h — a PG's in-memory index from version to where a backend
// finds the item. One per PG for entries and one for dups.
//
// Each item is its version, its payload size (the PG's statistics sum them)
// and a 32-bit locator the backend chooses. The ring backend keeps the low
// 32 bits of the logical position (lpos) of the record that holds the item,
// and rebuilds the full position from an anchor (the ring's head, see
// Pos()): a live record lies in [head, head + 2^32), because a ring is at
// most Limits::max_chunks_per_pg * chunk_size <= 4 GiB long. The RocksDB
// backend, which finds items by their keys, needs none. Epochs change
// rarely, so they are kept as runs (first item, epoch) beside the items.
//
// The items are kept as varint deltas from the item before (DeltaDeque): a
// version one past the last, a locator a record further, a size close to
// the last: about five bytes an item, against twelve for the fields whole.
// Versions are strictly increasing, so lookups are binary searches over
// blocks of items and a scan of one (O(log n + 64)); trim pops from the front
// and rewind from the back, as a deque.
#ifndef PGRING_LOG_MAPPING_TABLE_H_
#define PGRING_LOG_MAPPING_TABLE_H_

#include <cstdint>
#include <deque>

#include "pgring/types.h"
#include "util/delta_deque.h"

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
  Slot front() const { return SlotOf(items_.front(), runs_.front().epoch); }
  Slot back() const { return SlotOf(items_.back(), runs_.back().epoch); }

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

  // Reads slots in order from one index on, decoding each once (at()
  // decodes from the start of the slot's block).
  class Cursor {
   public:
    Slot slot() const { return SlotOf(items_.value(), t_->runs_[run_].epoch); }
    size_t index() const { return items_.index(); }
    bool done() const { return items_.done(); }
    void Next() {
      items_.Next();
      while (run_ + 1 < t_->runs_.size() && t_->runs_[run_ + 1].first <= t_->base_ + index()) {
        ++run_;
      }
    }

   private:
    friend class MappingTable;
    const MappingTable* t_ = nullptr;
    DeltaDeque<3>::Cursor items_;
    size_t run_ = 0;
  };
  Cursor At(size_t i) const {
    Cursor c;
    c.t_ = this;
    c.items_ = items_.At(i);
    if (i < size()) c.run_ = RunIndexOf(base_ + i);
    return c;
  }
  // Calls fn(slot) for the slots [from, to) in order.
  template <class F>
  void ForEach(size_t from, size_t to, F&& fn) const {
    for (Cursor c = At(from); c.index() < to && !c.done(); c.Next()) fn(c.slot());
  }

  // Heap bytes held (items, epoch runs, their deques' nodes).
  size_t MemoryBytes() const;

 private:
  // An item as DeltaDeque keeps it.
  enum Field { kVersion, kLocator, kSize };
  using Item = DeltaDeque<3>::Value;
  // Items from `first` on (to the next run) have this epoch.
  struct Run {
    uint64_t first;  // absolute index of the run's first item
    uint32_t epoch;
  };
  size_t RunIndexOf(uint64_t absolute) const;
  static Item ItemOf(const Slot& s) { return Item{s.version, s.locator, s.size}; }
  static Slot SlotOf(const Item& it, uint32_t epoch) {
    return Slot{it[kVersion], epoch, static_cast<uint32_t>(it[kLocator]),
                static_cast<uint32_t>(it[kSize])};
  }

  DeltaDeque<3> items_;
  std::deque<Run> runs_;  // ordered by `first`; runs_[0].first <= base_
  uint64_t base_ = 0;     // absolute index of items_[0]
};

}  // namespace pgring

#endif  // PGRING_LOG_MAPPING_TABLE_H_
