// The tool's renderers (src/tool/render.h) on hand-built results: every
// command's output goes through them, so a table that loses its alignment, a
// JSON document that is not the result's, or an error printed twice would
// change every command at once. Also the command registry's shape.
#include <gmock/gmock.h>

#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "tool/command.h"
#include "tool/render.h"

namespace pgring::tool {
namespace {

std::string Text(const TextOutput& t) {
  std::ostringstream out;
  RenderText(t, out);
  return out.str();
}

TEST(ToolRenderTest, TableColumnsAlign) {
  Table t;
  t.columns = {Column::Left("PG", 6, 0), Column::Right("CHUNKS", 7), Column::Right("N", 4),
               Column::Left("STATUS", 0, 2)};
  t.AddRow({"1.0", "1", "20", "ok"});
  t.AddRow({"2.1f", "12", "3", "damaged"});
  TextOutput out;
  out.Add(std::move(t));
  EXPECT_EQ(Text(out),
            "PG      CHUNKS    N  STATUS\n"
            "1.0          1   20  ok\n"
            "2.1f        12    3  damaged\n");
}

TEST(ToolRenderTest, TableCellsOverflowAndShortRowsSpanTheRest) {
  Table t;
  t.columns = {Column::Left("PG", 4, 0), Column::Right("USED", 4), Column::Left("STATUS", 0, 2)};
  t.AddRow({"1.2a", "123456", "ok"});           // wider than its column: printed whole
  t.AddRow({"3.1fs0", "keys cannot be read"});  // two cells of three: the last spans
  TextOutput out;
  out.Add(std::move(t));
  EXPECT_EQ(Text(out),
            "PG   USED  STATUS\n"
            "1.2a 123456  ok\n"
            "3.1fs0 keys cannot be read\n");
}

TEST(ToolRenderTest, LinesKeyValuesAndProblemsInOrder) {
  TextOutput out;
  out.Line("PG 1.0 (ring backend)");
  KeyValues kv;
  kv.indent = 2;
  kv.key_width = 8;
  kv.Add("stamp", "1");
  kv.Add("a-long-key", "v");  // at least one space, whatever the width
  out.Add(std::move(kv));
  VerifyProblem p;
  p.kind = "label-damaged";
  p.offset = 0;
  p.message = "CRC mismatch";
  ProblemList ps;
  ps.Add("refused", p, {"why: damage"});
  ps.Add("", p);
  out.Add(std::move(ps));
  out.Line("result: 1 problem");
  EXPECT_EQ(Text(out),
            "PG 1.0 (ring backend)\n"
            "  stamp   1\n"
            "  a-long-key v\n"
            "refused: partition offset 0: label-damaged: CRC mismatch\n"
            "    why: damage\n"
            "partition offset 0: label-damaged: CRC mismatch\n"
            "result: 1 problem\n");
}

struct Rendered {
  int exit_code;
  std::string out, err;
};

Rendered RenderIn(OutputFormat format, const CommandResult& r) {
  std::ostringstream out, err;
  ToolContext ctx;
  ctx.format = format;
  ctx.out = &out;
  ctx.err = &err;
  const int code = Render(ctx, r);
  return {code, out.str(), err.str()};
}

CommandResult Sample() {
  CommandResult r;
  r.exit_code = kExitFailed;
  r.json["backend"] = "ring";
  r.json["pgs"] = Json::array({{{"pg", "1.0"}, {"used_bytes", 485}}});
  r.json["ratio"] = 1.5;
  r.text.Line("the text form");
  return r;
}

TEST(ToolRenderTest, JsonIsTheDocumentAlone) {
  const CommandResult r = Sample();
  const Rendered got = RenderIn(OutputFormat::kJson, r);
  EXPECT_EQ(got.exit_code, kExitFailed);
  EXPECT_EQ(got.err, "");
  EXPECT_EQ(got.out, r.json.dump(2) + "\n");
  EXPECT_EQ(Json::parse(got.out), r.json);
  // Keys keep the order the command gave them.
  EXPECT_LT(got.out.find("backend"), got.out.find("pgs"));
  EXPECT_LT(got.out.find("pgs"), got.out.find("ratio"));
}

TEST(ToolRenderTest, TextIsTheTextFormAlone) {
  const Rendered got = RenderIn(OutputFormat::kText, Sample());
  EXPECT_EQ(got.exit_code, kExitFailed);
  EXPECT_EQ(got.out, "the text form\n");
  EXPECT_EQ(got.err, "");
}

TEST(ToolRenderTest, AnErrorIsOneLineAndTheExitCode) {
  const CommandResult r =
      CommandResult::Failure(absl::NotFoundError("PG 1.9 does not exist\nat all"), kExitUsage);
  for (OutputFormat f : {OutputFormat::kText, OutputFormat::kJson}) {
    const Rendered got = RenderIn(f, r);
    EXPECT_EQ(got.exit_code, kExitUsage);
    EXPECT_EQ(got.out, "");
    EXPECT_EQ(got.err, "pgring-tool: error: PG 1.9 does not exist at all\n");
  }
}

TEST(ToolRenderTest, NonUtf8BytesInJsonAreReplaced) {
  CommandResult r;
  r.json["file"] = std::string("a\xff");
  const Rendered got = RenderIn(OutputFormat::kJson, r);
  EXPECT_EQ(Json::parse(got.out)["file"], "a\xef\xbf\xbd");  // U+FFFD
}

TEST(ToolCommandRegistryTest, EveryCommandOnceWithHelp) {
  std::set<std::string> names;
  for (const auto& c : AllCommands()) {
    EXPECT_FALSE(c->help().empty()) << c->name();
    EXPECT_TRUE(names.insert(std::string(c->name())).second) << c->name();
  }
  EXPECT_EQ(names, (std::set<std::string>{"mkfs", "show-label", "fsck", "repair", "list-pgs",
                                          "info", "log", "dups", "stats", "layout", "export",
                                          "export-remove", "import", "trim", "rewind",
                                          "trim-dups", "remove-pg", "expand", "decode"}));
}

// A command that writes takes --dry-run (and is refused with --live).
TEST(ToolCommandRegistryTest, EveryCommandThatWritesTakesDryRun) {
  for (const auto& c : AllCommands()) {
    CLI::App app;
    c->AddOptions(&app);
    const bool dry_run = app.get_option_no_throw("--dry-run") != nullptr;
    EXPECT_EQ(dry_run, c->writes()) << c->name();
  }
}

}  // namespace
}  // namespace pgring::tool
