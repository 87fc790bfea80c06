#include "tool/commands.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "tool/fsck.h"
#include "tool/inspect.h"
#include "tool/layout_svg.h"
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

constexpr char kFsckFooter[] =
    "Shallow checks: the label; the UUID and geometry binding between the label and\n"
    "pgring.meta; the partition's size; every pgring RocksDB key (each PG's pointer and\n"
    "chunk list, stamps); chunk ownership (every chunk number in range, in at most one\n"
    "list, once; no list holding chunks past its tail's chunk).\n"
    "--deep also reads every record between each PG's head and tail: length, CRC, type,\n"
    "PG stamp, lap, consecutive sequence, the last sequence against the pointer, and the\n"
    "items (entry and dup versions strictly increasing, the info); and notes uncommitted\n"
    "data past a tail. fsck reports every problem (PG, chunk, offset, lpos, what), never\n"
    "only the first. A PG whose keys are unusable is not read further, so one damage is\n"
    "reported once.\n"
    "Leaked chunks: pgring does not store a free map; a chunk is free exactly when no PG's\n"
    "chunk list names it, so a chunk cannot leak on disk. fsck reports owned + free =\n"
    "chunk_count, and flags what would make that count wrong: chunk numbers past the\n"
    "label's chunk_count, a chunk in two lists, chunks a list holds past what its ring\n"
    "needs.\n"
    "Exit status: 0 clean, 1 problems found, 2 usage error or the store cannot be opened.";

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

}  // namespace

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

  std::function<int()> run;
  // A command; the global options may follow it too.
  auto command = [&](const char* name, const char* description) {
    CLI::App* sub = app.add_subcommand(name, description);
    sub->fallthrough();
    return sub;
  };

  // --- mkfs
  MkfsArgs mkfs;
  auto* c_mkfs = command("mkfs", "make a new, empty store on --dev with its metadata in --db");
  c_mkfs->add_option("--chunk-size", mkfs.chunk_size, "chunk size (power of two, 64K..256M)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  c_mkfs->add_option("--size", mkfs.size, "bytes of the device to use (default: all)")
      ->transform(CLI::AsSizeValue(false));
  c_mkfs->add_option("--backend", mkfs.backend, "ring (default) or rocksdb")
      ->check(CLI::IsMember({"ring", "rocksdb"}));
  c_mkfs->add_flag("--force", mkfs.force, "overwrite an existing pgring label or store");
  c_mkfs->callback([&] { run = [&] { return MkfsCommand(ctx, mkfs); }; });

  // --- show-label
  auto* c_label = command(
      "show-label", "print the partition's label (and, with --db, the metadata it must match)");
  c_label->callback([&] { run = [&] { return ShowLabelCommand(ctx); }; });

  // --- fsck
  FsckOptions fsck;
  auto* c_fsck = command("fsck", "check the store; report every problem");
  c_fsck->add_flag("--deep", fsck.deep, "also read and verify every committed record");
  c_fsck->footer(kFsckFooter);
  c_fsck->callback([&] { run = [&] { return FsckCommand(ctx, fsck); }; });

  // --- repair
  RepairOptions repair;
  auto* c_repair =
      command("repair", "fix what can be fixed without losing committed data; refuse the rest");
  c_repair->add_flag("--dry-run", repair.dry_run, "only say what would be done");
  c_repair->footer(
      "Fixes: a damaged label (written again from pgring.meta); chunks a PG's list holds\n"
      "past its tail's chunk (given back); uncommitted data past a PG's tail (zeroed).\n"
      "Refuses, naming the reason: damage inside a committed range, chunks owned twice\n"
      "or out of range, damaged keys or metadata, a partition of another store.\n"
      "Exit status: 0 the store is clean now, 1 something was refused, 2 cannot open.");
  c_repair->callback([&] { run = [&] { return RepairCommand(ctx, repair); }; });

  // --- list-pgs, info, log, dups, stats
  auto* c_list = command("list-pgs", "list the store's PGs");
  c_list->callback([&] { run = [&] { return ListPgsCommand(ctx); }; });

  std::string pg, from, to, file;
  auto* c_info = command("info", "one PG: pointers, chunks, counts, info");
  c_info->add_option("--pg", pg, "PG id, e.g. 1.2a")->required();
  c_info->callback([&] { run = [&] { return InfoCommand(ctx, pg); }; });

  auto* c_log =
      command("log", "a PG's entries: version, position, length, record CRC, payload (hex)");
  c_log->add_option("--pg", pg, "PG id, e.g. 1.2a")->required();
  c_log->add_option("--from", from, "first version (EPOCH'VERSION or EPOCH.VERSION)");
  c_log->add_option("--to", to, "last version");
  c_log->callback([&] { run = [&] { return LogCommand(ctx, pg, from, to); }; });

  auto* c_dups = command("dups", "a PG's dup entries");
  c_dups->add_option("--pg", pg, "PG id, e.g. 1.2a")->required();
  c_dups->callback([&] { run = [&] { return DupsCommand(ctx, pg); }; });

  auto* c_stats =
      command("stats",
              "space per PG, free chunks, fragmentation, log bytes per payload byte, RocksDB size");
  c_stats->callback([&] { run = [&] { return StatsCommand(ctx); }; });

  // --- layout
  std::string svg;
  LayoutOptions layout;
  auto* c_layout =
      command("layout", "draw the partition as SVG: chunks coloured by PG, heads and tails marked");
  c_layout->add_option("--out", svg, "the SVG file to write")->required();
  c_layout
      ->add_option("--max-cells", layout.max_cells,
                   "at most this many cells; more chunks are aggregated per cell")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 20))
      ->capture_default_str();
  c_layout->callback([&] { run = [&] { return LayoutCommand(ctx, svg, layout); }; });

  // --- export / import
  auto* c_export = command("export", "write one PG's log (entries, dups, info) to a portable file");
  c_export->add_option("--pg", pg, "PG id")->required();
  c_export->add_option("--file", file, "the file to write")->required();
  c_export->callback([&] { run = [&] { return ExportCommand(ctx, pg, file); }; });

  auto* c_import =
      command("import", "create a PG from an export file (as a new PG; it must not exist)");
  c_import->add_option("--file", file, "the export file")->required();
  c_import->add_option("--pg", pg, "import under this PG id instead of the file's");
  c_import->callback([&] { run = [&] { return ImportCommand(ctx, file, pg); }; });

  // --- surgery
  bool yes = false;
  constexpr char kYes[] = "--yes-i-really-mean-it";
  constexpr char kYesHelp[] = "required: this changes the store";
  auto* c_trim = command("trim", "drop a PG's entries up to a version");
  c_trim->add_option("--pg", pg, "PG id")->required();
  c_trim->add_option("--to", to, "drop entries with versions <= this")->required();
  c_trim->add_flag(kYes, yes, kYesHelp);
  c_trim->callback([&] { run = [&] { return TrimCommand(ctx, pg, to, yes); }; });

  auto* c_rewind = command("rewind", "drop a PG's entries after a version (a divergent tail)");
  c_rewind->add_option("--pg", pg, "PG id")->required();
  c_rewind->add_option("--to", to, "drop entries with versions > this")->required();
  c_rewind->add_flag(kYes, yes, kYesHelp);
  c_rewind->callback([&] { run = [&] { return RewindCommand(ctx, pg, to, yes); }; });

  auto* c_remove = command("remove-pg", "remove a PG and free its chunks");
  c_remove->add_option("--pg", pg, "PG id")->required();
  c_remove->add_flag(kYes, yes, kYesHelp);
  c_remove->callback([&] { run = [&] { return RemovePgCommand(ctx, pg, yes); }; });

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
  if (!run) return Fail(ctx, "no command given (see pgring-tool --help)", kExitUsage);
  return run();
}

}  // namespace pgring::tool
