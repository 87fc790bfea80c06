// pgring/transaction.h — a batch of PG log operations committed atomically,
// together with whatever RocksDB keys the embedder adds to its write batch.
//
// Example (an OSD write):
//   pgring::Transaction txn;
//   txn.AppendEntry(pg, {12, 345}, encoded_pg_log_entry);
//   txn.SetInfo(pg, encoded_fastinfo);
//   txn.batch()->Put(onode_cf, onode_key, onode_value);  // the OSD's own keys
//   store->Submit(std::move(txn), [](absl::Status s) { ... });
#ifndef PGRING_TRANSACTION_H_
#define PGRING_TRANSACTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/write_batch.h>

#include "pgring/types.h"

namespace pgring {

class Transaction {
 public:
  // The operations, applied in the order they were added.
  enum class OpType : uint8_t {
    kCreatePg,    // make an empty PG; fails if it exists
    kRemovePg,    // drop the PG and free its chunks; fails if it is missing
    kAppendEntry, // append (version, payload); version > every live entry's
    kSetInfo,     // replace the PG info blob (latest wins)
    kAppendDup,   // append a dup entry; version > every live dup's
    kTrimDups,    // drop dups with version <= `version`
    kTrim,        // drop entries with version <= `version`
    kRewind,      // drop entries with version > `version` (divergent tail)
    kResetLog,    // drop every entry and dup (a new authoritative log follows)
  };
  struct Op {
    OpType type;
    PgId pg;
    Version version;
    std::string payload;
  };

  Transaction();
  ~Transaction();
  Transaction(Transaction&&) noexcept;
  Transaction& operator=(Transaction&&) noexcept;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void CreatePg(const PgId& pg);
  void RemovePg(const PgId& pg);
  void AppendEntry(const PgId& pg, const Version& v, std::string_view payload);
  void SetInfo(const PgId& pg, std::string_view info);
  void AppendDup(const PgId& pg, const Version& v, std::string_view payload);
  void TrimDups(const PgId& pg, const Version& up_to);
  void Trim(const PgId& pg, const Version& up_to);
  void Rewind(const PgId& pg, const Version& to);
  void ResetLog(const PgId& pg);

  // The embedder's own keys, committed in the same RocksDB write as the log
  // pointers. The batch must only touch the embedder's column families (or,
  // when pgring owns its RocksDB, the default column family under keys that
  // do not start with pgring's prefix "pgring.").
  rocksdb::WriteBatch* batch();

  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const;
  // The batch, or null if batch() was never called. Used by the backends.
  rocksdb::WriteBatch* batch_if_any() const { return batch_.get(); }
  // Takes the batch (null if batch() was never called). Used by the backends.
  std::unique_ptr<rocksdb::WriteBatch> ReleaseBatch() { return std::move(batch_); }

 private:
  std::vector<Op> ops_;
  std::unique_ptr<rocksdb::WriteBatch> batch_;
};

}  // namespace pgring

#endif  // PGRING_TRANSACTION_H_
