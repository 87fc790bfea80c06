#include "tool/commands.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "tool/command.h"
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
    "'in use by another process'); commands that write take them exclusively.\n"
    "Exit status: 0 OK; 1 the command failed or found problems; 2 bad usage or\n"
    "the store could not be opened.";

// Subcommand help says how the whole command line looks.
class ToolFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() != nullptr) {
      name = "pgring-tool [--dev PATH] [--db PATH] [--format text|json] " + name;
    }
    return CLI::Formatter::make_usage(app, name);
  }
};

// Until each command is a class of its own: a command whose function prints
// its own output and returns the exit status.
class PrintingCommand final : public Command {
 public:
  PrintingCommand(const char* name, const char* help, std::string footer,
                  std::function<void(CLI::App*)> options,
                  std::function<int(const ToolContext&)> run)
      : name_(name), help_(help), footer_(std::move(footer)), options_(std::move(options)),
        run_(std::move(run)) {}
  std::string_view name() const override { return name_; }
  std::string_view help() const override { return help_; }
  std::string_view footer() const override { return footer_; }
  void AddOptions(CLI::App* app) override {
    if (options_) options_(app);
  }
  CommandResult Run(const ToolContext& ctx) const override {
    CommandResult r;
    r.exit_code = run_(ctx);
    return r;
  }

 private:
  const char* name_;
  const char* help_;
  std::string footer_;
  std::function<void(CLI::App*)> options_;
  std::function<int(const ToolContext&)> run_;
};

constexpr char kYes[] = "--yes-i-really-mean-it";
constexpr char kYesHelp[] = "required: this changes the store";

}  // namespace

std::vector<std::unique_ptr<Command>> AllCommands() {
  std::vector<std::unique_ptr<Command>> c;
  auto printing = [&c](const char* name, const char* help, std::string footer,
                       std::function<void(CLI::App*)> options,
                       std::function<int(const ToolContext&)> run) {
    c.push_back(std::make_unique<PrintingCommand>(name, help, std::move(footer),
                                                  std::move(options), std::move(run)));
  };
  auto mkfs = std::make_shared<MkfsArgs>();
  printing(
      "mkfs", "make a new, empty store on --dev with its metadata in --db", "",
      [mkfs](CLI::App* a) {
        a->add_option("--chunk-size", mkfs->chunk_size, "chunk size (power of two, 64K..256M)")
            ->transform(CLI::AsSizeValue(false))
            ->capture_default_str();
        a->add_option("--size", mkfs->size, "bytes of the device to use (default: all)")
            ->transform(CLI::AsSizeValue(false));
        a->add_option("--backend", mkfs->backend, "ring (default) or rocksdb")
            ->check(CLI::IsMember({"ring", "rocksdb"}));
        a->add_flag("--force", mkfs->force, "overwrite an existing pgring label or store");
      },
      [mkfs](const ToolContext& ctx) { return MkfsCommand(ctx, *mkfs); });
  c.push_back(std::make_unique<ShowLabelCommand>());
  c.push_back(std::make_unique<FsckCommand>());
  c.push_back(std::make_unique<RepairCommand>());
  c.push_back(std::make_unique<ListPgsCommand>());
  c.push_back(std::make_unique<InfoCommand>());
  c.push_back(std::make_unique<LogCommand>());
  c.push_back(std::make_unique<DupsCommand>());
  c.push_back(std::make_unique<StatsCommand>());
  struct LayoutArgs {
    std::string svg;
    LayoutOptions layout;
  };
  auto layout = std::make_shared<LayoutArgs>();
  printing(
      "layout", "draw the partition as SVG: chunks coloured by PG, heads and tails marked", "",
      [layout](CLI::App* a) {
        a->add_option("--out", layout->svg, "the SVG file to write")->required();
        a->add_option("--max-cells", layout->layout.max_cells,
                      "at most this many cells; more chunks are aggregated per cell")
            ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 20))
            ->capture_default_str();
      },
      [layout](const ToolContext& ctx) { return LayoutCommand(ctx, layout->svg, layout->layout); });
  struct PgArgs {
    std::string pg, to, file;
    bool yes = false;
  };
  auto exp = std::make_shared<PgArgs>();
  printing(
      "export", "write one PG's log (entries, dups, info) to a portable file", "",
      [exp](CLI::App* a) {
        a->add_option("--pg", exp->pg, "PG id")->required();
        a->add_option("--file", exp->file, "the file to write")->required();
      },
      [exp](const ToolContext& ctx) { return ExportCommand(ctx, exp->pg, exp->file); });
  auto imp = std::make_shared<PgArgs>();
  printing(
      "import", "create a PG from an export file (as a new PG; it must not exist)", "",
      [imp](CLI::App* a) {
        a->add_option("--file", imp->file, "the export file")->required();
        a->add_option("--pg", imp->pg, "import under this PG id instead of the file's");
      },
      [imp](const ToolContext& ctx) { return ImportCommand(ctx, imp->file, imp->pg); });
  auto trim = std::make_shared<PgArgs>();
  printing(
      "trim", "drop a PG's entries up to a version", "",
      [trim](CLI::App* a) {
        a->add_option("--pg", trim->pg, "PG id")->required();
        a->add_option("--to", trim->to, "drop entries with versions <= this")->required();
        a->add_flag(kYes, trim->yes, kYesHelp);
      },
      [trim](const ToolContext& ctx) { return TrimCommand(ctx, trim->pg, trim->to, trim->yes); });
  auto rewind = std::make_shared<PgArgs>();
  printing(
      "rewind", "drop a PG's entries after a version (a divergent tail)", "",
      [rewind](CLI::App* a) {
        a->add_option("--pg", rewind->pg, "PG id")->required();
        a->add_option("--to", rewind->to, "drop entries with versions > this")->required();
        a->add_flag(kYes, rewind->yes, kYesHelp);
      },
      [rewind](const ToolContext& ctx) {
        return RewindCommand(ctx, rewind->pg, rewind->to, rewind->yes);
      });
  auto remove = std::make_shared<PgArgs>();
  printing(
      "remove-pg", "remove a PG and free its chunks", "",
      [remove](CLI::App* a) {
        a->add_option("--pg", remove->pg, "PG id")->required();
        a->add_flag(kYes, remove->yes, kYesHelp);
      },
      [remove](const ToolContext& ctx) { return RemovePgCommand(ctx, remove->pg, remove->yes); });
  return c;
}

