// The commands that write, end to end: mkfs, trim, rewind, remove-pg,
// export/import, repair, and layout (which writes only its SVG). Each runs
// the binary on a real store (export --all's stream is also watched write by
// write with the tool in this process) and checks the result through the
// library and through fsck --deep; every refusal checks that nothing
// changed.
#include <gmock/gmock.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "format/record.h"
#include "pgring/tool.h"
#include "tool/export_file.h"
#include "tool_test_util.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

void ExpectClean(const ToolStore& s) {
  ToolRun r = s.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(ProblemKinds(r.json()), IsEmpty());
}

struct PgContent {
  std::vector<LogEntry> entries, dups;
  std::string info;
  friend bool operator==(const PgContent&, const PgContent&) = default;
};
PgContent Content(const ToolStore& s, const PgId& pg) {
  PgContent c;
  auto st = s.Open();
  if (st == nullptr) return c;
  auto e = st->ReadEntries(pg);
  auto d = st->ReadDups(pg);
  EXPECT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(d.ok()) << d.status();
  if (e.ok()) c.entries = *e;
  if (d.ok()) c.dups = *d;
  auto i = st->ReadInfo(pg);
  if (i.ok()) c.info = *i;
  return c;
}

// ---------------------------------------------------------------------------
// mkfs

