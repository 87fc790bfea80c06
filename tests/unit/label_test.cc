// label_test.cc — what Label::Decode refuses and what MakeLabel refuses, each
// with its exact code and the words of its message. The layout is
// docs/FORMAT.md, "Label"; the golden bytes are in format_golden_test.cc.
#include "format/label.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "pgring/options.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/test_util.h"

namespace pgring {
namespace {

// Expects `expected` code and a message containing `what`.
template <typename T>
void ExpectError(const absl::StatusOr<T>& got, absl::StatusCode expected,
                 std::string_view what) {
  EXPECT_EQ(expected, got.status().code()) << got.status();
  EXPECT_NE(std::string::npos, std::string(got.status().message()).find(what))
      << got.status() << " (want \"" << what << "\")";
}

Label GoodLabel() {
  Label l;
  for (int i = 0; i < 16; ++i) l.uuid.bytes[i] = static_cast<uint8_t>(0x11 * i);
  l.block_size = 4096;
  l.chunk_size = 1 << 20;
  l.partition_size = 4096 + 16 * (1 << 20);
  l.data_offset = 4096;
  l.chunk_count = 16;
  return l;
}

// Recomputes the label CRC after a deliberate change (LevelDB's FixChecksum),
// so the decoder's later checks are reached.
void FixCrc(std::string* enc) {
  EncodeFixed32(enc->data() + kLabelCrcOffset,
                crc32c::Mask(crc32c::Value(enc->data(), kLabelCrcOffset)));
}

// --- Decode -----------------------------------------------------------------

TEST(LabelDecode, GoodLabelRoundTrips) {
  auto l = Label::Decode(GoodLabel().Encode());
  ASSERT_OK(l);
  EXPECT_EQ(GoodLabel(), *l);
}

TEST(LabelDecode, MissingMagic) {
  ExpectError(Label::Decode(std::string(kLabelRegionSize, '\0')), absl::StatusCode::kDataLoss,
              "no pgring label (magic \"PGRINGLB\" not found at offset 0)");
  std::string enc = GoodLabel().Encode();
  enc[7] = 'X';
  FixCrc(&enc);  // the magic is checked before the CRC
  ExpectError(Label::Decode(enc), absl::StatusCode::kDataLoss, "no pgring label");
}

TEST(LabelDecode, ShortInput) {
  std::string enc = GoodLabel().Encode();
  ExpectError(Label::Decode(enc.substr(0, kLabelEncodedSize - 1)), absl::StatusCode::kDataLoss,
              "no pgring label");
  ExpectError(Label::Decode(""), absl::StatusCode::kDataLoss, "no pgring label");
}

TEST(LabelDecode, CrcMismatchOnAnyByteFlip) {
  const std::string good = GoodLabel().Encode();
  for (size_t i = 0; i < kLabelEncodedSize; ++i) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      auto l = Label::Decode(bad);
      // A flip in the magic reads as "no label"; anywhere else as damage.
      ExpectError(l, absl::StatusCode::kDataLoss, i < 8 ? "no pgring label" : "CRC mismatch");
    }
  }
  std::string bad = good;
  bad[40] ^= 1;
  ExpectError(Label::Decode(bad), absl::StatusCode::kDataLoss,
              "pgring label is damaged: CRC mismatch (stored 507329ef, computed ");
}

TEST(LabelDecode, BytesAfterTheEncodedLabelAreIgnored) {
  std::string region = GoodLabel().Encode();
  region.resize(kLabelRegionSize, '\x5a');
  EXPECT_OK(Label::Decode(region));
}

TEST(LabelDecode, UnknownVersion) {
  std::string enc = GoodLabel().Encode();
  EncodeFixed32(enc.data() + 8, 2);  // a store whose stream has held records
  FixCrc(&enc);
  EXPECT_OK(Label::Decode(enc));
  EncodeFixed32(enc.data() + 8, 3);  // a store whose pointers lag the stream
  FixCrc(&enc);
  EXPECT_OK(Label::Decode(enc));
  EncodeFixed32(enc.data() + 8, 4);  // a store whose unhomed bytes take no ring chunk
  FixCrc(&enc);
  EXPECT_OK(Label::Decode(enc));
  EncodeFixed32(enc.data() + 8, 5);  // a store whose stream may hold compressed records
  FixCrc(&enc);
  EXPECT_OK(Label::Decode(enc));
  EncodeFixed32(enc.data() + 8, 6);
  FixCrc(&enc);
  ExpectError(Label::Decode(enc), absl::StatusCode::kDataLoss,
              "pgring label has format version 6; this pgring reads versions 1 to 5");
  EncodeFixed32(enc.data() + 8, 0);
  FixCrc(&enc);
  ExpectError(Label::Decode(enc), absl::StatusCode::kDataLoss, "format version 0");
}

