// metadata_db.h — where a store's metadata lives: pgring's own RocksDB opened
// from a path, or a column family of the embedder's RocksDB. The rest of the
// code sees one interface either way.
#ifndef PGRING_STORE_METADATA_DB_H_
#define PGRING_STORE_METADATA_DB_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/store.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Env;
class Statistics;
class WriteBatch;
}  // namespace rocksdb

namespace pgring {

class MetadataDb {
 public:
  // Opens (`create`: creates if missing) pgring's own DB at meta.db_path, or
  // wraps the embedder's DB and column family. `env` replaces the RocksDB
  // Env of an own DB; `rocksdb_options` are its RocksDB options
  // (Options::rocksdb_options; kInvalidArgument naming them if RocksDB
  // refuses them).
  static absl::StatusOr<std::unique_ptr<MetadataDb>> Open(
      const MetadataLocation& meta, bool create, bool read_only, rocksdb::Env* env = nullptr,
      std::string_view rocksdb_options = kBlueStoreRocksDbOptions);
  ~MetadataDb();
  MetadataDb(const MetadataDb&) = delete;
  MetadataDb& operator=(const MetadataDb&) = delete;

  rocksdb::DB* db() const { return db_; }
  rocksdb::ColumnFamilyHandle* cf() const { return cf_; }
  bool owned() const { return owned_ != nullptr; }
  // RocksDB's statistics (tickers such as WAL_FILE_BYTES, FLUSH_WRITE_BYTES,
  // COMPACT_WRITE_BYTES, NUMBER_KEYS_WRITTEN): always on for pgring's own
  // DB; for the embedder's DB, whatever its options set (may be null).
  std::shared_ptr<rocksdb::Statistics> statistics() const { return statistics_; }
  // "RocksDB at /path" or "the embedder's RocksDB, column family 'x'".
  const std::string& description() const { return description_; }

  // nullopt if the key is absent.
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) const;
  // Calls fn(key, value) for each key starting with `prefix`, in order.
  absl::Status Scan(std::string_view prefix,
                    const std::function<absl::Status(std::string_view, std::string_view)>& fn) const;
  absl::Status WriteSync(rocksdb::WriteBatch* batch);

 private:
  MetadataDb() = default;
  std::unique_ptr<rocksdb::DB> owned_;
  rocksdb::DB* db_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_ = nullptr;
  std::shared_ptr<rocksdb::Statistics> statistics_;
  std::string description_;
};

// Converts a RocksDB status to the most specific absl code.
absl::Status FromRocks(const void* rocksdb_status, std::string_view context);

}  // namespace pgring

#endif  // PGRING_STORE_METADATA_DB_H_
