// extent_write.h — one logical write of a ring (a PG's or the log stream's)
// issued as the device writes of its extents (one per chunk it spans), with
// one completion for all of them.
#ifndef PGRING_STORE_RING_EXTENT_WRITE_H_
#define PGRING_STORE_RING_EXTENT_WRITE_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "log/ring_layout.h"

namespace pgring {

// Writes `buffer` (the extents' bytes, back to back) to `extents`; `done`
// runs once, after the last extent's write completed, with the first error.
void WriteExtents(BlockDevice* device, const std::vector<Extent>& extents,
                  std::shared_ptr<AlignedBuffer> buffer, std::function<void(absl::Status)> done);

}  // namespace pgring

#endif  // PGRING_STORE_RING_EXTENT_WRITE_H_
