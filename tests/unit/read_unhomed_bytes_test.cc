// ReadUnhomedBytes (src/log/stream_reader.h): a PG's unhomed bytes read
// back from the stream records its runs name, across the stream's chunks
// wherever they lie on the device; runs that do not cover the range, or
// that point before their record or outside the stream, are refused with
// kDataLoss, never read from elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "device/aligned_buffer.h"
#include "device/memory_block_device.h"
#include "format/compressed_stream_record.h"
#include "format/record.h"
#include "log/ring_layout.h"
#include "log/stream_reader.h"
#include "util/forwarding_device.h"

namespace pgring {
namespace {

constexpr uint32_t kBlock = 4096;
constexpr uint32_t kChunk = 16 * kBlock;
constexpr uint32_t kStamp = 7;  // the PG whose bytes are read

class ReadUnhomedBytesTest : public ::testing::Test {
 protected:
  ReadUnhomedBytesTest()
      : geo_(MakeGeometry(kBlock, kChunk, 8)), device_(kLabelRegionSize + 8ull * kChunk) {
    // The stream: lpos [2 * kChunk, 4 * kChunk) in chunks 5 then 1, so a
    // range across its chunk boundary is two places on the device.
    stream_.base = 2 * kChunk;
    stream_.chunks = {5, 1};
    // Every stream byte names its lpos, so a byte read from the wrong place
    // shows.
    for (uint64_t lpos = stream_.base; lpos < stream_.End(kChunk); lpos += kBlock) {
      AlignedBuffer block(kBlock);
      for (uint32_t i = 0; i < kBlock; ++i) block.data()[i] = ByteAt(lpos + i);
      std::vector<Extent> ex;
      MapRange(stream_, geo_, lpos, kBlock, &ex);
      EXPECT_TRUE(device_.Write(ex[0].device_offset, block.span()).ok());
    }
  }
  static char ByteAt(uint64_t stream_lpos) { return static_cast<char>(stream_lpos * 7 % 251); }
  std::string Expected(uint64_t stream_from, uint64_t n) {
    std::string s;
    for (uint64_t i = 0; i < n; ++i) s.push_back(ByteAt(stream_from + i));
    return s;
  }
  absl::Status Read(const UnhomedRuns& runs, uint64_t from, uint64_t to,
                    std::string* out) {
    return ReadUnhomedBytes(&device_, geo_, stream_, kStamp, runs, from, to, out);
  }

  // Writes `bytes` over the stream from lpos `at` (whole blocks read,
  // changed and written back).
  void WriteStream(uint64_t at, std::string_view bytes) {
    for (uint64_t lpos = at / kBlock * kBlock; lpos < at + bytes.size(); lpos += kBlock) {
      std::vector<Extent> ex;
      MapRange(stream_, geo_, lpos, kBlock, &ex);
      AlignedBuffer block(kBlock);
      ASSERT_TRUE(device_.Read(ex[0].device_offset, block.span()).ok());
      for (uint32_t i = 0; i < kBlock; ++i) {
        if (lpos + i >= at && lpos + i < at + bytes.size()) block.data()[i] = bytes[lpos + i - at];
      }
      ASSERT_TRUE(device_.Write(ex[0].device_offset, block.span()).ok());
    }
  }
  // A compressed stream record at `at` holding PG kStamp's `mine` at ring
  // lpos `lpos`, after another PG's bytes; returns its size.
  uint64_t WriteCompressedRecord(uint64_t at, uint64_t lpos, const std::string& mine,
                                 uint32_t laps_on = 0) {
    RecordBodyBuilder items;
    items.AddPgBytes(kStamp + 1, 77, std::string(500, 'o'));
    items.AddPgBytes(kStamp, lpos, mine);
    std::string body;
    EXPECT_TRUE(StreamRecordCompressor().Compress(items.body(), &body));
    std::string rec;
    AppendRecord(&rec, kRecordStreamLz4, kStreamStamp, LapOf(at, geo_) + laps_on, 3, body);
    WriteStream(at, rec);
    return rec.size();
  }

