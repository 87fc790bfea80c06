// format_golden_test.cc — holds the on-disk format to docs/FORMAT.md byte for
// byte. Every hex string here also appears in FORMAT.md; the values were
// computed by an encoder written from the spec alone (not from this code), so
// a change to either the code or the document breaks this test.
//
// If this test fails, the on-disk format changed: that needs a new format
// version and an updated FORMAT.md, never an updated golden string alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/compressed_stream_record.h"
#include "format/label.h"
#include "format/record.h"
#include "format/metadata_keys.h"
#include "pgring/transaction.h"
#include "rocksdb/db.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/store_fixture.h"
#include "util/test_util.h"

namespace pgring {
namespace {

// Lowercase hex of `bytes`, and back (`hex` must be well formed).
std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}
std::string Unhex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

// The worked example of FORMAT.md, "Worked example: a record": PG stamp 7,
// lap 0, seq 1 at lpos 0; an entry (epoch 3, version 42, payload "hello")
// then an info item "inf".
constexpr char kExampleRecordHex[] =
    "d823bded"                  // masked CRC32C of bytes [4, 48)
    "01"                        // type: kRecordTxn
    "180000"                    // length: 24 body bytes (u24)
    "07000000"                  // pg stamp 7
    "00000000"                  // lap 0
    "0100000000000000"          // seq 1
    "01"                        // item kind: kEntry
    "11"                        // varint length 17
    "03000000"                  //   epoch 3
    "2a00000000000000"          //   version 42
    "68656c6c6f"                //   payload "hello"
    "02"                        // item kind: kInfo
    "03"                        // varint length 3
    "696e66";                   //   payload "inf"

// The worked example of FORMAT.md, "Worked example: a label".
constexpr char kExampleLabelHex[] =
    "504752494e474c42"                  // 0  magic "PGRINGLB"
    "01000000"                          // 8  format version 1
    "60000000"                          // 12 encoded size 96
    "00112233445566778899aabbccddeeff"  // 16 uuid
    "00100000"                          // 32 block size 4096
    "00001000"                          // 36 chunk size 1 MiB
    "0010000100000000"                  // 40 partition size 16 MiB + 4 KiB
    "0010000000000000"                  // 48 data offset 4096
    "1000000000000000"                  // 56 chunk count 16
    "01"                                // 64 backend: ring
    "000000000000000000000000000000"    // 65 reserved, zero (27 bytes)
    "000000000000000000000000"
    "be8b61f6";                         // 92 masked CRC32C of [0, 92)

Uuid ExampleUuid() {
  Uuid u;
  for (int i = 0; i < 16; ++i) u.bytes[i] = static_cast<uint8_t>(0x11 * i);
  return u;
}

Label ExampleLabel() {
  Label l;
  l.uuid = ExampleUuid();
  l.block_size = 4096;
  l.chunk_size = 1 << 20;
  l.partition_size = 4096 + 16 * (1 << 20);
  l.data_offset = 4096;
  l.chunk_count = 16;
  l.backend = Backend::kRing;
  return l;
}

// --- CRC and masking -----------------------------------------------------

TEST(FormatGolden, CrcMaskKnownValues) {
  // mask(c) = rotr15(c) + 0xa282ead8 (mod 2^32).
  EXPECT_EQ(0xe3069283u, crc32c::Value("123456789", 9));
  EXPECT_EQ(0xc78ab0e5u, crc32c::Mask(0xe3069283u));
  EXPECT_EQ(0xa282ead8u, crc32c::Mask(0));
  EXPECT_EQ(0x9a71bb4cu, crc32c::Value("hello", 5));
  EXPECT_EQ(0x191c1fbbu, crc32c::Mask(0x9a71bb4cu));
  EXPECT_EQ(0xedbd23d8u, crc32c::Mask(0x1c80259du));  // the example record's
  EXPECT_EQ(0xf6618bbeu, crc32c::Mask(0x507329efu));  // the example label's
  for (uint32_t c : {0u, 1u, 0x80000000u, 0xffffffffu, 0xe3069283u}) {
    EXPECT_EQ(c, crc32c::Unmask(crc32c::Mask(c))) << c;
  }
}

// --- Records --------------------------------------------------------------

TEST(FormatGolden, ExampleRecordBytes) {
  RecordBodyBuilder b;
  b.AddEntry(Version{3, 42}, "hello");
  b.AddInfo("inf");
  EXPECT_EQ(24u, b.size());
  std::string rec;
  AppendRecord(&rec, kRecordTxn, /*pg_stamp=*/7, /*lap=*/0, /*seq=*/1, b.body());
  ASSERT_EQ(48u, rec.size());
  EXPECT_EQ(kExampleRecordHex, Hex(rec));
  // The same, as FORMAT.md prints it in one piece.
  EXPECT_EQ(
      "d823bded01180000070000000000000001000000000000000111030000002a0000000000000068656c6c6f"
      "0203696e66",
      Hex(rec));
  EXPECT_EQ(0x1c80259du, crc32c::Value(rec.data() + 4, rec.size() - 4));
  EXPECT_TRUE(RecordCrcMatches(rec));
}

TEST(FormatGolden, ExampleRecordDecodes) {
  std::string rec = Unhex(kExampleRecordHex);
  ASSERT_EQ(48u, rec.size());
  ASSERT_TRUE(RecordCrcMatches(rec));
  RecordHeader h = DecodeRecordHeader(rec.data());
  EXPECT_EQ(0xedbd23d8u, h.masked_crc);
  EXPECT_EQ(kRecordTxn, h.type);
  EXPECT_EQ(24u, h.length);
  EXPECT_EQ(7u, h.pg_stamp);
  EXPECT_EQ(0u, h.lap);
  EXPECT_EQ(1u, h.seq);
  std::vector<Item> items;
  ASSERT_OK(ForEachItem(std::string_view(rec).substr(kRecordHeaderSize),
                        [&](const Item& it) {
                          items.push_back(it);
                          return absl::OkStatus();
                        }));
  ASSERT_EQ(2u, items.size());
  EXPECT_EQ(ItemKind::kEntry, items[0].kind);
  EXPECT_EQ((Version{3, 42}), items[0].version);
  EXPECT_EQ("hello", items[0].payload);
  EXPECT_EQ(0u, items[0].offset);
  EXPECT_EQ(ItemKind::kInfo, items[1].kind);
  EXPECT_EQ("inf", items[1].payload);
  EXPECT_EQ(19u, items[1].offset);
}

// FORMAT.md, "Worked example" (continued): the next record of the same PG,
// packed right behind the first at lpos 48 (kRewriteTailBlock).
constexpr char kExampleRecord2Hex[] =
    "280e8072" "01" "130000" "07000000" "00000000" "0200000000000000"
    "0111" "03000000" "2b00000000000000" "776f726c64";

TEST(FormatGolden, SecondRecordPacksBehindTheFirst) {
  RecordBodyBuilder b;
  b.AddEntry(Version{3, 43}, "world");
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 7, /*lap=*/0, /*seq=*/2, b.body());
  EXPECT_EQ(kExampleRecord2Hex, Hex(rec));
  EXPECT_EQ(43u, rec.size());  // the tail moves to lpos 48 + 43 = 91
}

