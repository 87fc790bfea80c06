#include "store/store_core.h"

#include "absl/strings/str_cat.h"

namespace pgring {

StoreCore::StoreCore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
                     const Options& options)
    : options_(options),
      log_(options.log_sink ? options.log_sink : StderrLogSink()),
      device_(std::move(device)),
      db_(std::move(db)) {}

void StoreCore::StartPipeline(BlockDevice* device) {
  pipeline_ = std::make_unique<CommitPipeline>(db_->db(), device, options_, log_.get());
}

absl::Status StoreCore::CheckWritable() const {
  if (options_.read_only) return absl::FailedPreconditionError("store is open read-only");
  absl::Status f = pipeline_->failure();
  if (!f.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("store failed earlier and must be reopened: ", f.ToString()));
  }
  return absl::OkStatus();
}

absl::Status StoreCore::CheckOpen() const {
  if (closed_) return absl::FailedPreconditionError("store is closed");
  return absl::OkStatus();
}

void StoreCore::WaitForGatesAndRelease(const std::shared_ptr<CommitPipeline::Txn>& ctxn,
                                       const std::vector<std::shared_ptr<CommitGate>>& gates) {
  for (const auto& gate : gates) {
    gate->OnOpen([this, ctxn](absl::Status s) {
      pipeline_->IoDone(ctxn.get(), s.ok() ? s
                                           : absl::Status(s.code(), absl::StrCat(
                                                 "embedder's write: ", s.message())));
    });
  }
  pipeline_->IoDone(ctxn.get(), absl::OkStatus());  // the submitter's guard
}

void StoreCore::AddCommitStats(StoreStats* s) const {
  s->transactions_committed = pipeline_ ? pipeline_->committed_txns() : 0;
  s->commit_groups = pipeline_ ? pipeline_->commit_groups() : 0;
  s->superseded_key_writes = pipeline_ ? pipeline_->superseded_store_writes() : 0;
  s->device_bytes_written = device_->bytes_written();
  s->device_flushes = device_->flushes();
}

absl::Status StoreCore::Sync() { return pipeline_->Sync(); }

absl::Status StoreCore::Close() {
  {
    MutexLock l(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
  }
  absl::Status s;
  if (pipeline_) {
    s = pipeline_->Sync();
    pipeline_->Stop();
  }
  return s;
}

}  // namespace pgring