  Geometry geo_;
  MemoryBlockDevice device_;
  PgChunkList stream_;
};

// A run in a compressed record: the record is read whole (here across the
// stream's chunk boundary), checked and decompressed, and the PG's bytes
// taken from its item, between plain runs read as they lie.
TEST_F(ReadUnhomedBytesTest, ReadsARunInACompressedRecord) {
  const uint64_t r1 = 2 * kChunk + 100;
  const uint64_t r2 = 3 * kChunk - 150;
  const uint64_t r3 = 3 * kChunk + 9000;
  std::string mine;
  for (int i = 0; i < 400; ++i) mine += static_cast<char>('a' + i % 5);
  const uint64_t size = WriteCompressedRecord(r2, 1300, mine);
  const UnhomedRuns runs = {UnhomedRun{1300, r1, r1 + 700},
                            UnhomedRun{1700, r2, r2 + size, true},
                            UnhomedRun{1800, r3, r3 + 300}};
  std::string out;
  ASSERT_TRUE(Read(runs, 1000, 1800, &out).ok());
  EXPECT_EQ(out, Expected(r1 + 400, 300) + mine + Expected(r3 + 200, 100));
  out.clear();
  ASSERT_TRUE(ReadUnhomedRanges(&device_, geo_, stream_, kStamp, runs,
                                {{1250, 1310}, {1400, 1450}, {1690, 1750}}, &out)
                  .ok());
  EXPECT_EQ(out, Expected(r1 + 650, 50) + mine.substr(0, 10) + mine.substr(100, 50) +
                     mine.substr(390, 10) + Expected(r3 + 200, 50));
}

// A compressed record that fails a check is refused with kDataLoss naming
// it, and nothing of it is returned: a flipped byte, a run whose length is
// not the record's, a PG the record does not hold, a record from another
// lap.
TEST_F(ReadUnhomedBytesTest, ADamagedCompressedRecordIsRefused) {
  const uint64_t at = 2 * kChunk + 4096 + 40;
  const std::string mine(400, 'm');
  const uint64_t size = WriteCompressedRecord(at, 1300, mine);
  auto read = [&](const UnhomedRun& run, uint32_t stamp = kStamp) {
    std::string out;
    absl::Status s = ReadUnhomedRanges(&device_, geo_, stream_, stamp, {run}, {{1300, 1700}},
                                       &out);
    if (!s.ok()) EXPECT_TRUE(out.empty());
    return s;
  };
  const UnhomedRun run{1700, at, at + size, true};
  ASSERT_TRUE(read(run).ok());
  auto refused = [&](const absl::Status& s, const std::string& says) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_NE(s.message().find(says), std::string::npos) << s;
  };
  refused(read(UnhomedRun{1700, at, at + size - 1, true}), "has length");
  refused(read(run, kStamp + 2), "does not hold");
  refused(read(UnhomedRun{1700, at, at + 10, true}), "would end at");
  // The record a lap of the stream before or after wrote in that place.
  ASSERT_EQ(size, WriteCompressedRecord(at, 1300, mine, /*laps_on=*/1));
  refused(read(run), "has lap");
  // A byte flipped inside the compressed block.
  ASSERT_EQ(size, WriteCompressedRecord(at, 1300, mine));
  ASSERT_TRUE(read(run).ok());
  WriteStream(at + size - 3, "\x7f");
  refused(read(run), "fails its CRC");
}

// Ring [1000, 1300) in a record at stream lpos 2*kChunk + 100 (bytes end at
// + 700), ring [1300, 1500) in a record across the chunk boundary.
TEST_F(ReadUnhomedBytesTest, ReadsEachRunFromWhereItsRecordHoldsIt) {
  const uint64_t r1 = 2 * kChunk + 100;
  const uint64_t r2 = 3 * kChunk - 150;
  const UnhomedRuns runs = {UnhomedRun{1300, r1, r1 + 700},
                                       UnhomedRun{1500, r2, r2 + 300}};
  std::string out = "x";
  ASSERT_TRUE(Read(runs, 1000, 1500, &out).ok());
  EXPECT_EQ(out, "x" + Expected(r1 + 400, 300) + Expected(r2 + 100, 200));
  out.clear();
  ASSERT_TRUE(Read(runs, 1200, 1400, &out).ok());  // a part of each
  EXPECT_EQ(out, Expected(r1 + 600, 100) + Expected(r2 + 100, 100));
}

// Counts ReadMany calls and their requests (each read as the base reads it).
class ReadCountingDevice : public testing::ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  absl::Status ReadMany(absl::Span<const ReadRequest> reads) override {
    ++calls;
    requests += reads.size();
    return BlockDevice::ReadMany(reads);
  }
  int calls = 0;
  size_t requests = 0;
};

