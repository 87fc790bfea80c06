#include "util/crc32c.h"

#include <isa-l/crc.h>

#include <climits>

namespace pgring::crc32c {

// ISA-L's crc32_iscsi takes and returns the CRC without the final inversion,
// so the standard CRC32C is ~crc32_iscsi(data, n, ~0). Chaining works on the
// non-inverted form.
uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  uint32_t state = ~crc;
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  while (n > 0) {
    int chunk = n > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
    state = crc32_iscsi(p, chunk, state);
    p += chunk;
    n -= chunk;
  }
  return ~state;
}

}  // namespace pgring::crc32c
