// delta_deque.h — a deque of fixed-width integer tuples kept as varint
// deltas, for the per-PG indexes that hold one tuple per live item (the
// mapping table, a PG's unhomed runs).
//
// A PG's index is what stays in memory for every live item of every PG, so
// its size per item is what an OSD pays per log entry (docs/DESIGN.md,
// "What stays in memory"). Neighbouring tuples differ by little (a version
// by one, a position by a record's length), so each is stored as the
// zigzag-varint difference from the one before it: one to three bytes a
// field instead of four or eight. Values are kept in blocks of kBlockValues:
// a block holds its first tuple whole and the others as deltas, so a
// random read decodes at most one block, and popping at either end never
// re-encodes. Sequential reads use a Cursor (one delta a step).
//
// Any values are exact (differences wrap modulo 2^64); only the size
// depends on how close neighbours are.
#ifndef PGRING_UTIL_DELTA_DEQUE_H_
#define PGRING_UTIL_DELTA_DEQUE_H_

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace pgring {

// What glibc's allocator holds for a request of n bytes: the request and
// its 8-byte header rounded up to 16, at least 32 (0 for none).
inline size_t MallocChunkBytes(size_t n) {
  return n == 0 ? 0 : std::max<size_t>(32, (n + 8 + 15) & ~size_t{15});
}

// What libstdc++'s std::deque<T> of n elements holds on the heap: nodes of
// 512 bytes (or one element) and a map of pointers to them (at least 8).
template <class T>
size_t DequeHeapBytes(size_t n) {
  constexpr size_t kPerNode = sizeof(T) < 512 ? 512 / sizeof(T) : 1;
  const size_t nodes = n / kPerNode + 1;
  return nodes * MallocChunkBytes(kPerNode * sizeof(T)) +
         MallocChunkBytes(std::max<size_t>(8, nodes + 2) * sizeof(void*));
}

template <size_t K>
class DeltaDeque {
 public:
  using Value = std::array<uint64_t, K>;
  static constexpr size_t kBlockValues = 64;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Value& front() const { return front_; }
  const Value& back() const { return back_; }
  // O(kBlockValues): decodes from the start of the value's block.
  Value operator[](size_t i) const { return At(i).value(); }

  void push_back(const Value& v);
  void push_front(const Value& v);  // re-encodes the first block
  Value pop_front();
  Value pop_back();  // decodes the last block to find where its last value starts
  void clear();

  // Reads values in order from one index on, a delta a step.
  class Cursor {
   public:
    const Value& value() const { return value_; }
    size_t index() const { return index_; }
    bool done() const { return index_ >= d_->size_; }
    void Next();

   private:
    friend class DeltaDeque;
    const DeltaDeque* d_ = nullptr;
    size_t index_ = 0;
    size_t block_ = 0;
    size_t pos_ = 0;     // stored position in the block
    size_t offset_ = 0;  // where the next value's delta starts in the block
    Value value_{};
  };
  Cursor At(size_t i) const;

  // Where a cursor stood, kept across pushes at the back and pops at the
  // front: Resume() gives the cursor back, with no decoding, while its value
  // is still held and nothing else (a pop at the back, a push at the front,
  // clear) changed the deque since Save().
  struct Mark {
    bool valid = false;
    uint64_t value = 0;  // values popped before the mark's, ever, + its index
    uint64_t block = 0;  // blocks popped before its block, ever, + its index
    uint64_t generation = 0;
    size_t pos = 0, offset = 0;
    Value v{};
  };
  Mark Save(const Cursor& c) const;  // an invalid mark for a cursor at the end
  bool Resume(const Mark& m, Cursor* c) const;

  // The first index whose value fails `pred`, where pred(index, value) holds
  // for a prefix of the deque (size() if it holds for all).
  template <class Pred>
  size_t PartitionPoint(Pred pred) const;

  // Heap bytes held, as glibc's allocator counts them (blocks, their deltas,
  // the deque's nodes: MallocChunkBytes, DequeHeapBytes).
  size_t MemoryBytes() const;

 private:
  struct Block {
    Value first{};                // stored position 0, whole
    uint32_t stored = 1;          // values stored, popped ones included
    std::vector<uint8_t> deltas;  // positions 1.. as zigzag varints
  };

  static void PutDelta(std::vector<uint8_t>* out, const Value& from, const Value& to);
  // Adds the delta at `*offset` to `*v` and moves past it.
  static void TakeDelta(const std::vector<uint8_t>& in, size_t* offset, Value* v);
  // Block and stored position of index i.
  std::pair<size_t, size_t> Locate(size_t i) const;
  size_t FirstIndexOf(size_t block) const {
    return block == 0 ? 0 : blocks_[0].stored - head_ + (block - 1) * kBlockValues;
  }

  // Every block but the first and the last holds kBlockValues values; the
  // first holds popped values at stored positions [0, head_).
  std::deque<Block> blocks_;
  size_t head_ = 0;
  size_t size_ = 0;
  // For marks: values and blocks popped from the front ever, and changes
  // that re-encode or drop values a mark may stand on.
  uint64_t popped_values_ = 0;
  uint64_t popped_blocks_ = 0;
  uint64_t generation_ = 0;
  Value front_{}, back_{};
  size_t front_offset_ = 0;  // where the delta after front_ starts in blocks_[0]
};

template <size_t K>
void DeltaDeque<K>::PutDelta(std::vector<uint8_t>* out, const Value& from, const Value& to) {
  for (size_t f = 0; f < K; ++f) {
    const uint64_t d = to[f] - from[f];
    uint64_t z = (d << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(d) >> 63);
    while (z >= 0x80) {
      out->push_back(static_cast<uint8_t>(z | 0x80));
      z >>= 7;
    }
    out->push_back(static_cast<uint8_t>(z));
  }
}

template <size_t K>
void DeltaDeque<K>::TakeDelta(const std::vector<uint8_t>& in, size_t* offset, Value* v) {
  const uint8_t* p = in.data() + *offset;
  for (size_t f = 0; f < K; ++f) {
    uint64_t z = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t b = *p++;
      z |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) break;
    }
    (*v)[f] += (z >> 1) ^ (~(z & 1) + 1);
  }
  *offset = static_cast<size_t>(p - in.data());
}

