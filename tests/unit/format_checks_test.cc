// format_checks_test.cc — the checks src/format gives every reader and
// writer: the geometry rules, the label/metadata binding, a pointer's fit in
// its chunk list, value framing, and what each RocksDB-backend key is. Each
// rule is broken on its own, with the code and the words its callers (the
// store, the tool, fsck) rely on. The byte layouts are in
// format_golden_test.cc, Label::Decode's and MakeLabel's refusals in
// label_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "format/interrupted_expand.h"
#include "format/label.h"
#include "format/metadata_keys.h"
#include "format/rocksdb_backend_keys.h"
#include "util/test_util.h"

namespace pgring {
namespace {

void ExpectError(const absl::Status& got, absl::StatusCode expected, std::string_view what) {
  EXPECT_EQ(expected, got.code()) << got;
  EXPECT_NE(std::string::npos, std::string(got.message()).find(what))
      << got << " (want \"" << what << "\")";
}

constexpr uint64_t kPartition = 4096 + 16 * (1ull << 20);  // 16 chunks of 1 MiB

// --- Geometry ------------------------------------------------------------------

// Only the pair an expand cut short between its two writes reads as a
// growth: the label larger in both size and chunk count, the rest equal.
TEST(InterruptedExpand, OnlyAGrownLabelOverItsOwnMetadata) {
  auto small = MakeLabel(2 << 20, 4096, 0, 64 << 10, Backend::kRing);
  auto large = MakeLabel(4 << 20, 4096, 0, 64 << 10, Backend::kRing);
  ASSERT_TRUE(small.ok() && large.ok());
  large->uuid = small->uuid;
  const StoreMeta meta = StoreMeta::ForLabel(*small);
  EXPECT_TRUE(IsInterruptedExpand(*large, meta));
  const StoreMeta grown = GrownMeta(*large, meta);
  EXPECT_EQ(grown.chunk_count, large->chunk_count);
  EXPECT_EQ(grown.partition_size, large->partition_size);
  EXPECT_EQ(grown.next_pg_stamp, meta.next_pg_stamp);
  EXPECT_FALSE(IsInterruptedExpand(*large, grown));                           // already done
  EXPECT_FALSE(IsInterruptedExpand(*small, StoreMeta::ForLabel(*large)));     // meta larger
  Label other = *large;
  other.uuid = Uuid::Random();
  EXPECT_FALSE(IsInterruptedExpand(other, meta));  // another store's
  Label chunks_only = *small;
  chunks_only.chunk_count -= 1;
  EXPECT_FALSE(IsInterruptedExpand(*small, StoreMeta::ForLabel(chunks_only)));  // size equal
  Label size_only = *small;
  size_only.partition_size += 4096;
  EXPECT_FALSE(IsInterruptedExpand(size_only, meta));  // no chunk added
  Label backend = *large;
  backend.backend = Backend::kRocksDb;
  EXPECT_FALSE(IsInterruptedExpand(backend, meta));
}

TEST(CheckGeometry, WhatAWriterMakesPasses) {
  EXPECT_OK(CheckGeometry(4096, 1 << 20, kPartition, 16));
  EXPECT_OK(CheckGeometry(512, 64 * 1024, kPartition, 256));
  EXPECT_OK(CheckGeometry(4096, 1 << 20, kPartition, 0));         // fewer chunks than fit
  EXPECT_OK(CheckGeometry(4096, 1 << 20, kPartition + 4095, 16));  // a partial chunk unused
  EXPECT_OK(CheckGeometry(4096, 256u << 20, 4096 + (256ull << 20), 1));
  EXPECT_OK(CheckGeometry(4096, 1 << 20, 4096, 0));  // the label region alone
}

TEST(CheckGeometry, BadBlockSize) {
  for (uint32_t b : {0u, 256u, 1024u, 2048u, 8192u}) {
    ExpectError(CheckGeometry(b, 1 << 20, kPartition, 16), absl::StatusCode::kInvalidArgument,
                "logical block size " + std::to_string(b) +
                    " is not supported (pgring supports 512 and 4096)");
  }
  // The block is named before the chunk.
  ExpectError(CheckGeometry(1024, 3, kPartition, 16), absl::StatusCode::kInvalidArgument,
              "logical block size 1024");
}

TEST(CheckGeometry, ChunkSizeNotAPowerOfTwo) {
  ExpectError(CheckGeometry(4096, 3 << 20, kPartition, 1), absl::StatusCode::kInvalidArgument,
              "chunk size 3145728 must be a power of two between 64 KiB and 256 MiB and a "
              "multiple of the 4096-byte logical block");
  ExpectError(CheckGeometry(512, (1 << 20) + 512, kPartition, 1),
              absl::StatusCode::kInvalidArgument, "chunk size 1049088 must be a power of two");
}

TEST(CheckGeometry, ChunkSizeOutOfRange) {
  ExpectError(CheckGeometry(4096, 32 * 1024, kPartition, 1), absl::StatusCode::kInvalidArgument,
              "chunk size 32768 must be a power of two between 64 KiB and 256 MiB");
  ExpectError(CheckGeometry(4096, 0, kPartition, 0), absl::StatusCode::kInvalidArgument,
              "chunk size 0 must be");
  ExpectError(CheckGeometry(4096, 512u << 20, 4096 + (512ull << 20), 1),
              absl::StatusCode::kInvalidArgument, "chunk size 536870912 must be");
  ExpectError(CheckGeometry(4096, 1u << 31, 4096 + (1ull << 31), 1),
              absl::StatusCode::kInvalidArgument, "chunk size 2147483648 must be");
}

TEST(CheckGeometry, PartitionSmallerThanTheLabelRegion) {
  ExpectError(CheckGeometry(512, 1 << 20, 4095, 0), absl::StatusCode::kInvalidArgument,
              "partition of 4095 bytes is too small: the label region alone takes 4096 bytes");
  ExpectError(CheckGeometry(512, 1 << 20, 0, 0), absl::StatusCode::kInvalidArgument,
              "partition of 0 bytes is too small");
}

TEST(CheckGeometry, MoreChunksThanThePartitionHolds) {
  ExpectError(CheckGeometry(4096, 1 << 20, kPartition, 17), absl::StatusCode::kInvalidArgument,
              "17 chunks of 1048576 bytes do not fit a partition of 16781312 bytes (it holds 16 "
              "after the label region)");
  // A count whose product with the chunk size wraps 2^64 to 0 is still
  // refused: the rule divides.
  ExpectError(CheckGeometry(4096, 1 << 20, kPartition, 1ull << 44),
              absl::StatusCode::kInvalidArgument, "17592186044416 chunks of 1048576 bytes do not fit");
  ExpectError(CheckGeometry(4096, 1 << 20, 4096 + (1 << 20) - 1, 1),
              absl::StatusCode::kInvalidArgument, "(it holds 0 after the label region)");
}

TEST(CheckGeometry, MoreChunksThan32BitNumbers) {
  const uint64_t most = 4096 + (1ull << 32) * 64 * 1024;
  EXPECT_OK(CheckGeometry(4096, 64 * 1024, most, 1ull << 32));
  ExpectError(CheckGeometry(4096, 64 * 1024, most + 64 * 1024, (1ull << 32) + 1),
              absl::StatusCode::kInvalidArgument,
              "partition of 281474976780288 bytes would hold 4294967297 chunks of 65536 bytes; "
              "chunk numbers are 32-bit, so at most 4294967296: use a larger chunk size");
}

TEST(CheckChunkSize, WithoutABlockSize) {
  for (uint64_t c : {64ull << 10, 1ull << 20, 256ull << 20}) EXPECT_OK(CheckChunkSize(c));
  for (uint64_t c : {0ull, 1000ull, 32ull << 10, 3ull << 20, 512ull << 20}) {
    ExpectError(CheckChunkSize(c), absl::StatusCode::kInvalidArgument,
                "chunk size " + std::to_string(c) +
                    " must be a power of two between 64 KiB and 256 MiB");
  }
  // 4 GiB + 64 KiB is 64 KiB in 32 bits: the 64-bit value is what is judged.
  ExpectError(CheckChunkSize((1ull << 32) + (64 << 10)), absl::StatusCode::kInvalidArgument,
              "chunk size 4295032832 must be");
  // Without a block size there is no block clause.
  EXPECT_EQ(std::string::npos, std::string(CheckChunkSize(3 << 20).message()).find("block"));
}

TEST(CheckBackend, OnlyRingAndRocksDb) {
  EXPECT_OK(CheckBackend(Backend::kRing));
  EXPECT_OK(CheckBackend(Backend::kRocksDb));
  for (uint8_t b : {0, 3, 0x81, 0xff}) {
    ExpectError(CheckBackend(static_cast<Backend>(b)), absl::StatusCode::kInvalidArgument,
                "backend " + std::to_string(b) + " is neither 1 (ring) nor 2 (RocksDB)");
  }
}

Label GoodLabel() {
  Label l;
  for (int i = 0; i < 16; ++i) l.uuid.bytes[i] = static_cast<uint8_t>(0x11 * i);
  l.block_size = 4096;
  l.chunk_size = 1 << 20;
  l.partition_size = kPartition;
  l.chunk_count = 16;
  return l;
}

TEST(CheckDeviceSize, DeviceAtLeastThePartition) {
  EXPECT_OK(CheckDeviceSize(GoodLabel(), kPartition, "/dev/x"));
  EXPECT_OK(CheckDeviceSize(GoodLabel(), kPartition + 1, "/dev/x"));
  ExpectError(CheckDeviceSize(GoodLabel(), kPartition - 1, "/dev/x"),
              absl::StatusCode::kFailedPrecondition,
              "/dev/x is 16781311 bytes but its label says the store spans 16781312 bytes "
              "(truncated, or the wrong device)");
}

// --- pgring.meta and the label ----------------------------------------------

TEST(StoreMeta, CarriesTheLabelsFields) {
  const Label l = GoodLabel();
  const StoreMeta m = StoreMeta::ForLabel(l);
  EXPECT_EQ(l.uuid, m.uuid);
  EXPECT_EQ(l.block_size, m.block_size);
  EXPECT_EQ(l.chunk_size, m.chunk_size);
  EXPECT_EQ(l.partition_size, m.partition_size);
  EXPECT_EQ(l.chunk_count, m.chunk_count);
  EXPECT_EQ(l.backend, m.backend);
  EXPECT_EQ(1u, m.next_pg_stamp);
  EXPECT_EQ(kFormatVersion, m.format_version);
  EXPECT_EQ(l, m.ToLabel());
  Label r = GoodLabel();
  r.backend = Backend::kRocksDb;
  EXPECT_EQ(r, StoreMeta::ForLabel(r).ToLabel());
}

TEST(CheckMetaGeometry, TheLabelsRules) {
  StoreMeta m = StoreMeta::ForLabel(GoodLabel());
  EXPECT_OK(CheckMetaGeometry(m));
  m.chunk_size = 0;
  ExpectError(CheckMetaGeometry(m), absl::StatusCode::kInvalidArgument, "chunk size 0 must be");
  m = StoreMeta::ForLabel(GoodLabel());
  m.block_size = 1024;
  ExpectError(CheckMetaGeometry(m), absl::StatusCode::kInvalidArgument,
              "logical block size 1024 is not supported");
  m = StoreMeta::ForLabel(GoodLabel());
  m.chunk_count = 17;
  ExpectError(CheckMetaGeometry(m), absl::StatusCode::kInvalidArgument, "17 chunks");
  m = StoreMeta::ForLabel(GoodLabel());
  m.chunk_count = (1ull << 32) + 1;
  m.chunk_size = 64 * 1024;
  m.partition_size = 4096 + m.chunk_count * m.chunk_size;
  ExpectError(CheckMetaGeometry(m), absl::StatusCode::kInvalidArgument,
              "chunk numbers are 32-bit");
  m = StoreMeta::ForLabel(GoodLabel());
  m.backend = static_cast<Backend>(7);
  ExpectError(CheckMetaGeometry(m), absl::StatusCode::kInvalidArgument, "backend 7 is neither");
}

TEST(CheckMetaMatchesLabel, OneStoresLabelAndMetadata) {
  const Label l = GoodLabel();
  StoreMeta m = StoreMeta::ForLabel(l);
  EXPECT_OK(CheckMetaMatchesLabel(l, m, "/dev/x", "RocksDB at /db"));
  // Neither the next stamp nor the format version is the label's.
  m.next_pg_stamp = 99;
  m.format_version = 7;
  EXPECT_OK(CheckMetaMatchesLabel(l, m, "/dev/x", "RocksDB at /db"));
}

TEST(CheckMetaMatchesLabel, AnotherStoresRocksDb) {
  const Label l = GoodLabel();
  StoreMeta m = StoreMeta::ForLabel(l);
  m.uuid.bytes[15] ^= 1;
  m.chunk_count = 3;  // the UUID is named first: these are two stores
  ExpectError(CheckMetaMatchesLabel(l, m, "/dev/x", "RocksDB at /db"),
              absl::StatusCode::kFailedPrecondition,
              "/dev/x belongs to store " + l.uuid.ToString() + " but RocksDB at /db holds store " +
                  m.uuid.ToString() +
                  ": the partition and the RocksDB do not belong together");
}

TEST(CheckMetaMatchesLabel, EachGeometryFieldThatDiffers) {
  struct Case {
    const char* field;
    void (*change)(StoreMeta*);
    const char* named;
  };
  const Case cases[] = {
      {"block_size", [](StoreMeta* m) { m->block_size = 512; },
       "block_size 4096 in the label, 512 in the metadata"},
      {"chunk_size", [](StoreMeta* m) { m->chunk_size = 64 * 1024; },
       "chunk_size 1048576 in the label, 65536 in the metadata"},
      {"partition_size", [](StoreMeta* m) { m->partition_size += 4096; },
       "partition_size 16781312 in the label, 16785408 in the metadata"},
      {"chunk_count", [](StoreMeta* m) { m->chunk_count -= 1; },
       "chunk_count 16 in the label, 15 in the metadata"},
      {"backend", [](StoreMeta* m) { m->backend = Backend::kRocksDb; },
       "backend 1 in the label, 2 in the metadata"},
  };
  const Label l = GoodLabel();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    StoreMeta m = StoreMeta::ForLabel(l);
    c.change(&m);
    const absl::Status s = CheckMetaMatchesLabel(l, m, "/dev/x", "RocksDB at /db");
    ExpectError(s, absl::StatusCode::kDataLoss,
                "the label on /dev/x and the metadata in RocksDB at /db disagree about the "
                "store's geometry");
    ExpectError(s, absl::StatusCode::kDataLoss, c.named);
  }
  // Every field that differs is named.
  StoreMeta m = StoreMeta::ForLabel(l);
  m.chunk_count = 15;
  m.backend = Backend::kRocksDb;
  ExpectError(CheckMetaMatchesLabel(l, m, "p", "d"), absl::StatusCode::kDataLoss,
              "geometry: chunk_count 16 in the label, 15 in the metadata; backend 1 in the "
              "label, 2 in the metadata");
}

// --- A PG's pointer and chunk list ------------------------------------------

constexpr uint32_t kChunk = 1 << 20;

PgChunkList Chunks(uint64_t base, size_t n) {
  PgChunkList c;
  c.base = base;
  for (size_t i = 0; i < n; ++i) c.chunks.push_back(static_cast<uint32_t>(i * 3));
  return c;
}

TEST(PgChunkList, End) {
  EXPECT_EQ(5ull * kChunk + 3 * kChunk, Chunks(5ull * kChunk, 3).End(kChunk));
  EXPECT_EQ(7ull * kChunk, Chunks(7ull * kChunk, 0).End(kChunk));
  // Past 4 GiB of lpos: no 32-bit product.
  EXPECT_EQ((1ull << 40) + 4096ull * kChunk, Chunks(1ull << 40, 4096).End(kChunk));
}

TEST(CheckChunkListBase, AMultipleOfTheChunkSize) {
  EXPECT_OK(CheckChunkListBase(Chunks(0, 2), kChunk));
  EXPECT_OK(CheckChunkListBase(Chunks(9ull * kChunk, 2), kChunk));
  EXPECT_OK(CheckChunkListBase(Chunks(1ull << 40, 0), kChunk));
  ExpectError(CheckChunkListBase(Chunks(kChunk + 4096, 2), kChunk), absl::StatusCode::kDataLoss,
              "chunk list base 1052672 is not chunk-aligned (not a multiple of the chunk size "
              "1048576)");
  ExpectError(CheckChunkListBase(Chunks(1, 0), kChunk), absl::StatusCode::kDataLoss,
              "chunk list base 1 is not chunk-aligned");
}

TEST(CheckPointerInChunks, HeadAndTailWithinTheChunks) {
  const PgChunkList c = Chunks(2ull * kChunk, 3);  // lpos [2 MiB, 5 MiB)
  EXPECT_OK(CheckPointerInChunks(2ull * kChunk, 5ull * kChunk, c, kChunk));
  EXPECT_OK(CheckPointerInChunks(3ull * kChunk, 3ull * kChunk + 24, c, kChunk));
  EXPECT_OK(CheckPointerInChunks(5ull * kChunk, 5ull * kChunk, c, kChunk));
  ExpectError(CheckPointerInChunks(2ull * kChunk - 1, 3ull * kChunk, c, kChunk),
              absl::StatusCode::kDataLoss,
              "pointer [2097151, 3145728) lies outside its chunks [2097152, 5242880)");
  ExpectError(CheckPointerInChunks(2ull * kChunk, 5ull * kChunk + 1, c, kChunk),
              absl::StatusCode::kDataLoss,
              "pointer [2097152, 5242881) lies outside its chunks [2097152, 5242880)");
  // An empty list holds only its base.
  const PgChunkList empty = Chunks(4ull * kChunk, 0);
  EXPECT_OK(CheckPointerInChunks(4ull * kChunk, 4ull * kChunk, empty, kChunk));
  ExpectError(CheckPointerInChunks(4ull * kChunk, 4ull * kChunk + 1, empty, kChunk),
              absl::StatusCode::kDataLoss, "lies outside its chunks [4194304, 4194304)");
}

// A PG's pointer: only its homed bytes [head, homed) need chunks; those in
// the log stream [homed, tail) take none.
TEST(CheckPgPointerInChunks, TheHomedBytesWithinTheChunks) {
  const PgChunkList c = Chunks(2ull * kChunk, 3);  // lpos [2 MiB, 5 MiB)
  const uint64_t m = kChunk;
  EXPECT_OK(CheckPgPointerInChunks(2 * m, 5 * m, 5 * m, c, kChunk));     // all homed
  EXPECT_OK(CheckPgPointerInChunks(2 * m, 4 * m, 9 * m, c, kChunk));     // tail past the chunks
  EXPECT_OK(CheckPgPointerInChunks(7 * m, 7 * m, 9 * m, c, kChunk));     // none homed: no chunk
  EXPECT_OK(CheckPgPointerInChunks(m, m, 9 * m, Chunks(0, 0), kChunk));  // nor any list
  ExpectError(CheckPgPointerInChunks(2 * m, 5 * m + 1, 9 * m, c, kChunk),
              absl::StatusCode::kDataLoss,
              "pointer's homed bytes [2097152, 5242881) lie outside its chunks [2097152, 5242880)");
  ExpectError(CheckPgPointerInChunks(2 * m - 1, 3 * m, 3 * m, c, kChunk),
              absl::StatusCode::kDataLoss,
              "pointer's homed bytes [2097151, 3145728) lie outside its chunks");
  ExpectError(CheckPgPointerInChunks(3 * m, 2 * m, 4 * m, c, kChunk),
              absl::StatusCode::kDataLoss,
              "pointer's homed position 2097152 (tail 4194304 less 2097152 unhomed bytes) is "
              "before its head 3145728");
  ExpectError(CheckPgPointerInChunks(4 * m, 4 * m, 3 * m, c, kChunk),
              absl::StatusCode::kDataLoss, "pointer's head 4194304 is past its tail 3145728");
  ExpectError(CheckPgPointerInChunks(m, 2 * m, m, c, kChunk), absl::StatusCode::kDataLoss,
              "pointer's homed position 2097152 is past its tail 1048576");
  // Nothing homed, but chunks past the head: a ring taking chunks again
  // would map the log's lpos before its base.
  ExpectError(CheckPgPointerInChunks(m, m, 9 * m, c, kChunk), absl::StatusCode::kDataLoss,
              "pointer's homed bytes [1048576, 1048576) lie outside its chunks [2097152, 5242880)");
}

// --- Value framing ----------------------------------------------------------

TEST(SealValue, UnsealChecksSizeCrcAndFormat) {
  std::string v = "\x03" "fields";
  SealValue(&v);
  ASSERT_EQ(11u, v.size());
  auto f = UnsealValue(v, "thing", 3);
  ASSERT_OK(f);
  EXPECT_EQ("fields", *f);
  ExpectError(UnsealValue(v.substr(0, 4), "thing", 3).status(), absl::StatusCode::kDataLoss,
              "thing value is truncated (4 bytes)");
  ExpectError(UnsealValue(v, "thing", 2).status(), absl::StatusCode::kDataLoss,
              "thing value has unknown format 3");
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x20;
    ExpectError(UnsealValue(bad, "thing", 3).status(), absl::StatusCode::kDataLoss,
                "thing value is damaged: CRC mismatch");
  }
  // The smallest value: a format byte and the CRC.
  std::string empty(1, '\x01');
  SealValue(&empty);
  auto e = UnsealValue(empty, "thing", 1);
  ASSERT_OK(e);
  EXPECT_TRUE(e->empty());
}

