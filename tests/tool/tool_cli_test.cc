// pgring-tool's command line and its refusals. Every kind of bad input —
// a missing path, an empty file, a random file, another store's partition, a
// truncated partition, a RocksDB that is not pgring's, a missing PG, a
// version out of range, a malformed argument — must give one clear error
// line on stderr and a non-zero status, never a crash or a hang (the runner
// fails on a signal or a timeout), and must change nothing: the partition's
// bytes and the RocksDB's keys are compared before and after every run.
#include <gmock/gmock.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "tool_test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// One line, "pgring-tool: error: ...".
void ExpectOneErrorLine(const ToolRun& r, const std::string& what) {
  EXPECT_THAT(r.err, StartsWith("pgring-tool: error: ")) << what;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
}

void WriteRandomFile(const std::string& path, size_t size) {
  std::mt19937_64 rng(42);
  std::string data(size, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  std::ofstream(path, std::ios::binary) << data;
}

const std::vector<std::vector<std::string>>& ReadCommands() {
  static const std::vector<std::vector<std::string>> c = {
      {"show-label"},
      {"fsck"},
      {"fsck", "--deep"},
      {"list-pgs"},
      {"info", "--pg", "1.0"},
      {"log", "--pg", "1.0"},
      {"dups", "--pg", "1.0"},
      {"stats"},
      {"repair"},
      {"layout", "--out", "/dev/null"},
      {"export", "--pg", "1.0", "--file", "/dev/null"}};
  return c;
}

class ToolCliTest : public ::testing::Test {
 protected:
  void SetUp() override { store_.Populate(); }

  // Runs `args` expecting `code` and one error line containing `message`,
  // and checks that neither the partition nor the RocksDB changed.
  void ExpectRefused(const std::vector<std::string>& args, int code, const std::string& message,
                     const ToolStore& s) {
    const std::string dev = s.DeviceBytes();
    const auto db = s.DbContents();
    ToolRun r = RunTool(args);
    const std::string what = ::testing::PrintToString(args);
    EXPECT_EQ(r.exit_code, code) << what << "\n" << r.err << r.out;
    ExpectOneErrorLine(r, what);
    EXPECT_THAT(r.err, HasSubstr(message)) << what;
    EXPECT_TRUE(dev == s.DeviceBytes()) << what << " changed the partition";
    EXPECT_EQ(db, s.DbContents()) << what << " changed the RocksDB";
  }

  ToolStore store_;
};

TEST_F(ToolCliTest, Help) {
  ToolRun r = RunTool({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  ExpectGolden("help.txt", r.out);
  for (const char* cmd : {"mkfs", "show-label", "fsck", "repair", "list-pgs", "info", "log", "dups",
                          "stats", "layout", "export", "export-remove", "import", "trim", "rewind",
                          "trim-dups", "remove-pg", "expand"}) {
    ToolRun h = RunTool({cmd, "--help"});
    EXPECT_EQ(h.exit_code, 0) << cmd;
    EXPECT_THAT(h.out, HasSubstr(std::string("Usage: pgring-tool [--dev PATH] [--db PATH] "
                                             "[--column-family NAME] "
                                             "[--format text|json|json-pretty] ") +
                                 cmd + " [OPTIONS]"))
        << cmd;
  }
  ExpectGolden("help_fsck.txt", RunTool({"fsck", "--help"}).out);
}

TEST_F(ToolCliTest, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "A subcommand is required"},
      {{"frobnicate"}, "frobnicate"},
      {{"--dev", store_.dev(), "--db", store_.db(), "list-pgs", "--bogus"}, "--bogus"},
      {{"list-pgs"}, "no partition given"},
      {{"--dev", store_.dev(), "list-pgs"}, "needs the store's RocksDB"},
      {{"--dev", store_.dev(), "--db", store_.db(), "--format", "xml", "list-pgs"}, "xml"},
      {{"--dev", store_.dev(), "--db", store_.db(), "info"}, "--pg is required"},
      {{"--dev", store_.dev(), "--db", store_.db(), "info", "--pg", "banana"},
       "bad PG id 'banana'"},
      {{"--dev", store_.dev(), "--db", store_.db(), "log", "--pg", "1.0", "--from", "x"},
       "bad version 'x'"},
      {{"--dev", store_.dev(), "--db", store_.db(), "log", "--pg", "1.0", "--from", "1'9", "--to",
        "1'3"},
       "is empty"},
      {{"--dev", store_.dev(), "--db", store_.db(), "trim", "--pg", "1.0", "--to", "1'5"},
       "--yes-i-really-mean-it"},
      {{"--dev", store_.dev(), "--db", store_.db(), "rewind", "--pg", "1.0", "--to", "1'5"},
       "--yes-i-really-mean-it"},
      {{"--dev", store_.dev(), "--db", store_.db(), "remove-pg", "--pg", "1.0"},
       "--yes-i-really-mean-it"},
      {{"--dev", store_.dev(), "--db", store_.db(), "mkfs", "--chunk-size", "1000"},
       "chunk size 1000"},
      {{"--dev", store_.dev(), "--db", store_.db(), "layout", "--out", "x.svg", "--max-cells", "1"},
       "--max-cells"},
  };
  for (const auto& c : cases) ExpectRefused(c.args, 2, c.message, store_);
}

TEST_F(ToolCliTest, MissingPartition) {
  const std::string missing = store_.Join("no-such-partition");
  for (const auto& c : ReadCommands()) {
    std::vector<std::string> args = {"--dev", missing, "--db", store_.db()};
    args.insert(args.end(), c.begin(), c.end());
    ExpectRefused(args, 2, missing, store_);
  }
}

TEST_F(ToolCliTest, EmptyFile) {
  const std::string empty = store_.Join("empty");
  MakeFile(empty, 0);
  for (const auto& c : ReadCommands()) {
    std::vector<std::string> args = {"--dev", empty, "--db", store_.db()};
    args.insert(args.end(), c.begin(), c.end());
    ExpectRefused(args, 2, empty, store_);
  }
}

TEST_F(ToolCliTest, RandomFile) {
  const std::string junk = store_.Join("junk");
  WriteRandomFile(junk, 1 << 20);
  for (const auto& c : ReadCommands()) {
    std::vector<std::string> args = {"--dev", junk, "--db", store_.db()};
    args.insert(args.end(), c.begin(), c.end());
    ExpectRefused(args, 2, "has no pgring label", store_);
  }
}

TEST_F(ToolCliTest, PartitionOfAnotherStore) {
  ToolStore other;
  for (const auto& c : ReadCommands()) {
    if (c[0] == "fsck" || c[0] == "show-label") continue;  // they report it (exit 1): below
    std::vector<std::string> args = {"--dev", other.dev(), "--db", store_.db()};
    args.insert(args.end(), c.begin(), c.end());
    if (c[0] == "repair") {
      // Repair reports what it refuses on stdout, with the reason.
      const std::string dev = store_.DeviceBytes();
      ToolRun r = RunTool(args);
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_THAT(r.out, HasSubstr("refused: uuid-mismatch"));
      EXPECT_THAT(r.out, HasSubstr("why: the partition and the RocksDB are not one store's"));
      EXPECT_TRUE(dev == store_.DeviceBytes());
      continue;
    }
    ExpectRefused(args, 2, "do not belong together", store_);
  }
  ToolRun r = RunTool({"--dev", other.dev(), "--db", store_.db(), "show-label"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("do not belong together"));
  for (const auto& c : std::vector<std::vector<std::string>>{
           {"trim", "--pg", "1.0", "--to", "1'2", "--yes-i-really-mean-it"},
           {"remove-pg", "--pg", "1.0", "--yes-i-really-mean-it"}}) {
    std::vector<std::string> args = {"--dev", other.dev(), "--db", store_.db()};
    args.insert(args.end(), c.begin(), c.end());
    ExpectRefused(args, 2, "do not belong together", store_);
  }
}

TEST_F(ToolCliTest, TruncatedPartition) {
  ASSERT_EQ(::truncate(store_.dev().c_str(), 1 << 20), 0);
  for (const auto& c : ReadCommands()) {
    if (c[0] == "fsck" || c[0] == "show-label" || c[0] == "repair") continue;
    std::vector<std::string> args = store_.Args(c);
    ExpectRefused(args, 2, "truncated", store_);
  }
  ToolRun r = store_.Run({"show-label"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("PROBLEM: the device is 1048576 bytes"));
}

TEST_F(ToolCliTest, RocksDbThatIsNotPgrings) {
  // A healthy RocksDB holding someone else's keys.
  const std::string foreign = store_.Join("foreign-db");
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, foreign, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "osd_superblock", "x").ok());
  }
  const std::string empty_dir = store_.Join("empty-dir");
  std::filesystem::create_directories(empty_dir);
  const std::string junk = store_.Join("junk-db");
  WriteRandomFile(junk, 4096);
  for (const auto& c : ReadCommands()) {
    if (c[0] == "show-label") continue;  // reports it (exit 2 too, but on open): same path
    ExpectRefused(
        [&] {
          std::vector<std::string> a = {"--dev", store_.dev(), "--db", foreign};
          a.insert(a.end(), c.begin(), c.end());
          return a;
        }(),
        2, "holds no pgring store", store_);
    ExpectRefused(
        [&] {
          std::vector<std::string> a = {"--dev", store_.dev(), "--db", empty_dir};
          a.insert(a.end(), c.begin(), c.end());
          return a;
        }(),
        2, "no RocksDB at", store_);
    std::vector<std::string> a = {"--dev", store_.dev(), "--db", junk};
    a.insert(a.end(), c.begin(), c.end());
    ExpectRefused(a, 2, junk, store_);
  }
  // The foreign DB itself was not touched by any read command.
}

