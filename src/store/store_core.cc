#include "store/store_core.h"

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>

#include <cstdint>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "util/store_stats_fields.h"

namespace pgring {
namespace {

constexpr std::string_view kRocksDbPrefix = "rocksdb.";
constexpr std::string_view kStorePrefix = "pgring.";
constexpr std::string_view kStatsProperty = "pgring.stats";
constexpr std::string_view kTickersProperty = "pgring.rocksdb_tickers";

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace

StoreCore::StoreCore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
                     const Options& options)
    : options_(options),
      log_(options.log_sink ? options.log_sink : StderrLogSink()),
      device_(std::move(device)),
      db_(std::move(db)) {}

void StoreCore::StartPipeline(BlockDevice* device, CommitPipeline::LogWriter* log_writer) {
  pipeline_ =
      std::make_unique<CommitPipeline>(db_->db(), device, options_, log_.get(), log_writer);
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
  ctxn->gates = gates.size();
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
  s->device_writes = device_->writes();
}

StoreMetrics StoreCore::GetMetrics() const {
  StoreMetrics m;
  m.stats = GetStoreStats();
  if (pipeline_) pipeline_->AddMetrics(&m);
  if (const auto& st = db_->statistics(); st != nullptr) {
    m.rocksdb_bytes_written = st->getTickerCount(rocksdb::BYTES_WRITTEN);
    m.rocksdb_keys_written = st->getTickerCount(rocksdb::NUMBER_KEYS_WRITTEN);
    m.rocksdb_wal_bytes = st->getTickerCount(rocksdb::WAL_FILE_BYTES);
  }
  return m;
}

bool StoreCore::GetProperty(std::string_view property, std::string* value) const {
  if (property.starts_with(kRocksDbPrefix)) {
    return db_->db()->GetProperty(db_->cf(), ToSlice(property), value);
  }
  if (!property.starts_with(kStorePrefix)) return false;
  // The name first: the counters walk every PG under the staging lock.
  if (property == kStatsProperty) {
    const StoreStats stats = GetStoreStats();
    value->clear();
    for (const StoreStatsField& f : kStoreStatsFields) absl::StrAppend(value, f.name, ": ", stats.*f.field, "\n");
    return true;
  }
  const std::string_view name = property.substr(kStorePrefix.size());
  for (const StoreStatsField& f : kStoreStatsFields) {
    if (name == f.name) {
      *value = absl::StrCat(GetStoreStats().*f.field);
      return true;
    }
  }
  return false;
}

bool StoreCore::GetMapProperty(std::string_view property,
                               std::map<std::string, std::string>* value) const {
  if (property.starts_with(kRocksDbPrefix)) {
    return db_->db()->GetMapProperty(db_->cf(), ToSlice(property), value);
  }
  if (property == kStatsProperty) {
    const StoreStats stats = GetStoreStats();
    value->clear();
    for (const StoreStatsField& f : kStoreStatsFields) {
      (*value)[std::string(f.name)] = absl::StrCat(stats.*f.field);
    }
    return true;
  }
  if (property == kTickersProperty) {
    std::map<std::string, uint64_t> tickers;
    if (db_->statistics() == nullptr || !db_->statistics()->getTickerMap(&tickers)) return false;
    value->clear();
    for (const auto& [name, count] : tickers) (*value)[name] = absl::StrCat(count);
    return true;
  }
  return false;
}

absl::Status StoreCore::Sync() {
  {
    ReaderMutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
  }
  return pipeline_->Sync();
}

absl::Status StoreCore::Close() {
  {
    MutexLock l(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
  }
  StopBackgroundWork();
  absl::Status s;
  if (pipeline_) {
    s = pipeline_->Sync();
    WaitForWrites();
    pipeline_->Stop();
  }
  return s;
}

}  // namespace pgring
