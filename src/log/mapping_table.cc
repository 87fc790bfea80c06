#include "log/mapping_table.h"

#include <algorithm>

namespace pgring {

const MappingTable::Run& MappingTable::RunOf(uint64_t absolute) const {
  // The last run starting at or before `absolute`. Runs are few (one per
  // epoch change inside the log, one per 2^32 versions), so this is a short
  // binary search.
  auto it = std::upper_bound(runs_.begin(), runs_.end(), absolute,
                             [](uint64_t a, const Run& r) { return a < r.first; });
  return *std::prev(it);
}

MappingTable::Slot MappingTable::at(size_t i) const {
  const Item& it = items_[i];
  const Run& run = RunOf(base_ + i);
  return Slot{(static_cast<uint64_t>(run.version_hi) << 32) | it.version_lo, run.epoch,
              it.locator, it.size};
}

void MappingTable::PushBack(const Slot& s) {
  uint64_t absolute = base_ + items_.size();
  if (runs_.empty() || !SameRun(runs_.back(), s)) {
    runs_.push_back(Run{absolute, s.epoch, static_cast<uint32_t>(s.version >> 32)});
  }
  items_.push_back(ItemOf(s));
}

void MappingTable::PushFront(const Slot& s) {
  if (items_.empty()) {
    PushBack(s);
    return;
  }
  --base_;
  if (SameRun(runs_.front(), s)) {
    runs_.front().first = base_;
  } else {
    runs_.push_front(Run{base_, s.epoch, static_cast<uint32_t>(s.version >> 32)});
  }
  items_.push_front(ItemOf(s));
}

MappingTable::Slot MappingTable::PopFront() {
  Slot s = at(0);
  items_.pop_front();
  ++base_;
  if (items_.empty()) {
    runs_.clear();
  } else {
    while (runs_.size() > 1 && runs_[1].first <= base_) runs_.pop_front();
    runs_.front().first = base_;
  }
  return s;
}

MappingTable::Slot MappingTable::PopBack() {
  Slot s = back();
  items_.pop_back();
  uint64_t end = base_ + items_.size();
  while (!runs_.empty() && runs_.back().first >= end) runs_.pop_back();
  return s;
}

void MappingTable::Clear() {
  base_ += items_.size();
  items_.clear();
  runs_.clear();
}

size_t MappingTable::LowerBound(const Version& v) const {
  size_t lo = 0, hi = items_.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (at(mid).v() < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

size_t MappingTable::UpperBound(const Version& v) const {
  size_t lo = 0, hi = items_.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (!(v < at(mid).v())) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

size_t MappingTable::MemoryBytes() const {
  // libstdc++ deques allocate 512-byte blocks (42 twelve-byte items), each
  // with a 16-byte malloc header, plus one map pointer per block.
  constexpr size_t kBlock = 512, kMallocHeader = 16;
  constexpr size_t kItemsPerBlock = kBlock / sizeof(Item);
  size_t blocks = (items_.size() + kItemsPerBlock - 1) / kItemsPerBlock + 1;
  size_t run_blocks = (runs_.size() * sizeof(Run) + kBlock - 1) / kBlock + 1;
  return (blocks + run_blocks) * (kBlock + kMallocHeader + sizeof(void*));
}

}  // namespace pgring
