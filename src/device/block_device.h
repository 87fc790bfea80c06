// block_device.h — the one interface through which pgring does all partition
// I/O. Three implementations: FileBlockDevice (a real file or block device,
// O_DIRECT, io_uring or pread/pwrite), MemoryBlockDevice (tests) and
// FaultInjectionDevice (tests: power loss, torn writes, failed operations).
//
// Contract:
// - Offsets and lengths are multiples of logical_block_size(); buffers are
//   aligned to kIoAlignment (use AlignedBuffer).
// - A write that has completed (callback called with OK) is readable, but is
//   durable only after a later Flush() has returned OK. Durability never
//   depends on luck: pgring flushes before it commits pointers.
// - A single logical block is written whole or not at all; a multi-block write
//   may tear between blocks on power loss (this is what devices guarantee).
// - Completion callbacks run on a device thread (or inline, for the memory
//   and fault-injection devices, and for argument errors on every device):
//   they must not take locks the caller of WriteAsync holds, must not call
//   the synchronous Write() (on FileBlockDevice that would wait for the very
//   thread running the callback), and must not destroy the device. They may
//   call WriteAsync, Read and Flush.
// - Errors: kInvalidArgument for an unaligned offset, length or buffer,
//   kOutOfRange for I/O past size(), kFailedPrecondition for a write to a
//   read-only device; I/O errors from the OS keep their meaning (EIO →
//   kInternal, ENOSPC → kResourceExhausted). Every message names the device,
//   the operation and the offset.
#ifndef PGRING_DEVICE_BLOCK_DEVICE_H_
#define PGRING_DEVICE_BLOCK_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "device/aligned_buffer.h"

namespace pgring {

class Device;

using IoCallback = std::function<void(absl::Status)>;

// Writes one thread issues and later reaps itself, so that no other thread
// wakes for them: the commit thread's writes (the log stream's records and
// the PGs' home writes), issued before a group's flush and RocksDB sync and
// reaped after (docs/DESIGN.md, "Who runs what"). FileBlockDevice gives each
// an io_uring of its own; other devices start each write with WriteAsync and
// Wait waits for the callbacks. One thread at a time; the device outlives
// it.
class CallerWrites {
 public:
  virtual ~CallerWrites() = default;
  // Queues a write of `buf` at `offset`, with WriteAsync's contract; it
  // reaches the device by Submit (or Wait) at the latest. `done`, if given,
  // runs with this write's status in Wait, on the calling thread.
  virtual void Start(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                     IoCallback done = nullptr) = 0;
  // Sends every queued write to the device, in one system call where the
  // device can: call it before waiting for anything else.
  virtual void Submit() {}
  // Waits for every write started since the last Wait, runs their `done`
  // callbacks in the order they were started, and returns the first error.
  // Must be called before the object is destroyed if any was started.
  [[nodiscard]] virtual absl::Status Wait() = 0;
};

// The error a durable CallerWrites' write reports when the flush that
// makes it durable fails (BlockDevice::NewCallerWrites): the flush's, named.
absl::Status WriteThroughFlushError(const absl::Status& flush);

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;

  // Usable size in bytes (a multiple of logical_block_size()).
  virtual uint64_t size() const = 0;
  // The device's logical block size (512 or 4096 typically).
  virtual uint32_t logical_block_size() const = 0;
  // Opened read-only: every write fails.
  virtual bool read_only() const { return false; }

  // Reads `buf.size()` bytes at `offset`. Synchronous. `buf.data()` must be
  // aligned to logical_block_size() (an AlignedBuffer, or a block-aligned
  // slice of one). A zero-length read succeeds and does nothing.
  [[nodiscard]] virtual absl::Status Read(uint64_t offset,
                                          absl::Span<char> buf) = 0;

  // One read of ReadMany: `buf.size()` bytes at `offset`, as Read takes them.
  struct ReadRequest {
    uint64_t offset;
    absl::Span<char> buf;
  };
  // Reads every request, in flight together where the device can
  // (FileBlockDevice on io_uring: one ring of the caller's, many reads per
  // system call), so that scattered blocks cost about one device latency
  // instead of one each. Synchronous; every buffer is filled or the first
  // error (in request order) is returned. Each request is checked as Read
  // checks it. The default reads them one at a time with Read.
  [[nodiscard]] virtual absl::Status ReadMany(absl::Span<const ReadRequest> reads);

