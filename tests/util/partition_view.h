// partition_view.h — one partition of a larger device: reads and writes are
// shifted by `offset` and confined to `size` bytes, and Flush() flushes the
// whole underlying device, as a cache flush of a drive covers all of its
// partitions. Two views of one FaultInjectionDevice model the log partition
// and the OSD's data partition on one disk, behind one volatile cache.
#ifndef PGRING_TESTS_UTIL_PARTITION_VIEW_H_
#define PGRING_TESTS_UTIL_PARTITION_VIEW_H_

#include <memory>

#include "device/block_device.h"

namespace pgring::testing {

class PartitionView final : public BlockDevice {
 public:
  // [offset, offset + size) must lie inside `disk`, on logical-block bounds.
  PartitionView(std::shared_ptr<BlockDevice> disk, uint64_t offset, uint64_t size);

  uint64_t size() const override { return size_; }
  uint32_t logical_block_size() const override { return disk_->logical_block_size(); }
  absl::Status Read(uint64_t offset, absl::Span<char> buf) override;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf, IoCallback done) override;
  absl::Status Flush() override { return disk_->Flush(); }
  // The whole disk's counts: the partitions share them.
  uint64_t bytes_written() const override { return disk_->bytes_written(); }
  uint64_t flushes() const override { return disk_->flushes(); }
  uint64_t writes() const override { return disk_->writes(); }

 private:
  std::shared_ptr<BlockDevice> disk_;
  const uint64_t offset_;
  const uint64_t size_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_PARTITION_VIEW_H_
