// forwarding_device.h — a BlockDevice that passes every call to the device
// beneath it: the base of the test devices that change one thing (hold a
// write, watch what is written) and leave the rest to `base`. Plug and
// Unplug are not passed on: a wrapper decides when its writes reach the
// base, so the base's submission batching does not apply to them.
#ifndef PGRING_TESTS_UTIL_FORWARDING_DEVICE_H_
#define PGRING_TESTS_UTIL_FORWARDING_DEVICE_H_

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"

namespace pgring::testing {

class ForwardingDevice : public BlockDevice {
 public:
  explicit ForwardingDevice(std::shared_ptr<BlockDevice> base) : base_(std::move(base)) {}
  uint64_t size() const override { return base_->size(); }
  uint32_t logical_block_size() const override { return base_->logical_block_size(); }
  absl::Status Read(uint64_t offset, absl::Span<char> buf) override {
    return base_->Read(offset, buf);
  }
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf, IoCallback done) override {
    base_->WriteAsync(offset, std::move(buf), std::move(done));
  }
  absl::Status Flush() override { return base_->Flush(); }
  uint64_t bytes_written() const override { return base_->bytes_written(); }
  uint64_t flushes() const override { return base_->flushes(); }
  uint64_t writes() const override { return base_->writes(); }

 protected:
  BlockDevice* base() const { return base_.get(); }

 private:
  std::shared_ptr<BlockDevice> base_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_FORWARDING_DEVICE_H_