TEST_F(ToolCliTest, MissingPg) {
  for (const auto& c : std::vector<std::vector<std::string>>{
           {"info", "--pg", "9.9"},
           {"log", "--pg", "9.9"},
           {"dups", "--pg", "9.9"},
           {"export", "--pg", "9.9", "--file", store_.Join("x")},
           {"trim", "--pg", "9.9", "--to", "1'1", "--yes-i-really-mean-it"},
           {"rewind", "--pg", "9.9", "--to", "1'1", "--yes-i-really-mean-it"},
           {"remove-pg", "--pg", "9.9", "--yes-i-really-mean-it"}}) {
    ExpectRefused(store_.Args(c), 1, "PG 9.9 does not exist", store_);
  }
}

TEST_F(ToolCliTest, VersionsOutOfRange) {
  ExpectRefused(store_.Args({"log", "--pg", "1.0", "--from", "1'100"}), 1,
                "1'100 is past the newest entry 1'20", store_);
  ExpectRefused(store_.Args({"trim", "--pg", "1.0", "--to", "9'9", "--yes-i-really-mean-it"}), 1,
                "past the newest entry", store_);
  // PG 1.1 is trimmed to 2'450: it cannot be rewound below that.
  ExpectRefused(store_.Args({"rewind", "--pg", "1.1", "--to", "2'100", "--yes-i-really-mean-it"}),
                1, "before the log's tail", store_);
}

TEST_F(ToolCliTest, VersionsOutOfRangeOnTheRocksDbBackend) {
  ToolStore r(Backend::kRocksDb);
  r.Populate();
  ExpectRefused(r.Args({"log", "--pg", "1.0", "--from", "1'100"}), 1, "past the newest entry", r);
  ExpectRefused(r.Args({"info", "--pg", "7.7"}), 1, "does not exist", r);
  ExpectRefused(r.Args({"trim", "--pg", "1.0", "--to", "9'9", "--yes-i-really-mean-it"}), 1,
                "past the newest entry", r);
}

TEST_F(ToolCliTest, ProgressOnlyWhenAsked) {
  // stderr is a pipe here: no progress by default; --progress always shows it.
  ToolRun quiet = store_.Run({"fsck", "--deep"});
  EXPECT_EQ(quiet.err, "");
  ToolRun loud = store_.Run({"--progress", "always", "fsck", "--deep"});
  EXPECT_EQ(loud.exit_code, 0);
  EXPECT_THAT(loud.err, HasSubstr("fsck --deep: PGs scanned: "));
  EXPECT_EQ(quiet.out, loud.out);
}

}  // namespace
}  // namespace pgring::testing
