// The tool library in-process: the export file codec byte for byte (round
// trip, and one test per kind of damage), the SVG layout at the scale the
// issue asks for (1,000 PGs on a 100 GiB partition), PG colours, argument
// parsing and problem formatting.
#include <gmock/gmock.h>

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
