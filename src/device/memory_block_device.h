// memory_block_device.h — an in-memory BlockDevice for tests: the same
// contract and argument checks as the real device, no disk, no threads.
#ifndef PGRING_DEVICE_MEMORY_BLOCK_DEVICE_H_
#define PGRING_DEVICE_MEMORY_BLOCK_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "device/block_device.h"

namespace pgring {

// Contents live in memory and are allocated lazily in 1 MiB extents, so a
// large device that a test barely touches costs little; never-written bytes
// read as zero, like a freshly created file.
//
// Every completed write is immediately "durable": this device has no
// volatile cache. Wrap it in a FaultInjectionDevice to model power loss.
//
// WriteAsync applies the write and calls `done` inline, on the calling
// thread, before it returns (callers must already cope with that, see
// block_device.h). Thread-safe.
//
// Example:
//   auto dev = std::make_shared<MemoryBlockDevice>(64 << 20);
//   RETURN_IF_ERROR(dev->Write(0, block));
class MemoryBlockDevice final : public BlockDevice {
 public:
  // `size` must be a positive multiple of `logical_block_size`, which must
  // be a power of two in [512, 65536]. This is a test class: a violation is
  // a bug in the test and aborts with a message.
  explicit MemoryBlockDevice(uint64_t size, uint32_t logical_block_size = 4096);
  ~MemoryBlockDevice() override = default;

  MemoryBlockDevice(const MemoryBlockDevice&) = delete;
  MemoryBlockDevice& operator=(const MemoryBlockDevice&) = delete;

  uint64_t size() const override { return size_; }
  uint32_t logical_block_size() const override { return block_size_; }

  [[nodiscard]] absl::Status Read(uint64_t offset,
                                  absl::Span<char> buf) override;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                  IoCallback done) override;
  // Nothing to make durable; counts the flush and returns OK.
  [[nodiscard]] absl::Status Flush() override;

  uint64_t bytes_written() const override {
    return bytes_written_.load(std::memory_order_relaxed);
  }
  uint64_t flushes() const override {
    return flushes_.load(std::memory_order_relaxed);
  }
  uint64_t writes() const override {
    return writes_.load(std::memory_order_relaxed);
  }

  // Test helpers that bypass the alignment checks and the counters, so
  // damage tests can flip single bytes. The range must lie inside the device
  // (aborts otherwise).
  std::string ReadRaw(uint64_t offset, uint64_t length) const;
  void WriteRaw(uint64_t offset, absl::string_view data);

  // Bytes of memory holding contents (a multiple of the extent size).
  uint64_t allocated_bytes() const;

 private:
  static constexpr uint64_t kExtentSize = 1 << 20;

  void CheckRawRange(uint64_t offset, uint64_t length) const;
  // Copies between the device and `out`/`in`, allocating extents on write.
  // CopyOut needs mu_ held shared, CopyIn exclusive.
  void CopyOut(uint64_t offset, char* out, uint64_t length) const;
  void CopyIn(uint64_t offset, const char* in, uint64_t length);

  const uint64_t size_;
  const uint32_t block_size_;
  // std::shared_mutex, not absl::Mutex: TSan sees it (see block_device.cc).
  mutable std::shared_mutex mu_;
  // extents_[i] holds bytes [i * kExtentSize, (i + 1) * kExtentSize), or is
  // null if never written (reads as zero). Guarded by mu_.
  std::vector<std::unique_ptr<char[]>> extents_;
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> writes_{0};
};

}  // namespace pgring

#endif  // PGRING_DEVICE_MEMORY_BLOCK_DEVICE_H_
