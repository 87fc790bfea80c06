// memory_block_device.cc — the in-memory test device.
#include "device/memory_block_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "absl/strings/str_format.h"

namespace pgring {
namespace {

const std::string kDeviceName = "memory device";

// A test-construction bug: there is no caller to return a Status to.
[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "MemoryBlockDevice: %s\n", message.c_str());
  std::abort();
}

}  // namespace

MemoryBlockDevice::MemoryBlockDevice(uint64_t size, uint32_t logical_block_size)
    : size_(size), block_size_(logical_block_size) {
  if (block_size_ < 512 || block_size_ > 65536 ||
      (block_size_ & (block_size_ - 1)) != 0) {
    Die(
        absl::StrFormat("logical block size %d is not a power of two in "
                        "[512, 65536]",
                        block_size_));
  }
  if (size_ == 0 || size_ % block_size_ != 0) {
    Die(
        absl::StrFormat("size %d is not a positive multiple of the %d-byte "
                        "logical block",
                        size_, block_size_));
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  extents_.resize((size_ + kExtentSize - 1) / kExtentSize);
}

absl::Status MemoryBlockDevice::Read(uint64_t offset, absl::Span<char> buf) {
  absl::Status s = CheckIoArgs(kDeviceName, "read", offset, buf.size(),
                               buf.data(), block_size_, size_);
  if (!s.ok()) return s;
  std::shared_lock<std::shared_mutex> lock(mu_);
  CopyOut(offset, buf.data(), buf.size());
  return absl::OkStatus();
}

void MemoryBlockDevice::WriteAsync(uint64_t offset,
                                   std::shared_ptr<AlignedBuffer> buf,
                                   IoCallback done) {
  const uint64_t length = buf == nullptr ? 0 : buf->size();
  absl::Status s =
      CheckIoArgs(kDeviceName, "write", offset, length,
                  buf == nullptr ? nullptr : buf->data(), block_size_, size_);
  if (s.ok() && length > 0) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    CopyIn(offset, buf->data(), length);
    bytes_written_.fetch_add(length, std::memory_order_relaxed);
    writes_.fetch_add(1, std::memory_order_relaxed);
  }  // unlocked before the callback
  // Outside the lock: the callback may call back into the device.
  done(std::move(s));
}

absl::Status MemoryBlockDevice::Flush() {
  flushes_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

std::string MemoryBlockDevice::ReadRaw(uint64_t offset, uint64_t length) const {
  CheckRawRange(offset, length);
  std::string out(length, '\0');
  std::shared_lock<std::shared_mutex> lock(mu_);
  CopyOut(offset, out.data(), length);
  return out;
}

void MemoryBlockDevice::WriteRaw(uint64_t offset, absl::string_view data) {
  CheckRawRange(offset, data.size());
  std::unique_lock<std::shared_mutex> lock(mu_);
  CopyIn(offset, data.data(), data.size());
}

uint64_t MemoryBlockDevice::allocated_bytes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& e : extents_) n += e != nullptr ? kExtentSize : 0;
  return n;
}

void MemoryBlockDevice::CheckRawRange(uint64_t offset, uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    Die(
        absl::StrFormat("raw access at offset %d, length %d is past the end "
                        "of the %d-byte device",
                        offset, length, size_));
  }
}

void MemoryBlockDevice::CopyOut(uint64_t offset, char* out,
                                uint64_t length) const {
  while (length > 0) {
    const uint64_t index = offset / kExtentSize;
    const uint64_t within = offset % kExtentSize;
    const uint64_t n = std::min(length, kExtentSize - within);
    const char* extent = extents_[index].get();
    if (extent == nullptr) {
      std::memset(out, 0, n);
    } else {
      std::memcpy(out, extent + within, n);
    }
    offset += n;
    out += n;
    length -= n;
  }
}

void MemoryBlockDevice::CopyIn(uint64_t offset, const char* in,
                               uint64_t length) {
  while (length > 0) {
    const uint64_t index = offset / kExtentSize;
    const uint64_t within = offset % kExtentSize;
    const uint64_t n = std::min(length, kExtentSize - within);
    std::unique_ptr<char[]>& extent = extents_[index];
    if (extent == nullptr) {
      // The last extent may extend past size_; the slack is never read.
      extent = std::make_unique<char[]>(kExtentSize);  // zero-filled
    }
    std::memcpy(extent.get() + within, in, n);
    offset += n;
    in += n;
    length -= n;
  }
}

}  // namespace pgring
