#include "util/partition_view.h"

#include <utility>

namespace pgring::testing {

PartitionView::PartitionView(std::shared_ptr<BlockDevice> disk, uint64_t offset, uint64_t size)
    : disk_(std::move(disk)), offset_(offset), size_(size) {}

absl::Status PartitionView::Read(uint64_t offset, absl::Span<char> buf) {
  absl::Status s = CheckIoArgs("partition view", "read", offset, buf.size(), buf.data(),
                               logical_block_size(), size_);
  if (!s.ok()) return s;
  return disk_->Read(offset_ + offset, buf);
}

void PartitionView::WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                               IoCallback done) {
  absl::Status s = CheckIoArgs("partition view", "write", offset, buf->size(), buf->data(),
                               logical_block_size(), size_);
  if (!s.ok()) {
    done(s);
    return;
  }
  disk_->WriteAsync(offset_ + offset, std::move(buf), std::move(done));
}

}  // namespace pgring::testing