// FORMAT.md, "Worked example" (continued): the first record as kNeverRewrite
// writes it, padded to the end of its 4096-byte block.
TEST(FormatGolden, ExampleRecordPaddedToBlockEnd) {
  RecordBodyBuilder b;
  b.AddEntry(Version{3, 42}, "hello");
  b.AddInfo("inf");
  b.AddPad(4096 - kRecordHeaderSize - b.size());
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 7, 0, 1, b.body());
  ASSERT_EQ(4096u, rec.size());
  EXPECT_EQ("043db85c" "01" "e80f00" "07000000" "00000000" "0100000000000000"
            "0111030000002a0000000000000068656c6c6f" "0203696e66"
            "86cd1f",  // pad item: kind 0x86, varint 4045, then 4045 zero bytes
            Hex(rec.substr(0, 51)));
  EXPECT_EQ(std::string(4045, '\0'), rec.substr(51));
  EXPECT_EQ(0xa9165d1au, crc32c::Value(rec.data() + 4, rec.size() - 4));
}

TEST(FormatGolden, HeaderFieldOffsetsAndWidths) {
  // Distinct bytes in every field show each field's offset, width and
  // byte order (little-endian; length is 3 bytes).
  std::string rec;
  AppendRecord(&rec, 0x85, 0x44332211u, 0x88776655u, 0x100f0e0d0c0b0a09ull,
               std::string(0x030201, 'x'));
  EXPECT_EQ("85" "010203" "11223344" "55667788" "090a0b0c0d0e0f10",
            Hex(rec.substr(4, 20)));
  RecordHeader h = DecodeRecordHeader(rec.data());
  EXPECT_EQ(0x85, h.type);
  EXPECT_EQ(0x030201u, h.length);
  EXPECT_EQ(0x44332211u, h.pg_stamp);
  EXPECT_EQ(0x88776655u, h.lap);
  EXPECT_EQ(0x100f0e0d0c0b0a09ull, h.seq);
  EXPECT_EQ(kRecordHeaderSize + 0x030201, rec.size());
}

TEST(FormatGolden, MaxBodyLengthIsU24) {
  EXPECT_EQ(0xffffffu, kMaxRecordBody);
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 1, 0, 1, std::string(kMaxRecordBody, '\0'));
  EXPECT_EQ("ffffff", Hex(rec.substr(5, 3)));
  EXPECT_EQ(kMaxRecordBody, DecodeRecordHeader(rec.data()).length);
  EXPECT_TRUE(RecordCrcMatches(rec));
}

TEST(FormatGolden, ItemKindValues) {
  EXPECT_EQ(0x01, static_cast<int>(ItemKind::kEntry));
  EXPECT_EQ(0x02, static_cast<int>(ItemKind::kInfo));
  EXPECT_EQ(0x03, static_cast<int>(ItemKind::kDup));
  EXPECT_EQ(0x04, static_cast<int>(ItemKind::kRewind));
  EXPECT_EQ(0x05, static_cast<int>(ItemKind::kReset));
  EXPECT_EQ(0x86, static_cast<int>(ItemKind::kPad));
  EXPECT_EQ(0x80, kSkippableBit);
  EXPECT_EQ(0x07, static_cast<int>(ItemKind::kPgBytes));
  EXPECT_EQ(1, kRecordTxn);
  EXPECT_EQ(2, kRecordStream);
  EXPECT_EQ(3, kRecordStreamLz4);
  EXPECT_EQ(0xffffffffu, kStreamStamp);
  EXPECT_EQ(24u, kRecordHeaderSize);
  EXPECT_EQ(12u, kItemVersionSize);
  EXPECT_EQ(12u, kItemPgBytesPrefixSize);
}

TEST(FormatGolden, EachItemKindBytes) {
  RecordBodyBuilder b;
  b.AddDup(Version{2, 10}, "d");
  EXPECT_EQ("030d" "02000000" "0a00000000000000" "64", Hex(b.Release()));
  b.AddRewind(Version{3, 41});
  EXPECT_EQ("040c" "03000000" "2900000000000000", Hex(b.Release()));
  b.AddReset();
  EXPECT_EQ("0500", Hex(b.Release()));
  b.AddInfo("");
  EXPECT_EQ("0200", Hex(b.Release()));
  b.AddEntry(Version{0xffffffffu, 0xffffffffffffffffull}, "");
  EXPECT_EQ("010c" "ffffffff" "ffffffffffffffff", Hex(b.Release()));
  // A 200-byte info: the varint length takes two bytes (c8 01).
  b.AddInfo(std::string(200, 'i'));
  std::string info = b.Release();
  EXPECT_EQ("02c801", Hex(info.substr(0, 3)));
  EXPECT_EQ(203u, info.size());
  EXPECT_EQ(203u, RecordBodyBuilder::ItemSize(200));
  EXPECT_EQ(2u, RecordBodyBuilder::ItemSize(0));
  EXPECT_EQ(129u, RecordBodyBuilder::ItemSize(127));
  EXPECT_EQ(131u, RecordBodyBuilder::ItemSize(128));
}

// FORMAT.md, "Items": a kPgBytes item, the bytes "abc" of the PG with stamp
// 7 at ring lpos 4096.
TEST(FormatGolden, PgBytesItemBytes) {
  RecordBodyBuilder b;
  b.AddPgBytes(7, 4096, "abc");
  const std::string kHex =
      "07"                  // item kind: kPgBytes
      "0f"                  // varint length 15
      "07000000"            //   stamp 7
      "0010000000000000"    //   lpos 4096
      "616263";             //   the PG's bytes "abc"
  EXPECT_EQ(kHex, Hex(b.body()));
  const std::string body = Unhex(kHex);
  std::vector<Item> items;
  ASSERT_OK(ForEachItem(body, [&](const Item& it) {
    items.push_back(it);
    return absl::OkStatus();
  }));
  ASSERT_EQ(1u, items.size());
  EXPECT_EQ(ItemKind::kPgBytes, items[0].kind);
  EXPECT_EQ(7u, items[0].pg_stamp);
  EXPECT_EQ(4096u, items[0].lpos);
  EXPECT_EQ("abc", items[0].payload);
}

// FORMAT.md, "Worked example: a stream record": the commit group that wrote
// the example's second record (PG stamp 7, lpos 48, 43 bytes) as the
// stream's first record (lap 0, seq 1).
constexpr char kExampleStreamRecordHex[] =
    "c34f1fe2"                  // masked CRC32C of bytes [4, 81)
    "02"                        // type: kRecordStream
    "390000"                    // length: 57 body bytes
    "ffffffff"                  // stamp: kStreamStamp
    "00000000"                  // lap 0
    "0100000000000000"          // seq 1
    "07"                        // item kind: kPgBytes
    "37"                        // varint length 55
    "07000000"                  //   PG stamp 7
    "3000000000000000"          //   lpos 48
    "280e807201130000070000000000000002000000000000000111030000002b00000000000000776f726c64";
                                //   the 43 bytes of the PG's record at lpos 48

