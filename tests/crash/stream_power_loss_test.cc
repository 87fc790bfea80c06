// The stream layout's power-loss moments, each caught deterministically by
// holding one write in flight (tests/util/held_write_fixture.h).

#include <cstdint>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "pgring/store.h"
#include "absl/strings/str_cat.h"
#include "store/ring/ring_store.h"
#include "util/held_write_fixture.h"

namespace pgring::testing {
namespace {

// Power loss in the stream layout at the moments the stream creates, each
// caught deterministically: a transaction is held with its first write in
// flight (its others done, unflushed) just when it (1) force-homes the last,
// partial block of a PG that pins the stream, (2) homes whole blocks of a
// PG, or (3) writes the stream after it has wrapped onto chunks it used
// before. The power goes then: the held write never lands, the done ones
// are lost unflushed, RocksDB keeps only what it synced. After the reopen
// every PG holds exactly what was committed: the idle PG's records from
// the stream (its home was never committed) or its ring, the writer's up
// to the last acknowledged transaction, nothing of the one in flight.
enum class StreamMoment { kForcedPartialHome, kHomeWrite, kStreamWrap };

std::string MomentName(const ::testing::TestParamInfo<StreamMoment>& i) {
  switch (i.param) {
    case StreamMoment::kForcedPartialHome: return "ForcedPartialHome";
    case StreamMoment::kHomeWrite: return "HomeWrite";
    default: return "StreamWrap";
  }
}

class StreamPowerLossTest : public HeldWriteStoreTest,
                            public ::testing::WithParamInterface<StreamMoment> {
 protected:
  static constexpr uint64_t kStreamBytes = 4 * (64 << 10);  // four 64 KiB chunks
  void SetUp() override {
    layout_ = LogLayout::kStream;
    options_.stream.bypass_when_idle = false;  // every transaction to the stream
    options_.stream.max_chunks = 4;
    options_.stream.force_home_percent = 25;  // past 64 KiB: A's 15 blocks stay
    options_.stream.forced_home_bytes = 4096;  // A goes home a block at a time
    options_.stream.resident_bytes = 4096;     // and is read back from the stream
    options_.stream.home_bytes = GetParam() == StreamMoment::kForcedPartialHome ? 0 : 4096;
    HeldWriteStoreTest::SetUp();
  }
  // Whether the transaction just staged is at the moment this case wants.
  bool AtTheMoment(const StoreStats& before, const StoreStats& now) {
    switch (GetParam()) {
      case StreamMoment::kForcedPartialHome:
        return now.forced_homes > before.forced_homes &&
               store_->GetPgStats(a_)->unhomed_bytes == 0;
      case StreamMoment::kHomeWrite:
        return now.home_writes - before.home_writes > now.forced_homes - before.forced_homes;
      default:
        return before.stream_bytes_written >= 2 * kStreamBytes &&
               now.stream_writes > before.stream_writes;
    }
  }
};

TEST_P(StreamPowerLossTest, APowerLossThenKeepsExactlyWhatWasCommitted) {
  constexpr uint64_t kIdle = 15;  // ~5 KB of A's records: a block and a part
  for (uint64_t v = 1; v <= kIdle; ++v) ASSERT_OK(store_->Commit(Append(a_, v)));
  ASSERT_GT(store_->GetPgStats(a_)->unhomed_bytes, 0u);
  uint64_t committed = 0;
  bool caught = false;
  for (uint64_t v = 1; v <= 2000; ++v) {
    const StoreStats before = store_->GetStoreStats();
    dev_->HoldNextWrite();
    Outcome o;
    ASSERT_OK(store_->Submit(Append(b_, v), o.Callback()));
    dev_->WaitUntilHeld();
    if (AtTheMoment(before, store_->GetStoreStats())) {
      caught = true;
      rig_.crash_device()->CrashNow();
      dev_->ReleaseHeldWrite();  // onto a dead disk
      o.Wait().IgnoreError();
      break;
    }
    dev_->ReleaseHeldWrite();
    ASSERT_OK(o.Wait());
    committed = v;
  }
  ASSERT_TRUE(caught) << "the moment never came in 2000 transactions";
  PowerLossAndReopen();
  auto ea = store_->ReadEntries(a_);
  ASSERT_OK(ea);
  ASSERT_EQ(ea->size(), kIdle);
  for (uint64_t v = 1; v <= kIdle; ++v) {
    EXPECT_EQ((*ea)[v - 1].version.version, v);
    EXPECT_EQ((*ea)[v - 1].payload, std::string(300, static_cast<char>('a' + v % 26)));
  }
  auto eb = store_->ReadEntries(b_);
  ASSERT_OK(eb);
  ASSERT_EQ(eb->size(), committed) << "B: " << committed << " committed before the power went";
  if (committed > 0) EXPECT_EQ(eb->back().version.version, committed);
}

// Power loss around cleaning (home_bytes 0; docs/DESIGN.md, "Cleaning the
// stream"): A, whose oldest live item is a dup in its first record and
// whose entries were trimmed to the last two, pins the stream; cleaning
// states its live log again in one record. The power goes (1) while that
// record's stream write is in flight, or (2) once it has committed and B
// has written past it. Either way A holds exactly its live log after the
// reopen, B what was committed, and A takes more entries after it.
class StreamCleaningPowerLossTest : public HeldWriteStoreTest,
                                    public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    layout_ = LogLayout::kStream;
    options_.stream.bypass_when_idle = false;  // every transaction to the stream
    options_.stream.max_chunks = 4;
    options_.stream.home_bytes = 0;            // records written once, cleaned
    options_.stream.force_home_percent = 100;  // the cleaner's own pass: past 75%
    HeldWriteStoreTest::SetUp();
  }
  RingStore* ring() { return static_cast<RingStore*>(store_); }
  void ExpectA() {
    auto ea = store_->ReadEntries(a_);
    ASSERT_OK(ea);
    ASSERT_EQ(ea->size(), 2u);
    EXPECT_EQ((*ea)[0].version.version, 14u);
    EXPECT_EQ((*ea)[1].payload, std::string(300, static_cast<char>('a' + 15 % 26)));
    auto da = store_->ReadDups(a_);
    ASSERT_OK(da);
    ASSERT_EQ(da->size(), 3u);
    EXPECT_EQ((*da)[2].payload, "dup 3");
  }
};

