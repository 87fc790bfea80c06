#include "log/mapping_table.h"

#include <algorithm>

namespace pgring {

size_t MappingTable::RunIndexOf(uint64_t absolute) const {
  // The last run starting at or before `absolute`. Runs are few (one per
  // epoch change inside the log), so this is a short binary search.
  auto it = std::upper_bound(runs_.begin(), runs_.end(), absolute,
                             [](uint64_t a, const Run& r) { return a < r.first; });
  return static_cast<size_t>(std::prev(it) - runs_.begin());
}

MappingTable::Slot MappingTable::at(size_t i) const {
  return SlotOf(items_[i], runs_[RunIndexOf(base_ + i)].epoch);
}

void MappingTable::PushBack(const Slot& s) {
  uint64_t absolute = base_ + items_.size();
  if (runs_.empty() || runs_.back().epoch != s.epoch) runs_.push_back(Run{absolute, s.epoch});
  items_.push_back(ItemOf(s));
}

void MappingTable::PushFront(const Slot& s) {
  if (items_.empty()) {
    PushBack(s);
    return;
  }
  --base_;
  if (runs_.front().epoch == s.epoch) {
    runs_.front().first = base_;
  } else {
    runs_.push_front(Run{base_, s.epoch});
  }
  items_.push_front(ItemOf(s));
}

MappingTable::Slot MappingTable::PopFront() {
  Slot s = front();
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
  return items_.PartitionPoint([&](size_t i, const Item& it) {
    return Version{runs_[RunIndexOf(base_ + i)].epoch, it[kVersion]} < v;
  });
}

size_t MappingTable::UpperBound(const Version& v) const {
  return items_.PartitionPoint([&](size_t i, const Item& it) {
    return !(v < Version{runs_[RunIndexOf(base_ + i)].epoch, it[kVersion]});
  });
}

size_t MappingTable::MemoryBytes() const {
  return items_.MemoryBytes() + DequeHeapBytes<Run>(runs_.size());
}

}  // namespace pgring
