// RestateLog, the cleaner's rule (docs/DESIGN.md, "Cleaning the stream"):
// a PG's live log stated again in one record leaves the PG holding exactly
// what it held, and that record replays to the same state alone (a reopen
// whose pointer's head is the record) and after the PG's older records (a
// pointer that lags it); a live log that is not the PG's is refused, and
// the undo puts every locator back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/record.h"
#include "log/pg_log_state.h"
#include "log/ring_pg_log.h"
#include "pgring/transaction.h"

namespace pgring {
namespace {

const PgId kPg{1, 0x2a, -1};
constexpr uint64_t kOldPos = 0;
constexpr uint64_t kRestatePos = 8192;

Version V(uint64_t v) { return Version{3, v}; }

std::string EntryPayload(uint64_t v) { return absl::StrCat("entry ", v, std::string(v % 7, 'x')); }
std::string DupPayload(uint64_t v) { return absl::StrCat("dup ", v); }

void ExpectSameItems(const MappingTable& want, const MappingTable& got) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.at(i).v(), want.at(i).v()) << i;
    EXPECT_EQ(got.at(i).size, want.at(i).size) << i;
  }
}

void ExpectSameLog(const PgLogState& want, const PgLogState& got) {
  ExpectSameItems(want.entries, got.entries);
  ExpectSameItems(want.dups, got.dups);
  EXPECT_EQ(got.entry_bytes, want.entry_bytes);
  EXPECT_EQ(got.dup_bytes, want.dup_bytes);
  EXPECT_EQ(got.last_version, want.last_version);
  EXPECT_EQ(got.last_dup_version, want.last_dup_version);
  EXPECT_EQ(got.entries_trimmed_to, want.entries_trimmed_to);
  EXPECT_EQ(got.dups_trimmed_to, want.dups_trimmed_to);
  EXPECT_EQ(got.has_info, want.has_info);
  EXPECT_EQ(got.info, want.info);
}

class RestateLogTest : public ::testing::Test {
 protected:
  RestateLogTest() : pg_(kPg, 7, 4096), before_(kPg, 7, 4096) {}

  // Entries 2, 4, ..., 60 and dups 1..20, an info; entries trimmed to 20,
  // dups to 5, and a rewind to 55, which no entry holds (the newest left
  // is 54): only a marker keeps that last version.
  void SetUp() override {
    Transaction t;
    for (uint64_t v = 2; v <= 60; v += 2) t.AppendEntry(kPg, V(v), EntryPayload(v));
    for (uint64_t v = 1; v <= 20; ++v) t.AppendDup(kPg, V(v), DupPayload(v));
    t.SetInfo(kPg, "the info");
    t.Trim(kPg, V(20));
    t.TrimDups(kPg, V(5));
    t.Rewind(kPg, V(55));
    Apply(t, &pg_, &old_body_);
    Apply(t, &before_, nullptr);
    ASSERT_EQ(pg_.last_version, V(55));
    ASSERT_EQ(pg_.entries.back().v(), V(54));
  }

  static void Apply(const Transaction& t, RingPgLog* pg, RecordBodyBuilder* body) {
    uint64_t live = 0;
    PgLogUndo undo(pg);
    RingPgLogEffects effects(pg, kOldPos, body);
    for (const Transaction::Op& op : t.ops()) {
      ASSERT_TRUE(ApplyOp(op, Limits{}, &live, pg, &undo, &effects).ok());
    }
  }

  LiveLog Live() const {
    LiveLog l;
    for (size_t i = 0; i < pg_.entries.size(); ++i) {
      const uint64_t v = pg_.entries.at(i).version;
      l.entries.push_back(LogEntry{V(v), EntryPayload(v)});
    }
    for (size_t i = 0; i < pg_.dups.size(); ++i) {
      const uint64_t v = pg_.dups.at(i).version;
      l.dups.push_back(LogEntry{V(v), DupPayload(v)});
    }
    l.has_info = pg_.has_info;
    l.info = pg_.info;
    return l;
  }

