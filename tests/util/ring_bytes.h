// ring_bytes.h — lays bytes down on a PG's ring (or the log stream's) the
// way its writes would: at a logical position, mapped through its chunks,
// padded with zeros to the device's logical block.
#ifndef PGRING_TESTS_UTIL_RING_BYTES_H_
#define PGRING_TESTS_UTIL_RING_BYTES_H_

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "log/ring_layout.h"

namespace pgring::testing {

// Writes `bytes` at `lpos` (on a logical block of the device) and zeros
// after them to the next logical block.
inline absl::Status WriteRingBytes(BlockDevice* dev, const Geometry& g, const PgChunkList& chunks,
                                   uint64_t lpos, std::string_view bytes) {
  const uint64_t block = dev->logical_block_size();
  std::string padded(bytes);
  padded.resize((bytes.size() + block - 1) / block * block, '\0');
  std::vector<Extent> extents;
  MapRange(chunks, g, lpos, padded.size(), &extents);
  uint64_t done = 0;
  for (const Extent& e : extents) {
    AlignedBuffer piece(e.length);
    std::memcpy(piece.data(), padded.data() + done, e.length);
    if (absl::Status s = dev->Write(e.device_offset, piece.span()); !s.ok()) return s;
    done += e.length;
  }
  return absl::OkStatus();
}

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_RING_BYTES_H_
