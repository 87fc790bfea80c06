// pgring/metrics.h — what an OSD turns into its perf counters: the store's
// counters and its latency and size distributions, in one snapshot
// (Store::GetMetrics), each under a stable name.
//
// Distributions are log-linear histograms: values below 32 are exact; above,
// every power of two is split into 32 buckets, so a percentile read from one
// is within 3% of the true value. Recording costs a few relaxed atomic
// increments; a snapshot copies the buckets and takes no lock the write path
// takes.
//
//   pgring::StoreMetrics m = store->GetMetrics();
//   m.Visit([&](std::string_view name, uint64_t v) { perf.set(name, v); },
//           [&](std::string_view name, const pgring::HistogramData& h) {
//             perf.set_hist(name, h.Percentile(0.99), h.count);
//           });
#ifndef PGRING_METRICS_H_
#define PGRING_METRICS_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "pgring/types.h"  // StoreStats

namespace pgring {

// A distribution at the time of the snapshot.
struct HistogramData {
  struct Bucket {
    uint64_t upper = 0;  // the largest value the bucket holds
    uint64_t count = 0;
  };
  uint64_t count = 0;
  uint64_t sum = 0;
  uint64_t max = 0;
  std::vector<Bucket> buckets;  // the non-empty ones, in increasing order

  double Mean() const { return count == 0 ? 0.0 : static_cast<double>(sum) / count; }
  // The upper bound of the bucket holding the value below which a fraction
  // `q` (0..1) of the recorded values lie; 0 when nothing was recorded.
  uint64_t Percentile(double q) const;
};

struct StoreMetrics {
  // Every counter of GetStoreStats().
  StoreStats stats;
  // What pgring's RocksDB writes counted (RocksDB's tickers
  // rocksdb.bytes.written, rocksdb.number.keys.written, rocksdb.wal.bytes):
  // an owned RocksDB always collects them, an embedder's only when its
  // DBOptions::statistics is set (0 otherwise). An embedder's are DB-wide:
  // its own keys are in them.
  uint64_t rocksdb_bytes_written = 0;
  uint64_t rocksdb_keys_written = 0;
  uint64_t rocksdb_wal_bytes = 0;

  // Nanoseconds from Submit accepting a transaction to its callback (each
  // of the caller's transactions since open).
  HistogramData commit_latency_ns;
  // Nanoseconds of each partition flush (ring backend).
  HistogramData flush_latency_ns;
  // Nanoseconds of each commit group's synced RocksDB write.
  HistogramData rocksdb_write_latency_ns;
  // Per transaction with CommitGates: nanoseconds it waited for the
  // embedder's writes after its own were done (from Submit, for a
  // transaction that wrote nothing to the partition). 0 when the gates
  // opened first.
  HistogramData gate_wait_ns;
  // The caller's transactions per commit group (0 for a group of only the
  // store's own, the stream cleaner's restatements): count is
  // commit_groups, sum is transactions_committed.
  HistogramData group_size;

  // Calls `counter` for every counter ("pgs", "device_writes", ...: the
  // StoreStats field names, then "rocksdb_bytes_written",
  // "rocksdb_keys_written", "rocksdb_wal_bytes") and `histogram` for every
  // distribution ("commit_latency_ns", "flush_latency_ns",
  // "rocksdb_write_latency_ns", "gate_wait_ns", "group_size"), in that
  // order; names are stable across releases. Either may be null.
  void Visit(const std::function<void(std::string_view, uint64_t)>& counter,
             const std::function<void(std::string_view, const HistogramData&)>& histogram) const;
};

}  // namespace pgring

#endif  // PGRING_METRICS_H_