TEST(LabelDecode, UnexpectedEncodedSize) {
  std::string enc = GoodLabel().Encode();
  EncodeFixed32(enc.data() + 12, 128);
  FixCrc(&enc);
  ExpectError(Label::Decode(enc), absl::StatusCode::kDataLoss, "unexpected encoded size");
}

// Each geometry a writer could not have produced, with a valid CRC; the
// message names the rule it breaks.
TEST(LabelDecode, InconsistentGeometry) {
  struct Case {
    const char* name;
    void (*damage)(Label*);
    const char* why;
  };
  const Case cases[] = {
      {"block 1024", [](Label* l) { l->block_size = 1024; },
       "logical block size 1024 is not supported"},
      {"block 0", [](Label* l) { l->block_size = 0; }, "logical block size 0 is not supported"},
      {"chunk 0", [](Label* l) { l->chunk_size = 0; }, "chunk size 0 must be a power of two"},
      {"chunk 32 KiB", [](Label* l) { l->chunk_size = 32 * 1024; },
       "chunk size 32768 must be a power of two between 64 KiB and 256 MiB"},
      {"chunk not power of two", [](Label* l) { l->chunk_size = 3 << 20; },
       "chunk size 3145728 must be a power of two"},
      {"chunk 512 MiB", [](Label* l) {
         l->chunk_size = 512u << 20;
         l->partition_size = 4096 + (512ull << 20);
         l->chunk_count = 1;
       }, "chunk size 536870912 must be a power of two"},
      {"data offset 8192", [](Label* l) { l->data_offset = 8192; },
       "data offset 8192 is not 4096"},
      {"data offset 0", [](Label* l) { l->data_offset = 0; }, "data offset 0 is not 4096"},
      {"one chunk too many", [](Label* l) { l->chunk_count = 17; },
       "17 chunks of 1048576 bytes do not fit a partition of 16781312 bytes (it holds 16"},
      {"partition smaller than the label region", [](Label* l) {
         l->partition_size = 512;
         l->chunk_count = 0;
       }, "partition of 512 bytes is too small: the label region alone takes 4096 bytes"},
      // 2^44 chunks of 1 MiB = 2^64 bytes: a multiplication would wrap to 0.
      {"chunk count that wraps 2^64", [](Label* l) { l->chunk_count = 1ull << 44; },
       "17592186044416 chunks of 1048576 bytes do not fit"},
      // 2^32 + 1 chunks fit the partition but not a u32 chunk number.
      {"more chunks than u32 numbers", [](Label* l) {
         l->chunk_size = 64 * 1024;
         l->partition_size = 4096 + ((1ull << 32) + 1) * 64 * 1024;
         l->chunk_count = (1ull << 32) + 1;
       }, "4294967297 chunks of 65536 bytes; chunk numbers are 32-bit, so at most 4294967296"},
      {"backend 0", [](Label* l) { l->backend = static_cast<Backend>(0); },
       "backend 0 is neither 1 (ring) nor 2 (RocksDB)"},
      {"backend 3", [](Label* l) { l->backend = static_cast<Backend>(3); },
       "backend 3 is neither 1 (ring) nor 2 (RocksDB)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Label l = GoodLabel();
    c.damage(&l);
    std::string enc = l.Encode();  // Encode writes what it is given, CRC included
    ExpectError(Label::Decode(enc), absl::StatusCode::kDataLoss,
                "pgring label has inconsistent geometry");
    ExpectError(Label::Decode(enc), absl::StatusCode::kDataLoss, c.why);
    EXPECT_FALSE(Label::Decode(enc).ok()) << c.name;
  }
}

TEST(LabelDecode, EdgesOfValidGeometry) {
  Label l = GoodLabel();
  l.chunk_count = 0;  // fewer chunks than fit is allowed (the rest unused)
  EXPECT_OK(Label::Decode(l.Encode()));
  l = GoodLabel();
  l.partition_size += 4095;  // a partial chunk at the end is unused
  EXPECT_OK(Label::Decode(l.Encode()));
  l = GoodLabel();
  l.chunk_size = 256u << 20;
  l.partition_size = 4096 + (256ull << 20);
  l.chunk_count = 1;
  EXPECT_OK(Label::Decode(l.Encode()));
  l = GoodLabel();
  l.block_size = 512;
  l.chunk_size = 64 * 1024;
  l.chunk_count = 16 * 16;
  EXPECT_OK(Label::Decode(l.Encode()));
}

// --- MakeLabel ----------------------------------------------------------------

constexpr uint64_t kDevice = 4096 + 64 * (1ull << 20);  // room for 64 1-MiB chunks

MkfsOptions Mkfs(uint32_t chunk_size, uint64_t size = 0, Backend b = Backend::kRing) {
  MkfsOptions o;
  o.chunk_size = chunk_size;
  o.size = size;
  o.backend = b;
  return o;
}

// MakeLabel as Mkfs calls it (format itself does not see MkfsOptions).
using pgring::MakeLabel;
absl::StatusOr<Label> MakeLabel(uint64_t device_size, uint32_t block_size, const MkfsOptions& o) {
  return MakeLabel(device_size, block_size, o.size, o.chunk_size, o.backend);
}

TEST(MakeLabel, Geometry) {
  auto l = MakeLabel(kDevice, 4096, Mkfs(1 << 20));
  ASSERT_OK(l);
  EXPECT_EQ(kFormatVersion, l->format_version);
  EXPECT_EQ(4096u, l->block_size);
  EXPECT_EQ(1u << 20, l->chunk_size);
  EXPECT_EQ(kDevice, l->partition_size);
  EXPECT_EQ(kLabelRegionSize, l->data_offset);
  EXPECT_EQ(64u, l->chunk_count);
  EXPECT_EQ(Backend::kRing, l->backend);
  EXPECT_EQ(4, l->uuid.bytes[6] >> 4);  // a version-4 UUID
  EXPECT_EQ(0x80, l->uuid.bytes[8] & 0xc0);
  // What MakeLabel makes, Decode accepts.
  auto d = Label::Decode(l->Encode());
  ASSERT_OK(d);
  EXPECT_EQ(*l, *d);
  // A partial chunk at the end is left unused.
  l = MakeLabel(kDevice + 1024 * 1024 - 4096, 4096, Mkfs(1 << 20));
  ASSERT_OK(l);
  EXPECT_EQ(64u, l->chunk_count);
  // options.size limits the partition.
  l = MakeLabel(kDevice, 512, Mkfs(64 * 1024, 4096 + 4 * 64 * 1024));
  ASSERT_OK(l);
  EXPECT_EQ(4u, l->chunk_count);
  EXPECT_EQ(4096u + 4 * 64 * 1024, l->partition_size);
}

TEST(MakeLabel, UuidsDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 16; ++i) {
    auto l = MakeLabel(kDevice, 4096, Mkfs(1 << 20));
    ASSERT_OK(l);
    seen.insert(l->uuid.ToString());
  }
  EXPECT_EQ(16u, seen.size());
}

