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
  if (size == 0 || size % kBlock != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("an in-memory device of ", size, " bytes: the size must be a positive "
                     "multiple of ", kBlock));
  }
  return std::shared_ptr<Device>(new Device(std::make_shared<MemoryBlockDevice>(size, kBlock)));
}

Device::Device(std::shared_ptr<BlockDevice> impl) : impl_(std::move(impl)) {}

Device::~Device() = default;

uint64_t Device::size() const { return impl_->size(); }

uint32_t Device::block_size() const { return impl_->logical_block_size(); }

void Device::WriteAsync(uint64_t offset, std::string_view data,
                        std::function<void(absl::Status)> done) {
  auto buf = std::make_shared<AlignedBuffer>(data.size());
  if (!data.empty()) std::memcpy(buf->data(), data.data(), data.size());
  impl_->WriteAsync(offset, std::move(buf), std::move(done));
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

std::shared_ptr<BlockDevice> BlockDeviceOf(const Device& device) { return device.impl_; }

}  // namespace pgring
