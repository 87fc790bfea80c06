// store_core.h — what every backend's Store shares around its own staging:
// the options, the partition device, the metadata DB, the commit pipeline,
// the staging lock and its closed flag, the writability check, Sync and
// Close, the properties (Store::GetProperty), and the wiring of a
// transaction's commit gates (the embedder's writes) into the pipeline.
// PgStore<Pg> (pg_store.h) derives from it with the PGs and the reads both
// backends answer alike; each backend derives from that with its staging.
#ifndef PGRING_STORE_STORE_CORE_H_
#define PGRING_STORE_STORE_CORE_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/block_device.h"
#include "pgring/log_sink.h"
#include "pgring/store.h"
#include "store/commit_pipeline.h"
#include "store/metadata_db.h"
#include "util/sync.h"

namespace pgring {

class StoreCore : public Store {
 public:
  ~StoreCore() override = default;

  absl::Status Sync() final;
  // Refuses further transactions, waits for every submitted one to commit
  // and stops the pipeline. Idempotent.
  absl::Status Close() final;

  StoreMetrics GetMetrics() const final;

  // The names are documented in pgring/store.h.
  bool GetProperty(std::string_view property, std::string* value) const final;
  bool GetMapProperty(std::string_view property,
                      std::map<std::string, std::string>* value) const final;

  // The metadata DB (tests look at its RocksDB options).
  const MetadataDb& metadata_db() const { return *db_; }

 protected:
  StoreCore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
            const Options& options);

  // Starts the pipeline once the backend has recovered (`device`: the
  // partition its records go to, or null when it writes none).
  void StartPipeline(BlockDevice* device, CommitPipeline::LogWriter* log_writer = nullptr);

  // OK when the store takes transactions: not opened read-only, and no
  // earlier commit failed (failures are sticky until a reopen).
  absl::Status CheckWritable() const;
  // kFailedPrecondition once Close() has begun.
  absl::Status CheckOpen() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Stops what the backend runs beside the transactions it is given (Close,
  // once no more are taken, before the pipeline's Sync): its transactions
  // still commit.
  virtual void StopBackgroundWork() {}

  // Waits until no write the store issued is in flight (Close, after the
  // pipeline's Sync: a failed store's transactions fail without waiting
  // for their writes, whose completions call into the store).
  virtual void WaitForWrites() {}

  // Adds the commit pipeline's and the partition device's counters to `s`.
  void AddCommitStats(StoreStats* s) const;

  // Counts the transaction's gates as I/Os it waits for, then drops the
  // submitter's guard: call after the transaction is enqueued and its own
  // writes started, outside the staging lock.
  void WaitForGatesAndRelease(const std::shared_ptr<CommitPipeline::Txn>& ctxn,
                              const std::vector<std::shared_ptr<CommitGate>>& gates);

  const Options options_;
  const std::shared_ptr<LogSink> log_;
  const std::shared_ptr<BlockDevice> device_;
  const std::unique_ptr<MetadataDb> db_;
  std::unique_ptr<CommitPipeline> pipeline_;

  mutable Mutex mu_;  // the staging lock; reads take it shared
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// The StoreCore behind a store this library opened (Mkfs/Store::Open make
// only StoreCores). For tests, on stores they opened that way: a Store
// subclassed outside the library is not one.
inline const StoreCore& CoreOf(const Store& store) { return static_cast<const StoreCore&>(store); }

}  // namespace pgring

#endif  // PGRING_STORE_STORE_CORE_H_
