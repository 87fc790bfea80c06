#include "log/ring_image.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>
#include <vector>

#include "device/aligned_buffer.h"
#include "util/status_macros.h"

namespace pgring {

void RingImage::DropFront(uint64_t n) {
  assert(n <= size());
  const uint64_t from_cold = std::min(n, cold_);
  cold_ -= from_cold;
  DropResident(static_cast<size_t>(n - from_cold));
}

void RingImage::Evict(size_t n) {
  assert(n <= resident_size());
  cold_ += n;
  DropResident(n);
}

void RingImage::ShrinkToFit() {
  buffer_.erase(0, dropped_);
  dropped_ = 0;
  buffer_.shrink_to_fit();
}

void RingImage::DropResident(size_t n) {
  assert(n <= resident_size());
  dropped_ += n;
  if (dropped_ < resident_size()) return;
  buffer_.erase(0, dropped_);
  dropped_ = 0;
  // Whatever the image once held beyond twice what it holds now goes back.
  if (buffer_.capacity() > 2 * buffer_.size() + 4096) buffer_.shrink_to_fit();
}

absl::StatusOr<std::string> ReadRingImage(BlockDevice* device, const Geometry& geo,
                                          const PgChunkList& chunks, uint64_t head,
                                          uint64_t homed, std::string unhomed) {
  const uint64_t start = RingImageStart(homed, geo.block_size);
  if (homed == start) return unhomed;
  if (homed == head) {
    unhomed.insert(0, homed - start, '\0');
    return unhomed;
  }
  AlignedBuffer block(geo.block_size);
  std::vector<Extent> ex;
  MapRange(chunks, geo, start, geo.block_size, &ex);
  RETURN_IF_ERROR(device->Read(ex[0].device_offset, block.span()));
  std::string image;
  image.reserve(homed - start + unhomed.size());
  image.assign(block.data(), homed - start);
  image.append(unhomed);
  return image;
}

}  // namespace pgring
