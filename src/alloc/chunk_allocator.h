// chunk_allocator.h — the partition's free map: which chunks no PG owns.
// It lives only in memory and is rebuilt at open from the PG chunk lists in
// RocksDB (MarkOwned). A chunk a transaction gives up is released only after
// that transaction's commit is durable, so no chunk is ever owned twice, even
// across a crash.
#ifndef PGRING_ALLOC_CHUNK_ALLOCATOR_H_
#define PGRING_ALLOC_CHUNK_ALLOCATOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "util/sync.h"

namespace pgring {

class ChunkAllocator {
 public:
  explicit ChunkAllocator(uint64_t chunk_count);
  ChunkAllocator(const ChunkAllocator&) = delete;
  ChunkAllocator& operator=(const ChunkAllocator&) = delete;

  // Marks `chunk` owned (at open). False if it is out of range or already
  // owned: the caller reports the conflict.
  [[nodiscard]] bool MarkOwned(uint32_t chunk);
  // Takes a free chunk (next fit, so chunks are reused round the partition
  // and wear spreads). nullopt when every chunk is owned.
  std::optional<uint32_t> Allocate();
  // Gives `chunk` back. It must be owned.
  void Release(uint32_t chunk);
  bool IsOwned(uint32_t chunk) const;

  uint64_t chunk_count() const { return chunk_count_; }
  uint64_t free_count() const;

 private:
  const uint64_t chunk_count_;
  mutable Mutex mu_;
  std::vector<uint64_t> owned_ ABSL_GUARDED_BY(mu_);  // bit set = owned
  uint64_t free_ ABSL_GUARDED_BY(mu_);
  uint64_t cursor_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pgring

#endif  // PGRING_ALLOC_CHUNK_ALLOCATOR_H_
