// pgring/device.h — a block device with pgring's I/O engine behind it, for
// an embedder's own data writes and for a store's partition.
//
// An OSD writes object data in parallel with its transaction's log records
// and holds the commit until the data write is done (CommitGate). Writing
// that data through a Device gives it the engine the partition gets: O_DIRECT,
// io_uring (or pread/pwrite on a thread pool), batched submission under
// Plug()/Unplug(), and the same counters:
//
//   auto data = pgring::Device::Open("/dev/nvme0n1p2", pgring::DeviceOptions());
//   auto gate = std::make_shared<pgring::CommitGate>();
//   txn.WaitFor(gate);
//   store->Submit(std::move(txn), done);
//   (*data)->WriteAsync(offset, object_bytes, [gate](absl::Status s) { gate->Open(s); });
//
// Open the gate once the write is durable: after a Flush() that started when
// the write had completed, or, with Options::gated_writes_share_flush (the
// data and the partition behind one disk cache, see pgring/flush_domain.h),
// as soon as it has completed.
//
// A Device can also be the store's partition (Mkfs and Store::Open taking a
// Device, in pgring/store.h): they refuse it with kUnavailable while any of
// the embedder's writes to it is still in flight. InMemory() makes one without a disk, for an
// embedder's tests and for measuring CPU cost.
//
// Thread safety: every method may be called from any thread.
#ifndef PGRING_DEVICE_H_
#define PGRING_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pgring/options.h"

namespace pgring {

class BlockDevice;  // the library's device interface behind a Device

struct DeviceOptions {
  IoEngine io_engine = IoEngine::kIoUring;
  // io_uring: writes in flight at once; psync: writes queued at once.
  // WriteAsync blocks while that many are in flight.
  uint32_t io_queue_depth = 128;
  // Opens the path read-only: writes fail with kFailedPrecondition.
  bool read_only = false;
  // Takes an advisory flock on the path (exclusive, or shared when
  // read_only), so a second opener that also locks is refused with
  // kUnavailable. Clear it for a file several writers of one process share
  // (each with its own Device), as fio's jobs share a data file.
  bool exclusive_lock = true;
};

class Device {
 public:
  // Opens a regular file or a block device with O_DIRECT. The block size is
  // the device's logical block size, 4096 for a regular file. Errors name
  // the path: kNotFound, kInvalidArgument (not a file or block device, empty,
  // size not a multiple of the block size, O_DIRECT unsupported),
  // kPermissionDenied, kUnavailable (locked by another opener).
  static absl::StatusOr<std::shared_ptr<Device>> Open(const std::string& path,
                                                      const DeviceOptions& options);
  // `size` bytes of memory with 4096-byte blocks, zero until written. Every
  // completed write is durable at once (no cache to flush) and callbacks run
  // inline. kInvalidArgument unless `size` is a positive multiple of 4096,
  // at most 1 TiB.
  static absl::StatusOr<std::shared_ptr<Device>> InMemory(uint64_t size);

  // The file closes when the Device and every store opened on it are gone;
  // the last of them waits for the writes in flight (running their
  // callbacks) first, so it must not be destroyed inside a write's callback.
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  uint64_t size() const;
  // Offsets and lengths of reads and writes are multiples of this.
  uint32_t block_size() const;

  // Copies `data` and starts writing it at `offset`; `done` is called
  // exactly once, on a device thread (inline for argument errors and for an
  // in-memory device), when the write has completed or failed. A completed
  // write is readable, and durable after a later Flush(). `done` may call
  // WriteAsync, Read and Flush (an embedder flushing before it opens a
  // CommitGate), must not destroy the device, and must not take a lock the
  // caller of WriteAsync holds. May block while the queue is full. An empty
  // `done` is allowed. Fails with kFailedPrecondition while the device is a
  // store's partition (Mkfs or Store::Open on it): only the store writes it.
  void WriteAsync(uint64_t offset, std::string_view data, std::function<void(absl::Status)> done);
  // Reads `buf.size()` bytes at `offset` (bounced through an aligned buffer
  // when `buf` is not block-aligned).
  absl::Status Read(uint64_t offset, absl::Span<char> buf);
  // Makes every write completed before the call durable (fdatasync, which on
  // a block device also flushes the disk's cache). A failed flush is sticky.
  absl::Status Flush();

  // Batched submission: between Plug() and Unplug() on one thread, the
  // writes that thread starts go to the kernel together at Unplug(), in one
  // system call (io_uring; psync and in-memory devices ignore both). Unplug
  // before waiting for any of those writes. Plugs nest, per thread.
  void Plug();
  void Unplug();

  // Bytes written and successful flushes since the device was opened.
  uint64_t bytes_written() const;
  uint64_t flushes() const;
  // Write requests completed since the device was opened: one per non-empty
  // write, the store's and the embedder's alike.
  uint64_t writes() const;

 private:
  explicit Device(std::shared_ptr<BlockDevice> impl);
  friend absl::StatusOr<std::shared_ptr<BlockDevice>> ClaimForStore(
      const std::shared_ptr<Device>& device, bool for_writing);
  std::shared_ptr<BlockDevice> impl_;
  // Bit 63: a store (or mkfs) holds it as its partition, and only the store
  // writes. Bits 0..62: the embedder's writes in flight, so that a store
  // never takes a device a write of the embedder's could still land on.
  static constexpr uint64_t kClaimed = 1ull << 63;
  std::atomic<uint64_t> state_{0};
};

}  // namespace pgring

#endif  // PGRING_DEVICE_H_
