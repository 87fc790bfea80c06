// The Ceph decoder (src/tool/ceph/) on real encodings: every file of Ceph's
// object corpus for the PG-log types (tests/tool/ceph_corpus/, copied from
// ceph/ceph-object-corpus for Ceph 16, 18 and 19) decodes whole through
// `pgring-tool decode`, its text and JSON held by goldens; damaged and
// truncated encodings give exact errors and never a crash; `log`, `dups`
// and `info` show a store's Ceph payloads decoded (--decode), on both
// backends.
#include <gmock/gmock.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pgring/tool.h"
#include "tool/ceph/ceph_decode.h"
#include "tool_test_util.h"

namespace pgring::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using tool::ceph::CephType;
using tool::ceph::DecodeCeph;

const char* const kReleases[] = {"16.2.0-90-g50f1821b4c", "18.2.0", "19.2.0-404-g78ddc7f9027"};
const char* const kTypes[] = {"pg_log_entry_t", "pg_log_dup_t", "pg_info_t",
                              "eversion_t",     "osd_reqid_t",  "hobject_t"};

std::string CorpusDir(const std::string& release, const std::string& type) {
  return absl::StrCat(PGRING_CEPH_CORPUS_DIR, "/", release, "/", type);
}

// The corpus files of one release and type, sorted by name.
std::vector<std::string> CorpusFiles(const std::string& release, const std::string& type) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(CorpusDir(release, type))) {
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct InProcess {
  int exit_code;
  std::string out, err;
};

// pgring-tool in this process (the public entry point, pgring/tool.h).
InProcess Tool(std::vector<std::string> args) {
  args.insert(args.begin(), "pgring-tool");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int rc = ::pgring::RunTool(static_cast<int>(argv.size()), argv.data(), out, err, false);
  return {rc, out.str(), err.str()};
}

std::string Corpus(const std::string& type, int index, const std::string& release = kReleases[0]) {
  return ReadFile(CorpusFiles(release, type).at(index));
}

// Every corpus file decodes whole; `decode`'s text and JSON for each
// release and type are held by goldens (golden/ceph/).
TEST(ToolCephTest, EveryCorpusFileDecodesWhole) {
  fs::create_directories(absl::StrCat(PGRING_TOOL_GOLDEN_DIR, "/ceph"));
  int files = 0;
  for (const char* release : kReleases) {
    for (const char* type : kTypes) {
      std::string text, json;
      for (const std::string& path : CorpusFiles(release, type)) {
        SCOPED_TRACE(path);
        const std::string bytes = ReadFile(path);
        auto t = tool::ceph::ParseCephType(type);
        ASSERT_TRUE(t.ok());
        auto d = DecodeCeph(*t, bytes);
        ASSERT_TRUE(d.ok()) << d.status();
        EXPECT_THAT(d->notes, ::testing::IsEmpty());  // every field known: nothing skipped
        const std::string name = fs::path(path).filename().string();
        InProcess tr = Tool({"decode", "--type", type, path});
        EXPECT_EQ(tr.exit_code, 0) << tr.err;
        InProcess jr = Tool({"--format", "json", "decode", "--type", type, path});
        EXPECT_EQ(jr.exit_code, 0) << jr.err;
        absl::StrAppend(&text, "== ", name, "\n", tr.out);
        absl::StrAppend(&json, "== ", name, "\n", jr.out);
        ++files;
      }
      ExpectGolden(absl::StrCat("ceph/", release, "_", type, ".txt"), text);
      ExpectGolden(absl::StrCat("ceph/", release, "_", type, ".json"), json);
    }
  }
  EXPECT_EQ(files, 180);
}

// Cut short anywhere, a corpus encoding is refused (kDataLoss), never read
// past its end: first as it is (its struct_len then runs past the end),
// then with the outer struct_len shortened to match, so that each field in
// turn is the one that runs out.
TEST(ToolCephTest, EveryTruncationIsRefused) {
  for (const char* release : kReleases) {
    for (const char* type :
         {"pg_log_entry_t", "pg_log_dup_t", "pg_info_t", "hobject_t", "osd_reqid_t"}) {
      const CephType t = *tool::ceph::ParseCephType(type);
      for (const std::string& path : CorpusFiles(release, type)) {
        const std::string bytes = ReadFile(path);
        for (size_t n = 0; n < bytes.size(); ++n) {
          std::string cut = bytes.substr(0, n);
          auto d = DecodeCeph(t, cut);
          ASSERT_FALSE(d.ok()) << path << " cut to " << n;
          ASSERT_TRUE(absl::IsDataLoss(d.status())) << d.status();
          if (n >= 6) {
            const uint32_t len = static_cast<uint32_t>(n - 6);
            for (int i = 0; i < 4; ++i) cut[2 + i] = static_cast<char>(len >> (8 * i));
            d = DecodeCeph(t, cut);
            ASSERT_FALSE(d.ok()) << path << " cut to " << n << " with struct_len " << len;
            ASSERT_TRUE(absl::IsDataLoss(d.status())) << d.status();
          }
        }
      }
    }
  }
}

void SetLen(std::string* b, size_t at, uint32_t len) {
  for (int i = 0; i < 4; ++i) (*b)[at + i] = static_cast<char>(len >> (8 * i));
}
uint32_t GetLen(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(b[at + i])} << (8 * i);
  return v;
}

