// label.h — the label block at the start of a pgring partition: what store
// this is, its geometry, and a CRC. Layout in docs/FORMAT.md, "Label".
#ifndef PGRING_FORMAT_LABEL_H_
#define PGRING_FORMAT_LABEL_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pgring/options.h"

namespace pgring {

// 16 raw bytes; printed in the usual 8-4-4-4-12 form.
struct Uuid {
  std::array<uint8_t, 16> bytes{};
  friend bool operator==(const Uuid&, const Uuid&) = default;
  static Uuid Random();  // version-4 UUID from getrandom(2)
  std::string ToString() const;
};

inline constexpr char kLabelMagic[8] = {'P', 'G', 'R', 'I', 'N', 'G', 'L', 'B'};
inline constexpr uint32_t kFormatVersion = 1;
// The label region: the first 4 KiB of the partition. Chunks start after it.
inline constexpr uint32_t kLabelRegionSize = 4096;
// Bytes of the label that are encoded (the rest of the region is zero).
inline constexpr uint32_t kLabelEncodedSize = 96;
// Offset of the masked CRC32C that covers bytes [0, kLabelCrcOffset).
inline constexpr uint32_t kLabelCrcOffset = 92;

struct Label {
  uint32_t format_version = kFormatVersion;
  Uuid uuid;
  uint32_t block_size = 4096;
  uint32_t chunk_size = 1 << 20;
  uint64_t partition_size = 0;  // bytes of the device the store uses
  uint64_t data_offset = kLabelRegionSize;
  uint64_t chunk_count = 0;
  Backend backend = Backend::kRing;

  friend bool operator==(const Label&, const Label&) = default;

  // The kLabelEncodedSize bytes of the label.
  std::string Encode() const;
  // Parses a label. Errors (all kDataLoss, naming the problem): wrong magic
  // ("no pgring label"), CRC mismatch, unknown format version, inconsistent
  // geometry.
  static absl::StatusOr<Label> Decode(std::string_view bytes);
};

// Computes the geometry for a partition of `size` bytes.
absl::StatusOr<Label> MakeLabel(uint64_t device_size, uint32_t block_size,
                                const MkfsOptions& options);

}  // namespace pgring

#endif  // PGRING_FORMAT_LABEL_H_
