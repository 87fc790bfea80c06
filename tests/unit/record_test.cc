// record_test.cc — damage tests for the record codec, in the manner of
// LevelDB's log_test.cc: build a good record, damage it one way, and check
// the exact outcome (kDataLoss, and a message naming the item's offset).
// The layout under test is docs/FORMAT.md, "Records".
#include "format/record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/test_util.h"

namespace pgring {
namespace {

// Parses `body` and returns the status, collecting the items seen.
class RecordTest : public ::testing::Test {
 protected:
  absl::Status Parse(std::string_view body) {
    items_.clear();
    return ForEachItem(body, [&](const Item& it) {
      items_.push_back(it);
      return absl::OkStatus();
    });
  }

  // Expects kDataLoss with "body offset <offset>" and `what` in the message.
  void ExpectDamage(std::string_view body, size_t offset, std::string_view what) {
    absl::Status s = Parse(body);
    EXPECT_EQ(absl::StatusCode::kDataLoss, s.code()) << s;
    std::string where = "item at body offset " + std::to_string(offset) + ":";
    EXPECT_NE(std::string::npos, std::string(s.message()).find(where)) << s << " (want \"" << where << "\")";
    EXPECT_NE(std::string::npos, std::string(s.message()).find(what)) << s << " (want \"" << what << "\")";
  }

  // A good body: an entry at offset 0 (19 bytes), an info at 19 (5 bytes).
  static std::string GoodBody() {
    RecordBodyBuilder b;
    b.AddEntry(Version{3, 42}, "hello");
    b.AddInfo("inf");
    return b.Release();
  }

