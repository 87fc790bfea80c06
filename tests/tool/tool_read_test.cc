// The read commands end to end (show-label, list-pgs, info, log, dups, stats)
// on real file-backed stores of both backends, filled through the public API:
// text and JSON outputs compared with golden files (UUIDs and temporary paths
// replaced), and proof that reading changes nothing — not one byte of the
// partition nor of any file in the RocksDB directory.
#include <gmock/gmock.h>

#include <map>
#include <regex>

#include "absl/strings/str_format.h"
#include "tool_test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

// The golden files' prefix.
std::string GoldenPrefix(Backend b) { return b == Backend::kRing ? "ring" : "rocksdb"; }

class ToolReadTest : public ::testing::TestWithParam<Backend> {
 protected:
  static void SetUpTestSuite() {}
  void SetUp() override {
    store_ = std::make_unique<ToolStore>(GetParam());
    store_->Populate();
  }

  // Runs a read command, expects success and no stderr, compares with the
  // golden file <backend>_<name>.
  void Golden(const std::string& name, std::vector<std::string> args, int exit_code = 0) {
    ToolRun r = store_->Run(args);
    EXPECT_EQ(r.exit_code, exit_code) << r.err;
    EXPECT_EQ(r.err, "");
    bool json = false;
    for (const auto& a : args) json |= a == "json";
    if (json) r.json();
    ExpectGolden(GoldenPrefix(GetParam()) + "_" + name,
                 MaskRocksDbSize(Normalize(r.out, store_->Join(""))));
  }

  std::unique_ptr<ToolStore> store_;
};

TEST_P(ToolReadTest, ShowLabel) {
  // The label's CRC covers the random UUID: mask it.
  static const std::regex text("crc             0x[0-9a-f]{8} \\(matches\\)");
  static const std::regex json("\"(computed_)?crc\": \"0x[0-9a-f]{8}\"");
  for (const char* format : {"text", "json"}) {
    ToolRun r = store_->Run({"show-label", "--format", format});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::string out = std::regex_replace(Normalize(r.out), text, "crc             <CRC> (matches)");
    out = std::regex_replace(out, json, "\"$1crc\": \"<CRC>\"");
    ExpectGolden(GoldenPrefix(GetParam()) + "_show_label." + (format[0] == 't' ? "txt" : "json"),
                 out);
  }
}

