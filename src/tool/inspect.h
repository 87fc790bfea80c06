// inspect.h — the read commands: show-label, list-pgs, info, log, dups,
// stats. Each works on both backends (the ring backend is read through the
// offline view, which knows where every record lies; the RocksDB backend
// through Store::Open with Options::read_only).
#ifndef PGRING_TOOL_INSPECT_H_
#define PGRING_TOOL_INSPECT_H_

#include <map>
#include <memory>
#include <string_view>

#include "check/offline_store.h"
#include "check/stream_view.h"
#include "pgring/store.h"
#include "tool/ceph/payload_view.h"
#include "tool/command.h"
#include "tool/tool_common.h"
#include "tool/tool_db.h"

namespace pgring::tool {

// A store opened for reading: the ring backend as an OfflineStore (with its
// PG keys loaded), the RocksDB backend as a read-only Store.
struct ReadAccess {
  Backend backend = Backend::kRing;
  std::unique_ptr<OfflineStore> offline;  // ring backend
  Geometry geometry;                      // ring backend
  std::map<PgId, RingPgKeys> ring_pgs;    // ring backend
  StreamKeys stream;                      // ring backend, stream mode
  // Ring backend: the bytes past its homed position of every PG with usable
  // keys that has any, from the log stream (one read at open).
  std::map<PgId, UnhomedBytes> unhomed;
  std::unique_ptr<ToolDb> tool_db;        // RocksDB backend; outlives store
  std::unique_ptr<Store> store;           // RocksDB backend
  std::string uuid;

  // The keys of one ring PG, usable for reading; kNotFound for a missing
  // PG, kDataLoss (naming what) for damaged keys or for bytes the log
  // stream does not hold.
  absl::StatusOr<const RingPgKeys*> RingPg(const PgId& pg) const;
  // A PG's bytes from the log stream (empty when it has none); RingPg(pg)
  // must have succeeded.
  std::string_view Unhomed(const PgId& pg) const;
};

// Opens `ctx.dev` + `ctx.db` read-only and checks that they are one store's.
// Errors are the tool's "cannot open" errors (exit status 2).
absl::StatusOr<ReadAccess> OpenForRead(const ToolContext& ctx);

// Bytes of every file under `path` (the RocksDB's size on disk).
uint64_t DirectoryBytes(const std::string& path);

// `show-label`: the label field by field with its CRC, and with --db the
// metadata it must match.
class ShowLabelCommand final : public Command {
 public:
  ShowLabelCommand()
      : Command("show-label",
                "print the partition's label (and, with --db, the metadata it must match)") {}
  CommandResult Run(const ToolContext& ctx) const override;
};

// `list-pgs`: every PG with its keys (ring) or counts (RocksDB).
class ListPgsCommand final : public Command {
 public:
  ListPgsCommand() : Command("list-pgs", "list the store's PGs") {}
  CommandResult Run(const ToolContext& ctx) const override;
};

// `info --pg P`: one PG's pointer, chunks, counts and info.
class InfoCommand final : public Command {
 public:
  InfoCommand() : Command("info", "one PG: pointers, chunks, counts, info") {}
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string pg_;
  ceph::DecodeMode decode_ = ceph::DecodeMode::kAuto;
};

// `log --pg P [--from V] [--to V] [--max N]`: the entries with versions in
// [from, to], at most N of them.
class LogCommand final : public Command {
 public:
  LogCommand()
      : Command("log",
                "a PG's entries: version, position, length, record CRC, payload (decoded or hex)") {}
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string pg_, from_, to_;  // empty from/to: no bound
  ceph::DecodeMode decode_ = ceph::DecodeMode::kAuto;
  uint64_t max_ = 0;            // 0: no limit
};

// `dups --pg P [--from V] [--to V] [--max N]`: the dup entries, as `log`
// shows entries.
class DupsCommand final : public Command {
 public:
  DupsCommand() : Command("dups", "a PG's dup entries") {}
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string pg_, from_, to_;
  uint64_t max_ = 0;
  ceph::DecodeMode decode_ = ceph::DecodeMode::kAuto;
};

// `stats`: space per PG, free chunks and extents, fragmentation, log bytes
// per payload byte, the RocksDB's size on disk.
class StatsCommand final : public Command {
 public:
  StatsCommand()
      : Command(
            "stats",
            "space per PG, free chunks, fragmentation, log bytes per payload byte, RocksDB size") {}
  CommandResult Run(const ToolContext& ctx) const override;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_INSPECT_H_
