// transfer.h — export one PG's log to a file and import it into a store
// (the file format is export_file.h, specified in docs/FORMAT.md, "Export
// file").
#ifndef PGRING_TOOL_TRANSFER_H_
#define PGRING_TOOL_TRANSFER_H_

#include <string>

#include "tool/command.h"
#include "tool/tool_common.h"

namespace pgring::tool {

// `export --pg P --file F` / `export --all --file F`: writes the PG (or
// every PG, in one file of several: export_file.h) to F (replaced
// atomically: written to F.tmp, synced, renamed; an error part way removes
// F.tmp), or to standard output with `--file -` (the summary then goes to
// standard error, so stdout holds the file alone). Each PG is written as
// soon as it is read, so memory is bounded by one PG's export. Refuses a
// PG whose log is damaged.
//
// `export-remove --pg P --file F` (as ceph-objectstore-tool's): the same
// export, then, once the file is durable (or standard output flushed), the
// PG is removed; the PG is checked to be unchanged (its counts and last
// version) before it is removed. --dry-run writes nothing.
class ExportCommand : public Command {
 public:
  ExportCommand()
      : Command("export",
                "write one PG's log (entries, dups, info), or every PG's, to a portable file") {}
  bool writes() const override { return remove_; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 protected:
  ExportCommand(std::string_view name, std::string_view help) : Command(name, help), remove_(true) {}

 private:
  const bool remove_ = false;
  std::string pg_, file_;
  bool all_ = false;
  bool dry_run_ = false;
};

class ExportRemoveCommand final : public ExportCommand {
 public:
  ExportRemoveCommand()
      : ExportCommand("export-remove", "export one PG to a file, then remove it from the store") {}
};

// `import --file F [--pg P]`: reads and verifies the whole of F (`-`:
// standard input), then creates the PG (P, or the PG the file names; every
// PG of an `export --all` file, under their own ids) through the public
// Transaction API. Refuses a damaged or foreign file, an empty input, and a
// PG that already exists, before changing anything; if one PG of several
// fails, the PGs this run imported are removed again. --dry-run checks all
// of that and writes nothing.
class ImportCommand final : public Command {
 public:
  ImportCommand()
      : Command("import", "create a PG from an export file (as a new PG; it must not exist)") {}
  bool writes() const override { return true; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string file_;
  std::string pg_;  // empty: the file's PG
  bool dry_run_ = false;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_TRANSFER_H_
