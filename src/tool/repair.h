// repair.h — fixes what can be fixed without losing committed data, says
// what it did, and refuses (naming why) to touch the rest.
//
// Fixes (each is a problem fsck marks fixable):
//   label-damaged      pgring.meta holds every field of the label: the label
//                      is written again from it.
//   chunk-beyond-tail  chunks a ring's list holds past the tail's chunk are
//                      dropped from the list (they become free).
//   past-tail (note)   uncommitted data past a PG's committed tail is zeroed
//                      (never read, but a salvage tool might mistake it).
// Refuses: damage inside a committed range (records between a head and a
// tail), chunks owned twice or out of range, damaged or missing keys, a
// damaged pgring.meta, a partition and RocksDB of different stores, a
// truncated partition. PGs with a refused problem are not touched at all.
#ifndef PGRING_TOOL_REPAIR_H_
#define PGRING_TOOL_REPAIR_H_

#include "tool/command.h"
#include "tool/tool_common.h"

namespace pgring::tool {

struct RepairOptions {
  bool dry_run = false;  // say what would be done; open read-only
};

// `repair [--dry-run]`. Exit status: 0 when the store is clean afterwards (or
// already was), 1 when something was refused, 2 when the store cannot be
// opened.
class RepairCommand final : public Command {
 public:
  RepairCommand();
  bool writes() const override { return true; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  RepairOptions options_;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_REPAIR_H_
