#include "store/store_core.h"

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>

#include <cstdint>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace pgring {
namespace {

constexpr std::string_view kRocksDbPrefix = "rocksdb.";
constexpr std::string_view kStorePrefix = "pgring.";
constexpr std::string_view kStatsProperty = "pgring.stats";
constexpr std::string_view kTickersProperty = "pgring.rocksdb_tickers";

// The StoreStats counters under their property names.
struct StatsField {
  const char* name;
  uint64_t StoreStats::*field;
};
constexpr StatsField kStatsFields[] = {
    {"pgs", &StoreStats::pgs},
    {"total_chunks", &StoreStats::total_chunks},
    {"free_chunks", &StoreStats::free_chunks},
    {"chunk_size", &StoreStats::chunk_size},
    {"live_entries", &StoreStats::live_entries},
    {"live_dups", &StoreStats::live_dups},
    {"transactions_committed", &StoreStats::transactions_committed},
    {"commit_groups", &StoreStats::commit_groups},
    {"superseded_key_writes", &StoreStats::superseded_key_writes},
    {"record_bytes_appended", &StoreStats::record_bytes_appended},
    {"payload_bytes_appended", &StoreStats::payload_bytes_appended},
    {"device_bytes_written", &StoreStats::device_bytes_written},
    {"device_flushes", &StoreStats::device_flushes},
    {"mapping_table_bytes", &StoreStats::mapping_table_bytes},
    {"device_writes", &StoreStats::device_writes},
    {"device_seeks", &StoreStats::device_seeks},
    {"stream_chunks", &StoreStats::stream_chunks},
    {"stream_max_chunks", &StoreStats::stream_max_chunks},
    {"stream_bytes_used", &StoreStats::stream_bytes_used},
    {"stream_records", &StoreStats::stream_records},
    {"stream_writes", &StoreStats::stream_writes},
    {"stream_bytes_written", &StoreStats::stream_bytes_written},
    {"home_writes", &StoreStats::home_writes},
    {"home_bytes_written", &StoreStats::home_bytes_written},
    {"forced_homes", &StoreStats::forced_homes},
    {"stream_full_fallbacks", &StoreStats::stream_full_fallbacks},
};
// A counter added to StoreStats must get a name here too.
static_assert(sizeof(StoreStats) == std::size(kStatsFields) * sizeof(uint64_t));

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace

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
  s->device_writes = device_->writes();
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
    for (const StatsField& f : kStatsFields) absl::StrAppend(value, f.name, ": ", stats.*f.field, "\n");
    return true;
  }
  const std::string_view name = property.substr(kStorePrefix.size());
  for (const StatsField& f : kStatsFields) {
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
    for (const StatsField& f : kStatsFields) {
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
  absl::Status s;
  if (pipeline_) {
    s = pipeline_->Sync();
    WaitForWrites();
    pipeline_->Stop();
  }
  return s;
}

}  // namespace pgring
