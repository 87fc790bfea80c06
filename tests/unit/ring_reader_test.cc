// The ring's one reader: the same checks in both of its modes — the first
// problem as an error (open, reads), or every problem to a reporter with
// reading going on where a record's length can be trusted (fsck).
#include "log/ring_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "device/fault_injection_device.h"
#include "device/memory_block_device.h"
#include "format/record.h"
#include "util/coding.h"
#include "util/ring_bytes.h"

namespace pgring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint32_t kStamp = 7;

class Collect final : public RingReader::Reporter {
 public:
  void Corruption(const RingDamage& d) override {
    seen.push_back(absl::StrFormat("%s@%d", d.kind, d.lpos));
    ends.push_back(d.ends_log);
  }
  std::vector<std::string> seen;
  std::vector<bool> ends;
};

// A PG's ring of two 64 KiB chunks (numbers 3 and 1, so it wraps on the
// device) holding `records`, written whole at lpos = base.
class RingReaderTest : public ::testing::Test {
 protected:
  RingReaderTest()
      : mem_(std::make_shared<MemoryBlockDevice>(1 << 20, 4096)), dev_(mem_) {
    g_ = MakeGeometry(512, 64 << 10, 8);
    chunks_.base = 2ull * g_.chunk_size;
    chunks_.chunks = {3, 1};
  }

  // Appends a record at the end of what is built; returns its lpos.
  uint64_t Add(uint64_t seq, uint32_t stamp = kStamp, int lap_delta = 0, uint8_t type = kRecordTxn,
               size_t payload = 100) {
    const uint64_t lpos = chunks_.base + bytes_.size();
    RecordBodyBuilder b;
    b.AddEntry(Version{1, seq}, std::string(payload, 'x'));
    AppendRecord(&bytes_, type, stamp, LapOf(lpos, g_) + lap_delta, seq, b.body());
    return lpos;
  }
  uint64_t end() const { return chunks_.base + bytes_.size(); }

  void WriteRing() {
    ASSERT_TRUE(testing::WriteRingBytes(&dev_, g_, chunks_, chunks_.base, bytes_).ok());
  }

  RingReader Reader(uint64_t limit, RingReader::Reporter* r = nullptr) {
    return RingReader(&dev_, g_, chunks_, "1.2a", kStamp, chunks_.base, limit, 0, r);
  }

  std::shared_ptr<MemoryBlockDevice> mem_;
  FaultInjectionDevice dev_;
  Geometry g_;
  PgChunkList chunks_;
  std::string bytes_;
};

TEST_F(RingReaderTest, ReadsRecordsAcrossChunksUpToTheLimit) {
  std::vector<uint64_t> at;
  // Enough records to cross from chunk 3 into chunk 1.
  for (uint64_t seq = 1; seq <= 80; ++seq) at.push_back(Add(seq, kStamp, 0, kRecordTxn, 1000));
  ASSERT_GT(end(), chunks_.base + g_.chunk_size);
  WriteRing();
  RingReader r = Reader(end());
  RingRecord rec;
  std::vector<uint64_t> got;
  absl::Status s;
  while ((s = r.Next(&rec)).ok()) got.push_back(rec.lpos);
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(got, at);
  EXPECT_EQ(r.records(), 80u);
  EXPECT_TRUE(r.CheckTailSeq(81).ok());
  absl::Status tail = r.CheckTailSeq(85);
  EXPECT_EQ(tail.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(tail.message(),
              HasSubstr("PG 1.2a: the last record before the tail has sequence 80, the pointer "
                        "expects 84"));
}

TEST_F(RingReaderTest, WithoutAReporterTheFirstProblemIsTheError) {
  Add(1);
  const uint64_t bad = Add(2, kStamp + 1);  // another PG's record, CRC valid
  Add(3, kStamp, 1);                        // and a stale lap after it
  WriteRing();
  RingReader r = Reader(end());
  RingRecord rec;
  ASSERT_TRUE(r.Next(&rec).ok());
  absl::Status s = r.Next(&rec);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  const ChunkPos where = Locate(chunks_, g_, bad);
  EXPECT_EQ(s.message(),
            absl::StrFormat("PG 1.2a: record at lpos %d (chunk %d, offset %d): record belongs to "
                            "PG stamp 8, not 7 (a record of another PG)",
                            bad, where.chunk, where.offset));
}

TEST_F(RingReaderTest, AReporterHearsEveryProblemAndReadingGoesOnWhileLengthsHold) {
  const uint64_t r1 = Add(1);
  const uint64_t other = Add(2, kStamp + 1);
  const uint64_t stale = Add(3, kStamp, 1);
  const uint64_t gap = Add(9);
  const uint64_t unknown = Add(10, kStamp, 0, 0x05);
  const uint64_t skippable = Add(11, kStamp, 0, 0x85);
  const uint64_t good = Add(12);
  const uint64_t torn = Add(13);
  Add(14);
  bytes_[torn - chunks_.base + 30] ^= 1;  // body byte: the CRC no longer matches
  WriteRing();
  Collect c;
  RingReader r = Reader(end(), &c);
  RingRecord rec;
  std::vector<uint64_t> got;
  absl::Status s;
  while ((s = r.Next(&rec)).ok()) got.push_back(rec.lpos);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("CRC mismatch"));
  // Records that break a rule are skipped; a skippable one is returned.
  EXPECT_THAT(got, ElementsAre(r1, skippable, good));
  EXPECT_THAT(c.seen, ElementsAre(absl::StrFormat("record-pg@%d", other),
                                  absl::StrFormat("record-lap@%d", stale),
                                  absl::StrFormat("record-seq@%d", gap),
                                  absl::StrFormat("record-type@%d", unknown),
                                  absl::StrFormat("record-crc@%d", torn)));
  EXPECT_THAT(c.ends, ElementsAre(false, false, false, false, true));
  EXPECT_EQ(r.records(), 7u);  // every record whose length held
  // The end stays where it was, reported once.
  EXPECT_EQ(r.Next(&rec), s);
  EXPECT_EQ(c.seen.size(), 5u);
}

