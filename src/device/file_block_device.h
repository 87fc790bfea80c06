// file_block_device.h — the real BlockDevice: a regular file or a block
// device opened with O_DIRECT, written through io_uring (or pwrite on a small
// thread pool), read with pread, made durable with fdatasync.
#ifndef PGRING_DEVICE_FILE_BLOCK_DEVICE_H_
#define PGRING_DEVICE_FILE_BLOCK_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "device/block_device.h"

namespace pgring {

namespace file_block_device_internal {
class WriteEngine;  // io_uring or psync; defined in file_block_device.cc
}  // namespace file_block_device_internal

// Logical block size. Block devices report theirs (BLKSSZGET: 512 or 4096
// typically). Regular files always use 4096, not st_blksize: st_blksize is a
// preferred I/O size, not the O_DIRECT requirement, and varies between file
// systems (XFS, NFS and tmpfs report other values); 4096 satisfies O_DIRECT
// on every Linux file system and on both 512e and 4Kn disks, so a store laid
// out in a file keeps its geometry when copied to a partition.
//
// Writes: WriteAsync checks its arguments, then queues the write; at most
// queue_depth writes are in flight and WriteAsync blocks while that many are
// (except on the device's own threads, where it queues without blocking so
// that completion callbacks may chain writes). Short writes are resumed where
// they stopped and EINTR/EAGAIN are retried, so a callback sees either the
// whole write done or an error. Callbacks run on the completion thread
// (io_uring) or on a pool thread (psync), and for argument errors inline.
//
// Flush() is fdatasync(), which on a block device also sends a cache FLUSH to
// the disk. A failed flush is sticky: every later Flush() fails too, because
// after an fsync error Linux may drop the dirty state and report success on
// a retry although the data never reached the disk ("fsyncgate").
//
// The destructor waits for every write in flight, runs their callbacks,
// stops the device threads and closes the file (which releases the lock).
// It must not run on a device thread (from a completion callback).
class FileBlockDevice final : public BlockDevice {
 public:
  // See OpenFileBlockDevice() in block_device.h for the errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FileBlockDevice>> Open(
      const std::string& path, const FileBlockDeviceOptions& options);

  ~FileBlockDevice() override;
  FileBlockDevice(const FileBlockDevice&) = delete;
  FileBlockDevice& operator=(const FileBlockDevice&) = delete;

  uint64_t size() const override { return size_; }
  uint32_t logical_block_size() const override { return block_size_; }

  [[nodiscard]] absl::Status Read(uint64_t offset,
                                  absl::Span<char> buf) override;
  // On io_uring: the reads in flight together on a ring of the call's own
  // (pread for a few, and where the device does not use io_uring).
  [[nodiscard]] absl::Status ReadMany(absl::Span<const ReadRequest> reads) override;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                  IoCallback done) override;
  // An io_uring of the caller's own (pwrite where io_uring is refused).
  std::unique_ptr<CallerWrites> NewCallerWrites(bool durable = false) override;
  // fdatasync(); a no-op returning OK on a read-only device.
  [[nodiscard]] absl::Status Flush() override;
  // See BlockDevice; io_uring only (psync writes start on pool threads).
  void Plug() override;
  void Unplug() override;

  uint64_t bytes_written() const override {
    return bytes_written_.load(std::memory_order_relaxed);
  }
  uint64_t flushes() const override {
    return flushes_.load(std::memory_order_relaxed);
  }
  uint64_t writes() const override {
    return writes_.load(std::memory_order_relaxed);
  }

  // True if writes go through io_uring. False when the options asked for
  // psync, or when io_uring was asked for but could not be set up (old
  // kernel, seccomp sandbox, io_uring_disabled sysctl): see
  // io_uring_fallback_reason().
  bool using_io_uring() const { return using_io_uring_; }
  // Why io_uring was asked for but is not used; empty otherwise.
  const std::string& io_uring_fallback_reason() const {
    return io_uring_fallback_reason_;
  }
  // The effective depth: io_uring SQ entries, or the number of psync threads.
  uint32_t queue_depth() const { return queue_depth_; }
  bool is_block_device() const { return is_block_device_; }
  bool read_only() const override { return read_only_; }
  const std::string& path() const { return path_; }

 private:
  FileBlockDevice(std::string path, int fd, bool is_block_device,
                  bool read_only, uint64_t size, uint32_t block_size);

  const std::string path_;
  const int fd_;
  const bool is_block_device_;
  const bool read_only_;
  const uint64_t size_;
  const uint32_t block_size_;
  bool using_io_uring_ = false;
  std::string io_uring_fallback_reason_;
  uint32_t queue_depth_ = 0;
  std::unique_ptr<file_block_device_internal::WriteEngine>
      engine_;  // null when read-only

  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> writes_{0};

  std::mutex flush_mu_;       // serializes flushes
  absl::Status flush_error_;  // sticky; guarded by flush_mu_
};

}  // namespace pgring

#endif  // PGRING_DEVICE_FILE_BLOCK_DEVICE_H_