TEST(FormatGolden, StreamRecordBytes) {
  RecordBodyBuilder b;
  b.AddPgBytes(7, 48, Unhex(kExampleRecord2Hex));
  std::string rec;
  AppendRecord(&rec, kRecordStream, kStreamStamp, /*lap=*/0, /*seq=*/1, b.body());
  ASSERT_EQ(81u, rec.size());
  EXPECT_EQ(kExampleStreamRecordHex, Hex(rec));
  EXPECT_EQ(0x32759fceu, crc32c::Value(rec.data() + 4, rec.size() - 4));
  EXPECT_TRUE(RecordCrcMatches(rec));

  const RecordHeader h = DecodeRecordHeader(rec.data());
  EXPECT_EQ(kRecordStream, h.type);
  EXPECT_EQ(kStreamStamp, h.pg_stamp);
  EXPECT_EQ(57u, h.length);
  std::vector<Item> items;
  ASSERT_OK(ForEachItem(std::string_view(rec).substr(kRecordHeaderSize), [&](const Item& it) {
    items.push_back(it);
    return absl::OkStatus();
  }));
  ASSERT_EQ(1u, items.size());
  EXPECT_EQ(7u, items[0].pg_stamp);
  EXPECT_EQ(48u, items[0].lpos);
  EXPECT_EQ(kExampleRecord2Hex, Hex(items[0].payload));
  EXPECT_EQ(0u, items[0].offset);
}

// FORMAT.md, "Worked example: a compressed stream record": PG stamp 7's 64
// bytes "a...a" at lpos 4096, in a compressed stream record (lap 0, seq 2).
// The lz4 block is written out by hand from the LZ4 block format, so the
// example holds a reader to the format whatever an lz4 version's
// compressor writes.
constexpr char kExampleItemsHex[] =
    "07" "4c" "07000000" "0010000000000000"  // kPgBytes, 76 data bytes: stamp 7, lpos 4096
    "61616161616161616161616161616161616161616161616161616161616161616161616161616161"
    "616161616161616161616161616161616161616161616161";  // 64 x 'a'
constexpr char kExampleCompressedRecordHex[] =
    "3f767e08"                  // masked CRC32C of bytes [4, 52)
    "03"                        // type: kRecordStreamLz4
    "1c0000"                    // length: 28 body bytes
    "ffffffff"                  // stamp: kStreamStamp
    "00000000"                  // lap 0
    "0200000000000000"          // seq 2
    "4e"                        // raw_len 78
    "1a"                        // lz4_len 26
    "ff" "00"                   // token: 15+0 literals, match 4+15+...
    "074c070000000010000000000000" "61"  //   the 15 literals
    "0100" "27"                 //   match offset 1, length 4 + 15 + 39 = 58
    "50" "6161616161";          // token: 5 literals, the last of the block

TEST(FormatGolden, CompressedStreamRecordBytes) {
  const std::string items = Unhex(kExampleItemsHex);
  ASSERT_EQ(78u, items.size());
  std::string body = Unhex("4e1a" "ff00074c07000000001000000000000061" "010027" "506161616161");
  ASSERT_EQ(28u, body.size());
  std::string rec;
  AppendRecord(&rec, kRecordStreamLz4, kStreamStamp, /*lap=*/0, /*seq=*/2, body);
  ASSERT_EQ(52u, rec.size());
  EXPECT_EQ(kExampleCompressedRecordHex, Hex(rec));
  EXPECT_TRUE(RecordCrcMatches(rec));
  std::string scratch;
  auto read = StreamRecordItems(DecodeRecordHeader(rec.data()).type,
                                std::string_view(rec).substr(kRecordHeaderSize), &scratch);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(kExampleItemsHex, Hex(*read));
  // What this lz4 compresses the items to reads back the same (its bytes
  // are lz4's to choose).
  StreamRecordCompressor c;
  std::string ours;
  ASSERT_TRUE(c.Compress(items, &ours));
  auto again = StreamRecordItems(kRecordStreamLz4, ours, &scratch);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(items, *again);
}

// --- Padding --------------------------------------------------------------

TEST(FormatGolden, PadEncodingsAtTheBoundaries) {
  RecordBodyBuilder b;
  b.AddPad(0);
  EXPECT_EQ("", Hex(b.Release()));
  b.AddPad(2);
  EXPECT_EQ("8600", Hex(b.Release()));
  b.AddPad(5);
  EXPECT_EQ("8603000000", Hex(b.Release()));
  // 129 = one item of 127 zero bytes with a one-byte varint.
  b.AddPad(129);
  std::string p = b.Release();
  EXPECT_EQ("867f", Hex(p.substr(0, 2)));
  EXPECT_EQ(std::string(127, '\0'), p.substr(2));
  // 130 is reached by neither form: "86 00" then a 128-byte item (86 7e ...).
  b.AddPad(130);
  p = b.Release();
  ASSERT_EQ(130u, p.size());
  EXPECT_EQ("8600867e", Hex(p.substr(0, 4)));
  EXPECT_EQ(std::string(126, '\0'), p.substr(4));
  // 131 = one item of 128 zero bytes with a two-byte varint (80 01).
  b.AddPad(131);
  p = b.Release();
  EXPECT_EQ("868001", Hex(p.substr(0, 3)));
  EXPECT_EQ(std::string(128, '\0'), p.substr(3));
  // 16386 = the largest single pad item (16383 bytes, varint ff 7f).
  b.AddPad(16386);
  p = b.Release();
  EXPECT_EQ("86ff7f", Hex(p.substr(0, 3)));
  EXPECT_EQ(16386u, p.size());
  // 16387 would leave 1 byte after a maximal item: 16383 + 4 instead.
  b.AddPad(16387);
  p = b.Release();
  ASSERT_EQ(16387u, p.size());
  EXPECT_EQ("86fc7f", Hex(p.substr(0, 3)));
  EXPECT_EQ("8602", Hex(p.substr(16383, 2)));
}

TEST(FormatGolden, PadProducesExactSizesAndParsesAsPurePadding) {
  for (size_t n = 0; n <= 20000; ++n) {
    if (n == 1) continue;  // one byte cannot be padding
    RecordBodyBuilder b;
    b.AddPad(n);
    ASSERT_EQ(n, b.size()) << "AddPad(" << n << ")";
    const std::string& body = b.body();
    // Every item is kPad, zero-filled, with a minimal varint length.
    std::string_view in = body;
    while (!in.empty()) {
      ASSERT_EQ(static_cast<char>(ItemKind::kPad), in.front()) << n;
      in.remove_prefix(1);
      std::string_view before = in;
      uint64_t len = 0;
      ASSERT_TRUE(GetVarint64(&in, &len)) << n;
      ASSERT_EQ(VarintLength(len), before.size() - in.size()) << n;
      ASSERT_LE(len, in.size()) << n;
      ASSERT_EQ(std::string(len, '\0'), in.substr(0, len)) << n;
      in.remove_prefix(len);
    }
    int seen = 0;
    ASSERT_OK(ForEachItem(body, [&](const Item&) {
      ++seen;
      return absl::OkStatus();
    }));
    ASSERT_EQ(0, seen) << "AddPad(" << n << ") yielded items";
    // Padding after real items leaves them intact and in place.
    RecordBodyBuilder c;
    c.AddEntry(Version{1, 1}, "e");
    c.AddPad(n);
    ASSERT_EQ(RecordBodyBuilder::ItemSize(13) + n, c.size()) << n;
  }
}

// --- Label ----------------------------------------------------------------

TEST(FormatGolden, LabelBytes) {
  std::string enc = ExampleLabel().Encode();
  ASSERT_EQ(kLabelEncodedSize, enc.size());
  EXPECT_EQ(kExampleLabelHex, Hex(enc));
  EXPECT_EQ(0x507329efu, crc32c::Value(enc.data(), kLabelCrcOffset));
  EXPECT_EQ("00112233-4455-6677-8899-aabbccddeeff", ExampleUuid().ToString());
}