TEST_F(RingReaderTest, ALengthPastTheLimitEndsTheLog) {
  Add(1);
  const uint64_t last = Add(2);
  WriteRing();
  Collect c;
  RingReader r = Reader(end() - 1, &c);  // the tail cuts the last record short
  RingRecord rec;
  ASSERT_TRUE(r.Next(&rec).ok());
  absl::Status s = r.Next(&rec);
  EXPECT_THAT(s.message(), HasSubstr("runs past the committed tail"));
  EXPECT_THAT(c.seen, ElementsAre(absl::StrFormat("record-length@%d", last)));
  RingReader few = Reader(chunks_.base + 10);
  EXPECT_THAT(few.Next(&rec).message(), HasSubstr("too few for a record header"));
}

TEST_F(RingReaderTest, ReadErrorsKeepTheDevicesCode) {
  Add(1);
  WriteRing();
  dev_.FailOps(FaultInjectionDevice::OpKind::kRead, 0, 1, absl::UnavailableError("EIO"));
  Collect c;
  RingReader r = Reader(end(), &c);
  RingRecord rec;
  absl::Status s = r.Next(&rec);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("EIO"));
  EXPECT_THAT(c.seen, ElementsAre(absl::StrFormat("read-error@%d", chunks_.base)));
}

// A log of several windows (1 MiB each) over chunks out of device order,
// with records that straddle windows, one longer than the room a window
// keeps for the end of the one before (64 KiB): read ahead in the
// background, the pass returns the same records, byte for byte, as without;
// a read ahead that fails is read again in the foreground, and a device
// that keeps failing fails the pass with its own code.
class RingReaderAheadTest : public ::testing::Test {
 protected:
  RingReaderAheadTest()
      : mem_(std::make_shared<MemoryBlockDevice>(16 << 20, 4096)), dev_(mem_) {
    g_ = MakeGeometry(4096, 1 << 20, 12);
    chunks_.base = 3ull << 20;
    chunks_.chunks = {5, 2, 7, 0, 3};
    uint64_t seq = 1;
    uint32_t x = 1;
    while (bytes_.size() < (9u << 19)) {  // 4.5 MiB
      x = x * 1103515245 + 12345;
      // Mostly small, some of tens of KiB, one of 200 KiB at ~2 MiB.
      size_t payload = 50 + (x >> 8) % 900;
      if ((x >> 4) % 16 == 0) payload = 20000 + (x >> 12) % 40000;
      if (bytes_.size() > (2u << 20) && !big_) {
        payload = 200 << 10;
        big_ = true;
      }
      RecordBodyBuilder b;
      b.AddEntry(Version{1, seq}, std::string(payload, static_cast<char>('a' + seq % 26)));
      const uint64_t lpos = chunks_.base + bytes_.size();
      AppendRecord(&bytes_, kRecordTxn, kStamp, LapOf(lpos, g_), seq, b.body());
      ++seq;
    }
    EXPECT_TRUE(testing::WriteRingBytes(&dev_, g_, chunks_, chunks_.base, bytes_).ok());
  }

