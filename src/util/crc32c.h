// crc32c.h — CRC32C (Castagnoli), computed by ISA-L as Ceph does, and the
// LevelDB-style mask used for CRCs stored on disk (a CRC of data that itself
// contains CRCs is otherwise weak).
#ifndef PGRING_UTIL_CRC32C_H_
#define PGRING_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace pgring::crc32c {

// Extends `crc` (the CRC32C of some prefix) with `n` bytes at `data`.
// Extend(0, data, n) is the standard CRC32C of the bytes.
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;

// Rotate right by 15 bits and add a constant, as LevelDB does.
inline uint32_t Mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace pgring::crc32c

#endif  // PGRING_UTIL_CRC32C_H_
