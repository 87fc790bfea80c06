// tool_db.h — the RocksDB a pgring-tool command opens, and where in it the
// store's keys are: the --db directory, and in it the default column family
// or the one --column-family names (ldb's option: an OSD that embeds pgring,
// as the README recommends, keeps pgring's keys in a column family of its
// own RocksDB through MetadataLocation::SharedDb).
//
// With neither --column-family nor --live the library opens the RocksDB
// itself (MetadataLocation::OwnDb, BlueStore's options); otherwise the tool
// opens it here and hands the library the column family
// (MetadataLocation::SharedDb). Opening:
//   read-only   OpenForReadOnly with the default family and the named one;
//   read-write  Open with every column family the RocksDB has (RocksDB
//               requires all of them), each with default options: a column
//               family whose options matter to its own readers (a merge
//               operator) is only read by pgring-tool, never merged;
//   create      (mkfs) the directory and the column family if missing;
//   secondary   (--live) OpenAsSecondary with a private, temporary
//               secondary directory, caught up with the primary once: a
//               running process keeps the LOCK, and a secondary instance
//               reads its files without it. What it sees is the primary's
//               state when the catch-up ran; later writes are not seen.
#ifndef PGRING_TOOL_TOOL_DB_H_
#define PGRING_TOOL_TOOL_DB_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "check/offline_store.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "tool/tool_common.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace pgring::tool {

class ToolDb {
 public:
  enum class Mode { kReadOnly, kReadWrite, kCreate };

  // Opens ctx.db for `mode` (kReadOnly with ctx.live: as a secondary).
  // kNotFound: no RocksDB at the path, or no column family ctx.column_family
  // in it (the message names it and lists the families there are);
  // kUnavailable: held by another process (read-write). kInvalidArgument:
  // --live with a mode that writes.
  static absl::StatusOr<std::unique_ptr<ToolDb>> Open(const ToolContext& ctx, Mode mode);
  ~ToolDb();
  ToolDb(const ToolDb&) = delete;
  ToolDb& operator=(const ToolDb&) = delete;

  // Where the library finds the store's keys; valid while this lives.
  MetadataLocation location() const;

 private:
  ToolDb() = default;

  std::string path_;
  rocksdb::DB* db_ = nullptr;  // null: the library opens path_ (OwnDb)
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* cf_ = nullptr;
  std::string secondary_dir_;  // removed when closed
};

// A store opened through the library (Store::Open) on the tool's RocksDB;
// `store` is closed before `db`.
struct LibraryStore {
  std::unique_ptr<ToolDb> db;
  std::unique_ptr<Store> store;
};

// Opens ctx.dev + the store's keys (ToolDb) through Store::Open with
// `options` (read-only when options.read_only; with ctx.live, the partition
// without its flock). Errors are the library's, explained
// (ExplainOpenError: "in use by another process").
absl::StatusOr<LibraryStore> OpenLibraryStore(const ToolContext& ctx, const Options& options);

// Opens ctx.dev and, if ctx.db is not empty, the store's keys there
// (ToolDb: the column family ctx.column_family; with ctx.live, without the
// partition's flock and as a secondary RocksDB) as an OfflineStore
// (check/offline_store.h), which keeps the ToolDb. Errors are
// OfflineStore's, explained (ExplainOpenError: "in use by another
// process"), and ToolDb's.
absl::StatusOr<std::unique_ptr<OfflineStore>> OpenOfflineStore(const ToolContext& ctx,
                                                               bool writable);

// How messages name the store's RocksDB: "RocksDB at PATH", with
// ", column family 'NAME'" when --column-family names one.
std::string DbName(const ToolContext& ctx);

// Whether a command must open the RocksDB itself (ToolDb) rather than let
// the library open it from the path.
inline bool NeedsToolDb(const ToolContext& ctx) {
  return !ctx.column_family.empty() || ctx.live;
}

}  // namespace pgring::tool

#endif  // PGRING_TOOL_TOOL_DB_H_