TEST(MakeLabel, ChunkSizeNotPowerOfTwo) {
  ExpectError(MakeLabel(kDevice, 4096, Mkfs(3 << 20)), absl::StatusCode::kInvalidArgument,
              "chunk size 3145728 must be a power of two between 64 KiB and 256 MiB");
  ExpectError(MakeLabel(kDevice, 4096, Mkfs((1 << 20) + 4096)),
              absl::StatusCode::kInvalidArgument, "must be a power of two");
}

TEST(MakeLabel, ChunkSizeTooSmall) {
  ExpectError(MakeLabel(kDevice, 4096, Mkfs(32 * 1024)), absl::StatusCode::kInvalidArgument,
              "chunk size 32768 must be a power of two between 64 KiB and 256 MiB");
  ExpectError(MakeLabel(kDevice, 4096, Mkfs(0)), absl::StatusCode::kInvalidArgument,
              "chunk size 0");
}

TEST(MakeLabel, ChunkSizeTooLarge) {
  ExpectError(MakeLabel(1ull << 40, 4096, Mkfs(512u << 20)), absl::StatusCode::kInvalidArgument,
              "chunk size 536870912 must be a power of two between 64 KiB and 256 MiB");
  EXPECT_OK(MakeLabel(1ull << 40, 4096, Mkfs(256u << 20)));
}

