// `expand`: a store grows onto the rest of its partition after the
// partition was extended, keeps every PG as it was, and can use the new
// chunks; a partition that did not grow (or by less than a chunk) is
// refused with nothing written; --dry-run writes nothing; and a crash
// between expand's two writes (the label, then pgring.meta) leaves a store
// that opens, read-only and writable, that fsck notes, and that expand (or
// the next writable open) finishes. The crash is made in-process: the tool
// library's ExpandStore stops after its label write, as a crash would.
#include <gmock/gmock.h>

#include <filesystem>
#include <sstream>

#include "format/metadata_keys.h"
#include "tool/expand.h"
#include "tool_test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGrownSize = 4ull << 20;  // 63 chunks of 64 KiB

void Grow(const ToolStore& s, uint64_t size) { std::filesystem::resize_file(s.dev(), size); }

StoreMeta MetaInDb(const ToolStore& s) {
  auto m = StoreMeta::Decode(s.DbContents().at(std::string(kMetaKey)));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : StoreMeta();
}

std::vector<LogEntry> Entries(const ToolStore& s, const PgId& pg) {
  std::vector<LogEntry> out;
  Options o;
  o.read_only = true;
  s.WithStore(o, [&](Store* st) {
    auto e = st->ReadEntries(pg);
    ASSERT_TRUE(e.ok()) << e.status();
    out = *e;
  });
  return out;
}

class ToolExpandTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    store_ = std::make_unique<ToolStore>(GetParam());
    store_->Populate();
  }
  std::unique_ptr<ToolStore> store_;
};

