#include "log/ring_image.h"

#include <string>
#include <utility>
#include <vector>

#include "device/aligned_buffer.h"
#include "util/status_macros.h"

namespace pgring {

absl::StatusOr<std::string> ReadRingImage(BlockDevice* device, const Geometry& geo,
                                          const PgChunkList& chunks, uint64_t homed,
                                          std::string unhomed) {
  const uint64_t start = RingImageStart(homed, geo.block_size);
  if (homed == start) return unhomed;
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