  std::vector<Item> items_;
};

TEST_F(RecordTest, GoodBodyParses) {
  ASSERT_OK(Parse(GoodBody()));
  ASSERT_EQ(2u, items_.size());
  EXPECT_EQ(ItemKind::kEntry, items_[0].kind);
  EXPECT_EQ(ItemKind::kInfo, items_[1].kind);
  ASSERT_OK(Parse(""));  // an empty body is valid: no items
  EXPECT_TRUE(items_.empty());
}

TEST_F(RecordTest, EveryKindRoundTrips) {
  RecordBodyBuilder b;
  b.AddEntry(Version{1, 2}, "e");
  b.AddDup(Version{1, 1}, "dd");
  b.AddInfo("info");
  b.AddRewind(Version{1, 0});
  b.AddReset();
  b.AddPad(7);
  b.AddEntry(Version{2, 1}, std::string(300, 'x'));
  ASSERT_OK(Parse(b.body()));
  ASSERT_EQ(6u, items_.size());  // padding is not reported
  EXPECT_EQ(ItemKind::kEntry, items_[0].kind);
  EXPECT_EQ("e", items_[0].payload);
  EXPECT_EQ(ItemKind::kDup, items_[1].kind);
  EXPECT_EQ((Version{1, 1}), items_[1].version);
  EXPECT_EQ("dd", items_[1].payload);
  EXPECT_EQ(ItemKind::kInfo, items_[2].kind);
  EXPECT_EQ("info", items_[2].payload);
  EXPECT_EQ(ItemKind::kRewind, items_[3].kind);
  EXPECT_EQ((Version{1, 0}), items_[3].version);
  EXPECT_TRUE(items_[3].payload.empty());
  EXPECT_EQ(ItemKind::kReset, items_[4].kind);
  EXPECT_EQ(ItemKind::kEntry, items_[5].kind);
  EXPECT_EQ(std::string(300, 'x'), items_[5].payload);
  EXPECT_EQ(b.size() - RecordBodyBuilder::ItemSize(12 + 300), items_[5].offset);
}

// A pad record is exactly the size asked for, sealed, and holds no item a
// reader reports, at every size a block's end can leave (26 .. 4096).
TEST_F(RecordTest, PadRecordFillsExactlyAndHoldsNothing) {
  for (size_t size : {size_t{26}, size_t{27}, size_t{154}, size_t{155}, size_t{4096}}) {
    std::string rec = "prefix";
    AppendPadRecord(&rec, kRecordStream, 0xFFFFFFFFu, 3, 9, size);
    ASSERT_EQ(rec.size(), 6 + size) << size;
    std::string_view r = std::string_view(rec).substr(6);
    EXPECT_TRUE(RecordCrcMatches(r)) << size;
    const RecordHeader h = DecodeRecordHeader(r.data());
    EXPECT_EQ(h.type, kRecordStream);
    EXPECT_EQ(h.seq, 9u);
    int items = 0;
    EXPECT_TRUE(ForEachItem(r.substr(kRecordHeaderSize), [&](const Item&) {
                  ++items;
                  return absl::OkStatus();
                }).ok());
    EXPECT_EQ(items, 0) << size;
  }
}

TEST_F(RecordTest, CallbackErrorStopsTheWalk) {
  int calls = 0;
  absl::Status s = ForEachItem(GoodBody(), [&](const Item&) {
    ++calls;
    return absl::CancelledError("stop");
  });
  EXPECT_EQ(absl::StatusCode::kCancelled, s.code());
  EXPECT_EQ(1, calls);
}

// --- One test per kind of damage ------------------------------------------

TEST_F(RecordTest, TruncatedItemData) {
  std::string body = GoodBody();
  // Cut the info item's data short: its length (3) runs past the end.
  ExpectDamage(body.substr(0, body.size() - 1), 19,
               "length 3 runs past the end of the body (2 bytes left)");
  // Cut the entry's data short.
  ExpectDamage(body.substr(0, 10), 0, "length 17 runs past the end of the body (8 bytes left)");
}

TEST_F(RecordTest, TruncatedAfterKindByte) {
  std::string body = GoodBody().substr(0, 20);  // the info's kind byte only
  ExpectDamage(body, 19, "truncated or bad varint length");
}

TEST_F(RecordTest, TruncatedVarint) {
  // A two-byte varint cut after its first byte (continuation bit set).
  RecordBodyBuilder b;
  b.AddEntry(Version{1, 1}, "");
  b.AddInfo(std::string(200, 'i'));  // varint c8 01
  std::string body = b.Release();
  ASSERT_EQ(0xc8, static_cast<uint8_t>(body[15]));
  ExpectDamage(body.substr(0, 16), 14, "truncated or bad varint length");
}

TEST_F(RecordTest, BadVarintTooLong) {
  // Eleven continuation bytes: longer than any 64-bit varint.
  std::string body = GoodBody();
  body += '\x02';
  body += std::string(11, '\x80');
  body += '\x00';
  ExpectDamage(body, 24, "truncated or bad varint length");
}

TEST_F(RecordTest, ItemLengthPastBodyEnd) {
  std::string body = GoodBody();
  body[20] = 0x04;  // the info claims 4 data bytes; 3 remain
  ExpectDamage(body, 19, "length 4 runs past the end of the body (3 bytes left)");
  body[20] = 0x7f;
  ExpectDamage(body, 19, "length 127 runs past the end of the body (3 bytes left)");
  // A huge length (2^63) must not wrap around.
  std::string huge = GoodBody().substr(0, 19);
  huge += '\x02';
  PutVarint64(&huge, 1ull << 63);
  ExpectDamage(huge, 19, "length 9223372036854775808 runs past the end of the body (0 bytes left)");
}

TEST_F(RecordTest, UnknownNonSkippableKind) {
  std::string body = GoodBody();
  body[19] = 0x08;  // no such kind, bit 7 clear
  ExpectDamage(body, 19, "unknown kind 8");
  EXPECT_EQ(1u, items_.size());  // the entry before it was delivered
  body[19] = 0x00;  // zero bytes are not items
  ExpectDamage(body, 19, "unknown kind 0");
  body[19] = 0x7f;
  ExpectDamage(body, 19, "unknown kind 127");
}

TEST_F(RecordTest, UnknownSkippableKindIsSkipped) {
  std::string body = GoodBody();
  std::string extra;
  extra += '\xc1';  // kind 0x41 with the skippable bit
  PutVarint64(&extra, 3);
  extra += "abc";
  body.insert(19, extra);
  ASSERT_OK(Parse(body));
  ASSERT_EQ(2u, items_.size());
  EXPECT_EQ(ItemKind::kEntry, items_[0].kind);
  EXPECT_EQ(ItemKind::kInfo, items_[1].kind);
  EXPECT_EQ(19u + extra.size(), items_[1].offset);
  // Even a skippable item must fit in the body.
  std::string bad = GoodBody() + "\xff\x05" "ab";
  ExpectDamage(bad, 24, "length 5 runs past the end of the body (2 bytes left)");
}

TEST_F(RecordTest, ResetWithData) {
  std::string body = GoodBody() + std::string("\x05\x01z", 3);
  ExpectDamage(body, 24, "reset item carries 1 bytes");
}

TEST_F(RecordTest, RewindWithWrongSize) {
  for (size_t len : {0u, 11u, 13u, 20u}) {
    std::string body = GoodBody();
    body += '\x04';
    PutVarint64(&body, len);
    body += std::string(len, '\x01');
    ExpectDamage(body, 24, "rewind item has " + std::to_string(len) + " bytes, not 12");
  }
}

TEST_F(RecordTest, EntryAndDupShorterThanVersion) {
  for (char kind : {'\x01', '\x03'}) {
    std::string body = GoodBody();
    body += kind;
    PutVarint64(&body, 11);
    body += std::string(11, '\x01');
    ExpectDamage(body, 24, "11 bytes is too short for its kind");
  }
}

TEST_F(RecordTest, PgBytesRoundTrips) {
  RecordBodyBuilder b;
  b.AddPgBytes(7, 4096, "abc");
  b.AddPgBytes(0xfffffffeu, UINT64_MAX, "");  // no bytes: the 12-byte prefix alone
  b.AddPgBytes(9, 1ull << 40, std::string(300, 'r'));
  ASSERT_OK(Parse(b.body()));
  ASSERT_EQ(3u, items_.size());
  EXPECT_EQ(ItemKind::kPgBytes, items_[0].kind);
  EXPECT_EQ(7u, items_[0].pg_stamp);
  EXPECT_EQ(4096u, items_[0].lpos);
  EXPECT_EQ("abc", items_[0].payload);
  EXPECT_EQ(0u, items_[0].offset);
  EXPECT_EQ(ItemKind::kPgBytes, items_[1].kind);
  EXPECT_EQ(0xfffffffeu, items_[1].pg_stamp);
  EXPECT_EQ(UINT64_MAX, items_[1].lpos);
  EXPECT_TRUE(items_[1].payload.empty());
  EXPECT_EQ(RecordBodyBuilder::ItemSize(12 + 3), items_[1].offset);
  EXPECT_EQ(9u, items_[2].pg_stamp);
  EXPECT_EQ(1ull << 40, items_[2].lpos);
  EXPECT_EQ(std::string(300, 'r'), items_[2].payload);
  EXPECT_EQ(b.size() - RecordBodyBuilder::ItemSize(12 + 300), items_[2].offset);
  // The other kinds leave the stream fields alone.
  ASSERT_OK(Parse(GoodBody()));
  for (const Item& it : items_) {
    EXPECT_EQ(0u, it.pg_stamp);
    EXPECT_EQ(0u, it.lpos);
  }
}

TEST_F(RecordTest, PgBytesShorterThanItsPrefix) {
  for (size_t len : {0u, 1u, 11u}) {
    std::string body = GoodBody();
    body += '\x07';
    PutVarint64(&body, len);
    body += std::string(len, '\x01');
    ExpectDamage(body, 24,
                 "PG bytes item has " + std::to_string(len) +
                     " bytes, fewer than its 12-byte stamp and lpos");
    EXPECT_EQ(2u, items_.size());  // the items before it were delivered
  }
  // The info of GoodBody() taken as PG bytes: 3 data bytes.
  std::string body = GoodBody();
  body[19] = 0x07;
  ExpectDamage(body, 19, "PG bytes item has 3 bytes");
}

TEST_F(RecordTest, PadIsSkippedWhateverItsBytes) {
  // Readers skip padding without looking at its data.
  std::string body = GoodBody() + std::string("\x86\x03xyz", 5);
  ASSERT_OK(Parse(body));
  EXPECT_EQ(2u, items_.size());
}

// --- The record CRC ---------------------------------------------------------

TEST_F(RecordTest, CrcMismatchOnEverySingleByteFlip) {
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 7, 0, 1, GoodBody());
  ASSERT_TRUE(RecordCrcMatches(rec));
  for (size_t i = 0; i < rec.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = rec;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_FALSE(RecordCrcMatches(bad)) << "byte " << i << " bit " << bit;
    }
    std::string bad = rec;
    bad[i] = static_cast<char>(bad[i] + 1);  // LevelDB's IncrementByte
    EXPECT_FALSE(RecordCrcMatches(bad)) << "byte " << i << " incremented";
  }
}

