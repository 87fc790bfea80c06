// transfer.h — export one PG's log to a file and import it into a store
// (the file format is export_file.h, specified in docs/FORMAT.md, "Export
// file").
#ifndef PGRING_TOOL_TRANSFER_H_
#define PGRING_TOOL_TRANSFER_H_

#include <string>

#include "tool/command.h"
#include "tool/tool_common.h"

namespace pgring::tool {

// `export --pg P --file F`: writes the PG to F (replaced atomically: written
// to F.tmp, synced, renamed). Refuses a PG whose log is damaged.
class ExportCommand final : public Command {
 public:
  ExportCommand()
      : Command("export", "write one PG's log (entries, dups, info) to a portable file") {}
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string pg_, file_;
};

// `import --file F [--pg P]`: reads and verifies the whole of F, then creates
// the PG (P, or the PG the file names) through the public Transaction API.
// Refuses a damaged or foreign file, and a PG that already exists, before
// changing anything.
class ImportCommand final : public Command {
 public:
  ImportCommand()
      : Command("import", "create a PG from an export file (as a new PG; it must not exist)") {}
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string file_;
  std::string pg_;  // empty: the file's PG
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_TRANSFER_H_
