// The tool library in-process: the export file codec byte for byte (round
// trip, and one test per kind of damage) and the streaming writer of
// `export --all`, the SVG layout at the scale the
// issue asks for (1,000 PGs on a 100 GiB partition), PG colours, argument
// parsing and problem formatting.
#include <gmock/gmock.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "check/offline_store.h"
#include "check/problem.h"
#include "pgring/tool.h"
#include "tool/export_file.h"
#include "tool/layout_svg.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring::tool {
namespace {

using ::testing::HasSubstr;

ExportedPg Sample() {
  ExportedPg e;
  e.pg = PgId{3, 0x1f, 2};
  e.source_uuid.bytes[0] = 0xab;
  e.source_backend = Backend::kRing;
  e.entries_trimmed_to = {4, 9};
  e.dups_trimmed_to = {1, 2};
  e.entries = {{{4, 10}, "ten"}, {{4, 11}, ""}, {{5, 1}, std::string(3000, 'x')}};
  e.dups = {{{1, 3}, "d3"}, {{2, 1}, "d21"}};
  e.info = "the info";
  return e;
}

TEST(ExportFileTest, RoundTrip) {
  const ExportedPg e = Sample();
  const std::string f = EncodeExport(e);
  auto d = DecodeExport(f);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(*d == e);
  ExportedPg empty;
  auto d2 = DecodeExport(EncodeExport(empty));
  ASSERT_TRUE(d2.ok()) << d2.status();
  EXPECT_TRUE(*d2 == empty);
}

TEST(ExportFileTest, HeaderBytes) {
  const std::string f = EncodeExport(Sample());
  EXPECT_EQ(f.substr(0, 8), "PGRINGEX");
  EXPECT_EQ(DecodeFixed32(f.data() + 8), 1u);
  EXPECT_EQ(DecodeFixed32(f.data() + 12), 0u);
  EXPECT_EQ(crc32c::Unmask(DecodeFixed32(f.data() + 16)), crc32c::Value(f.data(), 16));
  EXPECT_EQ(static_cast<uint8_t>(f[20]), 1);             // the PG section
  EXPECT_EQ(DecodeFixed32(f.data() + 21), 71u);          // its length
  EXPECT_EQ(static_cast<uint8_t>(f[f.size() - 13]), 5);  // END: type, len 4, crc, crc
}

TEST(ExportFileTest, EveryByteFlipIsDetected) {
  const std::string f = EncodeExport(Sample());
  for (size_t i = 0; i < f.size(); i += (i < 200 ? 1 : 97)) {
    std::string g = f;
    g[i] ^= 0x10;
    auto d = DecodeExport(g);
    EXPECT_FALSE(d.ok()) << "flip at " << i;
  }
}

TEST(ExportFileTest, Refusals) {
  const std::string f = EncodeExport(Sample());
  auto code = [](const std::string& s) { return DecodeExport(s).status().code(); };
  auto msg = [](const std::string& s) { return std::string(DecodeExport(s).status().message()); };
  EXPECT_EQ(code(""), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code("PGRINGLB and so on, a label"), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(msg("not an export"), HasSubstr("not a pgring export file"));
  EXPECT_EQ(code(f.substr(0, 12)), absl::StatusCode::kDataLoss);
  for (size_t cut : {20ul, 25ul, f.size() / 2, f.size() - 1}) {
    EXPECT_EQ(code(f.substr(0, cut)), absl::StatusCode::kDataLoss) << cut;
  }
  EXPECT_THAT(msg(f.substr(0, f.size() - 13)), HasSubstr("no end section"));
  std::string v2 = f;
  EncodeFixed32(v2.data() + 8, 2);
  EncodeFixed32(v2.data() + 16, crc32c::Mask(crc32c::Value(v2.data(), 16)));
  EXPECT_EQ(code(v2), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(msg(v2), HasSubstr("version 2"));
  // A section removed whole (its own CRC intact): the file CRC catches it.
  ExportedPg e = Sample();
  std::string full = EncodeExport(e);
  e.dups.pop_back();
  std::string shorter = EncodeExport(e);
  // Splice the PG section of the full file onto the rest of the shorter one:
  // counts and the file CRC disagree.
  std::string spliced = full.substr(0, 20 + 5 + 71 + 4) + shorter.substr(20 + 5 + 71 + 4);
  EXPECT_EQ(code(spliced), absl::StatusCode::kDataLoss);
}

TEST(ExportFileTest, RefusesVersionsOutOfOrderEvenWithValidCrcs) {
  ExportedPg e = Sample();
  std::swap(e.entries[0], e.entries[1]);
  auto d = DecodeExport(EncodeExport(e));
  EXPECT_EQ(d.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("is not after"));
  ExportedPg t = Sample();
  t.entries_trimmed_to = {9, 9};  // entries would survive their trim
  EXPECT_EQ(DecodeExport(EncodeExport(t)).status().code(), absl::StatusCode::kDataLoss);
}

// Single-PG exports of different sizes, none near half of them all.
std::vector<std::string> Members() {
  std::vector<std::string> out;
  for (int n : {10, 25, 3, 0, 18}) {
    ExportedPg e = Sample();
    e.pg.seed = static_cast<uint32_t>(n);
    e.entries.clear();
    for (int i = 1; i <= n; ++i) {
      e.entries.push_back({{7, static_cast<uint64_t>(i)}, std::string(100, 'a' + i % 26)});
    }
    out.push_back(EncodeExport(e));
  }
  return out;
}

// A sink that keeps what it is given and the size of each write.
struct RecordingSink {
  std::string bytes;
  std::vector<size_t> writes;
  ExportAllWriter::Sink sink() {
    return [this](std::string_view b) {
      bytes.append(b);
      writes.push_back(b.size());
      return absl::OkStatus();
    };
  }
};

TEST(ExportAllWriterTest, StreamsTheBytesOfEncodeExportAll) {
  const std::vector<std::string> members = Members();
  RecordingSink rec;
  ExportAllWriter w(rec.sink());
  ASSERT_TRUE(w.Begin(static_cast<uint32_t>(members.size())).ok());
  for (const std::string& m : members) ASSERT_TRUE(w.Add(m).ok());
  ASSERT_TRUE(w.Finish().ok());
  const std::string whole = EncodeExportAll(members);
  EXPECT_TRUE(rec.bytes == whole);
  EXPECT_EQ(w.bytes(), whole.size());
  auto d = DecodeExportAny(rec.bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), members.size());
  for (size_t i = 0; i < members.size(); ++i) EXPECT_TRUE(EncodeExport((*d)[i]) == members[i]);
  // No members: the header alone.
  RecordingSink none;
  ExportAllWriter w0(none.sink());
  ASSERT_TRUE(w0.Begin(0).ok());
  ASSERT_TRUE(w0.Finish().ok());
  EXPECT_TRUE(none.bytes == EncodeExportAll({}));
  EXPECT_EQ(none.bytes.size(), kExportHeaderSize);
}

// The writer holds nothing back: each Add has handed its member to the sink
// before it returns, in writes no larger than the member, so a caller that
// drops a member after Add holds one PG's export at a time. A writer that
// built the file first and wrote it at Finish fails every check here.
TEST(ExportAllWriterTest, HandsEachMemberOnBeforeTheNext) {
  const std::vector<std::string> members = Members();
  RecordingSink rec;
  ExportAllWriter w(rec.sink());
  ASSERT_TRUE(w.Begin(static_cast<uint32_t>(members.size())).ok());
  EXPECT_EQ(rec.bytes.size(), kExportHeaderSize);
  size_t largest = 0, expected = kExportHeaderSize;
  for (const std::string& m : members) {
    ASSERT_TRUE(w.Add(m).ok());
    expected += 8 + m.size();
    EXPECT_EQ(rec.bytes.size(), expected);
    EXPECT_TRUE(std::string_view(rec.bytes).substr(rec.bytes.size() - m.size()) == m);
    largest = std::max(largest, m.size());
  }
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(rec.bytes.size(), expected);  // Finish writes nothing
  std::vector<size_t> want = {kExportHeaderSize};
  for (const std::string& m : members) {
    want.push_back(8);
    want.push_back(m.size());
  }
  EXPECT_EQ(rec.writes, want);
  EXPECT_LE(*std::max_element(rec.writes.begin(), rec.writes.end()), largest);
  EXPECT_LT(largest, rec.bytes.size() / 2);  // so the bound is not the file's size
}

TEST(ExportAllWriterTest, TheFirstErrorStopsIt) {
  const std::vector<std::string> members = Members();
  int calls = 0;
  ExportAllWriter w([&](std::string_view) {
    return ++calls == 4 ? absl::UnavailableError("disk full") : absl::OkStatus();
  });
  ASSERT_TRUE(w.Begin(static_cast<uint32_t>(members.size())).ok());
  ASSERT_TRUE(w.Add(members[0]).ok());
  // The second member's length is the fourth write.
  EXPECT_EQ(w.Add(members[1]), absl::UnavailableError("disk full"));
  EXPECT_EQ(w.Add(members[2]), absl::UnavailableError("disk full"));
  EXPECT_EQ(w.Finish(), absl::UnavailableError("disk full"));
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(w.bytes(), kExportHeaderSize + 8 + members[0].size());
}

TEST(ExportAllWriterTest, RefusesCallsOutOfOrder) {
  const std::vector<std::string> members = Members();
  auto sink = [](std::string_view) { return absl::OkStatus(); };
  {
    ExportAllWriter w(sink);
    EXPECT_EQ(w.Add(members[0]).code(), absl::StatusCode::kInternal);  // before Begin
  }
  {
    ExportAllWriter w(sink);
    ASSERT_TRUE(w.Begin(1).ok());
    ASSERT_TRUE(w.Add(members[0]).ok());
    absl::Status s = w.Add(members[1]);  // more than the header announces
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(s.message(), HasSubstr("past the 1 PGs the header announces"));
  }
  {
    ExportAllWriter w(sink);
    ASSERT_TRUE(w.Begin(2).ok());
    ASSERT_TRUE(w.Add(members[0]).ok());
    absl::Status s = w.Finish();  // fewer
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(s.message(), HasSubstr("announces 2 PGs and 1 were added"));
  }
}

TEST(LayoutSvgTest, ThousandPgsOnA100GiBPartition) {
  LayoutInput in;
  in.title = "big";
  in.chunk_size = 1 << 20;
  in.chunk_count = (100ull << 30) / in.chunk_size;  // 102,400 chunks
  uint32_t next = 0;
  for (uint32_t i = 0; i < 1000; ++i) {
    LayoutInput::Pg pg;
    pg.id = PgId{1, i, -1};
    const uint32_t n = 2 + i % 7;
    for (uint32_t k = 0; k < n; ++k) pg.chunks.push_back((next += 37) % in.chunk_count);
    pg.head_chunk = pg.chunks.front();
    pg.tail_chunk = pg.chunks.back();
    in.pgs.push_back(std::move(pg));
  }
  LayoutOptions o;
  const std::string svg = RenderLayoutSvg(in, o);
  // At most max_cells cells, aggregated; a legend with the largest PGs and
  // the count of the rest; a size a browser opens without trouble.
  const auto cells = std::count(svg.begin(), svg.end(), '\n');
  EXPECT_LT(svg.size(), 8u << 20);
  EXPECT_GT(cells, 1000);
  std::smatch m;
  std::regex re("([0-9]+) chunks per cell");
  ASSERT_TRUE(std::regex_search(svg, m, re));
  EXPECT_EQ(std::stoul(m[1]), (in.chunk_count + o.max_cells - 1) / o.max_cells);
  EXPECT_THAT(svg, HasSubstr("and 960 more PGs"));
  EXPECT_THAT(svg, HasSubstr("102400 chunks of 1.0 MiB, 1000 PGs"));
  EXPECT_EQ(svg, RenderLayoutSvg(in, o)) << "deterministic";
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(LayoutSvgTest, MarksConflictsAndEmptyPartitions) {
  LayoutInput in;
  in.chunk_count = 8;
  in.chunk_size = 65536;
  in.pgs.push_back({PgId{1, 1, -1}, {0, 1}, 0, 1});
  in.pgs.push_back({PgId{1, 2, -1}, {1, 5}, 1, 5});
  const std::string svg = RenderLayoutSvg(in, LayoutOptions());
  EXPECT_THAT(svg, HasSubstr("CLAIMED BY TWO PGS"));
  LayoutInput none;
  EXPECT_THAT(RenderLayoutSvg(none, LayoutOptions()), HasSubstr("</svg>"));
}

TEST(LayoutSvgTest, ColoursDifferForNeighbours) {
  std::set<std::string> colours;
  for (uint32_t i = 0; i < 64; ++i) colours.insert(PgColour(PgId{1, i, -1}));
  EXPECT_GT(colours.size(), 60u);
  EXPECT_EQ(PgColour(PgId{1, 7, -1}), PgColour(PgId{1, 7, -1}));
  EXPECT_TRUE(std::regex_match(PgColour(PgId{2, 3, 1}), std::regex("#[0-9a-f]{6}")));
}

TEST(ToolParseTest, PgIdsAndVersions) {
  EXPECT_EQ(*ParsePgId("1.2a"), (PgId{1, 0x2a, -1}));
  EXPECT_EQ(*ParsePgId("3.1fs0"), (PgId{3, 0x1f, 0}));
  EXPECT_FALSE(ParsePgId("1").ok());
  EXPECT_FALSE(ParsePgId("x.1").ok());
  EXPECT_EQ(*ParseVersion("12'345"), (Version{12, 345}));
  EXPECT_EQ(*ParseVersion("12.345"), (Version{12, 345}));
  EXPECT_FALSE(ParseVersion("12").ok());
  EXPECT_FALSE(ParseVersion("-1'2").ok());
  EXPECT_FALSE(ParseVersion("1'-2").ok());
  EXPECT_FALSE(ParseVersion("99999999999'1").ok());
}

TEST(ToolProblemTest, Formatting) {
  VerifyProblem p;
  p.kind = "record-crc";
  p.pg = PgId{1, 0x2a};
  p.chunk = 7;
  p.offset = 8192;
  p.lpos = 73728;
  p.message = "CRC mismatch";
  EXPECT_EQ(p.ToString(), "PG 1.2a: chunk 7, offset 8192 (lpos 73728): record-crc: CRC mismatch");
  VerifyProblem u;
  u.kind = "unhomed-missing";
  u.pg = PgId{1, 1};
  u.lpos = 8192;
  u.stream_lpos = 4096;
  u.message = "m";
  EXPECT_EQ(u.ToString(), "PG 1.1: (lpos 8192, stream lpos 4096): unhomed-missing: m");
  VerifyProblem s;
  s.kind = "meta-damaged";
  s.message = "x";
  EXPECT_EQ(s.ToString(), "meta-damaged: x");
  s.offset = 0;
  EXPECT_EQ(s.ToString(), "partition offset 0: meta-damaged: x");
}

TEST(ToolCommandsTest, RunsInProcess) {
  std::ostringstream out, err;
  const char* argv[] = {"pgring-tool", "--help"};
  EXPECT_EQ(pgring::RunTool(2, argv, out, err, false), 0);
  EXPECT_THAT(out.str(), HasSubstr("Subcommands:"));
  std::ostringstream out2, err2;
  const char* bad[] = {"pgring-tool", "--dev",          "/nonexistent/x",
                       "--db",        "/nonexistent/y", "list-pgs"};
  EXPECT_EQ(pgring::RunTool(6, bad, out2, err2, false), 2);
  EXPECT_THAT(err2.str(), HasSubstr("/nonexistent/x"));
}

}  // namespace
}  // namespace pgring::tool
