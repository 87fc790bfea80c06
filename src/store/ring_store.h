// ring_store.h — the ring backend: each PG's log in a ring of chunks on the
// partition, RocksDB holding only pointers and chunk lists.
//
// Submit() stages a transaction under one lock (validation, positions, record
// encoding, chunk reservation — microseconds), queues its ring writes (one at
// a time per PG, so a rewritten tail block is never written twice at once)
// and hands it to the CommitPipeline, which commits groups of ready
// transactions with one flush and one synced RocksDB write.
#ifndef PGRING_STORE_RING_STORE_H_
#define PGRING_STORE_RING_STORE_H_

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "util/sync.h"
#include "alloc/chunk_allocator.h"
#include "device/block_device.h"
#include "format/label.h"
#include "log/pg_log.h"
#include "log/ring_layout.h"
#include "meta/meta_keys.h"
#include "pgring/store.h"
#include "store/commit_pipeline.h"
#include "store/metadata_db.h"

namespace pgring {

// A ring write: one transaction's record for one PG (block-aligned).
struct RingWrite {
  std::shared_ptr<PgLog> pg;
  std::shared_ptr<CommitPipeline::Txn> txn;
  std::vector<Extent> extents;
  std::shared_ptr<AlignedBuffer> buffer;
  uint64_t end_lpos = 0;  // lpos just past the record
};

class RingStore final : public Store {
 public:
  // Opens the ring store on an opened device and metadata DB; recovers.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
      const Label& label, const StoreMeta& meta, const Options& options);
  ~RingStore() override;

  absl::Status Submit(Transaction txn, CommitCallback done) override;
  absl::Status Sync() override;
  // The partition device's Plug()/Unplug() (block_device.h).
  void PlugWrites() override { device_->Plug(); }
  void UnplugWrites() override { device_->Unplug(); }
  absl::StatusOr<std::vector<PgId>> ListPgs() const override;
  absl::StatusOr<std::vector<LogEntry>> ReadEntries(const PgId& pg, const Version& from,
                                                    const Version& to) const override;
  absl::StatusOr<std::string> ReadInfo(const PgId& pg) const override;
  absl::StatusOr<std::vector<LogEntry>> ReadDups(const PgId& pg) const override;
  absl::StatusOr<PgStats> GetPgStats(const PgId& pg) const override;
  StoreStats GetStoreStats() const override;
  Backend backend() const override { return Backend::kRing; }
  absl::Status Close() override;

  // The metadata DB (the fio engine reads its RocksDB statistics).
  const MetadataDb* metadata_db() const { return db_.get(); }

 private:
  struct Touch;
  RingStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
            const Label& label, const StoreMeta& meta, const Options& options);
  absl::Status Recover();
  absl::Status RecoverPg(PgLog* pg);
  absl::StatusOr<std::shared_ptr<PgLog>> FindPg(const PgId& pg) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status ReserveRing(PgLog* pg, uint64_t end, std::vector<uint32_t>* allocated)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<RingWrite> PlanWrite(PgLog* pg, uint64_t pos, const std::string& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartWrite(const std::shared_ptr<RingWrite>& w);
  void WriteDone(const std::shared_ptr<RingWrite>& w, const absl::Status& s);
  absl::Status WaitWritten(PgLog* pg, uint64_t lpos) const;
  // Reads the items of the records from `first` through the one at `last`.
  absl::Status ReadRecords(PgLog* pg, uint64_t first, uint64_t last,
                           const std::function<void(uint64_t, std::string_view)>& fn) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CheckWritable() const;

  const Options options_;
  std::shared_ptr<LogSink> log_;
  std::shared_ptr<BlockDevice> device_;
  std::unique_ptr<MetadataDb> db_;
  const Label label_;
  const Geometry geo_;
  ChunkAllocator alloc_;

  mutable Mutex mu_;  // the staging lock
  StoreMeta meta_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PgId, std::shared_ptr<PgLog>> pgs_ ABSL_GUARDED_BY(mu_);
  uint64_t live_items_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;

  std::unique_ptr<CommitPipeline> pipeline_;
  std::atomic<uint64_t> record_bytes_{0};
  std::atomic<uint64_t> payload_bytes_{0};
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_STORE_H_
