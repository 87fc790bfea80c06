// label.h — the label block at the start of a pgring partition: what store
// this is, its geometry, and a CRC; and the geometry rules every store obeys.
// Layout and rules: docs/FORMAT.md, "Partition layout" and "Label".
#ifndef PGRING_FORMAT_LABEL_H_
#define PGRING_FORMAT_LABEL_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/types.h"
#include "pgring/version.h"

namespace pgring {

// 16 raw bytes; printed in the usual 8-4-4-4-12 form.
struct Uuid {
  std::array<uint8_t, 16> bytes{};
  friend bool operator==(const Uuid&, const Uuid&) = default;
  static Uuid Random();  // version-4 UUID from getrandom(2)
  std::string ToString() const;
};

inline constexpr char kLabelMagic[8] = {'P', 'G', 'R', 'I', 'N', 'G', 'L', 'B'};
// The format versions (pgring/version.h says what each means): the one mkfs
// writes, the one a store whose log stream has held records carries, and
// the newest this library reads.
inline constexpr uint32_t kFormatVersion = kFormatVersionWritten;
inline constexpr uint32_t kStreamFormatVersion = kFormatVersionStream;
inline constexpr uint32_t kMaxFormatVersion = kFormatVersionMaxRead;
static_assert(kFormatVersionMinRead == kFormatVersion,
              "label.cc's check reads from kFormatVersion up");
// The label region: the first 4 KiB of the partition. Chunks start after it.
inline constexpr uint32_t kLabelRegionSize = 4096;
// Bytes of the label that are encoded (the rest of the region is zero).
inline constexpr uint32_t kLabelEncodedSize = 96;
// Offset of the masked CRC32C that covers bytes [0, kLabelCrcOffset).
inline constexpr uint32_t kLabelCrcOffset = 92;
// Chunk sizes a store may have (each also a power of two).
inline constexpr uint32_t kMinChunkSize = 64 * 1024;
inline constexpr uint32_t kMaxChunkSize = 256u << 20;
// Chunk numbers are u32 (in PG chunk lists and the allocator).
inline constexpr uint64_t kMaxChunkCount = 1ull << 32;

// The geometry rules (docs/FORMAT.md, "Label", reader check 5), for the
// label, pgring.meta and mkfs alike. Each returns kInvalidArgument with a
// message that names the value and the rule it breaks; a decoder turns that
// into its own kDataLoss.
//
// A chunk size a store may have, before any block size is known.
absl::Status CheckChunkSize(uint64_t chunk_size);
// A logical block size pgring supports, and a chunk size for it.
absl::Status CheckBlockAndChunkSize(uint32_t block_size, uint32_t chunk_size);
// Everything: CheckBlockAndChunkSize, then that the partition holds the label
// region and `chunk_count` whole chunks after it, and that chunk numbers fit
// in 32 bits. A partial chunk at the end is allowed (it is unused).
absl::Status CheckGeometry(uint32_t block_size, uint32_t chunk_size, uint64_t partition_size,
                           uint64_t chunk_count);
// A backend a store may name (1 or 2).
absl::Status CheckBackend(Backend backend);

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

// A label's fields as stored, before any check: what the tool shows of a
// label that does not decode. Requires kLabelEncodedSize bytes.
struct StoredLabel {
  std::string magic;  // the first 8 bytes
  uint32_t encoded_size = 0;
  Label fields;       // as stored, unchecked: not a label to open a store by
  uint32_t stored_crc = 0;    // masked, as stored
  uint32_t computed_crc = 0;  // masked, over the bytes before the CRC

  static StoredLabel Read(std::string_view bytes);
};

// The label in a partition's label region, as a store opening the
// partition `partition` reads it: kFailedPrecondition when the region holds
// no label at all (no magic: not a pgring partition, rather than a damaged
// one), or Label::Decode's kDataLoss when the label is damaged.
absl::StatusOr<Label> DecodeLabelRegion(std::string_view region, std::string_view partition);

// Whether a device of `device_size` bytes holds the store the label
// describes; kFailedPrecondition naming `partition` (a path, or how the caller
// calls the device) when it is shorter.
absl::Status CheckDeviceSize(const Label& label, uint64_t device_size,
                             std::string_view partition);

// A new store's label (fresh UUID) for a device of `device_size` bytes with
// `block_size`-byte logical blocks: `size` bytes of it (0: all of it) cut
// into chunks of `chunk_size`. kInvalidArgument when the geometry breaks a
// rule, or when a ring store would have fewer than 4 chunks.
absl::StatusOr<Label> MakeLabel(uint64_t device_size, uint32_t block_size, uint64_t size,
                                uint32_t chunk_size, Backend backend);

}  // namespace pgring

#endif  // PGRING_FORMAT_LABEL_H_
