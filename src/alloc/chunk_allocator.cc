#include "alloc/chunk_allocator.h"

#include <cassert>

namespace pgring {

ChunkAllocator::ChunkAllocator(uint64_t chunk_count)
    : chunk_count_(chunk_count), owned_((chunk_count + 63) / 64, 0), free_(chunk_count) {}

bool ChunkAllocator::MarkOwned(uint32_t chunk) {
  MutexLock l(&mu_);
  if (chunk >= chunk_count_) return false;
  uint64_t bit = 1ull << (chunk % 64);
  if (owned_[chunk / 64] & bit) return false;
  owned_[chunk / 64] |= bit;
  --free_;
  return true;
}

std::optional<uint32_t> ChunkAllocator::Allocate() {
  MutexLock l(&mu_);
  if (free_ == 0) return std::nullopt;
  // Scan word by word from the cursor; at most one full lap.
  uint64_t words = owned_.size();
  uint64_t w = cursor_ / 64;
  for (uint64_t i = 0; i <= words; ++i, w = (w + 1) % words) {
    uint64_t free_bits = ~owned_[w];
    if (w == cursor_ / 64 && i == 0) free_bits &= ~0ull << (cursor_ % 64);
    if (w == words - 1 && chunk_count_ % 64 != 0) {
      free_bits &= (1ull << (chunk_count_ % 64)) - 1;
    }
    if (free_bits == 0) continue;
    uint64_t chunk = w * 64 + static_cast<uint64_t>(__builtin_ctzll(free_bits));
    owned_[w] |= 1ull << (chunk % 64);
    --free_;
    cursor_ = (chunk + 1) % chunk_count_;
    return static_cast<uint32_t>(chunk);
  }
  return std::nullopt;  // unreachable while free_ is accurate
}

void ChunkAllocator::Release(uint32_t chunk) {
  MutexLock l(&mu_);
  assert(chunk < chunk_count_);
  uint64_t bit = 1ull << (chunk % 64);
  assert(owned_[chunk / 64] & bit);
  if (owned_[chunk / 64] & bit) {
    owned_[chunk / 64] &= ~bit;
    ++free_;
  }
}

bool ChunkAllocator::IsOwned(uint32_t chunk) const {
  MutexLock l(&mu_);
  return chunk < chunk_count_ && (owned_[chunk / 64] >> (chunk % 64)) & 1;
}

uint64_t ChunkAllocator::free_count() const {
  MutexLock l(&mu_);
  return free_;
}

}  // namespace pgring
