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
//   device): they must not call back into the device synchronously while
//   holding locks the caller of WriteAsync holds.
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

using IoCallback = std::function<void(absl::Status)>;

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;

  // Usable size in bytes (a multiple of logical_block_size()).
  virtual uint64_t size() const = 0;
  // The device's logical block size (512 or 4096 typically).
  virtual uint32_t logical_block_size() const = 0;

  // Reads `buf.size()` bytes at `offset`. Synchronous.
  virtual absl::Status Read(uint64_t offset, absl::Span<char> buf) = 0;

  // Starts writing `buf` at `offset`; `done` is called once when the write
  // has completed or failed. `buf` is kept alive until then.
  virtual void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                          IoCallback done) = 0;

  // Synchronous write (label writes, tools, tests).
  absl::Status Write(uint64_t offset, absl::Span<const char> data);

  // Makes every completed write durable (fdatasync / a FLUSH to the device).
  virtual absl::Status Flush() = 0;

  // Bytes written and flushes issued since the device was opened.
  virtual uint64_t bytes_written() const = 0;
  virtual uint64_t flushes() const = 0;
};

// Options for opening a real device.
struct FileBlockDeviceOptions {
  bool use_io_uring = true;      // false: pread/pwrite on a thread pool
  uint32_t queue_depth = 128;    // io_uring SQ entries / psync threads (capped)
  bool read_only = false;
  bool exclusive_lock = true;    // flock(LOCK_EX|LOCK_NB): refuse a 2nd opener
};

// Opens a regular file or a block device with O_DIRECT. Detects the logical
// block size (BLKSSZGET for block devices; st_blksize bounded to 512..4096 for
// files, 4096 by default). Errors: kNotFound (missing path),
// kInvalidArgument (not a file or block device, size not a multiple of the
// block size), kUnavailable (locked by another opener), kInternal (io_uring
// setup failed and the caller asked for it).
absl::StatusOr<std::unique_ptr<BlockDevice>> OpenFileBlockDevice(
    const std::string& path, const FileBlockDeviceOptions& options);

}  // namespace pgring

#endif  // PGRING_DEVICE_BLOCK_DEVICE_H_
