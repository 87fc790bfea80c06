// transfer.h — export one PG's log to a file and import it into a store
// (the file format is export_file.h, specified in docs/FORMAT.md, "Export
// file").
#ifndef PGRING_TOOL_TRANSFER_H_
#define PGRING_TOOL_TRANSFER_H_

#include <string>

#include "tool/tool_common.h"

namespace pgring::tool {

// Writes PG `pg` of the store to `file` (replaced atomically: written to
// `file`.tmp, synced, renamed). Refuses a PG whose log is damaged.
int ExportCommand(const ToolContext& ctx, const std::string& pg, const std::string& file);

// Reads and verifies the whole of `file`, then creates the PG (as `as_pg`
// if not empty, else the PG the file names) through the public Transaction
// API. Refuses a damaged or foreign file, and a PG that already exists,
// before changing anything.
int ImportCommand(const ToolContext& ctx, const std::string& file, const std::string& as_pg);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_TRANSFER_H_