TEST(FormatGolden, LabelDecodesFromGoldenBytes) {
  auto l = Label::Decode(Unhex(kExampleLabelHex));
  ASSERT_OK(l);
  EXPECT_EQ(ExampleLabel(), *l);
  // The label region is 4 KiB; a reader is handed the whole region, whose
  // bytes past the 96 encoded ones are zero and ignored.
  std::string region = Unhex(kExampleLabelHex);
  region.resize(kLabelRegionSize, '\0');
  auto r = Label::Decode(region);
  ASSERT_OK(r);
  EXPECT_EQ(ExampleLabel(), *r);
}

TEST(FormatGolden, LabelRoundTrips) {
  Label l = ExampleLabel();
  l.block_size = 512;
  l.chunk_size = 64 * 1024;
  l.partition_size = 1ull << 40;
  l.chunk_count = ((1ull << 40) - 4096) / (64 * 1024);
  l.backend = Backend::kRocksDb;
  auto d = Label::Decode(l.Encode());
  ASSERT_OK(d);
  EXPECT_EQ(l, *d);
}

TEST(FormatGolden, LabelConstants) {
  EXPECT_EQ(std::string("PGRINGLB"), std::string(kLabelMagic, 8));
  EXPECT_EQ(1u, kFormatVersion);
  EXPECT_EQ(4096u, kLabelRegionSize);
  EXPECT_EQ(96u, kLabelEncodedSize);
  EXPECT_EQ(92u, kLabelCrcOffset);
  EXPECT_EQ(1, static_cast<int>(Backend::kRing));
  EXPECT_EQ(2, static_cast<int>(Backend::kRocksDb));
}

// --- RocksDB keys and values ------------------------------------------------

TEST(FormatGolden, KeyPrefixes) {
  EXPECT_EQ("pgring.meta", kMetaKey);
  EXPECT_EQ("pgring.ptr.", kPgPointerPrefix);
  EXPECT_EQ("pgring.chunks.", kPgChunksPrefix);
  PgId pg{1, 0x2a, -1};
  EXPECT_EQ("80000000000000010000002a00", Hex(EncodePgKey(pg)));
  EXPECT_EQ("pgring.ptr." + Unhex("80000000000000010000002a00"), PgPointerKey(pg));
  EXPECT_EQ("pgring.chunks." + Unhex("80000000000000010000002a00"), PgChunksKey(pg));
  EXPECT_EQ("7fffffffffffffff0000000001", Hex(EncodePgKey(PgId{-1, 0, 0})));
  EXPECT_EQ(kPgKeySize, EncodePgKey(pg).size());
}

TEST(FormatGolden, PgKeysSortLikePgIds) {
  std::vector<PgId> ids;
  for (int64_t pool : {INT64_MIN, INT64_MIN + 1, int64_t{-300}, int64_t{-2}, int64_t{-1},
                       int64_t{0}, int64_t{1}, int64_t{255}, int64_t{256}, INT64_MAX}) {
    for (uint32_t seed : {0u, 1u, 0xffu, 0x100u, 0x7fffffffu, 0x80000000u, 0xffffffffu}) {
      for (int shard : {-1, 0, 1, 2, 11, 126, 127}) {
        ids.push_back(PgId{pool, seed, static_cast<int8_t>(shard)});
      }
    }
  }
  std::vector<PgId> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  std::vector<PgId> by_key = ids;
  std::sort(by_key.begin(), by_key.end(), [](const PgId& a, const PgId& b) {
    return EncodePgKey(a) < EncodePgKey(b);  // bytewise, as RocksDB's default
  });
  EXPECT_EQ(sorted, by_key);
  // Negative pools before positive ones; the unsharded PG before shard 0.
  EXPECT_LT(EncodePgKey(PgId{-1, 0xffffffffu, 126}), EncodePgKey(PgId{0, 0, -1}));
  EXPECT_LT(EncodePgKey(PgId{5, 7, -1}), EncodePgKey(PgId{5, 7, 0}));
  // Shards below -1 do not sort like PgIds (shard + 1 wraps to 0x81..0xff);
  // Ceph never uses them. They still round-trip.
  EXPECT_GT(EncodePgKey(PgId{5, 7, -2}), EncodePgKey(PgId{5, 7, 127}));
  ids.push_back(PgId{5, 7, -2});
  ids.push_back(PgId{5, 7, -128});
  for (const PgId& id : ids) {
    PgId back;
    ASSERT_TRUE(DecodePgKey(EncodePgKey(id), &back));
    EXPECT_EQ(id, back);
  }
  PgId unused;
  EXPECT_FALSE(DecodePgKey(Unhex("80000000000000010000002a"), &unused));    // 12 bytes
  EXPECT_FALSE(DecodePgKey(Unhex("80000000000000010000002a0000"), &unused));  // 14 bytes
}

TEST(FormatGolden, StoreMetaBytes) {
  StoreMeta m;
  m.format_version = 1;
  m.uuid = ExampleUuid();
  m.block_size = 4096;
  m.chunk_size = 1 << 20;
  m.partition_size = 4096 + 16 * (1 << 20);
  m.chunk_count = 16;
  m.backend = Backend::kRing;
  m.next_pg_stamp = 9;
  const std::string kHex =
      "01"                                // value format 1
      "01000000"                          // format version 1
      "00112233445566778899aabbccddeeff"  // uuid
      "00100000"                          // block size 4096
      "00001000"                          // chunk size 1 MiB
      "0010000100000000"                  // partition size
      "1000000000000000"                  // chunk count 16
      "01"                                // backend: ring
      "09000000"                          // next PG stamp 9
      "049f37e1";                         // masked CRC32C of the 50 bytes before
  EXPECT_EQ(kHex, Hex(m.Encode()));
  auto d = StoreMeta::Decode(Unhex(kHex));
  ASSERT_OK(d);
  EXPECT_EQ(m.uuid, d->uuid);
  EXPECT_EQ(m.format_version, d->format_version);
  EXPECT_EQ(m.block_size, d->block_size);
  EXPECT_EQ(m.chunk_size, d->chunk_size);
  EXPECT_EQ(m.partition_size, d->partition_size);
  EXPECT_EQ(m.chunk_count, d->chunk_count);
  EXPECT_EQ(m.backend, d->backend);
  EXPECT_EQ(m.next_pg_stamp, d->next_pg_stamp);
}

// The FORMAT.md example pointer, as written (format 2, varints).
constexpr char kExamplePointerHex[] =
    "02"                        // value format 2 (varints)
    "07"                        // stamp 7
    "8020"                      // head 4096
    "8060"                      // tail 12288
    "05"                        // tail_seq 5
    "03" "28"                   // entries trimmed to 3'40
    "02" "0a"                   // dups trimmed to 2'10
    "06ec22b0";                 // masked CRC32C of the 11 bytes before
// The same pointer in the fixed-width format 1 that earlier pgring wrote.
constexpr char kExamplePointerFormat1Hex[] =
    "01"                        // value format 1
    "07000000"                  // stamp 7
    "0010000000000000"          // head 4096
    "0030000000000000"          // tail 12288
    "0500000000000000"          // tail_seq 5
    "03000000" "2800000000000000"  // entries trimmed to 3'40
    "02000000" "0a00000000000000"  // dups trimmed to 2'10
    "c38f4d28";                 // masked CRC32C of the 53 bytes before