TEST(ToolCephTest, DamageGivesExactErrors) {
  const std::string entry = Corpus("pg_log_entry_t", 0);  // 268 bytes, struct_len 262
  ASSERT_EQ(entry.size(), 268u);
  ASSERT_EQ(GetLen(entry, 2), 262u);
  {
    // The outer struct_len one byte too long.
    std::string b = entry;
    SetLen(&b, 2, 263);
    EXPECT_EQ(std::string(DecodeCeph(CephType::kLogEntry, b).status().message()),
              "pg_log_entry_t at offset 0: pg_log_entry_t struct_len 263 runs past the end "
              "(262 bytes left; the payload ends at offset 268)");
  }
  {
    // One trailing byte after a whole entry.
    EXPECT_EQ(std::string(DecodeCeph(CephType::kLogEntry, entry + "x").status().message()),
              "pg_log_entry_t ends at offset 268 but the payload has 269 bytes: 1 trailing byte");
  }
  {
    // Cut in the object name, with the entry's and the object's struct_len
    // shortened to match.
    std::string b = entry.substr(0, 40);
    SetLen(&b, 2, 34);
    SetLen(&b, 12, 24);
    auto s = DecodeCeph(CephType::kLogEntry, b).status();
    EXPECT_TRUE(absl::IsDataLoss(s));
    EXPECT_EQ(std::string(s.message()),
              "pg_log_entry_t.soid.oid.name at offset 20: length 92 runs past the end (16 bytes "
              "left; hobject_t's struct_len ends it at offset 40)");
  }
  {
    // A struct_compat this decoder cannot read: the entry's, then the
    // object's inside it.
    std::string b = entry;
    b[1] = 15;
    auto s = DecodeCeph(CephType::kLogEntry, b).status();
    EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
    EXPECT_EQ(std::string(s.message()),
              "pg_log_entry_t at offset 0: pg_log_entry_t struct_v 14 needs a decoder of version "
              "15 or newer (struct_compat); this one reads up to 14");
    b = entry;
    b[11] = 5;  // soid's struct_compat
    s = DecodeCeph(CephType::kLogEntry, b).status();
    EXPECT_EQ(std::string(s.message()),
              "pg_log_entry_t.soid at offset 10: hobject_t struct_v 4 needs a decoder of version 5 "
              "or newer (struct_compat); this one reads up to 4");
  }
  {
    // An inner struct_len cut short: a fixed-size field then runs past its
    // struct's end, though the payload goes on.
    std::string dup = Corpus("pg_log_dup_t", 1);
    SetLen(&dup, 8, 10);  // the reqid's struct_len (21)
    EXPECT_EQ(std::string(DecodeCeph(CephType::kLogDup, dup).status().message()),
              "pg_log_dup_t.reqid.tid at offset 21: needs 8 bytes, only 1 left (osd_reqid_t's "
              "struct_len ends it at offset 22)");
  }
  {
    // An inner struct_len bumped past its parent's end.
    std::string b = entry;
    SetLen(&b, 12, GetLen(entry, 12) + 200);
    EXPECT_EQ(std::string(DecodeCeph(CephType::kLogEntry, b).status().message()),
              "pg_log_entry_t.soid at offset 10: hobject_t struct_len 329 runs past the end (252 "
              "bytes left; pg_log_entry_t's struct_len ends it at offset 268)");
  }
  {
    // A newer encoder's entry: struct_v 16 (compat still 4) with 5 more
    // bytes at its end decodes, the 5 bytes skipped by the length and noted.
    std::string b = entry + "newer";
    b[0] = 16;
    SetLen(&b, 2, 262 + 5);
    auto d = DecodeCeph(CephType::kLogEntry, b);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_THAT(d->notes,
                ::testing::ElementsAre("pg_log_entry_t (pg_log_entry_t struct_v 16, this decoder "
                                       "reads up to 14): 5 bytes at offset 268 were skipped"));
    auto orig = DecodeCeph(CephType::kLogEntry, entry);
    ASSERT_TRUE(orig.ok());
    EXPECT_EQ(d->summary, orig->summary);
  }
  {
    // A count no struct could hold is refused before anything is sized by it.
    const std::string info = Corpus("pg_info_t", 0);
    auto d = DecodeCeph(CephType::kPgInfo, info);
    ASSERT_TRUE(d.ok());
    std::string b = info;
    // pg_stat_t's "up" vector count, found as the position where a count
    // of 0xffffffff is reported as up's.
    bool found = false;
    for (size_t at = 100; at + 4 < info.size() && !found; ++at) {
      std::string c = info;
      SetLen(&c, at, 0xffffffff);
      auto s = DecodeCeph(CephType::kPgInfo, c).status();
      if (absl::StrContains(s.message(), "pg_info_t.stats.up at offset") &&
          absl::StrContains(s.message(), "count 4294967295 cannot fit")) {
        EXPECT_TRUE(absl::IsDataLoss(s));
        found = true;
      }
    }
    EXPECT_TRUE(found);
  }
}