template <size_t K>
std::pair<size_t, size_t> DeltaDeque<K>::Locate(size_t i) const {
  size_t p = head_ + i;
  if (p < blocks_[0].stored) return {0, p};
  p -= blocks_[0].stored;
  return {1 + p / kBlockValues, p % kBlockValues};
}

template <size_t K>
typename DeltaDeque<K>::Cursor DeltaDeque<K>::At(size_t i) const {
  Cursor c;
  c.d_ = this;
  c.index_ = i;
  if (i >= size_) return c;
  const auto [block, pos] = Locate(i);
  c.block_ = block;
  if (block == 0) {
    c.pos_ = head_;
    c.offset_ = front_offset_;
    c.value_ = front_;
  } else {
    c.value_ = blocks_[block].first;
  }
  while (c.pos_ < pos) {
    TakeDelta(blocks_[block].deltas, &c.offset_, &c.value_);
    ++c.pos_;
  }
  return c;
}

template <size_t K>
void DeltaDeque<K>::Cursor::Next() {
  if (++index_ >= d_->size_) return;
  const Block* b = &d_->blocks_[block_];
  if (++pos_ == b->stored) {
    ++block_;
    pos_ = 0;
    offset_ = 0;
    value_ = d_->blocks_[block_].first;
    return;
  }
  TakeDelta(b->deltas, &offset_, &value_);
}

template <size_t K>
typename DeltaDeque<K>::Mark DeltaDeque<K>::Save(const Cursor& c) const {
  Mark m;
  if (c.done()) return m;
  m.valid = true;
  m.value = popped_values_ + c.index_;
  m.block = popped_blocks_ + c.block_;
  m.generation = generation_;
  m.pos = c.pos_;
  m.offset = c.offset_;
  m.v = c.value_;
  return m;
}

template <size_t K>
bool DeltaDeque<K>::Resume(const Mark& m, Cursor* c) const {
  if (!m.valid || m.generation != generation_ || m.value < popped_values_ ||
      m.value - popped_values_ >= size_ || m.block < popped_blocks_) {
    return false;
  }
  c->d_ = this;
  c->index_ = m.value - popped_values_;
  c->block_ = m.block - popped_blocks_;
  c->pos_ = m.pos;
  c->offset_ = m.offset;
  c->value_ = m.v;
  return true;
}

