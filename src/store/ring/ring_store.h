// ring_store.h — the ring backend: each PG's log in a ring of chunks on the
// partition, RocksDB holding only pointers and chunk lists.
//
// Submit() stages a transaction under one lock (validation, positions, record
// encoding, chunk reservation — microseconds), queues its ring writes (one at
// a time per PG, so a rewritten tail block is never written twice at once)
// and hands it to the CommitPipeline, which commits groups of ready
// transactions with one flush and one synced RocksDB write.
#ifndef PGRING_STORE_RING_RING_STORE_H_
#define PGRING_STORE_RING_RING_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alloc/chunk_allocator.h"
#include "device/block_device.h"
#include "format/label.h"
#include "log/ring_layout.h"
#include "format/metadata_keys.h"
#include "store/commit_pipeline.h"
#include "store/metadata_db.h"
#include "store/pg_map.h"
#include "store/ring/ring_pg.h"
#include "store/pg_store.h"
#include "util/sync.h"

namespace pgring {

class RingStore final : public PgStore<RingPg> {
 public:
  // Opens the ring store on an opened device and metadata DB; recovers.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
      const Label& label, const StoreMeta& meta, const Options& options);
  ~RingStore() override;

  absl::Status Submit(Transaction txn, CommitCallback done) override;
  // The partition device's Plug()/Unplug() (block_device.h).
  void PlugWrites() override { device_->Plug(); }
  void UnplugWrites() override { device_->Unplug(); }
  Backend backend() const override { return Backend::kRing; }

 private:
  struct PgChange;
  using Staging = TransactionStaging<RingPg, PgChange>;
  RingStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
            const Label& label, const StoreMeta& meta, const Options& options);

  // Open.
  absl::Status Recover();
  absl::Status RecoverPg(RingPg* pg);

  // Submit, step by step (all but StartWrites under the staging lock).
  // A new PG with the next stamp.
  absl::StatusOr<std::shared_ptr<RingPg>> NewPg(const PgId& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each touched PG's record, placed at its tail with room reserved.
  absl::Status PlaceRecords(Staging* staging, std::vector<std::string>* records)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PlaceRecord(PgChange* t, std::string* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the PGs' pointers past their records, gives back chunks behind
  // the heads, fills the batch and plans the writes. Nothing fails.
  void CommitPointers(const Staging& staging, const std::vector<std::string>& records,
                      const StoreMeta& old_meta, Transaction* txn,
                      const std::shared_ptr<CommitPipeline::Txn>& ctxn,
                      std::vector<std::shared_ptr<RingWrite>>* writes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReserveRing(RingPg* pg, uint64_t end, std::vector<uint32_t>* allocated)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<RingWrite> PlanWrite(RingPg* pg, uint64_t pos, const std::string& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Ring writes: each PG's in staging order, one at a time.
  void StartWrites(const std::vector<std::shared_ptr<RingWrite>>& writes);
  void StartWrite(const std::shared_ptr<RingWrite>& w);
  void WriteDone(const std::shared_ptr<RingWrite>& w, const absl::Status& s);
  absl::Status WaitWritten(RingPg* pg, uint64_t lpos) const;

  // Reads the items of the records from `first` through the one at `last`.
  absl::Status ReadRecords(RingPg* pg, uint64_t first, uint64_t last,
                           const std::function<void(uint64_t, std::string_view)>& fn) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<LogEntry>> ReadSlots(RingPg* pg, ItemKind kind, size_t i,
                                                  size_t j) const override
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // chunks and ring_bytes_used; bytes written per PG and for the store; the
  // partition's chunk counts.
  void AddPgStats(const RingPg& pg, PgStats* s) const override;
  void AddStoreStats(StoreStats* s) const override;

  const Label label_;
  const Geometry geo_;
  ChunkAllocator alloc_;

  StoreMeta meta_ ABSL_GUARDED_BY(mu_);

  std::atomic<uint64_t> record_bytes_{0};
  std::atomic<uint64_t> payload_bytes_{0};
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_RING_STORE_H_