  // Every record's lpos and body, and how the pass ended.
  absl::Status Pass(bool ahead, std::vector<std::pair<uint64_t, std::string>>* out) {
    RingReader r(&dev_, g_, chunks_, "1.2a", kStamp, chunks_.base, chunks_.base + bytes_.size());
    if (ahead) r.ReadAheadInBackground();
    RingRecord rec;
    absl::Status s;
    while ((s = r.Next(&rec)).ok()) out->emplace_back(rec.lpos, std::string(rec.body));
    return s;
  }

  std::shared_ptr<MemoryBlockDevice> mem_;
  FaultInjectionDevice dev_;
  Geometry g_;
  PgChunkList chunks_;
  std::string bytes_;
  bool big_ = false;
};

TEST_F(RingReaderAheadTest, ReadAheadReturnsTheSameRecords) {
  ASSERT_TRUE(big_);
  std::vector<std::pair<uint64_t, std::string>> plain, ahead;
  EXPECT_TRUE(absl::IsOutOfRange(Pass(false, &plain)));
  EXPECT_TRUE(absl::IsOutOfRange(Pass(true, &ahead)));
  ASSERT_GT(plain.size(), 1000u);
  EXPECT_TRUE(plain == ahead);
}

TEST_F(RingReaderAheadTest, AFailedReadAheadIsReadAgain) {
  std::vector<std::pair<uint64_t, std::string>> plain, ahead;
  ASSERT_TRUE(absl::IsOutOfRange(Pass(false, &plain)));
  // The first read is the first window's; the second, the read ahead's.
  dev_.FailOps(FaultInjectionDevice::OpKind::kRead, 1, 1, absl::UnavailableError("EIO"));
  EXPECT_TRUE(absl::IsOutOfRange(Pass(true, &ahead)));
  EXPECT_TRUE(plain == ahead);
}

TEST_F(RingReaderAheadTest, ADeviceThatKeepsFailingFailsThePass) {
  dev_.FailOps(FaultInjectionDevice::OpKind::kRead, 1, 1000, absl::UnavailableError("EIO"));
  std::vector<std::pair<uint64_t, std::string>> ahead;
  absl::Status s = Pass(true, &ahead);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("EIO"));
  EXPECT_FALSE(ahead.empty());  // the first window's records
}

TEST_F(RingReaderTest, ReadsAsBytesArriveAndWaitsWhereTheyEnd) {
  const uint64_t r1 = Add(1);
  const uint64_t r2 = Add(2);
  const uint64_t r3 = Add(3);
  // Nothing on the device: every byte comes from the overlay.
  RingReader r = Reader(end());
  r.SetOverlay(chunks_.base, bytes_);
  r.SetAvailable(r2 + 10);  // r1 whole, a part of r2's header
  RingRecord rec;
  ASSERT_TRUE(r.Next(&rec).ok());
  EXPECT_EQ(rec.lpos, r1);
  absl::Status s = r.Next(&rec);
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_TRUE(r.waiting());
  EXPECT_EQ(r.position(), r2);
  r.SetAvailable(r3 + kRecordHeaderSize + 1);  // r2 whole, r3's header but not its body
  ASSERT_TRUE(r.Next(&rec).ok());
  EXPECT_EQ(rec.lpos, r2);
  EXPECT_TRUE(absl::IsOutOfRange(r.Next(&rec)));
  EXPECT_TRUE(r.waiting());
  EXPECT_EQ(r.position(), r3);
  r.SetAvailable(end());
  ASSERT_TRUE(r.Next(&rec).ok());
  EXPECT_EQ(rec.lpos, r3);
  EXPECT_TRUE(absl::IsOutOfRange(r.Next(&rec)));
  EXPECT_FALSE(r.waiting());  // the limit
  EXPECT_TRUE(r.CheckTailSeq(4).ok());
}

TEST_F(RingReaderTest, CallersReportTheirOwnFindingsThroughIt) {
  Add(1);
  WriteRing();
  Collect c;
  RingReader r = Reader(end(), &c);
  absl::Status s = r.Damage(chunks_.base + 30, "versions out of order", "entry-order");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("record at lpos"));
  EXPECT_THAT(c.seen, ElementsAre(absl::StrFormat("entry-order@%d", chunks_.base + 30)));
}

}  // namespace
}  // namespace pgring
