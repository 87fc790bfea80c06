#include "pgring/transaction.h"

#include <rocksdb/write_batch.h>

namespace pgring {

void CommitGate::Open(absl::Status status) {
  std::vector<std::function<void(absl::Status)>> run;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (open_) return;
    open_ = true;
    status_ = status;
    run.swap(waiters_);
  }
  for (auto& fn : run) fn(status);
}

void CommitGate::OnOpen(std::function<void(absl::Status)> fn) {
  absl::Status status;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!open_) {
      waiters_.push_back(std::move(fn));
      return;
    }
    status = status_;
  }
  fn(status);
}

Transaction::Transaction() = default;
Transaction::~Transaction() = default;
Transaction::Transaction(Transaction&&) noexcept = default;
Transaction& Transaction::operator=(Transaction&&) noexcept = default;

void Transaction::CreatePg(const PgId& pg) { ops_.push_back({OpType::kCreatePg, pg, {}, {}}); }
void Transaction::RemovePg(const PgId& pg) { ops_.push_back({OpType::kRemovePg, pg, {}, {}}); }
void Transaction::AppendEntry(const PgId& pg, const Version& v, std::string_view payload) {
  ops_.push_back({OpType::kAppendEntry, pg, v, std::string(payload)});
}
void Transaction::SetInfo(const PgId& pg, std::string_view info) {
  ops_.push_back({OpType::kSetInfo, pg, {}, std::string(info)});
}
void Transaction::AppendDup(const PgId& pg, const Version& v, std::string_view payload) {
  ops_.push_back({OpType::kAppendDup, pg, v, std::string(payload)});
}
void Transaction::TrimDups(const PgId& pg, const Version& up_to) {
  ops_.push_back({OpType::kTrimDups, pg, up_to, {}});
}
void Transaction::Trim(const PgId& pg, const Version& up_to) {
  ops_.push_back({OpType::kTrim, pg, up_to, {}});
}
void Transaction::Rewind(const PgId& pg, const Version& to) {
  ops_.push_back({OpType::kRewind, pg, to, {}});
}
void Transaction::ResetLog(const PgId& pg) { ops_.push_back({OpType::kResetLog, pg, {}, {}}); }

rocksdb::WriteBatch* Transaction::batch() {
  if (!batch_) batch_ = std::make_unique<rocksdb::WriteBatch>();
  return batch_.get();
}

bool Transaction::empty() const { return ops_.empty() && (!batch_ || batch_->Count() == 0); }

}  // namespace pgring