TEST_P(ToolExpandTest, GrowsOntoTheExtendedPartition) {
  const ToolStore& s = *store_;
  const auto before = Entries(s, PgB());
  Grow(s, kGrownSize);
  ToolRun r = s.Run({"expand"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "grew the store from 2097152 to 4194304 bytes: 31 to 63 chunks (32 free chunks of "
            "64.0 KiB added)\n");
  const StoreMeta m = MetaInDb(s);
  EXPECT_EQ(m.chunk_count, 63u);
  EXPECT_EQ(m.partition_size, kGrownSize);
  ToolRun label = s.Run({"show-label", "--format", "json"});
  EXPECT_EQ(label.json()["label"]["chunk_count"], 63);
  EXPECT_EQ(label.json()["binding"], "ok") << label.out;
  ToolRun f = s.Run({"fsck", "--deep"});
  EXPECT_EQ(f.exit_code, 0) << f.out;
  EXPECT_EQ(Entries(s, PgB()), before);
  // The new chunks are there to use.
  s.WithStore(Options(), [&](Store* st) {
    const StoreStats stats = st->GetStoreStats();
    if (GetParam() == Backend::kRing) {
      EXPECT_EQ(stats.total_chunks, 63u);
      EXPECT_GT(stats.free_chunks, 31u);
    }
    Transaction t;
    t.CreatePg(PgId{9, 9, -1});
    for (uint64_t v = 1; v <= 1500; ++v) t.AppendEntry(PgId{9, 9, -1}, {1, v}, std::string(600, 'x'));
    // 900 KB: more than the 27 chunks the store had free before it grew.
    EXPECT_TRUE(st->Commit(std::move(t)).ok());
  });
  ToolRun again = s.Run({"fsck", "--deep"});
  EXPECT_EQ(again.exit_code, 0) << again.out;
}

TEST_P(ToolExpandTest, RefusesAPartitionThatDidNotGrow) {
  const ToolStore& s = *store_;
  auto refused = [&](std::vector<std::string> args, const std::string& message) {
    const std::string dev = s.DeviceBytes();
    const auto db = s.DbContents();
    ToolRun r = s.Run(args);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(dev == s.DeviceBytes()) << "the partition changed";
    EXPECT_TRUE(db == s.DbContents()) << "the RocksDB changed";
  };
  refused({"expand"},
          "did not grow: it is 2097152 bytes and the store already spans 2097152 (31 chunks)");
  Grow(s, kGrownSize);
  // To exactly 40 chunks, then by half a chunk more.
  const uint64_t forty = 4096 + 40 * 65536;
  ToolRun r = s.Run({"expand", "--size", std::to_string(forty)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  refused({"expand", "--size", std::to_string(forty + 32768)},
          "growing the store from 2625536 to 2658304 bytes adds no whole chunk (65536 bytes) past "
          "its 40 chunks");
  refused({"expand", "--size", "1M"}, "never shrinks");
}

TEST_P(ToolExpandTest, DryRunWritesNothing) {
  const ToolStore& s = *store_;
  Grow(s, kGrownSize);
  const std::string dev = s.DeviceBytes();
  const auto db = s.DbContents();
  const auto files = s.Files();
  ToolRun r = s.Run({"expand", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "would grow the store from 2097152 to 4194304 bytes: 31 to 63 chunks (32 free chunks "
            "of 64.0 KiB added)\ndry run: nothing written\n");
  EXPECT_TRUE(dev == s.DeviceBytes());
  EXPECT_EQ(db, s.DbContents());
  EXPECT_TRUE(files == s.Files());
}

// Expand stopped between its label write and its metadata write.
void CrashMidExpand(const ToolStore& s) {
  Grow(s, kGrownSize);
  std::ostringstream out, err;
  tool::ToolContext ctx;
  ctx.dev = s.dev();
  ctx.db = s.db();
  ctx.out = &out;
  ctx.err = &err;
  auto r = tool::ExpandStore(ctx, 0, /*dry_run=*/false,
                             [] { return absl::AbortedError("crash after the label write"); });
  ASSERT_TRUE(absl::IsAborted(r.status())) << r.status();
  // The label is grown, pgring.meta is not.
  ASSERT_EQ(MetaInDb(s).chunk_count, 31u);
  ToolRun label = RunTool({"--dev", s.dev(), "show-label", "--format", "json"});
  ASSERT_EQ(label.json()["label"]["chunk_count"], 63);
}

TEST_P(ToolExpandTest, CrashBetweenTheWritesLeavesAStoreThatOpens) {
  const ToolStore& s = *store_;
  const auto before = Entries(s, PgB());
  CrashMidExpand(s);
  // fsck: a note, not a problem.
  ToolRun f = s.Run({"fsck", "--format", "json"});
  EXPECT_EQ(f.exit_code, 0) << f.out;
  EXPECT_THAT(NoteKinds(f.json()), ::testing::ElementsAre("expand-interrupted"));
  EXPECT_THAT(ProblemKinds(f.json()), ::testing::IsEmpty());
  // Read-only opens read it grown and write nothing.
  EXPECT_EQ(Entries(s, PgB()), before);
  ToolRun l = s.Run({"list-pgs"});
  EXPECT_EQ(l.exit_code, 0) << l.err;
  EXPECT_EQ(MetaInDb(s).chunk_count, 31u);
  // A writable open finishes the growth.
  s.WithStore(Options(), [&](Store* st) {
    if (GetParam() == Backend::kRing) EXPECT_EQ(st->GetStoreStats().total_chunks, 63u);
  });
  EXPECT_EQ(MetaInDb(s).chunk_count, 63u);
  EXPECT_EQ(MetaInDb(s).partition_size, kGrownSize);
  ToolRun clean = s.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out;
  EXPECT_THAT(NoteKinds(clean.json()), ::testing::IsEmpty());
}

// The check at open (Options::verify_on_open) reads the store as fsck does:
// an interrupted growth is a note, not an error, so the open goes on and
// finishes it.
TEST_P(ToolExpandTest, TheCheckAtOpenLetsAnInterruptedExpandBeFinished) {
  const ToolStore& s = *store_;
  const auto before = Entries(s, PgB());
  CrashMidExpand(s);
  Options o;
  o.verify_on_open = VerifyOnOpen::kDeep;
  s.WithStore(o, [&](Store* st) {
    if (GetParam() == Backend::kRing) EXPECT_EQ(st->GetStoreStats().total_chunks, 63u);
  });
  EXPECT_EQ(MetaInDb(s).chunk_count, 63u);
  EXPECT_EQ(Entries(s, PgB()), before);
}

TEST_P(ToolExpandTest, ExpandAgainFinishesAnInterruptedOne) {
  const ToolStore& s = *store_;
  CrashMidExpand(s);
  ToolRun r = s.Run({"expand"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "finished the interrupted growth to 4194304 bytes, 63 chunks: pgring.meta got the new "
            "size\n");
  EXPECT_EQ(MetaInDb(s).chunk_count, 63u);
  ToolRun f = s.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(f.exit_code, 0) << f.out;
  EXPECT_THAT(NoteKinds(f.json()), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Backends, ToolExpandTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         [](const auto& info) {
                           return info.param == Backend::kRing ? "ring" : "rocksdb";
                         });

}  // namespace
}  // namespace pgring::testing