template <size_t K>
void DeltaDeque<K>::push_back(const Value& v) {
  if (size_ == 0) {
    blocks_.emplace_back().first = v;
    front_ = v;
  } else if (blocks_.back().stored == kBlockValues) {
    blocks_.back().deltas.shrink_to_fit();
    blocks_.emplace_back().first = v;
  } else {
    Block& last = blocks_.back();
    PutDelta(&last.deltas, back_, v);
    ++last.stored;
  }
  back_ = v;
  ++size_;
}

template <size_t K>
void DeltaDeque<K>::push_front(const Value& v) {
  if (size_ == 0) {
    push_back(v);
    return;
  }
  ++generation_;
  Block& first = blocks_.front();
  const size_t live = first.stored - head_;
  if (live == kBlockValues) {
    blocks_.emplace_front().first = v;
  } else {
    Block rebuilt;
    rebuilt.first = v;
    Value prev = v;
    for (Cursor c = At(0); c.index() < live; c.Next()) {
      PutDelta(&rebuilt.deltas, prev, c.value());
      prev = c.value();
    }
    rebuilt.stored = static_cast<uint32_t>(live + 1);
    first = std::move(rebuilt);
  }
  head_ = 0;
  front_ = v;
  front_offset_ = 0;
  ++size_;
}

template <size_t K>
typename DeltaDeque<K>::Value DeltaDeque<K>::pop_front() {
  assert(size_ > 0);
  const Value v = front_;
  if (--size_ == 0) {
    clear();
    return v;
  }
  ++popped_values_;
  if (++head_ == blocks_[0].stored) {
    blocks_.pop_front();
    ++popped_blocks_;
    head_ = 0;
    front_offset_ = 0;
    front_ = blocks_[0].first;
  } else {
    TakeDelta(blocks_[0].deltas, &front_offset_, &front_);
  }
  return v;
}

template <size_t K>
typename DeltaDeque<K>::Value DeltaDeque<K>::pop_back() {
  assert(size_ > 0);
  const Value v = back_;
  if (--size_ == 0) {
    clear();
    return v;
  }
  ++generation_;
  Block& last = blocks_.back();
  if (last.stored == 1) {
    blocks_.pop_back();
    back_ = At(size_ - 1).value();
    return v;
  }
  // The last stored value's delta starts where the one before it ends.
  Value prev = last.first;
  size_t offset = 0;
  for (uint32_t p = 1; p + 1 < last.stored; ++p) TakeDelta(last.deltas, &offset, &prev);
  last.deltas.resize(offset);
  --last.stored;
  back_ = prev;
  return v;
}

template <size_t K>
void DeltaDeque<K>::clear() {
  popped_values_ += size_;
  popped_blocks_ += blocks_.size();
  ++generation_;
  blocks_.clear();
  head_ = 0;
  size_ = 0;
  front_ = back_ = Value{};
  front_offset_ = 0;
}

template <size_t K>
template <class Pred>
size_t DeltaDeque<K>::PartitionPoint(Pred pred) const {
  if (size_ == 0) return 0;
  // The first block whose first live value fails, then the block before it.
  size_t lo = 0, hi = blocks_.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const size_t index = FirstIndexOf(mid);
    if (pred(index, mid == 0 ? front_ : blocks_[mid].first)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return 0;
  const size_t end = lo < blocks_.size() ? FirstIndexOf(lo) : size_;
  for (Cursor c = At(FirstIndexOf(lo - 1)); c.index() < end; c.Next()) {
    if (!pred(c.index(), c.value())) return c.index();
  }
  return end;
}

template <size_t K>
size_t DeltaDeque<K>::MemoryBytes() const {
  size_t bytes = DequeHeapBytes<Block>(blocks_.size());
  for (const Block& b : blocks_) bytes += MallocChunkBytes(b.deltas.capacity());
  return bytes;
}

}  // namespace pgring

#endif  // PGRING_UTIL_DELTA_DEQUE_H_