TEST_P(ToolReadTest, ShowLabelWithoutDb) {
  ToolRun r = RunTool({"--dev", store_->dev(), "show-label", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = r.json();
  EXPECT_TRUE(j["valid"].get<bool>());
  EXPECT_TRUE(j["metadata"].is_null());
  EXPECT_EQ(j["label"]["chunk_size"], ToolStore::kChunkSize);
}

TEST_P(ToolReadTest, ListPgs) {
  Golden("list_pgs.txt", {"list-pgs"});
  Golden("list_pgs.json", {"list-pgs", "--format", "json"});
}

TEST_P(ToolReadTest, Info) {
  Golden("info_1.0.txt", {"info", "--pg", "1.0"});
  Golden("info_1.0.json", {"info", "--pg", "1.0", "--format", "json"});
  Golden("info_1.1.txt", {"info", "--pg", "1.1"});
  Golden("info_2.1f.txt", {"info", "--pg", "2.1f"});
}

TEST_P(ToolReadTest, Log) {
  Golden("log_1.0.txt", {"log", "--pg", "1.0"});
  Golden("log_1.0.json", {"log", "--pg", "1.0", "--format", "json"});
  Golden("log_1.0_range.txt", {"log", "--pg", "1.0", "--from", "1'5", "--to", "1.8"});
  Golden("log_1.2.json", {"log", "--pg", "1.2", "--format", "json"});
}

TEST_P(ToolReadTest, LogMatchesTheLibrary) {
  // The tool reads the ring on its own; what it finds must be exactly what
  // the store returns.
  std::map<PgId, std::pair<std::vector<LogEntry>, std::vector<LogEntry>>> want;
  {
    auto s = store_->Open();
    for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) {
      auto e = s->ReadEntries(pg);
      auto d = s->ReadDups(pg);
      ASSERT_TRUE(e.ok() && d.ok());
      want[pg] = {*e, *d};
    }
  }
  for (const auto& [pg, w] : want) {
    ToolRun r = store_->Run({"log", "--pg", pg.ToString(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = r.json();
    ASSERT_EQ(j["entries"].size(), w.first.size()) << pg.ToString();
    for (size_t i = 0; i < w.first.size(); ++i) {
      EXPECT_EQ(j["entries"][i]["version"], w.first[i].version.ToString());
      std::string hex;
      for (unsigned char c : w.first[i].payload) hex += absl::StrFormat("%02x", c);
      EXPECT_EQ(j["entries"][i]["payload"], hex);
    }
    ToolRun d = store_->Run({"dups", "--pg", pg.ToString(), "--format", "json"});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    ASSERT_EQ(d.json()["dups"].size(), w.second.size());
    for (size_t i = 0; i < w.second.size(); ++i) {
      EXPECT_EQ(d.json()["dups"][i]["version"], w.second[i].version.ToString());
    }
  }
}

// A rewind above the newest entry raises the last version (a later append
// must be above it): `log --from` between the two reads nothing, on both
// backends alike, as Store::ReadEntries answers.
TEST_P(ToolReadTest, LogFromAboveARewindIsEmptyNotAnError) {
  const PgId pg{5, 0x5, -1};
  {
    auto s = store_->Open();
    Transaction t;
    t.CreatePg(pg);
    for (uint64_t v : {10, 20, 30}) t.AppendEntry(pg, Version{1, v}, "e");
    ASSERT_TRUE(s->Commit(std::move(t)).ok());
    Transaction r;
    r.Rewind(pg, Version{1, 25});
    ASSERT_TRUE(s->Commit(std::move(r)).ok());
    auto read = s->ReadEntries(pg, Version{1, 22});
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(read->empty());
  }
  ToolRun r = store_->Run({"log", "--pg", pg.ToString(), "--from", "1.22", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["entries"].size(), 0u);
  ToolRun past = store_->Run({"log", "--pg", pg.ToString(), "--from", "1.26"});
  EXPECT_EQ(past.exit_code, 1);
  EXPECT_THAT(past.err, HasSubstr("past the newest entry"));
}

TEST_P(ToolReadTest, Dups) {
  Golden("dups_1.0.txt", {"dups", "--pg", "1.0"});
  Golden("dups_1.0.json", {"dups", "--pg", "1.0", "--format", "json"});
}

// Ranges and limits on dups as on log (--from, --to, --max).
TEST_P(ToolReadTest, RangesAndLimits) {
  Golden("dups_1.0_range.txt", {"dups", "--pg", "1.0", "--from", "1.2", "--to", "1.3"});
  Golden("dups_1.0_max.txt", {"dups", "--pg", "1.0", "--max", "2"});
  Golden("log_1.1_max.txt", {"log", "--pg", "1.1", "--from", "2.500", "--max", "3"});
  ToolRun j = store_->Run({"dups", "--pg", "1.0", "--max", "2", "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.json()["dups"].size(), 2u);
  EXPECT_EQ(j.json()["more"], true);
  ToolRun all = store_->Run({"dups", "--pg", "1.0", "--max", "3", "--format", "json"});
  EXPECT_EQ(all.json()["dups"].size(), 3u);
  EXPECT_EQ(all.json()["more"], false);
  ToolRun bad = store_->Run({"dups", "--pg", "1.0", "--from", "1.3", "--to", "1.2"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("version range 1'3..1'2 is empty"));
}

// Ceph's names: --pgid beside --pg, --format json-pretty beside json.
TEST_P(ToolReadTest, CephNames) {
  ToolRun pg = store_->Run({"log", "--pg", "1.0", "--format", "json"});
  ToolRun pgid = store_->Run({"log", "--pgid", "1.0", "--format", "json-pretty"});
  EXPECT_EQ(pgid.exit_code, 0) << pgid.err;
  EXPECT_EQ(pg.out, pgid.out);
}

TEST_P(ToolReadTest, Stats) {
  Golden("stats.txt", {"stats"});
  Golden("stats.json", {"stats", "--format", "json"});
}

TEST_P(ToolReadTest, FsckClean) {
  Golden("fsck.txt", {"fsck"});
  Golden("fsck_deep.txt", {"fsck", "--deep"});
  Golden("fsck_deep.json", {"fsck", "--deep", "--format", "json"});
}

TEST_P(ToolReadTest, ReadCommandsChangeNothing) {
  const std::string dev = store_->DeviceBytes();
  const auto files = store_->Files();
  const std::vector<std::vector<std::string>> commands = {
      {"show-label"},
      {"list-pgs"},
      {"info", "--pg", "1.1"},
      {"log", "--pg", "1.1"},
      {"dups", "--pg", "1.0"},
      {"stats"},
      {"fsck", "--deep"},
      {"repair", "--dry-run"},
      {"export", "--pg", "1.0", "--file", store_->Join("x.pgexport")}};
  for (const auto& c : commands) {
    for (const char* format : {"text", "json"}) {
      std::vector<std::string> args = c;
      args.push_back("--format");
      args.push_back(format);
      ToolRun r = store_->Run(args);
      EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args) << ": " << r.err;
    }
  }
  EXPECT_TRUE(dev == store_->DeviceBytes()) << "a read command changed the partition";
  EXPECT_EQ(files, store_->Files()) << "a read command changed the RocksDB directory";
}

// What the tool relies on: Options::read_only is honoured by the library for
// both backends (device O_RDONLY with a shared lock, RocksDB opened
// read-only, writes refused, nothing on disk changed, not even RocksDB's own
// files).
TEST_P(ToolReadTest, LibraryReadOnlyOpenChangesNothing) {
  const std::string dev = store_->DeviceBytes();
  const auto files = store_->Files();
  Options o;
  o.read_only = true;
  o.log_sink = NullLogSink();
  {
    auto a = Store::Open(store_->dev(), MetadataLocation::OwnDb(store_->db()), o);
    ASSERT_TRUE(a.ok()) << a.status();
    // A second reader is welcome (shared lock); a writer is not.
    auto b = Store::Open(store_->dev(), MetadataLocation::OwnDb(store_->db()), o);
    ASSERT_TRUE(b.ok()) << b.status();
    Options rw = o;
    rw.read_only = false;
    auto w = Store::Open(store_->dev(), MetadataLocation::OwnDb(store_->db()), rw);
    EXPECT_EQ(w.status().code(), absl::StatusCode::kUnavailable) << w.status();
    for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) {
      EXPECT_TRUE((*a)->ReadEntries(pg).ok());
      EXPECT_TRUE((*a)->ReadDups(pg).ok());
    }
    Transaction t;
    t.AppendEntry(PgA(), {9, 1}, "x");
    EXPECT_EQ((*a)->Submit(std::move(t), [](absl::Status) {}).code(),
              absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE((*a)->Close().ok());
    EXPECT_TRUE((*b)->Close().ok());
  }
  EXPECT_TRUE(dev == store_->DeviceBytes()) << "a read-only open changed the partition";
  EXPECT_EQ(files, store_->Files()) << "a read-only open changed the RocksDB directory";
}

TEST_P(ToolReadTest, RefusesAStoreInUse) {
  auto open = store_->Open();
  ASSERT_NE(open, nullptr);
  for (const std::vector<std::string>& c : std::vector<std::vector<std::string>>{
           {"show-label"},
           {"list-pgs"},
           {"fsck"},
           {"trim", "--pg", "1.0", "--to", "1'2", "--yes-i-really-mean-it"}}) {
    ToolRun r = store_->Run(c);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(c);
    EXPECT_THAT(r.err, HasSubstr("in use by another process")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ToolReadTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         BackendName);

}  // namespace
}  // namespace pgring::testing
