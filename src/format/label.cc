#include "format/label.h"

#include <sys/random.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring {
namespace {
// Chunk sizes a label may hold (each also a power of two).
constexpr uint32_t kMinChunkSize = 64 * 1024;
constexpr uint32_t kMaxChunkSize = 256u << 20;
// Chunk numbers are u32 (in PG chunk lists and the allocator).
constexpr uint64_t kMaxChunkCount = 1ull << 32;
}  // namespace

Uuid Uuid::Random() {
  Uuid u;
  size_t got = 0;
  while (got < u.bytes.size()) {
    ssize_t n = getrandom(u.bytes.data() + got, u.bytes.size() - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  u.bytes[6] = static_cast<uint8_t>((u.bytes[6] & 0x0f) | 0x40);  // version 4
  u.bytes[8] = static_cast<uint8_t>((u.bytes[8] & 0x3f) | 0x80);  // RFC 4122
  return u;
}

std::string Uuid::ToString() const {
  std::string s;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    absl::StrAppendFormat(&s, "%02x", bytes[i]);
  }
  return s;
}

// Layout (little-endian), see docs/FORMAT.md:
//   0 magic[8] | 8 format_version u32 | 12 encoded_size u32 | 16 uuid[16]
//  32 block_size u32 | 36 chunk_size u32 | 40 partition_size u64
//  48 data_offset u64 | 56 chunk_count u64 | 64 backend u8 | 65 zero[27]
//  92 masked crc32c of bytes [0, 92)
std::string Label::Encode() const {
  std::string out(kLabelEncodedSize, '\0');
  char* p = out.data();
  std::memcpy(p, kLabelMagic, 8);
  EncodeFixed32(p + 8, format_version);
  EncodeFixed32(p + 12, kLabelEncodedSize);
  std::memcpy(p + 16, uuid.bytes.data(), 16);
  EncodeFixed32(p + 32, block_size);
  EncodeFixed32(p + 36, chunk_size);
  EncodeFixed64(p + 40, partition_size);
  EncodeFixed64(p + 48, data_offset);
  EncodeFixed64(p + 56, chunk_count);
  p[64] = static_cast<char>(backend);
  EncodeFixed32(p + kLabelCrcOffset,
                crc32c::Mask(crc32c::Value(p, kLabelCrcOffset)));
  return out;
}

absl::StatusOr<Label> Label::Decode(std::string_view b) {
  if (b.size() < kLabelEncodedSize || std::memcmp(b.data(), kLabelMagic, 8) != 0) {
    return absl::DataLossError("no pgring label (magic \"PGRINGLB\" not found at offset 0)");
  }
  const char* p = b.data();
  uint32_t stored = crc32c::Unmask(DecodeFixed32(p + kLabelCrcOffset));
  uint32_t actual = crc32c::Value(p, kLabelCrcOffset);
  if (stored != actual) {
    return absl::DataLossError(absl::StrFormat(
        "pgring label is damaged: CRC mismatch (stored %08x, computed %08x)", stored, actual));
  }
  Label l;
  l.format_version = DecodeFixed32(p + 8);
  if (l.format_version != kFormatVersion) {
    return absl::DataLossError(absl::StrFormat(
        "pgring label has format version %u; this pgring reads version %u",
        l.format_version, kFormatVersion));
  }
  if (DecodeFixed32(p + 12) != kLabelEncodedSize) {
    return absl::DataLossError("pgring label has an unexpected encoded size");
  }
  std::memcpy(l.uuid.bytes.data(), p + 16, 16);
  l.block_size = DecodeFixed32(p + 32);
  l.chunk_size = DecodeFixed32(p + 36);
  l.partition_size = DecodeFixed64(p + 40);
  l.data_offset = DecodeFixed64(p + 48);
  l.chunk_count = DecodeFixed64(p + 56);
  l.backend = static_cast<Backend>(static_cast<uint8_t>(p[64]));
  // The chunk-count test divides rather than multiplies: a crafted count
  // must not wrap around 2^64 and pass.
  bool geometry_ok =
      (l.block_size == 512 || l.block_size == 4096) && l.chunk_size % l.block_size == 0 &&
      l.chunk_size >= kMinChunkSize && l.chunk_size <= kMaxChunkSize &&
      (l.chunk_size & (l.chunk_size - 1)) == 0 && l.data_offset == kLabelRegionSize &&
      l.partition_size >= l.data_offset &&
      l.chunk_count <= (l.partition_size - l.data_offset) / l.chunk_size &&
      l.chunk_count <= kMaxChunkCount &&
      (l.backend == Backend::kRing || l.backend == Backend::kRocksDb);
  if (!geometry_ok) {
    return absl::DataLossError(absl::StrFormat(
        "pgring label has inconsistent geometry (block %u, chunk %u, size %u, %u chunks)",
        l.block_size, l.chunk_size, l.partition_size, l.chunk_count));
  }
  return l;
}

absl::StatusOr<Label> MakeLabel(uint64_t device_size, uint32_t block_size,
                                const MkfsOptions& o) {
  uint64_t size = o.size == 0 ? device_size : o.size;
  if (size > device_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "requested size %u is larger than the device (%u bytes)", size, device_size));
  }
  if (block_size != 512 && block_size != 4096) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "logical block size %u is not supported (pgring supports 512 and 4096)", block_size));
  }
  if (o.chunk_size < kMinChunkSize || o.chunk_size > kMaxChunkSize ||
      (o.chunk_size & (o.chunk_size - 1)) != 0 || o.chunk_size % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "chunk size %u must be a power of two between 64 KiB and 256 MiB and a "
        "multiple of the %u-byte logical block", o.chunk_size, block_size));
  }
  if (size % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition size %u is not a multiple of the %u-byte logical block", size, block_size));
  }
  if (size < kLabelRegionSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition of %u bytes is too small: the label region alone takes %u bytes", size,
        kLabelRegionSize));
  }
  Label l;
  l.uuid = Uuid::Random();
  l.block_size = block_size;
  l.chunk_size = o.chunk_size;
  l.partition_size = size;
  l.backend = o.backend;
  l.chunk_count = size > kLabelRegionSize ? (size - kLabelRegionSize) / o.chunk_size : 0;
  if (l.chunk_count > kMaxChunkCount) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition of %u bytes would hold %u chunks of %u bytes; chunk numbers are 32-bit, "
        "so at most %u: use a larger chunk size", size, l.chunk_count, o.chunk_size,
        kMaxChunkCount));
  }
  if (o.backend == Backend::kRing && l.chunk_count < 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition of %u bytes is too small: it holds %u chunks of %u bytes; "
        "pgring needs at least 4", size, l.chunk_count, o.chunk_size));
  }
  return l;
}

}  // namespace pgring
