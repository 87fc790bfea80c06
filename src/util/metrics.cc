// HistogramData's percentile and StoreMetrics' names (pgring/metrics.h).
#include "pgring/metrics.h"

#include "util/store_stats_fields.h"

namespace pgring {

uint64_t HistogramData::Percentile(double q) const {
  if (count == 0) return 0;
  uint64_t want = static_cast<uint64_t>(q * static_cast<double>(count) + 0.5);
  if (want == 0) want = 1;
  uint64_t seen = 0;
  for (const Bucket& b : buckets) {
    seen += b.count;
    if (seen >= want) return b.upper;
  }
  return max;  // a snapshot taken mid-record: count ran ahead of the buckets
}

void StoreMetrics::Visit(
    const std::function<void(std::string_view, uint64_t)>& counter,
    const std::function<void(std::string_view, const HistogramData&)>& histogram) const {
  if (counter) {
    for (const StoreStatsField& f : kStoreStatsFields) counter(f.name, stats.*f.field);
    counter("rocksdb_bytes_written", rocksdb_bytes_written);
    counter("rocksdb_keys_written", rocksdb_keys_written);
    counter("rocksdb_wal_bytes", rocksdb_wal_bytes);
  }
  if (histogram) {
    histogram("commit_latency_ns", commit_latency_ns);
    histogram("flush_latency_ns", flush_latency_ns);
    histogram("rocksdb_write_latency_ns", rocksdb_write_latency_ns);
    histogram("gate_wait_ns", gate_wait_ns);
    histogram("group_size", group_size);
  }
}

}  // namespace pgring
