// pgring-tool on a store embedded as the README recommends: its keys in a
// column family of a RocksDB that also holds the embedder's own keys
// (MetadataLocation::SharedDb), named with --column-family. Every read
// command prints what it prints for a store in its own RocksDB (the same
// golden files); the commands that write change the store's family and
// never the embedder's keys; an unknown family is refused by name.
#include <gmock/gmock.h>

#include "tool_test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kFamily[] = "pgring";

std::string GoldenPrefix(Backend b) { return b == Backend::kRing ? "ring" : "rocksdb"; }

// The embedder's keys ToolStore puts beside the store's.
void ExpectEmbedderKeys(const std::map<std::string, std::string>& db) {
  EXPECT_EQ(db.count("osd_superblock"), 1u);
  EXPECT_EQ(db.count("other:pgring.meta"), 1u);
}

// pgring's keys only (those of its family, without the prefix).
std::map<std::string, std::string> StoreKeys(const std::map<std::string, std::string>& db) {
  std::map<std::string, std::string> out;
  const std::string prefix = std::string(kFamily) + ":";
  for (const auto& [k, v] : db) {
    if (k.rfind(prefix, 0) == 0) out[k.substr(prefix.size())] = v;
  }
  return out;
}

class ToolEmbeddedTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    store_ = std::make_unique<ToolStore>(GetParam(), ToolStore::kPartitionSize, kFamily);
    store_->Populate();
  }
  std::unique_ptr<ToolStore> store_;
};

TEST_P(ToolEmbeddedTest, ReadCommandsPrintWhatTheyPrintForAnOwnRocksDb) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"list_pgs.txt", {"list-pgs"}},
      {"list_pgs.json", {"list-pgs", "--format", "json"}},
      {"info_1.0.txt", {"info", "--pg", "1.0"}},
      {"info_1.1.txt", {"info", "--pg", "1.1"}},
      {"log_1.0.json", {"log", "--pg", "1.0", "--format", "json"}},
      {"log_1.0_range.txt", {"log", "--pg", "1.0", "--from", "1'5", "--to", "1.8"}},
      {"dups_1.0.txt", {"dups", "--pg", "1.0"}},
      {"stats.txt", {"stats"}},
      {"fsck_deep.txt", {"fsck", "--deep"}},
  };
  const std::map<std::string, std::string> before = store_->DbContents();
  const std::string dev = store_->DeviceBytes();
  for (const auto& [golden, args] : runs) {
    ToolRun r = store_->Run(args);
    EXPECT_EQ(r.exit_code, 0) << golden << ": " << r.err;
    EXPECT_EQ(r.err, "") << golden;
    ExpectGolden(GoldenPrefix(GetParam()) + "_" + golden,
                 MaskRocksDbSize(Normalize(r.out, store_->Join(""))));
  }
  EXPECT_EQ(before, store_->DbContents());
  EXPECT_TRUE(dev == store_->DeviceBytes());
}