  // A PG as a reopen finds it: its pointer's trim points, nothing else.
  RingPgLog Reopened() const {
    RingPgLog r(kPg, 7, 4096);
    r.entries_trimmed_to = pg_.entries_trimmed_to;
    r.dups_trimmed_to = pg_.dups_trimmed_to;
    return r;
  }

  RingPgLog pg_;
  RingPgLog before_;  // the same ops, never restated
  RecordBodyBuilder old_body_;
};

TEST_F(RestateLogTest, HoldsTheSameLogWithEveryItemInTheNewRecord) {
  RecordBodyBuilder body;
  PgLogUndo undo(&pg_);
  RingPgLogEffects effects(&pg_, kRestatePos, &body);
  ASSERT_TRUE(RestateLog(Live(), &pg_, &undo, &effects).ok());
  ExpectSameLog(before_, pg_);
  for (size_t i = 0; i < pg_.entries.size(); ++i) {
    EXPECT_EQ(MappingTable::Pos(pg_.entries.at(i), kRestatePos), kRestatePos);
  }
  for (size_t i = 0; i < pg_.dups.size(); ++i) {
    EXPECT_EQ(MappingTable::Pos(pg_.dups.at(i), kRestatePos), kRestatePos);
  }
  EXPECT_EQ(pg_.info_pos, kRestatePos);
  // Everything the PG needs is in the new record: its head is there.
  EXPECT_EQ(pg_.ComputeHead(kRestatePos + 1), kRestatePos);
  // The record holds the live items alone.
  EXPECT_EQ(LiveItems(body.body(), ItemKind::kEntry).size(), before_.entries.size());
  EXPECT_EQ(LiveItems(body.body(), ItemKind::kDup).size(), before_.dups.size());

  // Replayed alone, as a reopen whose pointer's head is the new record.
  RingPgLog alone = Reopened();
  ASSERT_TRUE(ReplayRecord(body.body(), kRestatePos, &alone).ok());
  FinishReplay(&alone, nullptr);
  ExpectSameLog(before_, alone);

  // Replayed after the older record, as a reopen whose pointer lags.
  RingPgLog after_old = Reopened();
  ASSERT_TRUE(ReplayRecord(old_body_.body(), kOldPos, &after_old).ok());
  ASSERT_TRUE(ReplayRecord(body.body(), kRestatePos, &after_old).ok());
  FinishReplay(&after_old, nullptr);
  ExpectSameLog(before_, after_old);

  // The old last version still refuses an entry at or below it.
  uint64_t live = 0;
  PgLogUndo u2(&alone);
  Transaction t;
  t.AppendEntry(kPg, V(55), "again");
  EXPECT_EQ(ApplyOp(t.ops()[0], Limits{}, &live, &alone, &u2, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RestateLogTest, UndoPutsEveryLocatorBack) {
  RecordBodyBuilder body;
  PgLogUndo undo(&pg_);
  RingPgLogEffects effects(&pg_, kRestatePos, &body);
  ASSERT_TRUE(RestateLog(Live(), &pg_, &undo, &effects).ok());
  undo.Restore();
  ExpectSameLog(before_, pg_);
  for (size_t i = 0; i < pg_.entries.size(); ++i) {
    EXPECT_EQ(MappingTable::Pos(pg_.entries.at(i), kOldPos), kOldPos);
  }
}

TEST_F(RestateLogTest, ALiveLogThatIsNotThePgsIsRefused) {
  std::vector<LiveLog> stale(4, Live());
  stale[0].entries.pop_back();               // an entry appended since
  stale[1].dups.erase(stale[1].dups.begin());  // a dup trimmed since
  stale[2].entries[3].payload += "x";        // another payload size
  stale[3].info = "an older info";
  for (const LiveLog& l : stale) {
    RecordBodyBuilder body;
    PgLogUndo undo(&pg_);
    RingPgLogEffects effects(&pg_, kRestatePos, &body);
    EXPECT_EQ(RestateLog(l, &pg_, &undo, &effects).code(),
              absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(body.empty());
    ExpectSameLog(before_, pg_);
    EXPECT_EQ(pg_.info_pos, kOldPos);
  }
}

}  // namespace
}  // namespace pgring
