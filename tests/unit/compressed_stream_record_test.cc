// The compressed stream record's body (src/format/compressed_stream_record.h,
// docs/FORMAT.md "Compressed stream records"): what the compressor writes
// reads back as the items it was given, it compresses only what shrinks,
// and every malformed body is refused with kDataLoss naming the problem,
// never read as items.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "format/compressed_stream_record.h"
#include "format/record.h"
#include "util/coding.h"

namespace pgring {
namespace {

using ::testing::HasSubstr;

// Items as a stream record holds them: a PG's record bytes, compressible as
// Ceph's encodings are (names and versions repeat).
std::string SomeItems(int pgs) {
  RecordBodyBuilder b;
  for (int i = 0; i < pgs; ++i) {
    std::string bytes;
    for (int k = 0; k < 6; ++k) {
      bytes += "rbd_data.1234abcd." + std::to_string(1000 + i * 7 + k) + std::string(8, '\0');
    }
    b.AddPgBytes(7 + i, 4096 * (i + 1), bytes);
  }
  return b.body();
}

TEST(CompressedStreamRecordTest, CompressedItemsReadBackAsTheItems) {
  StreamRecordCompressor c;
  for (int pgs : {1, 3, 40}) {
    const std::string items = SomeItems(pgs);
    std::string body;
    ASSERT_TRUE(c.Compress(items, &body)) << pgs;
    EXPECT_LT(body.size(), items.size());
    // raw_len, then lz4_len, then exactly that block.
    std::string_view in = body;
    uint64_t raw_len = 0, lz4_len = 0;
    ASSERT_TRUE(GetVarint64(&in, &raw_len));
    ASSERT_TRUE(GetVarint64(&in, &lz4_len));
    EXPECT_EQ(items.size(), raw_len);
    EXPECT_EQ(in.size(), lz4_len);
    std::string scratch;
    auto read = StreamRecordItems(kRecordStreamLz4, body, &scratch);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(items, *read);
    // Filler after the block is ignored.
    auto padded = StreamRecordItems(kRecordStreamLz4, body + std::string(300, '\0'), &scratch);
    ASSERT_TRUE(padded.ok()) << padded.status();
    EXPECT_EQ(items, *padded);
  }
}

TEST(CompressedStreamRecordTest, APlainRecordsBodyIsItsItems) {
  const std::string items = SomeItems(2);
  std::string scratch;
  auto read = StreamRecordItems(kRecordStream, items, &scratch);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(items.data(), read->data());  // no copy
}

TEST(CompressedStreamRecordTest, WhatWouldNotShrinkIsNotCompressed) {
  StreamRecordCompressor c;
  std::mt19937_64 rng(5);
  std::string noise(3000, '\0');
  for (char& ch : noise) ch = static_cast<char>(rng());
  RecordBodyBuilder b;
  b.AddPgBytes(7, 0, noise);
  std::string body;
  EXPECT_FALSE(c.Compress(b.body(), &body));
  EXPECT_FALSE(c.Compress("", &body));
  EXPECT_FALSE(c.Compress(std::string(5, 'a'), &body));  // too short to shrink
  // The compressor keeps working after a refusal.
  EXPECT_TRUE(c.Compress(SomeItems(3), &body));
}

TEST(CompressedStreamRecordTest, MalformedBodiesAreDamage) {
  StreamRecordCompressor c;
  const std::string items = SomeItems(3);
  std::string good;
  ASSERT_TRUE(c.Compress(items, &good));
  std::string_view in = good;
  uint64_t raw_len = 0, lz4_len = 0;
  ASSERT_TRUE(GetVarint64(&in, &raw_len) && GetVarint64(&in, &lz4_len));
  const std::string block(in);

  auto body = [](uint64_t raw, uint64_t len, std::string_view blk) {
    std::string b;
    PutVarint64(&b, raw);
    PutVarint64(&b, len);
    b.append(blk);
    return b;
  };
  struct Case {
    std::string name, body, says;
  };
  std::string flipped = block;
  flipped[flipped.size() / 2] ^= 0x5a;
  const Case cases[] = {
      {"empty", "", "bad varint"},
      {"truncated varint", "\x80", "bad varint"},
      {"no lz4 length", body(raw_len, 0, "").substr(0, 1), "bad varint"},
      {"nothing uncompressed", body(0, lz4_len, block), "0 uncompressed bytes"},
      {"too large", body(uint64_t{1} << 24, lz4_len, block), "uncompressed bytes (1 to"},
      {"block past the body", body(raw_len, lz4_len + 1, block), "in " +
                                                                     std::to_string(lz4_len)},
      {"block cut short", body(raw_len, lz4_len - 3, block), "does not decompress"},
      {"more than it names", body(raw_len - 1, lz4_len, block), "does not decompress"},
      {"less than it names", body(raw_len + 1, lz4_len, block), "does not decompress"},
  };
  for (const Case& k : cases) {
    std::string scratch;
    auto read = StreamRecordItems(kRecordStreamLz4, k.body, &scratch);
    ASSERT_FALSE(read.ok()) << k.name;
    EXPECT_EQ(absl::StatusCode::kDataLoss, read.status().code()) << k.name;
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(k.says)) << k.name;
  }
  // A flipped byte inside the block either fails to decompress or gives
  // other bytes (a record's CRC is what catches it; its items are then
  // checked as any others).
  std::string scratch;
  auto read = StreamRecordItems(kRecordStreamLz4, body(raw_len, lz4_len, flipped), &scratch);
  if (read.ok()) EXPECT_NE(items, *read);
}

}  // namespace
}  // namespace pgring
