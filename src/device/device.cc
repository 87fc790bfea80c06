// device.cc — the public Device (pgring/device.h): a handle on a BlockDevice
// that copies the caller's bytes into aligned buffers, so an embedder needs
// neither AlignedBuffer nor the device contract's alignment rules.
#include "pgring/device.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "device/memory_block_device.h"

namespace pgring {

absl::StatusOr<std::shared_ptr<Device>> Device::Open(const std::string& path,
                                                     const DeviceOptions& options) {
  FileBlockDeviceOptions o;
  o.use_io_uring = options.io_engine == IoEngine::kIoUring;
  o.queue_depth = options.io_queue_depth;
  o.read_only = options.read_only;
  o.exclusive_lock = options.exclusive_lock;
  auto dev = OpenFileBlockDevice(path, o);
  if (!dev.ok()) return dev.status();
  return std::shared_ptr<Device>(new Device(std::move(*dev)));
}

absl::StatusOr<std::shared_ptr<Device>> Device::InMemory(uint64_t size) {
  constexpr uint64_t kBlock = 4096;
  // MemoryBlockDevice aborts on a bad size (a test's bug); here it is the
  // caller's argument.
  // Memory is taken as it is written, but the index of it is not.
  constexpr uint64_t kMaxSize = uint64_t{1} << 40;
  if (size == 0 || size % kBlock != 0 || size > kMaxSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("an in-memory device of ", size, " bytes: the size must be a positive "
                     "multiple of ", kBlock, " and at most ", kMaxSize));
  }
  return std::shared_ptr<Device>(new Device(std::make_shared<MemoryBlockDevice>(size, kBlock)));
}

Device::Device(std::shared_ptr<BlockDevice> impl) : impl_(std::move(impl)) {}

// The device drains its writes while state_, which their completions count
// down, is still alive.
Device::~Device() { impl_.reset(); }

uint64_t Device::size() const { return impl_->size(); }

uint32_t Device::block_size() const { return impl_->logical_block_size(); }

void Device::WriteAsync(uint64_t offset, std::string_view data,
                        std::function<void(absl::Status)> done) {
  if (!done) done = [](absl::Status) {};
  // Counted in flight before the claim is looked at, so that a claim either
  // sees this write or this write sees the claim.
  if (state_.fetch_add(1) & kClaimed) {
    state_.fetch_sub(1);
    done(absl::FailedPreconditionError(
        "the device is a pgring store's partition (Mkfs or Store::Open on it): only the store "
        "writes it"));
    return;
  }
  // The arguments before the copy: a refused write costs nothing.
  absl::Status args = BlockDevice::CheckIoArgs("the device", "write", offset, data.size(),
                                               /*data=*/nullptr, impl_->logical_block_size(),
                                               impl_->size());
  if (!args.ok()) {
    state_.fetch_sub(1);
    done(args);
    return;
  }
  auto buf = std::make_shared<AlignedBuffer>(data.size());
  if (!data.empty()) std::memcpy(buf->data(), data.data(), data.size());
  // In flight until `done` has returned.
  impl_->WriteAsync(offset, std::move(buf), [this, done = std::move(done)](absl::Status s) {
    done(std::move(s));
    state_.fetch_sub(1);
  });
}

absl::Status Device::Read(uint64_t offset, absl::Span<char> buf) {
  if (reinterpret_cast<uintptr_t>(buf.data()) % impl_->logical_block_size() == 0) {
    return impl_->Read(offset, buf);
  }
  AlignedBuffer bounce(buf.size());
  absl::Status s = impl_->Read(offset, bounce.span());
  if (s.ok() && !buf.empty()) std::memcpy(buf.data(), bounce.data(), buf.size());
  return s;
}

absl::Status Device::Flush() { return impl_->Flush(); }

void Device::Plug() { impl_->Plug(); }

void Device::Unplug() { impl_->Unplug(); }

uint64_t Device::bytes_written() const { return impl_->bytes_written(); }

uint64_t Device::flushes() const { return impl_->flushes(); }

uint64_t Device::writes() const { return impl_->writes(); }

absl::StatusOr<std::shared_ptr<BlockDevice>> ClaimForStore(const std::shared_ptr<Device>& device,
                                                           bool for_writing) {
  if (device == nullptr) return absl::InvalidArgumentError("no device (null)");
  if (for_writing && device->impl_->read_only()) {
    return absl::FailedPreconditionError(
        "the device was opened read-only; open it writable, or open the store read-only");
  }
  uint64_t state = 0;
  if (!device->state_.compare_exchange_strong(state, Device::kClaimed)) {
    if (state & Device::kClaimed) {
      return absl::UnavailableError(
          "the device is already the partition of a pgring store (or mkfs) in this process");
    }
    return absl::UnavailableError(absl::StrCat(
        "the device has ", state, " write(s) of the embedder's in flight; wait for their "
        "callbacks before making it a store's partition"));
  }
  // Aliases the device's BlockDevice; the last copy gives the claim back and
  // drops the Device it kept alive.
  return std::shared_ptr<BlockDevice>(device->impl_.get(),
                                      [device](BlockDevice*) { device->state_.fetch_sub(Device::kClaimed); });
}

}  // namespace pgring