// A PG's records written once lie far apart in the stream, one among other
// PGs' records: each stretch is its own read (a gap of more than a block is
// not read), all in one ReadMany, and the bytes come back in ring order,
// across the stream's chunk boundary.
TEST_F(ReadUnhomedBytesTest, ScatteredRunsAreReadTogetherInRingOrder) {
  UnhomedRuns runs;
  std::string want;
  uint64_t ring = 5000;
  constexpr uint64_t kSpacing = 6000, kBytes = 100;
  for (uint64_t s = 2 * kChunk + 200; s + 200 < 4 * kChunk; s += kSpacing) {
    const uint64_t data_end = s + kRecordHeaderSize + 15 + kBytes;
    ring += kBytes;
    runs.push_back(UnhomedRun{ring, s, data_end});
    want += Expected(data_end - kBytes, kBytes);
  }
  ASSERT_GT(runs.size(), 20u);
  ReadCountingDevice counting(std::shared_ptr<BlockDevice>(&device_, [](BlockDevice*) {}));
  std::string out;
  ASSERT_TRUE(ReadUnhomedBytes(&counting, geo_, stream_, kStamp, runs, 5000, ring, &out).ok());
  EXPECT_EQ(out, want);
  EXPECT_EQ(counting.calls, 1);
  // One request a run, one more where a run's block straddles the chunks.
  EXPECT_GE(counting.requests, runs.size());
  EXPECT_LE(counting.requests, runs.size() + 1);
}

// Several ranges of one PG (a record each, say) in one call: their bytes
// one after the other, as separate reads of each would give, every read in
// one ReadMany; two ranges in one run, and a range across two runs.
TEST_F(ReadUnhomedBytesTest, SeveralRangesAreReadTogetherInOrder) {
  UnhomedRuns runs;
  uint64_t ring = 5000;
  constexpr uint64_t kSpacing = 6000, kBytes = 300;
  for (uint64_t s = 2 * kChunk + 200; s + 400 < 4 * kChunk; s += kSpacing) {
    ring += kBytes;
    runs.push_back(UnhomedRun{ring, s, s + kRecordHeaderSize + 15 + kBytes});
  }
  const std::vector<RingRange> ranges = {{5010, 5040},  {5100, 5290},  // one run
                                         {5590, 5700},                 // across two
                                         {6500, 6600}, {ring - 50, ring}};
  std::string want = "x";
  for (const RingRange& r : ranges) ASSERT_TRUE(Read(runs, r.from, r.to, &want).ok());
  ReadCountingDevice counting(std::shared_ptr<BlockDevice>(&device_, [](BlockDevice*) {}));
  std::string out = "x";
  ASSERT_TRUE(ReadUnhomedRanges(&counting, geo_, stream_, kStamp, runs, ranges, &out).ok());
  EXPECT_EQ(out, want);
  EXPECT_EQ(counting.calls, 1);
  // A range no run holds is refused, naming it.
  std::string none;
  const absl::Status s =
      ReadUnhomedRanges(&device_, geo_, stream_, kStamp, runs, {{5010, 5040}, {ring, ring + 10}}, &none);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("are not all named"));
}

TEST_F(ReadUnhomedBytesTest, RunsThatDoNotHoldTheRangeAreRefused) {
  const uint64_t r1 = 2 * kChunk + 100;
  std::string out;
  // The runs end before the range does.
  absl::Status s = Read({UnhomedRun{1300, r1, r1 + 700}}, 1000, 1400, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("not all named"), std::string::npos) << s;
  // The bytes would begin inside their record's header.
  s = Read({UnhomedRun{1300, r1, r1 + 310}}, 1000, 1300, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("before the stream record"), std::string::npos) << s;
  // A run past the stream's chunks: refused, not read from another chunk.
  const uint64_t past = 4 * kChunk + 100;
  s = Read({UnhomedRun{1300, past, past + 700}}, 1000, 1300, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("outside"), std::string::npos) << s;
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace pgring
