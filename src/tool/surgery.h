// surgery.h — the commands that write a store through the public API: mkfs,
// and the offline surgery trim, rewind and remove-pg. Surgery requires the
// explicit --yes-i-really-mean-it (`confirmed`); without it nothing is opened
// and the command exits 2.
#ifndef PGRING_TOOL_SURGERY_H_
#define PGRING_TOOL_SURGERY_H_

#include <cstdint>
#include <string>

#include "tool/tool_common.h"

namespace pgring::tool {

struct MkfsArgs {
  uint64_t chunk_size = 1 << 20;
  uint64_t size = 0;             // 0: the whole device
  std::string backend = "ring";  // "ring" or "rocksdb"
  bool force = false;
};
int MkfsCommand(const ToolContext& ctx, const MkfsArgs& args);

// Drops the PG's entries with versions <= `to` (Transaction::Trim).
int TrimCommand(const ToolContext& ctx, const std::string& pg, const std::string& to,
                bool confirmed);
// Drops the PG's entries with versions > `to` (Transaction::Rewind).
int RewindCommand(const ToolContext& ctx, const std::string& pg, const std::string& to,
                  bool confirmed);
// Removes the PG and frees its chunks; works on a PG that is damaged.
int RemovePgCommand(const ToolContext& ctx, const std::string& pg, bool confirmed);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_SURGERY_H_
