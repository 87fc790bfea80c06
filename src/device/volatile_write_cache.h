// volatile_write_cache.h — the model of a disk's volatile write cache that
// FaultInjectionDevice keeps: for every logical block written since it was
// last made durable, what the medium holds (the durable content) and each
// version written to it since, in flight or completed; which of them a
// flush makes durable; and what a power loss may leave in the block.
#ifndef PGRING_DEVICE_VOLATILE_WRITE_CACHE_H_
#define PGRING_DEVICE_VOLATILE_WRITE_CACHE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "device/block_device.h"

namespace pgring {

// What a crash image leaves in each block written since it was last durable.
enum class CrashImageMode {
  // The durable content: every unflushed write lost.
  kDropUnflushed,
  // The latest completed version: every completed write survived, every
  // write still in flight lost.
  kKeepAll,
  // Per tear unit (the block, or a smaller unit: see the constructor),
  // independently (seeded RNG): the durable content or any one of the
  // versions written since, completed or in flight. Covers writes torn
  // between blocks (or inside one), writes reordered by the disk, older
  // versions surviving newer ones, and writes in flight that landed.
  kRandomPerBlock,
};

// Not thread-safe: the device serializes calls under its lock.
//
// A write goes through Issue() (its versions join each block's list, in
// flight), then Complete() (the version takes its place in the completion
// order, after every version completed before it) or Abandon() (the write
// failed: its versions go). A flush is FlushBegin() and FlushDone(): what
// completed before FlushBegin() is durable after FlushDone(); what completed
// later, or is still in flight, is not. So a block's candidates after a
// flush are its newest version completed before the flush began (now its
// durable content) and every version after it.
class VolatileWriteCache {
 public:
  // `tear_unit`: the bytes a power loss writes whole, a power of two in
  // [512, block_size]; 0 means block_size (the device's promise: a logical
  // block is written whole or not at all). A smaller unit models a device
  // that tears inside its logical block (a 4096-byte block of 512-byte
  // sectors).
  VolatileWriteCache(uint32_t block_size, uint32_t tear_unit);

  uint32_t tear_unit() const { return tear_unit_; }

  // Write `id` (unique, increasing) of `length` bytes (whole blocks) at
  // `offset` was issued. The durable content of each block not tracked yet
  // is read from `base` first (the base holds every completed write, so an
  // untracked block's content there is durable). Fails only if that read
  // fails; then nothing is tracked.
  absl::Status Issue(uint64_t id, uint64_t offset, const char* data, uint64_t length,
                     BlockDevice* base);
  // Write `id` completed (its bytes are now in the base).
  void Complete(uint64_t id);
  // Write `id` failed: the disk never holds its bytes.
  void Abandon(uint64_t id);

  // The start of a flush: returns the mark FlushDone() takes.
  uint64_t FlushBegin() const { return completions_; }
  // The end of a successful flush begun at `mark`.
  void FlushDone(uint64_t mark);

  // Writes `mode`'s image of every tracked block to `base` and forgets them
  // all (the power is back: the base is the medium). Fails only if the base
  // refuses a write. Sets *torn_inside (if given) to the blocks whose image
  // is none of their candidates whole: torn inside by a tear unit smaller
  // than the block.
  absl::Status WriteImage(CrashImageMode mode, uint64_t seed, BlockDevice* base,
                          uint64_t* torn_inside = nullptr);

  // Blocks tracked (written since they were last durable).
  uint64_t blocks() const { return blocks_.size(); }
  // Writes issued and not yet completed or abandoned.
  uint64_t in_flight() const { return in_flight_.size(); }
  // The durable content of block `index`, then each version since, completed
  // ones in completion order before those in flight. Empty if untracked.
  std::vector<std::string> Candidates(uint64_t index) const;

 private:
  struct Version {
    std::string data;
    uint64_t write_id = 0;
    uint64_t completed = 0;  // completion number, 0 while in flight
  };
  struct Block {
    std::string durable;
    // Completed versions (in completion order), then those in flight.
    std::vector<Version> versions;
  };
  struct Range {
    uint64_t first_block = 0;
    uint64_t blocks = 0;
  };

  const uint32_t block_size_;
  const uint32_t tear_unit_;
  uint64_t completions_ = 0;
  // Keyed by block index; ordered so a seeded image is reproducible.
  std::map<uint64_t, Block> blocks_;
  std::map<uint64_t, Range> in_flight_;  // by write id
};

}  // namespace pgring

#endif  // PGRING_DEVICE_VOLATILE_WRITE_CACHE_H_
