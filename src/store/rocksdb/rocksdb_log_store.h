// rocksdb_log_store.h — the RocksDB backend (Backend::kRocksDb): the PG log
// kept in RocksDB the way BlueStore keeps it, so the ring backend can be
// measured against it side by side. Same public interface and semantics as
// the ring backend; the partition is used for nothing but its label.
//
// Keys (docs/FORMAT.md, "RocksDB backend keys"; encoded in
// format/rocksdb_backend_keys.h) follow BlueStore's pgmeta omap: one key per
// entry named by eversion_t::get_key_name(), "dup_" + that name per dup,
// "_info", and "_state" (the PG exists, its trim points and last-version
// floors), under a per-PG prefix; the store-wide "pgring.meta" is shared
// with the ring backend.
//
// What one transaction writes, per PG it touches, in one WriteBatch:
//   - a Put per appended entry and per appended dup;
//   - a Delete per entry removed by a trim, a rewind or a reset, and per dup
//     removed by a dup trim or a reset (the tombstones BlueStore leaves);
//   - one Put of "_info" if the transaction sets the info (latest wins);
//   - one Put of "_state" if the PG was created or its trim points, last
//     version floors changed (trim, dup trim, effective rewind, reset); not
//     for plain appends, whose versions the keys themselves record;
//   - for PG removal, one DeleteRange over [prefix, prefix with '.'+1)
//     (BlueStore clears an omap object with rm_range_keys; see
//     docs/ROCKSDB_BACKEND.md for how Ceph turns that into deletes).
//
// In memory, as Ceph's PGLog: per PG the versions of the live entries and
// dups with their payload sizes (PgLogState), the
// latest info, the trim points and last versions. Trims therefore know which
// keys to delete without reading. Open rebuilds all of it by iterating every
// key under "pgring.log." (the restart cost). Values of transactions not yet
// durable are kept in a per-PG overlay until their commit, so reads reflect
// every submitted transaction, as the ring backend's do.
//
// Commit: through CommitPipeline with no device (group commit, durability
// modes, embedder batches and CommitGates, sticky failure, in order).
#ifndef PGRING_STORE_ROCKSDB_ROCKSDB_LOG_STORE_H_
#define PGRING_STORE_ROCKSDB_ROCKSDB_LOG_STORE_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "format/label.h"
#include "format/metadata_keys.h"
#include "format/rocksdb_backend_keys.h"
#include "store/metadata_db.h"
#include "store/pg_map.h"
#include "store/pg_store.h"
#include "util/sync.h"

namespace pgring {

// One PG of the RocksDB backend (rocksdb_log_store.cc).
struct RocksDbPg;

class RocksDbLogStore final : public PgStore<RocksDbPg> {
 public:
  // Opens the store on an opened device (label only) and metadata DB, and
  // loads every PG's keys.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
      const Label& label, const StoreMeta& meta, const Options& options);
  ~RocksDbLogStore() override;

  absl::Status Submit(Transaction txn, CommitCallback done) override;
  Backend backend() const override { return Backend::kRocksDb; }

 private:
  using Pg = RocksDbPg;
  struct PgChange;
  struct KeyOp;
  class KeyEffects;
  using Staging = TransactionStaging<Pg, PgChange>;
  RocksDbLogStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
                  const Options& options);
  absl::Status Load();
  absl::Status LoadKey(std::string_view suffix, std::string_view value, Pg* pg, bool* have_state,
                       PgStateValue* state);
  absl::Status FinishLoadPg(Pg* pg, bool have_state, const PgStateValue& state);
  // Turns the staged changes into the transaction's batch and overlay. Nothing fails.
  void FillBatch(const Staging& staging, const std::vector<KeyOp>& key_ops, Transaction* txn,
                 const std::shared_ptr<CommitPipeline::Txn>& ctxn)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<LogEntry>> ReadSlots(Pg* pg, ItemKind kind, size_t i,
                                                  size_t j) const override
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // chunks, ring_bytes_used: 0 (no ring). bytes_written: value bytes put to
  // RocksDB for the PG since open (payloads, info and _state values);
  // payload_bytes_written: the caller's payload bytes among them.
  void AddPgStats(const Pg& pg, PgStats* s) const override;
  // total_chunks, free_chunks, chunk_size: 0 (the partition holds only the
  // label). record_bytes_appended: value bytes put to RocksDB since open.
  void AddStoreStats(StoreStats* s) const override ABSL_SHARED_LOCKS_REQUIRED(mu_);

  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;

  // Guards every Pg's overlay of values not yet durable (Pg::pending_*).
  mutable Mutex pending_mu_ ABSL_ACQUIRED_AFTER(mu_);

  std::atomic<uint64_t> value_bytes_{0};
  std::atomic<uint64_t> payload_bytes_{0};
};

}  // namespace pgring

#endif  // PGRING_STORE_ROCKSDB_ROCKSDB_LOG_STORE_H_