PgPointer ExamplePointer() {
  PgPointer p;
  p.stamp = 7;
  p.head = 4096;
  p.tail = 12288;
  p.tail_seq = 5;
  p.entries_trimmed_to = Version{3, 40};
  p.dups_trimmed_to = Version{2, 10};
  return p;
}

// A pointer of a busy PG: head and tail near 2^40, a million records,
// versions of epoch ~100 and version ~10^6.
PgPointer TypicalPointer() {
  PgPointer p;
  p.stamp = 1000;
  p.head = (1ull << 40) - 5'000'000;
  p.tail = (1ull << 40) + 123'456;
  p.tail_seq = 1'000'000;
  p.entries_trimmed_to = Version{100, 999'000};
  p.dups_trimmed_to = Version{99, 990'000};
  return p;
}

// `fields` (format byte first) followed by its masked CRC32C.
std::string SealValue(std::string fields) {
  PutFixed32(&fields, crc32c::Mask(crc32c::Value(fields.data(), fields.size())));
  return fields;
}

TEST(FormatGolden, PgPointerBytes) {
  const PgPointer p = ExamplePointer();
  EXPECT_EQ(kExamplePointerHex, Hex(p.Encode()));
  EXPECT_EQ(15u, p.Encode().size());
  auto d = PgPointer::Decode(Unhex(kExamplePointerHex));
  ASSERT_OK(d);
  EXPECT_EQ(p, *d);
}

// The FORMAT.md example pointer with unhomed bytes (format 3): the last 91
// bytes before its tail are in the stream, from the stream record at stream
// lpos 4096 on.
constexpr char kExamplePointerFormat3Hex[] =
    "03"                        // value format 3 (stream mode)
    "07"                        // stamp 7
    "8020"                      // head 4096
    "8060"                      // tail 12288
    "05"                        // tail_seq 5
    "03" "28"                   // entries trimmed to 3'40
    "02" "0a"                   // dups trimmed to 2'10
    "5b"                        // unhomed 91: homed = 12197
    "8020"                      // stream_pos 4096
    "a91ec426";                 // masked CRC32C of the 14 bytes before

PgPointer ExamplePointerFormat3() {
  PgPointer p = ExamplePointer();
  p.unhomed = 91;
  p.stream_pos = 4096;
  return p;
}

TEST(FormatGolden, PgPointerFormat3Bytes) {
  const PgPointer p = ExamplePointerFormat3();
  EXPECT_EQ(12197u, p.homed());
  EXPECT_EQ(kExamplePointerFormat3Hex, Hex(p.Encode()));
  EXPECT_EQ(18u, p.Encode().size());
  auto d = PgPointer::Decode(Unhex(kExamplePointerFormat3Hex));
  ASSERT_OK(d);
  EXPECT_EQ(p, *d);
  EXPECT_EQ(12197u, d->homed());

  // Nothing unhomed (homed == tail): the exact format 2 bytes, as per-PG
  // rings write them; and format 1 and 2 read back with nothing unhomed.
  PgPointer homed = p;
  homed.unhomed = 0;
  homed.stream_pos = 0;
  EXPECT_EQ(homed.tail, homed.homed());
  EXPECT_EQ(kExamplePointerHex, Hex(homed.Encode()));
  for (const char* hex : {kExamplePointerHex, kExamplePointerFormat1Hex}) {
    auto old = PgPointer::Decode(Unhex(hex));
    ASSERT_OK(old);
    EXPECT_EQ(0u, old->unhomed);
    EXPECT_EQ(0u, old->stream_pos);
    EXPECT_EQ(old->tail, old->homed());
  }

  // All of the tail unhomed, and the extremes.
  PgPointer all = p;
  all.unhomed = all.tail;
  all.stream_pos = 0;
  auto da = PgPointer::Decode(all.Encode());
  ASSERT_OK(da);
  EXPECT_EQ(all, *da);
  EXPECT_EQ(0u, da->homed());
  PgPointer max;
  max.stamp = UINT32_MAX;
  max.head = UINT64_MAX;
  max.tail = UINT64_MAX;
  max.tail_seq = UINT64_MAX;
  max.entries_trimmed_to = Version{UINT32_MAX, UINT64_MAX};
  max.dups_trimmed_to = Version{UINT32_MAX, UINT64_MAX};
  max.unhomed = UINT64_MAX;
  max.stream_pos = UINT64_MAX;
  const std::string m = max.Encode();
  EXPECT_EQ(90u, m.size());  // the largest: format 2's 70 and two 10-byte varints
  auto dm = PgPointer::Decode(m);
  ASSERT_OK(dm);
  EXPECT_EQ(max, *dm);
}

TEST(FormatGolden, PgPointerFormat3RejectsDamage) {
  const std::string v = Unhex(kExamplePointerFormat3Hex);
  const std::string fields = v.substr(0, v.size() - 4);
  auto expect = [](const std::string& value, const std::string& message) {
    auto d = PgPointer::Decode(value);
    EXPECT_CODE(d, kDataLoss);
    EXPECT_NE(std::string::npos, d.status().ToString().find(message)) << d.status();
  };
  // Every single-bit flip of the value (the CRC catches it).
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x01;
    SCOPED_TRACE(i);
    EXPECT_CODE(PgPointer::Decode(bad), kDataLoss);
  }
  expect(v.substr(0, v.size() - 1) + static_cast<char>(v.back() ^ 0x80), "CRC mismatch");
  // Every truncation, resealed.
  for (size_t n = 1; n < fields.size(); ++n) {
    SCOPED_TRACE(n);
    expect(SealValue(fields.substr(0, n)), "wrong length");
  }
  // Format 3 with format 2's fields only, and without stream_pos.
  expect(SealValue(fields.substr(0, 11)), "ends before field unhomed (offset 11)");
  expect(SealValue(fields.substr(0, 12)), "ends before field stream_pos (offset 12)");
  // Trailing bytes.
  expect(SealValue(fields + std::string(1, '\0')), "1 trailing bytes after the fields (offset 14)");
  // unhomed 0: format 3 is written only with unhomed bytes.
  const std::string prefix = fields.substr(0, 11);  // format byte and format 2's fields
  expect(SealValue(prefix + std::string(1, '\0') + "\x80\x20"),
         "field unhomed is 0 in format 3 (offset 11)");
  // unhomed past the tail (12288), and just at it.
  std::string past = prefix;
  PutVarint64(&past, 12289);
  past.push_back('\0');  // stream_pos 0
  expect(SealValue(past), "field unhomed is 12289, more than tail 12288 (offset 11)");
  std::string at = prefix;
  PutVarint64(&at, 12288);
  at.push_back('\0');
  ASSERT_OK(PgPointer::Decode(SealValue(at)));
  // Strict varints in the new fields.
  expect(SealValue(prefix + std::string("\xdb\x00", 2) + "\x80\x20"),
         "varint not in shortest form in field unhomed (offset 11)");
  expect(SealValue(prefix + "\x5b" + std::string("\x80\xa0\x00", 3)),
         "varint not in shortest form in field stream_pos (offset 12)");
  expect(SealValue(prefix + "\x5b" + std::string(9, '\xff') + "\x02"),
         "varint does not fit in 64 bits in field stream_pos (offset 12)");
  expect(SealValue(prefix + "\x5b" + std::string(10, '\x80') + "\x01"),
         "varint longer than 10 bytes in field stream_pos (offset 12)");
  // head > tail still refused in format 3.
  PgPointer p = ExamplePointerFormat3();
  p.head = p.tail + 1;
  expect(p.Encode(), "head 12289 past tail 12288");
}

TEST(FormatGolden, PgPointerFormat1StillDecodes) {
  // Stores written before format 2 hold format 1 pointers; they must open.
  const std::string old = Unhex(kExamplePointerFormat1Hex);
  ASSERT_EQ(57u, old.size());
  auto d = PgPointer::Decode(old);
  ASSERT_OK(d);
  EXPECT_EQ(ExamplePointer(), *d);
  // Re-encoding writes format 2.
  EXPECT_EQ(kExamplePointerHex, Hex(d->Encode()));

  // Extreme values in format 1.
  for (uint64_t x : {uint64_t{0}, uint64_t{UINT64_MAX}}) {
    const auto x32 = static_cast<uint32_t>(x);
    std::string f(1, '\x01');
    PutFixed32(&f, x32);
    PutFixed64(&f, x);
    PutFixed64(&f, x);
    PutFixed64(&f, x);
    PutFixed32(&f, x32);
    PutFixed64(&f, x);
    PutFixed32(&f, x32);
    PutFixed64(&f, x);
    const std::string v = SealValue(f);
    ASSERT_EQ(57u, v.size());
    auto e = PgPointer::Decode(v);
    ASSERT_OK(e);
    EXPECT_EQ(x32, e->stamp);
    EXPECT_EQ(x, e->head);
    EXPECT_EQ(x, e->tail);
    EXPECT_EQ(x, e->tail_seq);
    EXPECT_EQ((Version{x32, x}), e->entries_trimmed_to);
    EXPECT_EQ((Version{x32, x}), e->dups_trimmed_to);
    auto again = PgPointer::Decode(e->Encode());
    ASSERT_OK(again);
    EXPECT_EQ(*e, *again);
  }

  // Format 1 damage is still refused: wrong length (resealed), head > tail.
  const std::string fields = old.substr(0, old.size() - 4);
  for (size_t n = 1; n < fields.size(); ++n) {
    SCOPED_TRACE(n);
    auto bad = PgPointer::Decode(SealValue(fields.substr(0, n)));
    EXPECT_CODE(bad, kDataLoss);
    EXPECT_NE(std::string::npos, bad.status().ToString().find("wrong length")) << bad.status();
  }
  EXPECT_CODE(PgPointer::Decode(SealValue(fields + "x")), kDataLoss);
  std::string swapped = fields;
  EncodeFixed64(swapped.data() + 5, 12288);  // head
  EncodeFixed64(swapped.data() + 13, 4096);  // tail
  auto hp = PgPointer::Decode(SealValue(swapped));
  EXPECT_CODE(hp, kDataLoss);
  EXPECT_NE(std::string::npos, hp.status().ToString().find("head 12288 past tail 4096"))
      << hp.status();
}

TEST(FormatGolden, PgPointerRoundTripsExtremes) {
  PgPointer zero;
  zero.tail_seq = 0;
  const std::string z = zero.Encode();
  EXPECT_EQ("02" "00" "00" "00" "00" "00" "00" "00" "00", Hex(z.substr(0, z.size() - 4)));
  EXPECT_EQ(13u, z.size());  // the smallest pointer
  auto dz = PgPointer::Decode(z);
  ASSERT_OK(dz);
  EXPECT_EQ(zero, *dz);

  PgPointer max;
  max.stamp = UINT32_MAX;
  max.head = UINT64_MAX;
  max.tail = UINT64_MAX;
  max.tail_seq = UINT64_MAX;
  max.entries_trimmed_to = Version{UINT32_MAX, UINT64_MAX};
  max.dups_trimmed_to = Version{UINT32_MAX, UINT64_MAX};
  const std::string m = max.Encode();
  EXPECT_EQ(70u, m.size());  // the largest: 1 + 5 + 3 * 10 + 2 * (5 + 10) + 4
  EXPECT_EQ("02" "ffffffff0f" "ffffffffffffffffff01", Hex(m.substr(0, 16)));
  auto dm = PgPointer::Decode(m);
  ASSERT_OK(dm);
  EXPECT_EQ(max, *dm);

  // Powers of two around every varint length boundary.
  for (int bit = 0; bit < 64; ++bit) {
    for (uint64_t x : {(1ull << bit) - 1, 1ull << bit}) {
      PgPointer p;
      p.stamp = static_cast<uint32_t>(std::min<uint64_t>(x, UINT32_MAX));
      p.head = x / 2;
      p.tail = x;
      p.tail_seq = x;
      p.entries_trimmed_to = Version{p.stamp, x};
      p.dups_trimmed_to = Version{p.stamp, x / 3};
      const std::string v = p.Encode();
      EXPECT_EQ(1 + VarintLength(p.stamp) + VarintLength(p.head) + VarintLength(p.tail) +
                    VarintLength(p.tail_seq) + 2 * VarintLength(p.stamp) + VarintLength(x) +
                    VarintLength(x / 3) + 4,
                v.size());
      auto d = PgPointer::Decode(v);
      ASSERT_OK(d);
      EXPECT_EQ(p, *d) << x;
    }
  }

  // A busy PG's pointer: 30 bytes instead of 57.
  const std::string t = TypicalPointer().Encode();
  EXPECT_EQ(30u, t.size());
  auto dt = PgPointer::Decode(t);
  ASSERT_OK(dt);
  EXPECT_EQ(TypicalPointer(), *dt);
}

TEST(FormatGolden, PgPointerEveryTruncationIsDataLoss) {
  for (const PgPointer& p : {ExamplePointer(), TypicalPointer()}) {
    const std::string v = p.Encode();
    const std::string fields = v.substr(0, v.size() - 4);
    for (size_t n = 0; n < v.size(); ++n) {
      SCOPED_TRACE(n);
      // Cut as is: too short, or the CRC does not match.
      EXPECT_CODE(PgPointer::Decode(v.substr(0, n)), kDataLoss);
      // Cut and resealed: the CRC matches but the fields do not add up.
      if (n >= 1 && n < fields.size()) {
        auto d = PgPointer::Decode(SealValue(fields.substr(0, n)));
        EXPECT_CODE(d, kDataLoss);
        EXPECT_NE(std::string::npos, d.status().ToString().find("wrong length")) << d.status();
      }
    }
    // Resealed with bytes added.
    for (char extra : {'\x00', '\x01', '\x80'}) {
      auto d = PgPointer::Decode(SealValue(fields + extra));
      EXPECT_CODE(d, kDataLoss);
    }
    auto d = PgPointer::Decode(SealValue(fields + std::string(1, '\0')));
    EXPECT_NE(std::string::npos, d.status().ToString().find("1 trailing bytes")) << d.status();
  }
  // The messages name the field.
  const std::string fields = Unhex(kExamplePointerHex).substr(0, 11);
  auto d = PgPointer::Decode(SealValue(fields.substr(0, 3)));  // inside head's varint
  EXPECT_NE(std::string::npos,
            d.status().ToString().find("truncated varint in field head (offset 2)"))
      << d.status();
  d = PgPointer::Decode(SealValue(fields.substr(0, 4)));  // head ends, tail missing
  EXPECT_NE(std::string::npos, d.status().ToString().find("ends before field tail (offset 4)"))
      << d.status();
}

TEST(FormatGolden, PgPointerRejectsBadVarints) {
  // Format 2 pointer whose stamp (the first field) is `stamp`, the others 0.
  auto with_stamp = [](const std::string& stamp) {
    return SealValue("\x02" + stamp + std::string(7, '\0'));
  };
  ASSERT_OK(PgPointer::Decode(with_stamp("\x05")));
  struct Case {
    std::string stamp;
    const char* message;
  };
  const Case kCases[] = {
      // 11 bytes: longer than 10.
      {std::string(10, '\x80') + '\x01', "varint longer than 10 bytes in field stamp"},
      {std::string(10, '\xff') + '\x00', "varint longer than 10 bytes in field stamp"},
      // 10 bytes, the tenth carrying bits beyond 64.
      {std::string(9, '\xff') + '\x02', "varint does not fit in 64 bits in field stamp"},
      {std::string(9, '\x80') + '\x7f', "varint does not fit in 64 bits in field stamp"},
      // Not the shortest encoding (writers never produce it; one value, one
      // encoding).
      {std::string("\x85\x00", 2), "varint not in shortest form in field stamp"},
      {std::string(9, '\x80') + '\x00', "varint not in shortest form in field stamp"},
      // A stamp or epoch beyond 32 bits.
      {"\x80\x80\x80\x80\x10", "field stamp is 4294967296, more than 32 bits"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(Hex(c.stamp));
    auto d = PgPointer::Decode(with_stamp(c.stamp));
    EXPECT_CODE(d, kDataLoss);
    EXPECT_NE(std::string::npos, d.status().ToString().find(c.message)) << d.status();
  }
  // An epoch beyond 32 bits.
  std::string f = "\x02" + std::string(4, '\0');
  PutVarint64(&f, 1ull << 32);
  f += std::string(3, '\0');
  auto d = PgPointer::Decode(SealValue(f));
  EXPECT_CODE(d, kDataLoss);
  EXPECT_NE(std::string::npos,
            d.status().ToString().find("field entries_trimmed_to.epoch is 4294967296"))
      << d.status();
  // head > tail, with a good CRC.
  PgPointer p = ExamplePointer();
  p.head = p.tail + 1;
  d = PgPointer::Decode(p.Encode());
  EXPECT_CODE(d, kDataLoss);
  EXPECT_NE(std::string::npos, d.status().ToString().find("head 12289 past tail 12288"))
      << d.status();
}

TEST(FormatGolden, StrictVarintParsing) {
  for (uint64_t x : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383},
                     uint64_t{16384}, uint64_t{1} << 63, uint64_t{UINT64_MAX}}) {
    SCOPED_TRACE(x);
    std::string b;
    PutVarint64(&b, x);
    ASSERT_EQ(VarintLength(x), b.size());
    std::string_view in = b;
    uint64_t v = 0;
    ASSERT_EQ(VarintResult::kOk, ParseVarint64(&in, &v));
    EXPECT_EQ(x, v);
    EXPECT_TRUE(in.empty());
    for (size_t n = 0; n < b.size(); ++n) {
      std::string_view cut = std::string_view(b).substr(0, n);
      EXPECT_EQ(VarintResult::kTruncated, ParseVarint64(&cut, &v)) << n;
      EXPECT_EQ(n, cut.size()) << "advanced on failure";
      EXPECT_FALSE(GetVarint64Strict(&cut, &v));
    }
  }
  std::string_view in = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01" "rest";
  uint64_t v = 0;
  ASSERT_TRUE(GetVarint64Strict(&in, &v));
  EXPECT_EQ(UINT64_MAX, v);
  EXPECT_EQ("rest", in);
}