// --- The RocksDB backend's keys ---------------------------------------------

TEST(ClassifyStoreKey, EachBackendsKeys) {
  const PgId pg{1, 0x2a, -1};
  EXPECT_EQ(StoreKeyKind::kMeta, ClassifyStoreKey(kMetaKey));
  EXPECT_EQ(StoreKeyKind::kPgPointer, ClassifyStoreKey(PgPointerKey(pg)));
  EXPECT_EQ(StoreKeyKind::kPgChunks, ClassifyStoreKey(PgChunksKey(pg)));
  EXPECT_EQ(StoreKeyKind::kPgLog, ClassifyStoreKey(PgLogKeyPrefix(pg) + "_state"));
  EXPECT_EQ(StoreKeyKind::kStreamPointer, ClassifyStoreKey(kStreamPointerKey));
  EXPECT_EQ(StoreKeyKind::kStreamChunks, ClassifyStoreKey(kStreamChunksKey));
  // By prefix alone: a malformed PG key still names its backend.
  EXPECT_EQ(StoreKeyKind::kPgPointer, ClassifyStoreKey("pgring.ptr.short"));
  EXPECT_EQ(StoreKeyKind::kPgChunks, ClassifyStoreKey("pgring.chunks."));
  EXPECT_EQ(StoreKeyKind::kPgLog, ClassifyStoreKey("pgring.log."));
  for (const char* k : {"", "pgring.", "pgring.meta.", "pgring.metaX", "pgring.ptr", "pgring.chunks",
                        "pgring.log", "pgring.other", "osd.meta", "pgring.stream.",
                        "pgring.stream.ptr.", "pgring.stream.ptrX", "pgring.stream.chunks.",
                        "pgring.stream.chunk"}) {
    EXPECT_EQ(StoreKeyKind::kUnknown, ClassifyStoreKey(k)) << k;
  }
}

