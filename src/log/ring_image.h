// ring_image.h — a PG's unhomed bytes as the store keeps them (docs/
// DESIGN.md, "The log stream"): [homed, tail), the newest in memory, the
// oldest past a bound only in the log stream; where the block that a home
// write rewrites starts; and the tool's image of a PG read through its ring
// and the stream as one log.
#ifndef PGRING_LOG_RING_IMAGE_H_
#define PGRING_LOG_RING_IMAGE_H_

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "log/ring_layout.h"

namespace pgring {

// The bytes [homed, tail) of a PG: bytes arrive at the back (each new
// record) and leave from the front (a trim or a home moves homed). The
// first cold() of them are not in memory: they are read back from the log
// stream, where every unhomed byte is (Evict moves bytes there once their
// stream write has completed); the rest, resident(), are. Leaving moves an
// offset; the buffer is compacted only once the bytes left behind are as
// many as those kept, so a trim costs nothing per byte kept, and the buffer
// holds at most twice what is resident.
class RingImage {
 public:
  uint64_t size() const { return cold_ + resident_size(); }
  uint64_t cold() const { return cold_; }
  size_t resident_size() const { return buffer_.size() - dropped_; }
  std::string_view resident() const { return std::string_view(buffer_).substr(dropped_); }
  // The memory its buffer holds.
  size_t capacity() const { return buffer_.capacity(); }
  void Append(std::string_view b) { buffer_.append(b); }
  // Drops the first n bytes (n <= size()): cold ones first.
  void DropFront(uint64_t n);
  // The first n resident bytes become cold (n <= resident_size()).
  void Evict(size_t n);
  // Appends n bytes that are cold already: only while none is resident
  // (recovery, for bytes the PG will not keep in memory).
  void AppendCold(uint64_t n) {
    assert(resident_size() == 0);
    cold_ += n;
  }
  // Gives back what the buffer holds beyond the resident bytes (what was
  // left behind and the room to grow): an image that stops growing, as at
  // the end of recovery, holds no more than it keeps.
  void ShrinkToFit();
  // Every byte resident: `bytes` from offset `skip` on.
  void Assign(std::string bytes, size_t skip = 0) {
    buffer_ = std::move(bytes);
    dropped_ = skip;
    cold_ = 0;
  }

 private:
  void DropResident(size_t n);

  uint64_t cold_ = 0;
  std::string buffer_;
  size_t dropped_ = 0;  // bytes at the front of buffer_ no longer in the image
};

// Where the block holding `homed` starts: a home write rewrites that block
// from its start with the bytes the ring already holds of it.
inline uint64_t RingImageStart(uint64_t homed, uint32_t block_size) {
  return homed - homed % block_size;
}

// The bytes [RingImageStart(homed), homed + unhomed.size()) as a reader
// overlays them on the ring: the ring's part of homed's block read from
// `device` (the partial block a forced home left, which a reader must see
// as the ring holds it), then `unhomed`. Reads nothing when homed is
// block-aligned, and then returns `unhomed` itself (the tool's scan holds a
// PG's unhomed bytes whole; a copy would double them), nor when homed is the
// head: the ring then holds none of the log and may have no chunk there, and
// zeros stand for the bytes before the head. Recovery reads the same block
// through its RingReader (RingPgRecovery::Start). `homed` must lie within
// `chunks` unless it is the head (callers check the pointer first); device
// errors pass through.
absl::StatusOr<std::string> ReadRingImage(BlockDevice* device, const Geometry& geo,
                                          const PgChunkList& chunks, uint64_t head,
                                          uint64_t homed, std::string unhomed);

}  // namespace pgring

#endif  // PGRING_LOG_RING_IMAGE_H_