TEST(FormatGolden, PgChunkListBytes) {
  PgChunkList c;
  c.base = 1 << 20;
  c.chunks = {5, 2, 9};
  const std::string kHex =
      "01"                        // value format 1
      "0000100000000000"          // base lpos 1 MiB
      "03000000"                  // 3 chunks
      "05000000" "02000000" "09000000"  // chunk numbers in ring order
      "3b687a6d";                 // masked CRC32C of the 25 bytes before
  EXPECT_EQ(kHex, Hex(c.Encode()));
  auto d = PgChunkList::Decode(Unhex(kHex));
  ASSERT_OK(d);
  EXPECT_EQ(c, *d);
}

// FORMAT.md, "StreamPointer": a stream whose records lie in [4096, 12288),
// the next one to get sequence 5.
constexpr char kExampleStreamPointerHex[] =
    "01"                        // value format 1
    "8020"                      // head 4096
    "8060"                      // tail 12288
    "05"                        // tail_seq 5
    "876abdc2";                 // masked CRC32C of the 6 bytes before

TEST(FormatGolden, StreamKeys) {
  EXPECT_EQ("pgring.stream.ptr", kStreamPointerKey);
  EXPECT_EQ("pgring.stream.chunks", kStreamChunksKey);
  // Neither lies under a PG key prefix, so scans of PG pointers and chunk
  // lists never meet them.
  for (std::string_view k : {kStreamPointerKey, kStreamChunksKey}) {
    EXPECT_TRUE(k.starts_with(kKeyPrefix)) << k;
    EXPECT_FALSE(k.starts_with(kPgPointerPrefix)) << k;
    EXPECT_FALSE(k.starts_with(kPgChunksPrefix)) << k;
    EXPECT_NE(kMetaKey, k);
  }
}

