// extent_write.h — one logical write of a ring (a PG's or the log stream's)
// issued as the device writes of its extents (one per chunk it spans), with
// one completion for all of them.
#ifndef PGRING_STORE_RING_EXTENT_WRITE_H_
#define PGRING_STORE_RING_EXTENT_WRITE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "log/ring_layout.h"

namespace pgring {

// Counts the partition writes that do not start where the previous one
// ended, in the order they are issued: each would cost a disk a seek (the
// HDD model of docs/DESIGN.md §10).
class SeekCounter {
 public:
  void Issued(uint64_t offset, uint64_t length);
  uint64_t seeks() const { return seeks_.load(); }

 private:
  std::atomic<uint64_t> end_{UINT64_MAX};
  std::atomic<uint64_t> seeks_{0};
};

// A store's writes whose completion has not returned yet (WriteExtents
// counts each from before it is issued until its `done` has returned).
// Close waits for none to be left: a failed store fails its transactions
// without waiting for their writes, and a completion must never run into
// a store that is being destroyed.
class WritesInFlight {
 public:
  void Begin();
  void End();
  void WaitNone();

 private:
  // std::mutex: End() may be the last touch before the waiter destroys it.
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t n_ = 0;
};

// Writes `buffer` (the extents' bytes, back to back) to `extents`; `done`
// runs once, after the last extent's write completed, with the first error.
void WriteExtents(BlockDevice* device, const std::vector<Extent>& extents,
                  std::shared_ptr<AlignedBuffer> buffer, SeekCounter* seeks,
                  WritesInFlight* in_flight, std::function<void(absl::Status)> done);

// The same through `writes`, whose owner reaps them: `done` runs in its
// CallerWrites::Wait, on the owner's thread.
void StartExtents(CallerWrites* writes, const std::vector<Extent>& extents,
                  std::shared_ptr<AlignedBuffer> buffer, SeekCounter* seeks,
                  std::function<void(absl::Status)> done);

}  // namespace pgring

#endif  // PGRING_STORE_RING_EXTENT_WRITE_H_
