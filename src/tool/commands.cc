// commands.cc — pgring-tool's command line (pgring/tool.h): builds it
// (CLI11) from the command list (command.h), runs the command asked for and
// prints its result (render.h).
#include "pgring/tool.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "tool/ceph/decode_command.h"
#include "absl/strings/str_cat.h"
#include "tool/command.h"
#include "tool/expand.h"
#include "tool/fsck.h"
#include "tool/inspect.h"
#include "tool/layout_svg.h"
#include "tool/render.h"
#include "tool/repair.h"
#include "tool/surgery.h"
#include "tool/tool_common.h"
#include "tool/transfer.h"

namespace pgring::tool {
namespace {

constexpr char kDescription[] =
    "pgring-tool: inspect, check, repair and operate on a pgring store offline.\n"
    "A store is a partition (--dev) and a RocksDB (--db). Read commands open both\n"
    "read-only (a shared lock: a store another process has open is refused as\n"
    "'in use by another process', unless --live); commands that write take them\n"
    "exclusively.\n"
    "Exit status: 0 OK; 1 the command failed or found problems; 2 bad usage or\n"
    "the store could not be opened. Every command that writes takes --dry-run.\n"
    "\n"
    "Terms: lpos, a byte position in a PG's log (it only grows; the PG's chunk\n"
    "list maps it to the partition); lap, lpos / chunk size, carried by each\n"
    "record so a record left from an earlier use of a chunk is never read as\n"
    "current; stamp, the store-wide number a PG gets when it is created (never\n"
    "reused), carried by each of its records; head and tail, the lpos of the\n"
    "oldest record that still matters and just past the last committed one.\n"
    "Units in column headers: (B) bytes, (lpos) a position, (hex) bytes in hex.";

// Subcommand help says how the whole command line looks.
class ToolFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() != nullptr) {
      name = "pgring-tool [--dev PATH] [--db PATH] [--column-family NAME] "
             "[--format text|json|json-pretty] " +
             name;
    }
    return CLI::Formatter::make_usage(app, name);
  }
};

constexpr char kLiveNote[] =
    "the store may be in use (--live): this view was read while it may be running and may be "
    "behind what it has committed since (RocksDB read as a secondary instance, caught up once; "
    "the partition read without its lock: a record being written may read as damaged)";

// Says so at the top of a --live command's output, text and JSON.
void NoteLiveView(CommandResult* r) {
  TextOutput text;
  text.Line(absl::StrCat("note: ", kLiveNote));
  for (const TextBlock& b : r->text.blocks()) text.Add(b);
  r->text = std::move(text);
  if (r->json.is_object()) {
    Json j;
    j["live_view"] = kLiveNote;
    for (auto& [k, v] : r->json.items()) j[k] = std::move(v);
    r->json = std::move(j);
  }
}

}  // namespace

std::vector<std::unique_ptr<Command>> AllCommands() {
  std::vector<std::unique_ptr<Command>> c;
  c.push_back(std::make_unique<MkfsCommand>());
  c.push_back(std::make_unique<ShowLabelCommand>());
  c.push_back(std::make_unique<FsckCommand>());
  c.push_back(std::make_unique<RepairCommand>());
  c.push_back(std::make_unique<ListPgsCommand>());
  c.push_back(std::make_unique<InfoCommand>());
  c.push_back(std::make_unique<LogCommand>());
  c.push_back(std::make_unique<DupsCommand>());
  c.push_back(std::make_unique<StatsCommand>());
  c.push_back(std::make_unique<LayoutCommand>());
  c.push_back(std::make_unique<ExportCommand>());
  c.push_back(std::make_unique<ExportRemoveCommand>());
  c.push_back(std::make_unique<ImportCommand>());
  c.push_back(std::make_unique<TrimCommand>());
  c.push_back(std::make_unique<RewindCommand>());
  c.push_back(std::make_unique<TrimDupsCommand>());
  c.push_back(std::make_unique<RemovePgCommand>());
  c.push_back(std::make_unique<DecodeCommand>());
  c.push_back(std::make_unique<ExpandCommand>());
  return c;
}

