// One PG's recovery at open as the pass over the log stream feeds it: the
// ring up to homed, then its unhomed bytes piece by piece, each record
// replayed as its last byte arrives, and no more of them in memory than the
// record being read and the resident bound.
#include "log/ring_pg_recovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "device/memory_block_device.h"
#include "format/record.h"
#include "util/ring_bytes.h"

namespace pgring {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kStamp = 7;
const PgId kPg{1, 0x2a, -1};

// A PG's log of kRecords one-entry records in a ring of two 64 KiB chunks
// (3 and 1), of which the ring holds [base, homed) and the rest is fed as
// the stream would.
class RingPgRecoveryTest : public ::testing::Test {
 protected:
  static constexpr int kRecords = 60;

  RingPgRecoveryTest() : dev_(1 << 20, 4096) {
    g_ = MakeGeometry(512, 64 << 10, 8);
    chunks_.base = 2ull * g_.chunk_size;
    chunks_.chunks = {3, 1};
    for (uint64_t seq = 1; seq <= kRecords; ++seq) {
      ends_.push_back(0);
      RecordBodyBuilder b;
      b.AddEntry(Version{1, seq}, std::string(200 + seq % 7 * 50, 'a' + seq % 26));
      AppendRecord(&bytes_, kRecordTxn, kStamp, LapOf(end(), g_), seq, b.body());
      ends_.back() = end();
    }
  }
  uint64_t end() const { return chunks_.base + bytes_.size(); }

  // The ring holds [base, homed): written in whole blocks, zeros after.
  void WriteRing(uint64_t homed) {
    ASSERT_TRUE(testing::WriteRingBytes(&dev_, g_, chunks_, chunks_.base,
                                        std::string_view(bytes_).substr(0, homed - chunks_.base))
                    .ok());
  }

  // The pointer: [homed, tail) in the stream, tail_seq the next record's.
  std::unique_ptr<RingPgLog> Pg(uint64_t homed, uint64_t tail_seq = kRecords + 1,
                                uint64_t tail = 0) {
    if (tail == 0) tail = end();
    auto pg = std::make_unique<RingPgLog>(kPg, kStamp, g_.block_size);
    PgPointer p;
    p.stamp = kStamp;
    p.head = chunks_.base;
    p.tail = tail;
    p.tail_seq = tail_seq;
    p.unhomed = tail - homed;
    pg->LoadPointer(p);
    pg->chunks = chunks_;
    return pg;
  }

  // Records that end by `at`.
  size_t WholeBy(uint64_t at) const {
    size_t n = 0;
    while (n < ends_.size() && ends_[n] <= at) ++n;
    return n;
  }

  // Feeds [from, to) as one stream item would hold it.
  absl::Status Feed(RingPgRecovery* r, uint64_t from, uint64_t to) {
    const uint64_t data_end = 1'000'000 + to;  // where a stream would hold it; not read here
    return r->Feed(std::string_view(bytes_).substr(from - chunks_.base, to - from),
                   UnhomedRun{to, data_end - (to - from) - kRecordHeaderSize, data_end});
  }

  MemoryBlockDevice dev_;
  Geometry g_;
  PgChunkList chunks_;
  std::string bytes_;
  std::vector<uint64_t> ends_;  // where each record ends
};

TEST_F(RingPgRecoveryTest, ReplaysRecordsAsTheirBytesArriveKeepingOnlyTheNewest) {
  // homed inside a record, in a block after the first: the ring holds the
  // record's start and homed's block, the stream the rest.
  const uint64_t homed = ends_[9] + 77;
  ASSERT_NE(homed % g_.block_size, 0u);
  WriteRing(homed);
  auto pg = Pg(homed);
  const uint64_t resident = g_.block_size;
  RingPgRecovery r(&dev_, g_, pg.get(), resident);
  ASSERT_TRUE(r.Start().ok());
  EXPECT_EQ(pg->entries.size(), 10u);  // the records wholly on the ring
  EXPECT_EQ(r.covered(), homed);
  EXPECT_TRUE(pg->ring_prefix == bytes_.substr(pg->ImageStart() - chunks_.base,
                                               homed - pg->ImageStart()));

  // Items end at record ends, as the stream's do; one piece ends inside a
  // record, which waits for the next.
  std::vector<uint64_t> cuts = {ends_[12], ends_[12] + 5, ends_[20], ends_[21], ends_[40],
                                ends_[kRecords - 1]};
  uint64_t at = homed;
  for (uint64_t cut : cuts) {
    ASSERT_TRUE(Feed(&r, at, cut).ok()) << cut;
    at = cut;
    EXPECT_EQ(pg->entries.size(), WholeBy(at)) << at;
    EXPECT_EQ(r.covered(), at);
    // The image is [homed, at), its newest bytes in memory, fewer than the
    // bound and one block.
    EXPECT_EQ(pg->image.size(), at - homed);
    EXPECT_LT(pg->image.resident_size(), resident + g_.block_size) << at;
    const size_t resident_size = pg->image.resident_size();
    EXPECT_TRUE(pg->image.resident() ==
                std::string_view(bytes_).substr(at - chunks_.base - resident_size, resident_size))
        << "the resident bytes are not the newest at " << at;
  }
  // At the end: at least the bound's worth of the newest bytes, from a
  // block boundary.
  EXPECT_GE(pg->image.resident_size(), resident);
  EXPECT_EQ((homed + pg->image.cold()) % g_.block_size, 0u);
  EXPECT_EQ(r.covered(), pg->bounds.tail);
  ASSERT_TRUE(r.Finish().ok());
  ASSERT_EQ(pg->entries.size(), size_t{kRecords});
  EXPECT_EQ(pg->last_version, (Version{1, kRecords}));
  EXPECT_EQ(pg->unhomed_runs.size(), cuts.size());
  EXPECT_EQ(pg->unhomed_runs.back().ring_end, end());
  EXPECT_GT(pg->image.cold(), 0u);
}

TEST_F(RingPgRecoveryTest, WhollyHomedNeedsNoStream) {
  WriteRing(end());
  auto pg = Pg(end());
  RingPgRecovery r(&dev_, g_, pg.get(), g_.block_size);
  ASSERT_TRUE(r.Start().ok());
  EXPECT_EQ(r.covered(), pg->bounds.tail);
  ASSERT_TRUE(r.Finish().ok());
  EXPECT_EQ(pg->entries.size(), size_t{kRecords});
  EXPECT_EQ(pg->image.size(), 0u);
  EXPECT_TRUE(pg->ring_prefix == bytes_.substr(pg->ImageStart() - chunks_.base));
}

TEST_F(RingPgRecoveryTest, ADamagedRecordInTheFedBytesIsNamed) {
  const uint64_t homed = ends_[4];
  WriteRing(homed);
  bytes_[ends_[30] - chunks_.base - 3] ^= 1;  // record 31's body
  auto pg = Pg(homed);
  RingPgRecovery r(&dev_, g_, pg.get(), g_.block_size);
  ASSERT_TRUE(r.Start().ok());
  ASSERT_TRUE(Feed(&r, homed, ends_[20]).ok());
  const absl::Status s = Feed(&r, ends_[20], ends_[40]);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr(absl::StrFormat("PG 1.2a: record at lpos %u", ends_[29])));
  EXPECT_THAT(s.message(), HasSubstr("CRC mismatch"));
}