TEST_F(RecordTest, CrcCoversExactlyHeaderRestAndBody) {
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 7, 0, 1, GoodBody());
  // Shortened or lengthened: the CRC is over what is passed in, so a caller
  // that trusts a damaged length gets a mismatch, never a false match.
  EXPECT_FALSE(RecordCrcMatches(std::string_view(rec).substr(0, rec.size() - 1)));
  EXPECT_FALSE(RecordCrcMatches(rec + '\0'));
  EXPECT_FALSE(RecordCrcMatches(std::string_view(rec).substr(0, kRecordHeaderSize - 1)));
  EXPECT_FALSE(RecordCrcMatches(""));
  // The stored CRC is masked: the raw CRC in its place does not match.
  std::string raw = rec;
  EncodeFixed32(raw.data(), crc32c::Value(rec.data() + 4, rec.size() - 4));
  EXPECT_FALSE(RecordCrcMatches(raw));
  // Fixing the CRC after damage (LevelDB's FixChecksum) makes it match again:
  // the CRC is the only integrity check on a record.
  std::string fixed = rec;
  fixed[kRecordHeaderSize + 5] = 'J';
  EncodeFixed32(fixed.data(),
                crc32c::Mask(crc32c::Value(fixed.data() + 4, fixed.size() - 4)));
  EXPECT_TRUE(RecordCrcMatches(fixed));
}

TEST_F(RecordTest, EmptyBodyRecord) {
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 1, 2, 3, "");
  ASSERT_EQ(kRecordHeaderSize, rec.size());
  EXPECT_TRUE(RecordCrcMatches(rec));
  EXPECT_EQ(0u, DecodeRecordHeader(rec.data()).length);
}

}  // namespace
}  // namespace pgring