int RunTool(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            bool stderr_is_tty) {
  CLI::App app(kDescription, "pgring-tool");
  app.require_subcommand(1, 1);
  app.fallthrough();
  app.formatter(std::make_shared<ToolFormatter>());
  app.get_formatter()->column_width(34);
  app.get_formatter()->label("REQUIRED", "(required)");

  ToolContext ctx;
  ctx.out = &out;
  ctx.err = &err;
  std::string format = "text";
  std::string progress = "auto";
  app.add_option("--dev", ctx.dev, "the store's partition (block device or file)");
  app.add_option("--db", ctx.db, "the store's RocksDB directory");
  app.add_option("--format", format, "output of read commands: text or json")
      ->check(CLI::IsMember({"text", "json"}));
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
        if (a == "--dev" || a == "--db" || a == "--format" || a == "--progress") {
          ++i;
          continue;
        }
        if (!a.empty() && a[0] != '-') {
          what = "unknown command '" + a + "'";
          break;
        }
      }
    }
    return Fail(ctx, what + " (see pgring-tool" + cmd + " --help)", kExitUsage);
  }
  ctx.format = format == "json" ? OutputFormat::kJson : OutputFormat::kText;
  ctx.progress = progress == "always" || (progress == "auto" && stderr_is_tty);
  if (ctx.dev.empty()) {
    return Fail(ctx, "no partition given: add --dev PATH (see pgring-tool --help)", kExitUsage);
  }
  if (selected == nullptr) {
    return Fail(ctx, "no command given (see pgring-tool --help)", kExitUsage);
  }
  return Render(ctx, selected->Run(ctx));
}

}  // namespace pgring::tool