TEST(FormatGolden, StreamPointerBytes) {
  StreamPointer p;
  p.head = 4096;
  p.tail = 12288;
  p.tail_seq = 5;
  EXPECT_EQ(kExampleStreamPointerHex, Hex(p.Encode()));
  auto d = StreamPointer::Decode(Unhex(kExampleStreamPointerHex));
  ASSERT_OK(d);
  EXPECT_EQ(p, *d);

  StreamPointer empty;  // a new stream: nothing in it, the first record gets 1
  EXPECT_EQ("01" "00" "00" "01", Hex(empty.Encode().substr(0, 4)));
  auto de = StreamPointer::Decode(empty.Encode());
  ASSERT_OK(de);
  EXPECT_EQ(empty, *de);
  StreamPointer max{UINT64_MAX, UINT64_MAX, UINT64_MAX};
  EXPECT_EQ(35u, max.Encode().size());
  auto dm = StreamPointer::Decode(max.Encode());
  ASSERT_OK(dm);
  EXPECT_EQ(max, *dm);

  // The stream's chunk list is a PgChunkList value.
  PgChunkList c;
  c.base = 1 << 20;
  c.chunks = {5, 2, 9};
  auto dc = PgChunkList::Decode(c.Encode());
  ASSERT_OK(dc);
  EXPECT_EQ(c, *dc);
}