TEST(MakeLabel, SizeNotMultipleOfBlock) {
  ExpectError(MakeLabel(kDevice + 512, 4096, Mkfs(1 << 20)), absl::StatusCode::kInvalidArgument,
              "partition size 67113472 is not a multiple of the 4096-byte logical block");
  ExpectError(MakeLabel(kDevice, 512, Mkfs(1 << 20, kDevice - 100)),
              absl::StatusCode::kInvalidArgument, "is not a multiple of the 512-byte");
}

TEST(MakeLabel, PartitionTooSmall) {
  ExpectError(MakeLabel(4096 + 3 * (1 << 20), 4096, Mkfs(1 << 20)),
              absl::StatusCode::kInvalidArgument,
              "partition of 3149824 bytes is too small: it holds 3 chunks of 1048576 bytes; "
              "pgring needs at least 4");
  ExpectError(MakeLabel(4096, 4096, Mkfs(1 << 20)), absl::StatusCode::kInvalidArgument,
              "it holds 0 chunks");
  EXPECT_OK(MakeLabel(4096 + 4 * (1 << 20), 4096, Mkfs(1 << 20)));
}

TEST(MakeLabel, PartitionSmallerThanLabelRegion) {
  // Even the RocksDB backend, which needs no chunks, needs the label region.
  for (Backend b : {Backend::kRing, Backend::kRocksDb}) {
    ExpectError(MakeLabel(2048, 512, Mkfs(1 << 20, 0, b)), absl::StatusCode::kInvalidArgument,
                "partition of 2048 bytes is too small: the label region alone takes 4096 bytes");
  }
  // The RocksDB backend is content with the label region alone.
  auto l = MakeLabel(4096, 4096, Mkfs(1 << 20, 0, Backend::kRocksDb));
  ASSERT_OK(l);
  EXPECT_EQ(0u, l->chunk_count);
  EXPECT_OK(Label::Decode(l->Encode()));
}

TEST(MakeLabel, SizeLargerThanDevice) {
  ExpectError(MakeLabel(kDevice, 4096, Mkfs(1 << 20, kDevice + 4096)),
              absl::StatusCode::kInvalidArgument,
              "requested size 67117056 is larger than the device (67112960 bytes)");
}

TEST(MakeLabel, TooManyChunks) {
  // 2^32 chunks of 64 KiB (256 TiB) is the most; one more block is still fine
  // (a partial chunk), one more chunk is not.
  const uint64_t most = 4096 + (1ull << 32) * 64 * 1024;
  auto l = MakeLabel(most + 4096, 4096, Mkfs(64 * 1024));
  ASSERT_OK(l);
  EXPECT_EQ(1ull << 32, l->chunk_count);
  ExpectError(MakeLabel(most + 64 * 1024, 4096, Mkfs(64 * 1024)),
              absl::StatusCode::kInvalidArgument,
              "would hold 4294967297 chunks of 65536 bytes; chunk numbers are 32-bit, so at most "
              "4294967296: use a larger chunk size");
}

TEST(MakeLabel, UnsupportedBlockSize) {
  ExpectError(MakeLabel(kDevice, 8192, Mkfs(1 << 20)), absl::StatusCode::kInvalidArgument,
              "logical block size 8192 is not supported");
  ExpectError(MakeLabel(kDevice, 0, Mkfs(1 << 20)), absl::StatusCode::kInvalidArgument,
              "logical block size 0 is not supported");
}

// pgring/version.h is the one place the versions are written: the label's
// constants are its, and the library's compiled version is the headers'.
TEST(VersionTest, LabelUsesThePublicFormatVersions) {
  EXPECT_EQ(kFormatVersionWritten, kFormatVersion);
  EXPECT_EQ(kFormatVersionStream, kStreamFormatVersion);
  EXPECT_EQ(kFormatVersionMaxRead, kMaxFormatVersion);
  EXPECT_STREQ(PGRING_VERSION_STRING, LibraryVersion());
}

}  // namespace
}  // namespace pgring
