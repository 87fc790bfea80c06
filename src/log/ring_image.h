// ring_image.h — the bytes a PG's reader serves from memory instead of its
// ring (docs/DESIGN.md, "The log stream"): from the start of the block
// holding `homed`, the ring's own bytes up to homed, then the PG's unhomed
// bytes [homed, tail) from the log stream. One rule, used by recovery
// (RecoverRingPgLog) and by the tool's scan, so both read the same log.
#ifndef PGRING_LOG_RING_IMAGE_H_
#define PGRING_LOG_RING_IMAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "log/ring_layout.h"

namespace pgring {

// A PG's image as the store keeps it: bytes arrive at the back (each new
// record) and leave from the front (a trim or a home moves homed's block).
// Leaving moves an offset; the buffer is compacted only once the bytes left
// behind are as many as those kept, so a trim costs nothing per byte kept
// (a stream that homes nothing keeps about a megabyte per PG, and trims it
// every hundred entries) and the buffer holds at most twice the image.
class RingImage {
 public:
  std::string_view bytes() const { return std::string_view(buffer_).substr(dropped_); }
  size_t size() const { return buffer_.size() - dropped_; }
  void Append(std::string_view b) { buffer_.append(b); }
  // Drops the first n bytes (n <= size()).
  void DropFront(size_t n);
  void Assign(std::string bytes) {
    buffer_ = std::move(bytes);
    dropped_ = 0;
  }

 private:
  std::string buffer_;
  size_t dropped_ = 0;  // bytes at the front of buffer_ no longer in the image
};

// Where the image of a PG homed at `homed` starts: homed's block.
inline uint64_t RingImageStart(uint64_t homed, uint32_t block_size) {
  return homed - homed % block_size;
}

// The image [RingImageStart(homed), homed + unhomed.size()): the ring's part
// of homed's block read from `device` (the partial block a forced home left,
// which a reader must see as the ring holds it), then `unhomed`. Reads
// nothing when homed is block-aligned, and then returns `unhomed` itself:
// at open the unhomed bytes of every PG are in memory at once, and a copy
// would double that. `homed` must lie within `chunks`
// (callers check the pointer first); device errors pass through.
absl::StatusOr<std::string> ReadRingImage(BlockDevice* device, const Geometry& geo,
                                          const PgChunkList& chunks, uint64_t homed,
                                          std::string unhomed);

}  // namespace pgring

#endif  // PGRING_LOG_RING_IMAGE_H_
