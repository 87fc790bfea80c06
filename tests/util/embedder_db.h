// embedder_db.h — an embedder's own RocksDB for the tests of
// MetadataLocation::SharedDb: the default column family and the families a
// test names, each created if missing, open until Close() or destruction
// (the handles destroyed before the DB closes, as RocksDB requires).
#ifndef PGRING_TESTS_UTIL_EMBEDDER_DB_H_
#define PGRING_TESTS_UTIL_EMBEDDER_DB_H_

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <string>
#include <vector>

#include "pgring/store.h"

namespace pgring::testing {

class EmbedderDb {
 public:
  // Opens the RocksDB at `path` (made if missing) with the default family
  // and `families`, with `options` (create_if_missing and
  // create_missing_column_families forced on). A failure fails the test
  // (EXPECT) and leaves db() null.
  EmbedderDb(const std::string& path, const std::vector<std::string>& families,
             rocksdb::DBOptions options = rocksdb::DBOptions());
  ~EmbedderDb() { Close(); }
  EmbedderDb(const EmbedderDb&) = delete;
  EmbedderDb& operator=(const EmbedderDb&) = delete;

  // Destroys the handles and closes the DB; expects both to succeed. Once.
  void Close();

  rocksdb::DB* db() const { return db_; }
  // handle(0) is the default family, handle(i) families[i - 1].
  rocksdb::ColumnFamilyHandle* handle(size_t i) const { return handles_.at(i); }
  // pgring's keys in handle(i).
  MetadataLocation location(size_t i) const {
    return MetadataLocation::SharedDb(db_, handles_.at(i));
  }

 private:
  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_EMBEDDER_DB_H_