TEST(ToolMkfsTest, MakesRefusesAndForces) {
  TempDir dir;
  const std::string dev = dir.Join("part"), db = dir.Join("db");
  MakeFile(dev, 4 << 20);
  ToolRun r = RunTool({"--dev", dev, "--db", db, "mkfs", "--chunk-size", "64K"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Normalize(r.out), "made ring store <UUID>: 4194304 bytes, 63 chunks of 64.0 KiB\n");
  const std::string uuid = r.out.substr(16, 36);
  ToolRun fsck = RunTool({"--dev", dev, "--db", db, "fsck", "--deep"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out;
  // Again without --force: refused, nothing changed.
  std::string before = ReadFile(dev);
  ToolRun again = RunTool({"--dev", dev, "--db", db, "mkfs", "--chunk-size", "64K"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("refuses to overwrite it without force"));
  EXPECT_TRUE(before == ReadFile(dev));
  // A fresh RocksDB does not help: the label is enough to refuse.
  again = RunTool({"--dev", dev, "--db", dir.Join("db2"), "mkfs"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(before == ReadFile(dev));
  // --force: a new store, JSON output.
  ToolRun forced = RunTool({"--dev", dev, "--db", db, "--format", "json", "mkfs", "--force",
                            "--chunk-size", "128K", "--backend", "rocksdb"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  auto j = forced.json();
  EXPECT_NE(j["uuid"], uuid);
  EXPECT_EQ(j["backend"], "rocksdb");
  EXPECT_EQ(j["chunk_size"], 128 << 10);
  ToolRun label = RunTool({"--dev", dev, "--db", db, "show-label", "--format", "json"});
  EXPECT_EQ(label.json()["label"]["backend"], "rocksdb");
  EXPECT_EQ(label.json()["binding"], "ok");
}

TEST(ToolMkfsTest, RefusesAMissingDevice) {
  TempDir dir;
  ToolRun r = RunTool({"--dev", dir.Join("nope"), "--db", dir.Join("db"), "mkfs"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
}

// ---------------------------------------------------------------------------
// trim, rewind, remove-pg

class ToolSurgeryTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { store_.Populate(); }
  ToolStore store_{GetParam()};
};

TEST_P(ToolSurgeryTest, TrimRewindRemove) {
  ToolRun t = store_.Run({"trim", "--pg", "1.0", "--to", "1'5", "--yes-i-really-mean-it"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, "PG 1.0: trimmed to 1'5: 5 entries dropped; 15 entries (1'6 .. 1'20) left\n");
  ToolRun w = store_.Run(
      {"--format", "json", "rewind", "--pg", "1.0", "--to", "1'15", "--yes-i-really-mean-it"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  auto j = w.json();
  EXPECT_EQ(j["operation"], "rewind");
  EXPECT_EQ(j["before"]["entries"], 15);
  EXPECT_EQ(j["after"]["entries"], 10);
  EXPECT_EQ(j["after"]["last_version"], "1'15");
  PgContent c = Content(store_, PgA());
  ASSERT_EQ(c.entries.size(), 10u);
  EXPECT_EQ(c.entries.front().version, (Version{1, 6}));
  EXPECT_EQ(c.entries.back().version, (Version{1, 15}));
  ExpectClean(store_);
  ToolRun rm = store_.Run({"remove-pg", "--pg", "1.1", "--yes-i-really-mean-it"});
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_THAT(rm.out,
              StartsWith("PG 1.1 removed: 150 entries (2'451 .. 2'600) and 0 dups dropped"));
  ToolRun l = store_.Run({"list-pgs", "--format", "json"});
  std::vector<std::string> pgs;
  const auto lj = l.json();
  for (const auto& p : lj["pgs"]) pgs.push_back(p["pg"]);
  EXPECT_THAT(pgs, ElementsAre("1.0", "1.2", "2.1f"));
  ExpectClean(store_);
}

// Ceph's trim-pg-log-dups: a PG's dups trimmed on their own.
TEST_P(ToolSurgeryTest, TrimDups) {
  ToolRun t = store_.Run({"trim-dups", "--pgid", "1.0", "--to", "1.2", "--yes-i-really-mean-it"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, "PG 1.0: dups trimmed to 1'2: 2 dups dropped; 1 dup left\n");
  PgContent c = Content(store_, PgA());
  ASSERT_EQ(c.dups.size(), 1u);
  EXPECT_EQ(c.dups.front().version, (Version{1, 3}));
  EXPECT_EQ(c.entries.size(), 20u);  // the entries are untouched
  if (GetParam() == Backend::kRing) {  // the RocksDB backend's info shows no trim points
    ToolRun info = store_.Run({"info", "--pg", "1.0", "--format", "json"});
    EXPECT_EQ(info.json()["dups_trimmed_to"], "1'2");
  }
  ExpectClean(store_);
}

// --dry-run on every command that writes: it says what it would do and
// writes nothing, proved on the partition's bytes, the RocksDB's keys and
// every file of the RocksDB directory.
TEST_P(ToolSurgeryTest, DryRunWritesNothing) {
  const struct {
    std::vector<std::string> args;
    std::string out;
  } cases[] = {
      {{"trim", "--pg", "1.0", "--to", "1.5", "--dry-run"},
       "PG 1.0: trim to 1'5 would drop 5 entries (dry run: nothing written)\n"},
      {{"rewind", "--pg", "1.0", "--to", "1.15", "--dry-run"},
       "PG 1.0: rewind to 1'15 would drop 5 entries (dry run: nothing written)\n"},
      {{"trim-dups", "--pg", "1.0", "--to", "1.2", "--dry-run"},
       "PG 1.0: trim-dups to 1'2 would drop 2 dups (dry run: nothing written)\n"},
      {{"remove-pg", "--pg", "1.0", "--dry-run", "--yes-i-really-mean-it"},
       "PG 1.0 would be removed: 20 entries (1'1 .. 1'20) and 3 dups dropped, "},
      {{"repair", "--dry-run"}, "result: 0 to fix, 0 refused (nothing to do)\n"},
      {{"export-remove", "--pg", "1.0", "--file", store_.Join("x"), "--dry-run"},
       "would export PG 1.0: 20 entries, 3 dups, info (8 bytes)"},
      {{"mkfs", "--force", "--chunk-size", "128K", "--dry-run"},
       "would make a ring store: 2097152 bytes, 15 chunks of 128.0 KiB (dry run: nothing "
       "written)\n"},
  };
  for (const auto& c : cases) {
    const std::string dev = store_.DeviceBytes();
    const auto db = store_.DbContents();
    const auto files = store_.Files();
    ToolRun r = store_.Run(c.args);
    const std::string what = ::testing::PrintToString(c.args);
    EXPECT_EQ(r.exit_code, 0) << what << ": " << r.err;
    EXPECT_THAT(r.out, StartsWith(c.out)) << what;
    EXPECT_TRUE(dev == store_.DeviceBytes()) << what << " changed the partition";
    EXPECT_EQ(db, store_.DbContents()) << what << " changed the RocksDB's keys";
    EXPECT_TRUE(files == store_.Files()) << what << " changed a file of the RocksDB";
  }
  EXPECT_FALSE(std::filesystem::exists(store_.Join("x")));
  // mkfs --dry-run refuses what mkfs refuses.
  ToolRun m = store_.Run({"mkfs", "--dry-run"});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_THAT(m.err, HasSubstr("refuses to overwrite it without force"));
}

INSTANTIATE_TEST_SUITE_P(Backends, ToolSurgeryTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         BackendName);

TEST(ToolSurgeryRingTest, RemovesADamagedPg) {
  ToolStore s;
  s.Populate();
  s.FlipDeviceByte(s.DeviceOffset(PgA(), 214 + 40));
  ToolRun r = s.Run({"remove-pg", "--pg", "1.0", "--yes-i-really-mean-it"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(it was damaged)"));
  ExpectClean(s);
  // The other PGs are intact.
  EXPECT_EQ(Content(s, PgB()).entries.size(), 150u);
}

// ---------------------------------------------------------------------------
// export / import

TEST(ToolTransferTest, RoundTripsBetweenStoresAndBackends) {
  ToolStore ring;
  ring.Populate();
  ToolStore rdb(Backend::kRocksDb);
  rdb.Populate();
  const std::string f1 = ring.Join("pg-1.1.export");
  ToolRun e = ring.Run({"export", "--pg", "1.1", "--file", f1});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_THAT(e.out, StartsWith("exported PG 1.1: 150 entries, 0 dups, info (8 bytes)"));
  // Into a fresh ring store, as the same PG: reads back the same.
  ToolStore target;
  ToolRun i = target.Run({"import", "--file", f1});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_EQ(i.out, "imported PG 1.1: 150 entries, 0 dups, info (8 bytes)\n");
  EXPECT_TRUE(Content(target, PgB()) == Content(ring, PgB()));
  // The trim point came along.
  ToolRun info = target.Run({"info", "--pg", "1.1", "--format", "json"});
  EXPECT_EQ(info.json()["entries_trimmed_to"], "2'450");
  ExpectClean(target);
  // From the RocksDB backend into the ring store, under another PG id.
  const std::string f2 = rdb.Join("pg-1.2.export");
  ASSERT_EQ(rdb.Run({"export", "--pg", "1.2", "--file", f2}).exit_code, 0);
  ToolRun i2 = target.Run({"import", "--file", f2, "--pg", "5.5"});
  ASSERT_EQ(i2.exit_code, 0) << i2.err;
  EXPECT_EQ(i2.out, "imported PG 5.5 (exported as PG 1.2): 9 entries, 1 dup, info (6 bytes)\n");
  EXPECT_TRUE(Content(target, PgId{5, 5, -1}) == Content(rdb, PgD()));
  ToolRun dinfo = target.Run({"info", "--pg", "5.5", "--format", "json"});
  EXPECT_EQ(dinfo.json()["dups_trimmed_to"], "1'5");
  // From the ring into the RocksDB backend.
  ToolStore rtarget(Backend::kRocksDb);
  ASSERT_EQ(rtarget.Run({"import", "--file", f1}).exit_code, 0);
  EXPECT_TRUE(Content(rtarget, PgB()) == Content(ring, PgB()));
  ExpectClean(rtarget);
}

TEST(ToolTransferTest, ImportRefusesBadFilesAndExistingPgs) {
  ToolStore s;
  s.Populate();
  const std::string f = s.Join("a.export");
  ASSERT_EQ(s.Run({"export", "--pg", "1.0", "--file", f}).exit_code, 0);
  const std::string good = ReadFile(f);
  ToolStore target;
  target.Populate();
  auto refused = [&](const std::string& file, int code, const std::string& msg) {
    const std::string dev = target.DeviceBytes();
    const auto db = target.DbContents();
    ToolRun r = target.Run({"import", "--file", file, "--pg", "9.9"});
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_THAT(r.err, HasSubstr(msg));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(dev == target.DeviceBytes());
    EXPECT_EQ(db, target.DbContents());
  };
  // Existing PG.
  {
    const std::string dev = target.DeviceBytes();
    ToolRun r = target.Run({"import", "--file", f});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("PG 1.0 already exists"));
    EXPECT_TRUE(dev == target.DeviceBytes());
  }
  refused(s.Join("missing.export"), 2, "cannot read");
  const std::string bad = s.Join("bad.export");
  WriteFile(bad, "");
  refused(bad, 1, "not a pgring export file");
  WriteFile(bad, std::string(1000, 'z'));
  refused(bad, 1, "not a pgring export file");
  std::string flipped = good;
  flipped[good.size() / 2] ^= 1;
  WriteFile(bad, flipped);
  refused(bad, 1, "CRC mismatch");
  WriteFile(bad, good.substr(0, good.size() - 3));
  refused(bad, 1, "truncated");
  WriteFile(bad, good + "x");
  refused(bad, 1, "bytes after the end section");
  // A newer format version (with a valid header CRC) is refused by name.
  std::string newer = good;
  EncodeFixed32(newer.data() + 8, 2);
  EncodeFixed32(newer.data() + 16, crc32c::Mask(crc32c::Value(newer.data(), 16)));
  WriteFile(bad, newer);
  refused(bad, 1, "export file format version 2");
}

TEST(ToolTransferTest, ExportRefusesADamagedLog) {
  ToolStore s;
  s.Populate();
  s.FlipDeviceByte(s.DeviceOffset(PgA(), 214 + 40));
  const std::string f = s.Join("a.export");
  ToolRun r = s.Run({"export", "--pg", "1.0", "--file", f});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("damaged; export refuses it: PG 1.0: chunk"));
  EXPECT_FALSE(std::filesystem::exists(f));
  EXPECT_FALSE(std::filesystem::exists(f + ".tmp"));
}

// What scripts do with ceph-objectstore-tool: export to standard output,
// import from standard input.
TEST(ToolTransferTest, ExportToStdoutImportsFromStdin) {
  ToolStore s;
  s.Populate();
  const std::string f = s.Join("a.export");
  ASSERT_EQ(s.Run({"export", "--pg", "1.1", "--file", f}).exit_code, 0);
  ToolRun e = s.Run({"export", "--pgid", "1.1", "--file", "-"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  // Standard output holds the file alone, byte for byte; the summary is on
  // standard error.
  EXPECT_TRUE(e.out == ReadFile(f));
  EXPECT_EQ(e.err, absl::StrFormat("exported PG 1.1: 150 entries, 0 dups, info (8 bytes) (%u "
                                   "bytes written to standard output)\n",
                                   e.out.size()));
  const std::string piped = s.Join("piped");
  WriteFile(piped, e.out);
  ToolStore target;
  ToolRun i = target.RunWithStdin({"import", "--file", "-"}, piped);
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_EQ(i.out, "imported PG 1.1: 150 entries, 0 dups, info (8 bytes)\n");
  EXPECT_TRUE(Content(target, PgB()) == Content(s, PgB()));
  ExpectClean(target);
}

TEST(ToolTransferTest, ImportFromAnEmptyStdinIsRefused) {
  ToolStore target;
  target.Populate();
  const std::string dev = target.DeviceBytes();
  const auto db = target.DbContents();
  ToolRun r = target.Run({"import", "--file", "-"});  // stdin is /dev/null
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "pgring-tool: error: standard input is empty: nothing to import (pipe an export file "
            "into --file -)\n");
  EXPECT_TRUE(dev == target.DeviceBytes());
  EXPECT_EQ(db, target.DbContents());
}

TEST(ToolTransferTest, ExportAllImportsEveryPg) {
  for (Backend from : {Backend::kRing, Backend::kRocksDb}) {
    ToolStore s(from);
    s.Populate();
    const std::string f = s.Join("all.export");
    ToolRun e = s.Run({"export", "--all", "--file", f});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_THAT(e.out, HasSubstr("exported 4 PGs"));
    for (Backend to : {Backend::kRing, Backend::kRocksDb}) {
      ToolStore target(to);
      ToolRun i = target.Run({"import", "--file", f, "--format", "json"});
      ASSERT_EQ(i.exit_code, 0) << i.err;
      EXPECT_EQ(i.json()["pgs"].size(), 4u);
      for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) {
        EXPECT_TRUE(Content(target, pg) == Content(s, pg)) << pg.ToString();
      }
      ExpectClean(target);
      // Again: every PG exists; nothing changes.
      const std::string dev = target.DeviceBytes();
      const auto db = target.DbContents();
      ToolRun again = target.Run({"import", "--file", f});
      EXPECT_EQ(again.exit_code, 1);
      EXPECT_THAT(again.err, HasSubstr("PG 1.0 already exists"));
      EXPECT_TRUE(dev == target.DeviceBytes());
      EXPECT_EQ(db, target.DbContents());
    }
  }
}

TEST(ToolTransferTest, ExportAllFileRefusals) {
  ToolStore s;
  s.Populate();
  const std::string f = s.Join("all.export");
  ASSERT_EQ(s.Run({"export", "--all", "--file", f}).exit_code, 0);
  const std::string good = ReadFile(f);
  ToolStore target;
  const std::string bad = s.Join("bad.export");
  auto refused = [&](std::vector<std::string> args, int code, const std::string& msg) {
    const std::string dev = target.DeviceBytes();
    const auto db = target.DbContents();
    ToolRun r = target.Run(args);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_THAT(r.err, HasSubstr(msg));
    EXPECT_TRUE(dev == target.DeviceBytes());
    EXPECT_EQ(db, target.DbContents());
  };
  refused({"import", "--file", f, "--pg", "9.9"}, 2, "holds 4 PGs; --pg renames the one PG");
  // Cut after its third PG: the count says four.
  const uint64_t first = DecodeFixed64(good.data() + 20);
  const uint64_t second = DecodeFixed64(good.data() + 28 + first);
  const uint64_t third = DecodeFixed64(good.data() + 36 + first + second);
  WriteFile(bad, good.substr(0, 44 + first + second + third));
  refused({"import", "--file", bad}, 1, "truncated: it announces 4 PGs and holds 3");
  std::string flipped = good;
  flipped[good.size() - 10] ^= 1;
  WriteFile(bad, flipped);
  refused({"import", "--file", bad}, 1, "PG 4 of 4");
  WriteFile(bad, good + "x");
  refused({"import", "--file", bad}, 1, "bytes after its 4 PGs");
  ToolRun both = s.Run({"export", "--all", "--pg", "1.0", "--file", f});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("excludes"));
}

// An output stream that records what it is given and the size of each
// write (it has no buffer, so every write of the tool reaches it as made).
class RecordingBuf : public std::streambuf {
 public:
  std::string bytes;
  std::vector<size_t> writes;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    bytes.append(s, static_cast<size_t>(n));
    writes.push_back(static_cast<size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      bytes.push_back(traits_type::to_char_type(c));
      writes.push_back(1);
    }
    return traits_type::not_eof(c);
  }
};

// `export --all` writes each PG as soon as it is read: to standard output
// (in this process, so every write is seen) the header, then each PG's
// length and export, none larger than one PG's export; the bytes are those
// of EncodeExportAll over the single-PG exports, and of the file it writes.
// Built whole first, the file would go out in one write of all of it.
TEST(ToolTransferTest, ExportAllStreamsOnePgAtATime) {
  for (Backend from : {Backend::kRing, Backend::kRocksDb}) {
    ToolStore s(from);
    s.Populate();
    std::vector<std::string> members;
    for (const char* pg : {"1.0", "1.1", "1.2", "2.1f"}) {
      const std::string one = s.Join(std::string(pg) + ".export");
      ASSERT_EQ(s.Run({"export", "--pg", pg, "--file", one}).exit_code, 0);
      members.push_back(ReadFile(one));
    }
    const std::string f = s.Join("all.export");
    ASSERT_EQ(s.Run({"export", "--all", "--file", f}).exit_code, 0);
    const std::string whole = tool::EncodeExportAll(members);
    EXPECT_TRUE(ReadFile(f) == whole);

    std::vector<std::string> args = s.Args({"export", "--all", "--file", "-"});
    args.insert(args.begin(), "pgring-tool");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    RecordingBuf buf;
    std::ostream out(&buf);
    std::ostringstream err;
    ASSERT_EQ(pgring::RunTool(static_cast<int>(argv.size()), argv.data(), out, err, false), 0)
        << err.str();
    EXPECT_THAT(err.str(), HasSubstr("exported 4 PGs"));
    EXPECT_TRUE(buf.bytes == whole);
    std::vector<size_t> want = {20};
    size_t largest = 0;
    for (const std::string& m : members) {
      want.push_back(8);
      want.push_back(m.size());
      largest = std::max(largest, m.size());
    }
    EXPECT_EQ(buf.writes, want);
    EXPECT_LE(*std::max_element(buf.writes.begin(), buf.writes.end()), largest);
    EXPECT_LT(largest, whole.size());
  }
}

// A failure part way through `export --all` leaves no file: not the
// temporary, and an earlier file as it was; the error names the file.
TEST(ToolTransferTest, ExportAllFailurePartWayLeavesNoFile) {
  ToolStore s;
  s.Populate();
  const std::string f = s.Join("all.export");
  ASSERT_EQ(s.Run({"export", "--all", "--file", f}).exit_code, 0);
  const std::string good = ReadFile(f);
  const uint64_t first = DecodeFixed64(good.data() + 20);
  WriteFile(f, "the previous export");
  auto unchanged = [&] {
    EXPECT_EQ(ReadFile(f), "the previous export");
    EXPECT_FALSE(std::filesystem::exists(f + ".tmp"));
  };
  {
    // A write fails once the header and the first PG are out: the tool
    // inherits a file size limit, and SIGXFSZ ignored, so the write that
    // passes it fails with EFBIG.
    struct rlimit old;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    struct rlimit lim = old;
    lim.rlim_cur = 20 + 8 + first + 8 + 1;
    auto* prev = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ToolRun r = s.Run({"export", "--all", "--file", f});
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, prev);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "pgring-tool: error: writing " + f + ".tmp: File too large; " + f +
                         " was not written\n");
    unchanged();
  }
  {
    // A PG after the first is damaged: refused when it is reached.
    s.FlipDeviceByte(s.DeviceOffset(PgD(), 214 + 40));
    ToolRun r = s.Run({"export", "--all", "--file", f});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("PG 1.2's log is damaged; export refuses it"));
    EXPECT_THAT(r.err, HasSubstr("; " + f + " was not written\n"));
    unchanged();
  }
  // No directory to write in: refused before a PG is read.
  const std::string nowhere = s.Join("missing/all.export");
  ToolRun r = s.Run({"export", "--all", "--file", nowhere});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "pgring-tool: error: cannot create " + nowhere + ".tmp: No such file or directory\n");
  EXPECT_FALSE(std::filesystem::exists(s.Join("missing")));
}

TEST(ToolTransferTest, ExportRemove) {
  ToolStore s;
  s.Populate();
  const auto before = Content(s, PgA());
  const std::string f = s.Join("a.export");
  // --dry-run writes nothing: no file, not a byte of the store.
  {
    const std::string dev = s.DeviceBytes();
    const auto db = s.DbContents();
    ToolRun d = s.Run({"export-remove", "--pg", "1.0", "--file", f, "--dry-run"});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    EXPECT_THAT(d.out, HasSubstr("would remove PG 1.0"));
    EXPECT_FALSE(std::filesystem::exists(f));
    EXPECT_TRUE(dev == s.DeviceBytes());
    EXPECT_EQ(db, s.DbContents());
  }
  ToolRun r = s.Run({"export-remove", "--pg", "1.0", "--file", f});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("removed PG 1.0"));
  ToolRun gone = s.Run({"info", "--pg", "1.0"});
  EXPECT_EQ(gone.exit_code, 1);
  ExpectClean(s);
  // The file brings it back as it was.
  ASSERT_EQ(s.Run({"import", "--file", f}).exit_code, 0);
  EXPECT_TRUE(Content(s, PgA()) == before);
  // A PG that does not exist: nothing written.
  ToolRun missing = s.Run({"export-remove", "--pg", "9.9", "--file", s.Join("m.export")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(s.Join("m.export")));
}

TEST(ToolTransferTest, ImportDryRunWritesNothing) {
  ToolStore s;
  s.Populate();
  const std::string f = s.Join("a.export");
  ASSERT_EQ(s.Run({"export", "--pg", "1.0", "--file", f}).exit_code, 0);
  ToolStore target;
  target.Populate();
  const std::string dev = target.DeviceBytes();
  const auto db = target.DbContents();
  const auto files = target.Files();
  ToolRun r = target.Run({"import", "--file", f, "--pg", "7.7", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "would import PG 7.7 (exported as PG 1.0): 20 entries, 3 dups, info (8 bytes)\n"
            "dry run: nothing written\n");
  EXPECT_TRUE(dev == target.DeviceBytes());
  EXPECT_EQ(db, target.DbContents());
  EXPECT_TRUE(files == target.Files());
  ToolRun exists = target.Run({"import", "--file", f, "--dry-run"});
  EXPECT_EQ(exists.exit_code, 1);
  EXPECT_THAT(exists.err, HasSubstr("PG 1.0 already exists"));
}

// ---------------------------------------------------------------------------
// repair

class ToolRepairTest : public ::testing::Test {
 protected:
  void SetUp() override { s_.Populate(); }
  ToolStore s_;
};

TEST_F(ToolRepairTest, NothingToDoTouchesNothing) {
  const auto files = s_.Files();
  const std::string dev = s_.DeviceBytes();
  ToolRun r = s_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "result: 0 fixed, 0 refused (nothing to do)\n");
  EXPECT_EQ(files, s_.Files());
  EXPECT_TRUE(dev == s_.DeviceBytes());
}

TEST_F(ToolRepairTest, RewritesADamagedLabel) {
  s_.FlipDeviceByte(20);  // in the UUID
  ToolRun dry = s_.Run({"repair", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0);
  EXPECT_THAT(dry.out, HasSubstr("would fix: partition offset 0: label-damaged"));
  EXPECT_EQ(s_.Run({"show-label"}).exit_code, 1) << "the dry run changed nothing";
  ToolRun r = s_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("did: write the label again from pgring.meta"));
  EXPECT_EQ(s_.Run({"show-label"}).exit_code, 0);
  ExpectClean(s_);
  EXPECT_EQ(Content(s_, PgA()).entries.size(), 20u);
}

TEST_F(ToolRepairTest, GivesBackChunksPastTheTail) {
  PgChunkList a = s_.Chunks(PgA());
  a.chunks.push_back(30);
  s_.SetChunks(PgA(), a);
  ToolRun r = s_.Run({"repair", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = r.json();
  ASSERT_EQ(j["fixed"].size(), 1u);
  EXPECT_EQ(j["fixed"][0]["kind"], "chunk-beyond-tail");
  EXPECT_TRUE(j["clean"].get<bool>());
  EXPECT_EQ(s_.Chunks(PgA()).chunks.size(), 1u);
  ExpectClean(s_);
}

TEST_F(ToolRepairTest, ZeroesUncommittedBytesPastTheTail) {
  const PgPointer p = s_.Pointer(PgA());
  const uint64_t off = s_.DeviceOffset(PgA(), p.tail);
  s_.WriteDevice(off, "garbage of a lost transaction");
  ToolRun r = s_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("did: zero the uncommitted bytes past the tail"));
  EXPECT_EQ(s_.ReadDevice(off, 29), std::string(29, '\0'));
  ToolRun f = s_.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_THAT(NoteKinds(f.json()), IsEmpty());
  EXPECT_EQ(Content(s_, PgA()).entries.size(), 20u);
  // The store keeps working after the repair.
  auto st = s_.Open();
  Transaction t;
  t.AppendEntry(PgA(), {1, 21}, "after repair");
  ASSERT_TRUE(st->Commit(std::move(t)).ok());
}

TEST_F(ToolRepairTest, RefusesDamageInsideTheCommittedRange) {
  s_.FlipDeviceByte(s_.DeviceOffset(PgA(), 214 + 40));
  PgChunkList d = s_.Chunks(PgD());
  d.chunks[0] = s_.Chunks(PgB()).chunks[0];
  s_.SetChunks(PgD(), d);
  const std::string dev = s_.DeviceBytes();
  const auto db = s_.DbContents();
  ToolRun r = s_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("refused: PG 1.0: chunk"));
  EXPECT_THAT(r.out, HasSubstr("why: damage inside the committed range"));
  EXPECT_THAT(r.out, HasSubstr("refused: PG 1.2: chunk 2: chunk-owned-twice"));
  EXPECT_THAT(r.out, HasSubstr("why: a chunk claimed twice"));
  EXPECT_TRUE(dev == s_.DeviceBytes());
  EXPECT_EQ(db, s_.DbContents());
}

TEST_F(ToolRepairTest, FixesWhatItCanAndRefusesTheRest) {
  s_.FlipDeviceByte(20);                                // label: fixable
  s_.FlipDeviceByte(s_.DeviceOffset(PgA(), 214 + 40));  // PG 1.0 record: refused
  PgChunkList a = s_.Chunks(PgA());                     // PG 1.0 extra chunk: not touched
  a.chunks.push_back(30);
  s_.SetChunks(PgA(), a);
  PgChunkList b = s_.Chunks(PgB());  // PG 1.1 extra chunk: fixed
  b.chunks.push_back(29);
  s_.SetChunks(PgB(), b);
  ToolRun r = s_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 1);
  ExpectGolden("repair_mixed.txt", Normalize(r.out));
  ToolRun f = s_.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_THAT(ProblemKinds(f.json()), ElementsAre("chunk-beyond-tail@1.0", "record-crc@1.0"));
}

// ---------------------------------------------------------------------------
// layout

TEST(ToolLayoutTest, DrawsTheRingStore) {
  ToolStore s;
  s.Populate();
  const std::string svg = s.Join("layout.svg");
  ToolRun r = s.Run({"layout", "--out", svg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("31 chunks (1 per cell), 4 PGs"));
  const std::string text = ReadFile(svg);
  EXPECT_THAT(text, StartsWith("<?xml"));
  EXPECT_THAT(text, HasSubstr("PG 1.1: 2 chunks"));
  ExpectGolden("layout.svg", Normalize(text));
  // The RocksDB backend has nothing on the partition to draw.
  ToolStore r2(Backend::kRocksDb);
  ToolRun no = r2.Run({"layout", "--out", r2.Join("x.svg")});
  EXPECT_EQ(no.exit_code, 1);
  EXPECT_THAT(no.err, HasSubstr("RocksDB backend keeps no logs on the partition"));
}

}  // namespace
}  // namespace pgring::testing