// A PG whose records are real Ceph encodings: the corpus's entries and dups
// of one release and one of its infos.
void WriteCephPg(const ToolStore& s, const PgId& pg, const std::string& release) {
  auto store = s.Open();
  ASSERT_NE(store, nullptr);
  Transaction t;
  t.CreatePg(pg);
  uint64_t v = 1;
  for (const std::string& f : CorpusFiles(release, "pg_log_entry_t")) {
    t.AppendEntry(pg, {1, v++}, ReadFile(f));
  }
  v = 1;
  for (const std::string& f : CorpusFiles(release, "pg_log_dup_t")) {
    t.AppendDup(pg, {1, v++}, ReadFile(f));
  }
  t.SetInfo(pg, ReadFile(CorpusFiles(release, "pg_info_t").front()));
  ASSERT_TRUE(store->Commit(std::move(t)).ok());
}

class ToolCephStoreTest : public ::testing::TestWithParam<Backend> {};

TEST_P(ToolCephStoreTest, LogDupsAndInfoShowDecodedPayloads) {
  const Backend backend = GetParam();
  const std::string b = backend == Backend::kRing ? "ring" : "rocksdb";
  ToolStore s(backend);
  const PgId pg{3, 0x7};
  WriteCephPg(s, pg, kReleases[2]);
  for (const char* cmd : {"log", "dups", "info"}) {
    SCOPED_TRACE(cmd);
    ToolRun text = s.Run({cmd, "--pg", "3.7"});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    ExpectGolden(absl::StrCat("ceph/", b, "_", cmd, ".txt"), Normalize(text.out, s.Join("")));
    ToolRun json = s.Run({"--format", "json", cmd, "--pg", "3.7"});
    EXPECT_EQ(json.exit_code, 0) << json.err;
    ExpectGolden(absl::StrCat("ceph/", b, "_", cmd, ".json"), Normalize(json.out, s.Join("")));
    // --decode=ceph agrees (every payload decodes); --decode=none shows hex only.
    EXPECT_EQ(s.Run({cmd, "--pg", "3.7", "--decode", "ceph"}).out, text.out);
    ToolRun hex = s.Run({"--format", "json", cmd, "--pg", "3.7", "--decode", "none"});
    EXPECT_EQ(hex.exit_code, 0);
    EXPECT_THAT(hex.out, ::testing::Not(HasSubstr("\"decoded\"")));
    EXPECT_THAT(hex.out, ::testing::Not(HasSubstr("\"summary\"")));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ToolCephStoreTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         [](const auto& info) {
                           return info.param == Backend::kRing ? "Ring" : "RocksDb";
                         });

// Payloads that are not Ceph encodings (the standard store's): hex under
// auto, exactly as under none (only the column's header says which it may
// hold); --decode=ceph fails and says why.
TEST(ToolCephTest, PayloadsThatDoNotDecode) {
  ToolStore s;
  s.Populate();
  auto rows = [](const std::string& out) { return out.substr(out.find('\n')); };
  const std::string auto_out = s.Run({"log", "--pg", "1.0"}).out;
  const std::string none_out = s.Run({"log", "--pg", "1.0", "--decode", "none"}).out;
  EXPECT_THAT(auto_out, ::testing::StartsWith("VERSION"));
  EXPECT_THAT(auto_out.substr(0, auto_out.find('\n')), HasSubstr("PAYLOAD(decoded|hex)"));
  EXPECT_THAT(none_out.substr(0, none_out.find('\n')), HasSubstr("PAYLOAD(hex)"));
  EXPECT_EQ(rows(auto_out), rows(none_out));
  ToolRun r = s.Run({"log", "--pg", "1.0", "--to", "1'1", "--decode", "ceph"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("612d3031  [not a pg_log_entry_t: pg_log_entry_t at offset 0: "));
  ToolRun j = s.Run({"--format", "json", "dups", "--pg", "1.0", "--decode", "ceph"});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_THAT(j.out, HasSubstr("\"decode_error\": \"pg_log_dup_t"));
}

TEST(ToolCephTest, DecodeCommandLine) {
  const std::string file = CorpusFiles(kReleases[0], "pg_log_dup_t").front();
  // No store is needed.
  InProcess ok = Tool({"decode", "--type", "pg_log_dup_t", file});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // The wrong type: the bytes are not one whole pg_info_t.
  InProcess wrong = Tool({"decode", "--type", "pg_info_t", file});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_EQ(wrong.out, "");
  EXPECT_THAT(wrong.err, HasSubstr(": not a whole pg_info_t: pg_info_t.pgid at offset 7: pg_t "
                                   "version 2 is not 1"));
  InProcess unknown = Tool({"decode", "--type", "pg_log_t", file});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown Ceph type 'pg_log_t' (known: pg_log_entry_t, "));
  InProcess missing = Tool({"decode", "--type", "pg_log_dup_t", "/nonexistent/file"});
  EXPECT_EQ(missing.exit_code, 2);
  // The real binary too: exit statuses are what scripts see.
  ToolRun run = RunTool({"decode", "--type", "pg_log_dup_t", file + "-truncated-does-not-exist"});
  EXPECT_EQ(run.exit_code, 2);
}

}  // namespace
}  // namespace pgring::testing