TEST_P(StreamCleaningPowerLossTest, APowerLossKeepsTheRestatedLog) {
  const bool in_flight = GetParam();
  Transaction dups;
  for (uint64_t d = 1; d <= 3; ++d) dups.AppendDup(a_, Version{1, d}, absl::StrCat("dup ", d));
  ASSERT_OK(store_->Commit(std::move(dups)));
  for (uint64_t v = 1; v <= 15; ++v) ASSERT_OK(store_->Commit(Append(a_, v)));
  Transaction trim;
  trim.Trim(a_, Version{1, 13});
  ASSERT_OK(store_->Commit(std::move(trim)));
  for (uint64_t v = 1; v <= 5; ++v) ASSERT_OK(store_->Commit(Append(b_, v)));
  const uint64_t unhomed = store_->GetPgStats(a_)->unhomed_bytes;
  ASSERT_EQ(store_->GetStoreStats().stream_restates, 0u);

  if (in_flight) dev_->HoldNextWrite();
  absl::Status cleaned;
  std::thread cleaner([&] { cleaned = ring()->CleanStreamNowForTest(); });
  if (in_flight) {
    dev_->WaitUntilHeld();
    ASSERT_EQ(store_->GetStoreStats().stream_restates, 1u);
    rig_.crash_device()->CrashNow();
    dev_->ReleaseHeldWrite();  // onto a dead disk
    cleaner.join();
  } else {
    cleaner.join();
    ASSERT_OK(cleaned);
    // A alone: B's live log is nearly all it has unhomed (homed, not
    // restated), and A, not written since, is not restated again.
    ASSERT_EQ(store_->GetStoreStats().stream_restates, 1u);
    EXPECT_LT(2 * store_->GetPgStats(a_)->unhomed_bytes, unhomed);
    ExpectA();
    for (uint64_t v = 6; v <= 8; ++v) ASSERT_OK(store_->Commit(Append(b_, v)));
  }
  PowerLossAndReopen();
  ExpectA();
  auto eb = store_->ReadEntries(b_);
  ASSERT_OK(eb);
  EXPECT_EQ(eb->size(), in_flight ? 5u : 8u);
  ASSERT_OK(store_->Commit(Append(a_, 16)));
  EXPECT_EQ(store_->ReadEntries(a_)->size(), 3u);
  ASSERT_OK(Open());
  EXPECT_EQ(store_->ReadEntries(a_)->size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Cleaning, StreamCleaningPowerLossTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "RestatementInFlight" : "RestatementCommitted";
                         });

INSTANTIATE_TEST_SUITE_P(Moments, StreamPowerLossTest,
                         ::testing::Values(StreamMoment::kForcedPartialHome,
                                           StreamMoment::kHomeWrite, StreamMoment::kStreamWrap),
                         MomentName);

}  // namespace
}  // namespace pgring::testing
