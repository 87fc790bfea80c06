#include "format/label.h"

#include <sys/random.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring {
namespace {

constexpr char kChunkSizeRule[] = "must be a power of two between 64 KiB and 256 MiB";

bool ChunkSizeOk(uint64_t chunk_size) {
  return chunk_size >= kMinChunkSize && chunk_size <= kMaxChunkSize &&
         (chunk_size & (chunk_size - 1)) == 0;
}

}  // namespace

absl::Status CheckChunkSize(uint64_t chunk_size) {
  if (ChunkSizeOk(chunk_size)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("chunk size %u %s", chunk_size, kChunkSizeRule));
}

absl::Status CheckBlockAndChunkSize(uint32_t block_size, uint32_t chunk_size) {
  if (block_size != 512 && block_size != 4096) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "logical block size %u is not supported (pgring supports 512 and 4096)", block_size));
  }
  // Every power of two from 64 KiB is a multiple of both block sizes; the
  // rule is stated anyway, as docs/FORMAT.md states it.
  if (!ChunkSizeOk(chunk_size) || chunk_size % block_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("chunk size %u %s and a multiple of the %u-byte logical block",
                        chunk_size, kChunkSizeRule, block_size));
  }
  return absl::OkStatus();
}

absl::Status CheckGeometry(uint32_t block_size, uint32_t chunk_size, uint64_t partition_size,
                           uint64_t chunk_count) {
  if (absl::Status s = CheckBlockAndChunkSize(block_size, chunk_size); !s.ok()) return s;
  if (partition_size < kLabelRegionSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition of %u bytes is too small: the label region alone takes %u bytes",
        partition_size, kLabelRegionSize));
  }
  // Divided rather than multiplied: a crafted count must not wrap around
  // 2^64 and pass.
  const uint64_t fit = (partition_size - kLabelRegionSize) / chunk_size;
  if (chunk_count > fit) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%u chunks of %u bytes do not fit a partition of %u bytes (it holds %u after the "
        "label region)", chunk_count, chunk_size, partition_size, fit));
  }
  if (chunk_count > kMaxChunkCount) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition of %u bytes would hold %u chunks of %u bytes; chunk numbers are 32-bit, "
        "so at most %u: use a larger chunk size", partition_size, chunk_count, chunk_size,
        kMaxChunkCount));
  }
  return absl::OkStatus();
}

absl::Status CheckBackend(Backend backend) {
  if (backend == Backend::kRing || backend == Backend::kRocksDb) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "backend %u is neither 1 (ring) nor 2 (RocksDB)", static_cast<unsigned>(backend)));
}

absl::Status CheckDeviceSize(const Label& label, uint64_t device_size,
                             std::string_view partition) {
  if (device_size >= label.partition_size) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is %u bytes but its label says the store spans %u bytes (truncated, or the wrong "
      "device)", partition, device_size, label.partition_size));
}

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

// The byte offsets below are docs/FORMAT.md's "Label" table.
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

StoredLabel StoredLabel::Read(std::string_view b) {
  const char* p = b.data();
  StoredLabel l;
  l.magic.assign(p, 8);
  l.encoded_size = DecodeFixed32(p + 12);
  Label& f = l.fields;
  f.format_version = DecodeFixed32(p + 8);
  std::memcpy(f.uuid.bytes.data(), p + 16, 16);
  f.block_size = DecodeFixed32(p + 32);
  f.chunk_size = DecodeFixed32(p + 36);
  f.partition_size = DecodeFixed64(p + 40);
  f.data_offset = DecodeFixed64(p + 48);
  f.chunk_count = DecodeFixed64(p + 56);
  f.backend = static_cast<Backend>(static_cast<uint8_t>(p[64]));
  l.stored_crc = DecodeFixed32(p + kLabelCrcOffset);
  l.computed_crc = crc32c::Mask(crc32c::Value(p, kLabelCrcOffset));
  return l;
}

absl::StatusOr<Label> Label::Decode(std::string_view b) {
  if (b.size() < kLabelEncodedSize || std::memcmp(b.data(), kLabelMagic, 8) != 0) {
    return absl::DataLossError("no pgring label (magic \"PGRINGLB\" not found at offset 0)");
  }
  const StoredLabel stored = StoredLabel::Read(b);
  if (stored.stored_crc != stored.computed_crc) {
    return absl::DataLossError(absl::StrFormat(
        "pgring label is damaged: CRC mismatch (stored %08x, computed %08x)",
        crc32c::Unmask(stored.stored_crc), crc32c::Unmask(stored.computed_crc)));
  }
  const Label& l = stored.fields;
  if (l.format_version < kFormatVersion || l.format_version > kMaxFormatVersion) {
    return absl::DataLossError(absl::StrFormat(
        "pgring label has format version %u; this pgring reads versions %u to %u",
        l.format_version, kFormatVersion, kMaxFormatVersion));
  }
  if (stored.encoded_size != kLabelEncodedSize) {
    return absl::DataLossError("pgring label has an unexpected encoded size");
  }
  // The geometry and backend a writer could have produced, and chunks right
  // after the label region.
  absl::Status geometry =
      CheckGeometry(l.block_size, l.chunk_size, l.partition_size, l.chunk_count);
  if (geometry.ok()) geometry = CheckBackend(l.backend);
  if (geometry.ok() && l.data_offset != kLabelRegionSize) {
    geometry = absl::InvalidArgumentError(absl::StrFormat(
        "data offset %u is not %u (the end of the label region)", l.data_offset,
        kLabelRegionSize));
  }
  if (!geometry.ok()) {
    return absl::DataLossError(absl::StrFormat(
        "pgring label has inconsistent geometry (block %u, chunk %u, size %u, %u chunks): %s",
        l.block_size, l.chunk_size, l.partition_size, l.chunk_count, geometry.message()));
  }
  return l;
}

absl::StatusOr<Label> MakeLabel(uint64_t device_size, uint32_t block_size, uint64_t size,
                                uint32_t chunk_size, Backend backend) {
  if (size == 0) size = device_size;
  if (size > device_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "requested size %u is larger than the device (%u bytes)", size, device_size));
  }
  if (absl::Status s = CheckBlockAndChunkSize(block_size, chunk_size); !s.ok()) return s;
  if (absl::Status s = CheckBackend(backend); !s.ok()) return s;
  if (size % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition size %u is not a multiple of the %u-byte logical block", size, block_size));
  }
  Label l;
  l.uuid = Uuid::Random();
  l.block_size = block_size;
  l.chunk_size = chunk_size;
  l.partition_size = size;
  l.backend = backend;
  l.chunk_count = size > kLabelRegionSize ? (size - kLabelRegionSize) / chunk_size : 0;
  if (absl::Status s = CheckGeometry(block_size, chunk_size, size, l.chunk_count); !s.ok()) {
    return s;
  }
  if (backend == Backend::kRing && l.chunk_count < 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partition of %u bytes is too small: it holds %u chunks of %u bytes; "
        "pgring needs at least 4", size, l.chunk_count, chunk_size));
  }
  return l;
}

absl::StatusOr<Label> DecodeLabelRegion(std::string_view region, std::string_view partition) {
  if (region.size() < kLabelEncodedSize || std::memcmp(region.data(), kLabelMagic, sizeof(kLabelMagic)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        std::string(partition), " has no pgring label (not made by pgring mkfs, or not a pgring partition)"));
  }
  return Label::Decode(region);
}

}  // namespace pgring