namespace {

int RunCommandLine(int argc, const char* const* argv, std::istream& in, std::ostream& out,
                   std::ostream& err, bool stderr_is_tty) {
  CLI::App app(kDescription, "pgring-tool");
  app.require_subcommand(1, 1);
  app.fallthrough();
  app.formatter(std::make_shared<ToolFormatter>());
  app.get_formatter()->column_width(34);
  app.get_formatter()->label("REQUIRED", "(required)");

  ToolContext ctx;
  ctx.in = &in;
  ctx.out = &out;
  ctx.err = &err;
  std::string format = "text";
  std::string progress = "auto";
  app.add_option("--dev", ctx.dev, "the store's partition (block device or file)");
  app.add_option("--db", ctx.db, "the store's RocksDB directory");
  app.add_option("--column-family", ctx.column_family,
                 "the RocksDB column family holding the store's keys (default: the default "
                 "family; as ldb's option)");
  app.add_flag("--live", ctx.live,
               "read a store another process has open (read-only commands): the RocksDB as a "
               "secondary, the partition without its lock; the output says the view may be "
               "behind");
  app.add_option("--format", format,
                 "output: text, or json (indented; json-pretty is the same, as Ceph's tools "
                 "name it)")
      ->check(CLI::IsMember({"text", "json", "json-pretty"}));
  app.add_option("--progress", progress,
                 "progress on stderr for long operations: auto (when stderr is a terminal), "
                 "always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  const std::vector<std::unique_ptr<Command>> commands = AllCommands();
  const Command* selected = nullptr;
  for (const auto& command : commands) {
    // The global options may follow the command too (fallthrough).
    CLI::App* sub = app.add_subcommand(std::string(command->name()), std::string(command->help()));
    sub->fallthrough();
    if (!command->footer().empty()) sub->footer(std::string(command->footer()));
    command->AddOptions(sub);
    sub->callback([&selected, c = command.get()] { selected = c; });
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    // The help of the command it was asked for (or the general one).
    CLI::App* target = &app;
    for (CLI::App* sub : app.get_subcommands()) target = sub;
    out << target->help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::string cmd;
    for (CLI::App* sub : app.get_subcommands()) cmd = " " + sub->get_name();
    if (cmd.empty()) {
      // CLI11 says "A subcommand is required" for a misspelt one: name it.
      for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--dev" || a == "--db" || a == "--column-family" || a == "--format" ||
            a == "--progress") {
          ++i;
          continue;
        }
        if (!a.empty() && a[0] != '-') {
          what = "unknown command '" + a + "'";
          break;
        }
      }
    }
    return PrintError(ctx, what + " (see pgring-tool" + cmd + " --help)", kExitUsage);
  }
  ctx.format = format == "text" ? OutputFormat::kText : OutputFormat::kJson;
  ctx.progress = progress == "always" || (progress == "auto" && stderr_is_tty);
  if (ctx.dev.empty() && (selected == nullptr || selected->needs_store())) {
    return PrintError(ctx, "no partition given: add --dev PATH (see pgring-tool --help)",
                      kExitUsage);
  }
  if (selected == nullptr) {
    return PrintError(ctx, "no command given (see pgring-tool --help)", kExitUsage);
  }
  if (ctx.live && selected->writes()) {
    return PrintError(ctx,
                      absl::StrCat("--live is for commands that only read; ", std::string(selected->name()),
                                   " changes the store, which needs the store not in use"),
                      kExitUsage);
  }
  CommandResult r = selected->Run(ctx);
  if (ctx.live) NoteLiveView(&r);
  return Render(ctx, r);
}

}  // namespace
}  // namespace pgring::tool

namespace pgring {

int RunTool(int argc, const char* const* argv, std::istream& in, std::ostream& out,
            std::ostream& err, bool stderr_is_tty) {
  return tool::RunCommandLine(argc, argv, in, out, err, stderr_is_tty);
}

int RunTool(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            bool stderr_is_tty) {
  return tool::RunCommandLine(argc, argv, std::cin, out, err, stderr_is_tty);
}

}  // namespace pgring