TEST_F(RingPgRecoveryTest, TheLastSequenceIsCheckedAgainstThePointer) {
  const uint64_t homed = ends_[4];
  WriteRing(homed);
  auto pg = Pg(homed, kRecords + 3);
  RingPgRecovery r(&dev_, g_, pg.get(), g_.block_size);
  ASSERT_TRUE(r.Start().ok());
  ASSERT_TRUE(Feed(&r, homed, end()).ok());
  const absl::Status s = r.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("the last record before the tail has sequence 60, the "
                                     "pointer expects 62"));
}

// A pointer written many records ago (the store writes one per home): the
// records the stream holds past its tail continue the log, with their own
// sequence and the memory bound kept.
TEST_F(RingPgRecoveryTest, RecordsPastThePointersTailContinueTheLog) {
  const uint64_t homed = ends_[4];
  WriteRing(homed);
  auto pg = Pg(homed, /*tail_seq=*/21, /*tail=*/ends_[19]);
  const uint64_t resident = g_.block_size;
  RingPgRecovery r(&dev_, g_, pg.get(), resident);
  ASSERT_TRUE(r.Start().ok());
  ASSERT_TRUE(Feed(&r, homed, ends_[19]).ok());
  for (int i = 20; i < kRecords; i += 7) {
    const uint64_t to = ends_[std::min(i + 6, kRecords - 1)];
    ASSERT_TRUE(Feed(&r, r.covered(), to).ok()) << to;
    EXPECT_EQ(pg->bounds.tail, to);
    EXPECT_LT(pg->image.resident_size(), resident + 2 * g_.block_size) << to;
  }
  ASSERT_TRUE(r.Finish().ok());
  EXPECT_EQ(pg->bounds.tail, end());
  EXPECT_EQ(pg->bounds.tail_seq, uint64_t{kRecords + 1});
  ASSERT_EQ(pg->entries.size(), size_t{kRecords});
  EXPECT_EQ(pg->last_version, (Version{1, kRecords}));
  const size_t resident_size = pg->image.resident_size();
  EXPECT_TRUE(pg->image.resident() ==
              std::string_view(bytes_).substr(end() - chunks_.base - resident_size))
      << "the resident bytes are not the newest";
}

// A pointer whose tail lies inside a record is damaged, even though the
// stream's bytes go on past it.
TEST_F(RingPgRecoveryTest, APointerTailInsideARecordIsDamage) {
  const uint64_t homed = ends_[4];
  WriteRing(homed);
  auto pg = Pg(homed, /*tail_seq=*/21, /*tail=*/ends_[19] - 10);
  RingPgRecovery r(&dev_, g_, pg.get(), g_.block_size);
  ASSERT_TRUE(r.Start().ok());
  const absl::Status s = Feed(&r, homed, ends_[30]);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr(absl::StrFormat("the pointer's tail lpos %u lies inside",
                                                     ends_[19] - 10)));
}

// Bytes the pointer counts that never came are missing, whatever else did.
TEST_F(RingPgRecoveryTest, BytesThePointerCountsMustAllCome) {
  const uint64_t homed = ends_[4];
  WriteRing(homed);
  auto pg = Pg(homed);
  RingPgRecovery r(&dev_, g_, pg.get(), g_.block_size);
  ASSERT_TRUE(r.Start().ok());
  ASSERT_TRUE(Feed(&r, homed, ends_[30]).ok());
  const absl::Status s = r.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("are neither on its ring nor in the log stream"));
}

TEST_F(RingPgRecoveryTest, AHomedPositionBeforeTheHeadIsRefused) {
  WriteRing(end());
  auto pg = Pg(end());
  pg->bounds.head = ends_[3];
  pg->bounds.homed = ends_[2];
  RingPgRecovery r(&dev_, g_, pg.get(), g_.block_size);
  const absl::Status s = r.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("PG 1.2a: pointer's homed position"));
}

}  // namespace
}  // namespace pgring
