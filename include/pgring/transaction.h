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
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/write_batch.h>

#include "absl/status/status.h"
#include "pgring/types.h"

namespace pgring {

// Holds a transaction's commit until the embedder's own writes are done, so
// an OSD can write object data in parallel with the log records and still
// commit both atomically:
//
//   auto gate = std::make_shared<pgring::CommitGate>();
//   txn.WaitFor(gate);
//   store->Submit(std::move(txn), done);   // ring writes start now
//   data_device.WriteAsync(..., [gate](absl::Status s) { gate->Open(s); });
//
// A gate opened with an error fails the transaction, and (because later
// transactions on the same PGs were staged on top of it) the store: errors
// are sticky until reopen, as for any failed write.
class CommitGate {
 public:
  CommitGate() = default;
  CommitGate(const CommitGate&) = delete;
  CommitGate& operator=(const CommitGate&) = delete;

  // Opens the gate; call once. Runs the waiting commit step inline.
  void Open(absl::Status status = absl::OkStatus());

  // For the backends: runs `fn` when the gate opens (now, if it is open).
  void OnOpen(std::function<void(absl::Status)> fn);

 private:
  std::mutex mu_;
  bool open_ = false;
  absl::Status status_;
  std::vector<std::function<void(absl::Status)>> waiters_;
};

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

  // The commit also waits for `gate` to open (see CommitGate).
  void WaitFor(std::shared_ptr<CommitGate> gate) { gates_.push_back(std::move(gate)); }
  const std::vector<std::shared_ptr<CommitGate>>& gates() const { return gates_; }

  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const;
  // The batch, or null if batch() was never called. Used by the backends.
  rocksdb::WriteBatch* batch_if_any() const { return batch_.get(); }
  // Takes the batch (null if batch() was never called). Used by the backends.
  std::unique_ptr<rocksdb::WriteBatch> ReleaseBatch() { return std::move(batch_); }

 private:
  std::vector<Op> ops_;
  std::unique_ptr<rocksdb::WriteBatch> batch_;
  std::vector<std::shared_ptr<CommitGate>> gates_;
};

}  // namespace pgring

#endif  // PGRING_TRANSACTION_H_