TEST(FormatGolden, StreamPointerRejectsDamage) {
  const std::string v = Unhex(kExampleStreamPointerHex);
  const std::string fields = v.substr(0, v.size() - 4);
  auto expect = [](const std::string& value, const std::string& message) {
    auto d = StreamPointer::Decode(value);
    EXPECT_CODE(d, kDataLoss);
    EXPECT_NE(std::string::npos, d.status().ToString().find(message)) << d.status();
  };
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x01;
    SCOPED_TRACE(i);
    EXPECT_CODE(StreamPointer::Decode(bad), kDataLoss);
  }
  expect(v.substr(0, 4), "truncated");
  expect(v.substr(0, v.size() - 1) + static_cast<char>(v.back() ^ 0x80), "CRC mismatch");
  expect(SealValue("\x02" + fields.substr(1)), "stream pointer value has unknown format 2");
  expect(SealValue(fields.substr(0, 1)), "ends before field head (offset 1)");
  expect(SealValue(fields.substr(0, 2)), "truncated varint in field head (offset 1)");
  expect(SealValue(fields.substr(0, 5)), "ends before field tail_seq (offset 5)");
  expect(SealValue(fields + std::string(1, '\0')), "1 trailing bytes after the fields (offset 6)");
  expect(SealValue(std::string("\x01\x80\xa0\x00", 4) + fields.substr(3)),
         "varint not in shortest form in field head (offset 1)");
  expect(SealValue(fields.substr(0, 5) + std::string("\x85\x00", 2)),
         "varint not in shortest form in field tail_seq (offset 5)");
  expect(SealValue("\x01" + std::string(9, '\xff') + "\x02" + fields.substr(3)),
         "varint does not fit in 64 bits in field head (offset 1)");
  StreamPointer p{4096, 12288, 5};
  p.head = p.tail + 1;
  expect(p.Encode(), "field head 12289 is past tail 12288 (offset 1)");
  p = StreamPointer{4096, 12288, 0};
  expect(p.Encode(), "field tail_seq is 0, sequences start at 1 (offset 5)");
}

TEST(FormatGolden, ValuesRejectDamage) {
  PgPointer p;
  p.stamp = 7;
  std::string v = p.Encode();
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x01;
    SCOPED_TRACE(i);
    EXPECT_CODE(PgPointer::Decode(bad), kDataLoss);
  }
  EXPECT_CODE(PgPointer::Decode(v.substr(0, 4)), kDataLoss);
  EXPECT_CODE(StoreMeta::Decode(""), kDataLoss);
  // A sealed value with an unknown format byte (1, 2 and 3 are pointers).
  std::string other = "\x04" + v.substr(1, v.size() - 5);
  PutFixed32(&other, crc32c::Mask(crc32c::Value(other.data(), other.size())));
  auto d = PgPointer::Decode(other);
  EXPECT_CODE(d, kDataLoss);
  EXPECT_NE(std::string::npos, std::string(d.status().message()).find("unknown format 4"))
      << d.status();
  // head > tail is refused even with a good CRC.
  p.head = 2;
  p.tail = 1;
  EXPECT_CODE(PgPointer::Decode(p.Encode()), kDataLoss);
}

// A store whose pointers are all format 1 (as earlier pgring wrote them)
// opens, reads back, and rewrites a PG's pointer as format 2 when a
// transaction touches it.
class PointerFormat1StoreTest : public testing::StoreFixture {
 protected:
  std::map<std::string, std::string> Pointers() const {
    std::map<std::string, std::string> out;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), db_path_, &raw);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return out;
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(std::string(kPgPointerPrefix));
         it->Valid() && it->key().starts_with(std::string(kPgPointerPrefix)); it->Next()) {
      out[it->key().ToString()] = it->value().ToString();
    }
    return out;
  }
  void Put(const std::map<std::string, std::string>& kv) {
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(rocksdb::Options(), db_path_, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::WriteBatch b;
    for (const auto& [k, v] : kv) ASSERT_TRUE(b.Put(k, v).ok());
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ASSERT_TRUE(db->Write(wo, &b).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  absl::Status Append(const PgId& pg, uint64_t v) {
    Transaction t;
    t.AppendEntry(pg, testing::V(1, v), absl::StrCat("payload-", v));
    t.SetInfo(pg, absl::StrCat("info-", v));
    if (v > 3) t.Trim(pg, testing::V(1, v - 3));
    return store_->Commit(std::move(t));
  }
  void ExpectEntries(const PgId& pg, uint64_t first, uint64_t last) {
    auto r = store_->ReadEntries(pg);
    ASSERT_OK(r);
    ASSERT_EQ(last - first + 1, r->size());
    for (uint64_t v = first; v <= last; ++v) {
      EXPECT_EQ(testing::V(1, v), (*r)[v - first].version);
      EXPECT_EQ(absl::StrCat("payload-", v), (*r)[v - first].payload);
    }
  }
};

// PgPointer `p` as format 1 wrote it.
std::string EncodeFormat1(const PgPointer& p) {
  std::string f(1, '\x01');
  PutFixed32(&f, p.stamp);
  PutFixed64(&f, p.head);
  PutFixed64(&f, p.tail);
  PutFixed64(&f, p.tail_seq);
  PutFixed32(&f, p.entries_trimmed_to.epoch);
  PutFixed64(&f, p.entries_trimmed_to.version);
  PutFixed32(&f, p.dups_trimmed_to.epoch);
  PutFixed64(&f, p.dups_trimmed_to.version);
  return SealValue(f);
}

TEST_F(PointerFormat1StoreTest, OpensAndRewritesAsFormat2) {
  const PgId a = testing::Pg(0x2a), b = testing::Pg(7);
  Mkfs();
  ASSERT_OK(Open(options_));
  for (const PgId& pg : {a, b}) {
    Transaction t;
    t.CreatePg(pg);
    ASSERT_OK(store_->Commit(std::move(t)));
  }
  for (uint64_t v = 1; v <= 10; ++v) ASSERT_OK(Append(a, v));
  for (uint64_t v = 1; v <= 5; ++v) ASSERT_OK(Append(b, v));
  ASSERT_OK(store_->Close());
  store_.reset();

  // Rewrite every pointer in format 1.
  std::map<std::string, std::string> old = Pointers();
  ASSERT_EQ(2u, old.size());
  std::map<std::string, PgPointer> decoded;
  for (auto& [k, v] : old) {
    ASSERT_EQ(2, v[0]) << "pgring writes format 2";
    auto p = PgPointer::Decode(v);
    ASSERT_OK(p);
    decoded[k] = *p;
    v = EncodeFormat1(*p);
    ASSERT_EQ(57u, v.size());
  }
  ASSERT_NO_FATAL_FAILURE(Put(old));

  // The store opens and reads the same logs.
  ASSERT_OK(Open(options_));
  ExpectEntries(a, 8, 10);
  ExpectEntries(b, 3, 5);
  // A transaction on PG a rewrites its pointer in format 2; b's stays format 1.
  ASSERT_OK(Append(a, 11));
  ExpectEntries(a, 9, 11);
  ASSERT_OK(store_->Close());
  store_.reset();
  std::map<std::string, std::string> now = Pointers();
  const std::string ka = PgPointerKey(a), kb = PgPointerKey(b);
  ASSERT_EQ(2, now[ka][0]);
  EXPECT_LT(now[ka].size(), 57u);
  EXPECT_EQ(old[kb], now[kb]);
  auto pa = PgPointer::Decode(now[ka]);
  ASSERT_OK(pa);
  EXPECT_EQ(decoded[ka].stamp, pa->stamp);
  EXPECT_GT(pa->tail, decoded[ka].tail);
  EXPECT_EQ(decoded[ka].tail_seq + 1, pa->tail_seq);
  ASSERT_OK(Open(options_));
  ExpectEntries(a, 9, 11);
  ExpectEntries(b, 3, 5);
}

}  // namespace
}  // namespace pgring