TEST(ClassifyPgLogKeyName, EachClass) {
  const Version v{7, 13};
  PgLogKeyClass c = ClassifyPgLogKeyName(LogKeyName(v));
  EXPECT_EQ(PgLogKeyKind::kEntry, c.kind);
  EXPECT_EQ(v, c.version);
  c = ClassifyPgLogKeyName(std::string(kDupKeyNamePrefix) + LogKeyName(v));
  EXPECT_EQ(PgLogKeyKind::kDup, c.kind);
  EXPECT_EQ(v, c.version);
  EXPECT_EQ(PgLogKeyKind::kInfo, ClassifyPgLogKeyName("_info").kind);
  EXPECT_EQ(PgLogKeyKind::kState, ClassifyPgLogKeyName("_state").kind);
  // The extremes of an entry name.
  c = ClassifyPgLogKeyName("4294967295.18446744073709551615");
  EXPECT_EQ(PgLogKeyKind::kEntry, c.kind);
  EXPECT_EQ((Version{UINT32_MAX, UINT64_MAX}), c.version);
  c = ClassifyPgLogKeyName("0000000000.00000000000000000000");
  EXPECT_EQ(PgLogKeyKind::kEntry, c.kind);
  EXPECT_EQ(Version{}, c.version);
}

TEST(ClassifyPgLogKeyName, MalformedEntryNames) {
  for (const char* name : {
           "0000000007.0000000000000000001",    // 30 bytes
           "0000000007.000000000000000000013",  // 32 bytes
           "0000000007-00000000000000000013",   // no '.'
           "000000000x.00000000000000000013",   // not a digit
           "4294967296.00000000000000000000",   // epoch past 32 bits
           "0000000000.18446744073709551616",   // version past 64 bits
           "9",
       }) {
    EXPECT_EQ(PgLogKeyKind::kMalformedEntry, ClassifyPgLogKeyName(name).kind) << name;
  }
}

