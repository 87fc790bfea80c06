// aligned_buffer.h — a heap buffer aligned for O_DIRECT I/O.
#ifndef PGRING_DEVICE_ALIGNED_BUFFER_H_
#define PGRING_DEVICE_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/types/span.h"

namespace pgring {

// Alignment of every I/O buffer: enough for any logical block size up to
// 4 KiB and for O_DIRECT on every Linux file system.
inline constexpr size_t kIoAlignment = 4096;

class AlignedBuffer {
 public:
  // A zero-filled buffer of `size` bytes (rounded up to kIoAlignment for the
  // allocation; size() is what was asked).
  explicit AlignedBuffer(size_t size) : size_(size) {
    size_t alloc = (size + kIoAlignment - 1) / kIoAlignment * kIoAlignment;
    if (alloc == 0) alloc = kIoAlignment;
    data_ = static_cast<char*>(std::aligned_alloc(kIoAlignment, alloc));
    if (data_ == nullptr) throw std::bad_alloc();
    std::memset(data_, 0, alloc);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  absl::Span<char> span() { return {data_, size_}; }
  absl::Span<const char> span() const { return {data_, size_}; }

 private:
  char* data_;
  size_t size_;
};

}  // namespace pgring

#endif  // PGRING_DEVICE_ALIGNED_BUFFER_H_