  // Starts writing `buf` at `offset`; `done` is called exactly once when the
  // write has completed or failed. `buf` is kept alive until then. May block
  // while the device's queue is full (backpressure). A zero-length write
  // succeeds and does nothing.
  virtual void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                          IoCallback done) = 0;

  // Writes the calling thread issues now and reaps later (CallerWrites).
  // `durable`: each of them is durable once it is reported done, as if a
  // flush had followed it (FileBlockDevice: RWF_DSYNC, a FUA write or a
  // write and a cache flush in the kernel; other devices: a Flush() in
  // Wait, whose error each write then reports).
  virtual std::unique_ptr<CallerWrites> NewCallerWrites(bool durable = false);

  // Synchronous write (label writes, tools, tests): copies `data` into an
  // AlignedBuffer, so `data` itself need not be aligned (its offset and
  // length must be). Must not be called from a completion callback.
  [[nodiscard]] absl::Status Write(uint64_t offset,
                                   absl::Span<const char> data);

  // Makes every completed write durable (fdatasync / a FLUSH to the device).
  // Writes still in flight when Flush() is called are not covered.
  [[nodiscard]] virtual absl::Status Flush() = 0;

  // Batched submission. Between Plug() and Unplug() on one thread, the
  // writes that thread starts are queued but not yet sent to the kernel;
  // Unplug() sends them all in one system call (for io_uring: one
  // io_uring_enter, and with three or more writes one block-layer plug, so
  // one notification of the disk instead of one per write). Writes other
  // threads start are sent at once, and take the queued ones with them. A
  // WriteAsync that must wait for room sends the queued writes first. The
  // thread must unplug before it waits for any of its writes. Plugs nest,
  // and each thread has its own (a thread's Unplug sends every queued write,
  // other threads' included). Devices that send writes at once (psync,
  // memory) ignore both.
  virtual void Plug() {}
  virtual void Unplug() {}

  // Bytes written and successful flushes since the device was opened.
  virtual uint64_t bytes_written() const = 0;
  virtual uint64_t flushes() const = 0;
  // Write requests (WriteAsync or Write calls of a non-zero length) that
  // completed since the device was opened, one each however many system
  // calls a short write took; counted where their bytes are.
  virtual uint64_t writes() const = 0;

  // The argument checks every implementation applies before any I/O (and
  // the public Device before it copies a caller's bytes), so all devices
  // refuse the same calls with the same codes: kInvalidArgument when
  // `offset`, `length` or `data` is not aligned to `block_size`, kOutOfRange
  // when [offset, offset + length) is not inside [0, device_size). `device`
  // and `op` name the device and the operation in the message.
  [[nodiscard]] static absl::Status CheckIoArgs(const std::string& device,
                                                const char* op, uint64_t offset,
                                                uint64_t length,
                                                const void* data,
                                                uint32_t block_size,
                                                uint64_t device_size);
};

// Options for opening a real device.
struct FileBlockDeviceOptions {
  // true: io_uring (falls back to psync, silently, when the kernel or a
  // sandbox refuses io_uring; FileBlockDevice::using_io_uring() tells).
  // false: pwrite on a small thread pool.
  bool use_io_uring = true;
  // io_uring: writes in flight at once (SQ entries, capped at 4096). psync:
  // writes queued at once, served by min(queue_depth, 16) threads.
  // WriteAsync blocks while the queue is full.
  uint32_t queue_depth = 128;
  // Opens O_RDONLY; writes fail with kFailedPrecondition.
  bool read_only = false;
  // flock(LOCK_NB) on the path: LOCK_EX, or LOCK_SH when read_only (several
  // readers may inspect a device no writer holds). Refuses a second opener
  // with kUnavailable. Advisory: only openers that also lock are excluded.
  bool exclusive_lock = true;
};

// Opens a regular file or a block device with O_DIRECT|O_CLOEXEC. The logical
// block size is BLKSSZGET for block devices and always 4096 for regular
// files (see file_block_device.h for why). Errors name the path: kNotFound
// (missing path), kInvalidArgument (not a file or block device, empty, size
// not a multiple of the block size, O_DIRECT unsupported), kPermissionDenied,
// kUnavailable (locked by another opener). The concrete type is
// FileBlockDevice (file_block_device.h) for callers that need its extras.
absl::StatusOr<std::unique_ptr<BlockDevice>> OpenFileBlockDevice(
    const std::string& path, const FileBlockDeviceOptions& options);

// The BlockDevice behind the public Device (pgring/device.h), for the store
// (or mkfs) that is opened on it, which then owns it: while the returned
// pointer lives, another claim fails with kUnavailable and the Device's own
// WriteAsync with kFailedPrecondition, as an exclusive flock keeps a second
// opener of the path out. kInvalidArgument for a null device;
// kFailedPrecondition for a read-only one when `for_writing`.
absl::StatusOr<std::shared_ptr<BlockDevice>> ClaimForStore(const std::shared_ptr<Device>& device,
                                                           bool for_writing);

}  // namespace pgring

#endif  // PGRING_DEVICE_BLOCK_DEVICE_H_
