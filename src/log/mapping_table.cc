#include "log/mapping_table.h"

#include <algorithm>

namespace pgring {

size_t MappingTable::LowerBound(const Version& v) const {
  auto it = std::lower_bound(slots_.begin(), slots_.end(), v,
                             [](const Slot& s, const Version& x) { return s.v() < x; });
  return static_cast<size_t>(it - slots_.begin());
}

size_t MappingTable::UpperBound(const Version& v) const {
  auto it = std::upper_bound(slots_.begin(), slots_.end(), v,
                             [](const Version& x, const Slot& s) { return x < s.v(); });
  return static_cast<size_t>(it - slots_.begin());
}

size_t MappingTable::MemoryBytes() const {
  // libstdc++ deques allocate 512-byte blocks plus one map pointer per block
  // (the map itself grows by doubling, which this leaves out).
  constexpr size_t kBlock = 512;
  size_t blocks = (slots_.size() * sizeof(Slot) + kBlock - 1) / kBlock + 1;
  constexpr size_t kMallocHeader = 16;  // glibc: per allocation
  return blocks * (kBlock + kMallocHeader + sizeof(void*));
}

}  // namespace pgring