TEST_P(ToolEmbeddedTest, WithoutTheFamilyTheDefaultOneHoldsNoStore) {
  ToolRun r = RunTool({"--dev", store_->dev(), "--db", store_->db(), "list-pgs"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds no pgring store"));
}

TEST_P(ToolEmbeddedTest, UnknownFamilyIsRefusedByName) {
  const auto db = store_->DbContents();
  const std::string dev = store_->DeviceBytes();
  for (std::vector<std::string> args :
       {std::vector<std::string>{"list-pgs"}, {"fsck"}, {"log", "--pg", "1.0"},
        {"trim", "--pg", "1.0", "--to", "1.3", "--yes-i-really-mean-it"},
        {"remove-pg", "--pg", "1.0", "--yes-i-really-mean-it"}, {"repair"}}) {
    std::vector<std::string> full = {"--dev", store_->dev(), "--db", store_->db(),
                                     "--column-family", "nope"};
    full.insert(full.end(), args.begin(), args.end());
    ToolRun r = RunTool(full);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("has no column family 'nope' (it has: default, other, pgring)"))
        << args[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(db, store_->DbContents());
  EXPECT_TRUE(dev == store_->DeviceBytes());
}

TEST_P(ToolEmbeddedTest, SurgeryChangesTheFamilyOnly) {
  const auto before = store_->DbContents();
  ToolRun t = store_->Run({"trim", "--pg", "1.0", "--to", "1.5", "--yes-i-really-mean-it"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  ToolRun rm = store_->Run({"remove-pg", "--pg", "1.2", "--yes-i-really-mean-it"});
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  const auto after = store_->DbContents();
  ExpectEmbedderKeys(after);
  EXPECT_EQ(after.at("osd_superblock"), before.at("osd_superblock"));
  EXPECT_EQ(after.at("other:pgring.meta"), before.at("other:pgring.meta"));
  EXPECT_NE(StoreKeys(before), StoreKeys(after));
  store_->WithStore(Options(), [](Store* s) {
    auto e = s->ReadEntries(PgA());
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_EQ(e->size(), 15u);
    EXPECT_EQ(e->front().version, (Version{1, 6}));
    EXPECT_TRUE(absl::IsNotFound(s->GetPgStats(PgD()).status()));
  });
  ToolRun f = store_->Run({"fsck", "--deep"});
  EXPECT_EQ(f.exit_code, 0) << f.out << f.err;
}

TEST_P(ToolEmbeddedTest, ExportImportAndRepairThroughTheFamily) {
  const std::string file = store_->Join("pg.export");
  ToolRun e = store_->Run({"export", "--pg", "1.0", "--file", file});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  ToolRun i = store_->Run({"import", "--file", file, "--pg", "5.5"});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  ToolRun r = store_->Run({"repair"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  store_->WithStore(Options(), [](Store* s) {
    auto a = s->ReadEntries(PgA());
    auto b = s->ReadEntries(PgId{5, 5, -1});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
  });
  ExpectEmbedderKeys(store_->DbContents());
}

TEST_P(ToolEmbeddedTest, MkfsMakesTheFamily) {
  TempDir dir;
  const std::string dev = dir.Join("p");
  MakeFile(dev, ToolStore::kPartitionSize);
  // Into the embedder's existing RocksDB, in a family it does not have yet.
  ToolRun m = RunTool({"--dev", dev, "--db", store_->db(), "--column-family", "second", "mkfs",
                       "--chunk-size", "64K", "--backend",
                       GetParam() == Backend::kRing ? "ring" : "rocksdb"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto db = store_->DbContents();
  EXPECT_EQ(db.count("second:pgring.meta"), 1u);
  EXPECT_EQ(db.count("pgring.meta"), 0u);  // not in the default family
  ToolRun l = RunTool({"--dev", dev, "--db", store_->db(), "--column-family", "second", "list-pgs"});
  EXPECT_EQ(l.exit_code, 0) << l.err;
  EXPECT_THAT(l.out, HasSubstr("0 PGs"));
  // The first store is still there, in its own family.
  ToolRun f = store_->Run({"fsck"});
  EXPECT_EQ(f.exit_code, 0) << f.out << f.err;
}

// --live: a store another process has open, here this test's, read anyway.
class ToolLiveTest : public ToolEmbeddedTest {};

void ExpectLiveNote(const ToolRun& r) {
  EXPECT_THAT(r.out, ::testing::StartsWith("note: the store may be in use (--live): this view "
                                           "was read while it may be running and may be behind"));
}

void ReadsInUse(const ToolStore& store) {
  const ToolStore* store_ = &store;
  // Open in this process (the partition's flock, the RocksDB's LOCK), with
  // entries committed after the tool's stores were written.
  store_->WithStore(Options(), [&](Store* st) {
    Transaction t;
    for (uint64_t v = 21; v <= 25; ++v) t.AppendEntry(PgA(), {1, v}, "while-open");
    ASSERT_TRUE(st->Commit(std::move(t)).ok());
    ToolRun refused = store_->Run({"log", "--pg", "1.0"});
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_THAT(refused.err, HasSubstr("in use by another process"));
    EXPECT_THAT(refused.err, HasSubstr("can look at it anyway with --live"));
    ToolRun log = store_->Run({"--live", "log", "--pg", "1.0", "--format", "json"});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    auto j = log.json();
    EXPECT_THAT(j["live_view"].get<std::string>(), HasSubstr("may be behind"));
    ASSERT_EQ(j["entries"].size(), 25u);  // what the running store committed
    EXPECT_EQ(j["entries"][24]["version"], "1'25");
    ToolRun list = store_->Run({"--live", "list-pgs"});
    EXPECT_EQ(list.exit_code, 0) << list.err;
    ExpectLiveNote(list);
    EXPECT_THAT(list.out, HasSubstr("4 PGs"));
    ToolRun fsck = store_->Run({"--live", "fsck", "--deep"});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
    ExpectLiveNote(fsck);
    // A command that writes is refused before it opens anything.
    ToolRun trim = store_->Run({"--live", "trim", "--pg", "1.0", "--to", "1.3",
                                "--yes-i-really-mean-it"});
    EXPECT_EQ(trim.exit_code, 2);
    EXPECT_THAT(trim.err, HasSubstr("--live is for commands that only read; trim changes"));
    // The running store goes on.
    Transaction t2;
    t2.AppendEntry(PgA(), {1, 26}, "after");
    EXPECT_TRUE(st->Commit(std::move(t2)).ok());
  });
  // Nothing the live reads did is left behind: the store is whole.
  ToolRun f = store_->Run({"fsck", "--deep"});
  EXPECT_EQ(f.exit_code, 0) << f.out;
  ToolRun log = store_->Run({"log", "--pg", "1.0", "--format", "json"});
  EXPECT_EQ(log.json()["entries"].size(), 26u);
  EXPECT_FALSE(log.json().contains("live_view"));
}

TEST_P(ToolLiveTest, ReadsAnEmbeddedStoreInUse) { ReadsInUse(*store_); }

TEST_P(ToolLiveTest, ReadsAStoreInItsOwnRocksDbInUse) {
  ToolStore own(GetParam());
  own.Populate();
  ReadsInUse(own);
}

INSTANTIATE_TEST_SUITE_P(Backends, ToolLiveTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         [](const auto& info) { return GoldenPrefix(info.param); });

INSTANTIATE_TEST_SUITE_P(Backends, ToolEmbeddedTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         [](const auto& info) { return GoldenPrefix(info.param); });

}  // namespace
}  // namespace pgring::testing
