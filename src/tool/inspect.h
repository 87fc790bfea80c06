// inspect.h — the read commands: show-label, list-pgs, info, log, dups,
// stats. Each prints text by default or JSON (ctx.format), works on both
// backends (the ring backend is read through the offline view, which knows
// where every record lies; the RocksDB backend through Store::Open with
// Options::read_only), and returns the exit status.
#ifndef PGRING_TOOL_INSPECT_H_
#define PGRING_TOOL_INSPECT_H_

#include <map>
#include <memory>

#include "pgring/store.h"
#include "tool/offline_store.h"
#include "tool/tool_common.h"

namespace pgring::tool {

// A store opened for reading: the ring backend as an OfflineStore (with its
// PG keys loaded), the RocksDB backend as a read-only Store.
struct ReadAccess {
  Backend backend = Backend::kRing;
  std::unique_ptr<OfflineStore> offline;  // ring backend
  Geometry geometry;                      // ring backend
  std::map<PgId, RingPgKeys> ring_pgs;    // ring backend
  std::unique_ptr<Store> store;           // RocksDB backend
  std::string uuid;

  // The keys of one ring PG, usable for reading; kNotFound for a missing
  // PG, kDataLoss (naming what) for damaged keys.
  absl::StatusOr<const RingPgKeys*> RingPg(const PgId& pg) const;
};

// Opens `ctx.dev` + `ctx.db` read-only and checks that they are one store's.
// Errors are the tool's "cannot open" errors (exit status 2).
absl::StatusOr<ReadAccess> OpenForRead(const ToolContext& ctx);

// Bytes of every file under `path` (the RocksDB's size on disk).
uint64_t DirectoryBytes(const std::string& path);

int ShowLabelCommand(const ToolContext& ctx);
int ListPgsCommand(const ToolContext& ctx);
int InfoCommand(const ToolContext& ctx, const std::string& pg);
// Entries with versions in [from, to] (empty strings: no bound).
int LogCommand(const ToolContext& ctx, const std::string& pg, const std::string& from,
               const std::string& to);
int DupsCommand(const ToolContext& ctx, const std::string& pg);
int StatsCommand(const ToolContext& ctx);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_INSPECT_H_