TEST(ClassifyPgLogKeyName, MalformedDupNames) {
  for (const char* name : {"dup_", "dup_garbage", "dup_0000000007.0000000000000000001",
                           "dup_dup_0000000007.00000000000000000013"}) {
    EXPECT_EQ(PgLogKeyKind::kMalformedDup, ClassifyPgLogKeyName(name).kind) << name;
  }
}

TEST(ClassifyPgLogKeyName, UnknownNames) {
  for (const char* name : {"", "_", "_info_", "_inf", "_states", "info", "state", "dup",
                           "Dup_0000000007.00000000000000000013", "z", ".0000000007"}) {
    EXPECT_EQ(PgLogKeyKind::kUnknown, ClassifyPgLogKeyName(name).kind) << name;
  }
}

TEST(SplitPgLogKey, PgAndName) {
  const PgId pg{3, 0x2a, -1};
  PgId got;
  std::string_view name;
  const std::string key = PgLogKeyPrefix(pg) + "_state";
  ASSERT_TRUE(SplitPgLogKey(key, &got, &name));
  EXPECT_EQ(pg, got);
  EXPECT_EQ("_state", name);
  const PgId sharded{-1, 0, 5};
  ASSERT_TRUE(SplitPgLogKey(PgLogKeyPrefix(sharded), &got, &name));
  EXPECT_EQ(sharded, got);
  EXPECT_TRUE(name.empty());
}

TEST(SplitPgLogKey, NotAPgLogKey) {
  const PgId pg{3, 0x2a, -1};
  PgId got;
  std::string_view name;
  std::string key = PgLogKeyPrefix(pg) + "_info";
  key[kLogKeyPrefix.size() + kPgKeySize] = '/';  // the '.' after the pgkey
  EXPECT_FALSE(SplitPgLogKey(key, &got, &name));
  // Too short for a pgkey and its '.'.
  EXPECT_FALSE(SplitPgLogKey(std::string(kLogKeyPrefix) + "short", &got, &name));
  EXPECT_FALSE(SplitPgLogKey(PgLogKeyPrefix(pg).substr(0, kLogKeyPrefix.size() + kPgKeySize),
                             &got, &name));
  // Another prefix.
  EXPECT_FALSE(SplitPgLogKey(PgPointerKey(pg) + ".x", &got, &name));
  EXPECT_FALSE(SplitPgLogKey("pgring.lo", &got, &name));
}

}  // namespace
}  // namespace pgring
