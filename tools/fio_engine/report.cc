#include "report.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "syscall_counter.h"

namespace pgring::fio {
namespace {

using nlohmann::json;

// Every counter of the snapshot under its StoreMetrics name.
json StoreStatsJson(const StoreMetrics& m) {
  json j = json::object();
  m.Visit([&](std::string_view name, uint64_t v) { j[std::string(name)] = v; }, nullptr);
  return j;
}

// The values recorded between two snapshots of one histogram: counts and
// sums subtract; the maximum is the later snapshot's (since open).
HistogramData HistogramDelta(const HistogramData& start, const HistogramData& end) {
  HistogramData d;
  d.count = end.count - std::min(end.count, start.count);
  d.sum = end.sum - std::min(end.sum, start.sum);
  d.max = end.max;
  size_t k = 0;
  for (const HistogramData::Bucket& b : end.buckets) {
    while (k < start.buckets.size() && start.buckets[k].upper < b.upper) ++k;
    const uint64_t before =
        (k < start.buckets.size() && start.buckets[k].upper == b.upper) ? start.buckets[k].count : 0;
    if (b.count > before) d.buckets.push_back({b.upper, b.count - before});
  }
  return d;
}

// A distribution in the report: count, mean and percentiles, divided by
// `scale` (1e3: nanoseconds shown as microseconds).
json HistogramJson(const HistogramData& h, double scale) {
  return json{{"count", h.count},
              {"mean", h.Mean() / scale},
              {"p50", h.Percentile(0.50) / scale},
              {"p90", h.Percentile(0.90) / scale},
              {"p99", h.Percentile(0.99) / scale},
              {"p99.9", h.Percentile(0.999) / scale},
              {"max", h.max / scale}};
}

uint64_t Delta(uint64_t start, uint64_t end) { return end >= start ? end - start : 0; }

// The cumulative counters of `end` minus those of `start`.
json StoreRunJson(const StoreStats& start, const StoreStats& end) {
  auto d = Delta;
  const uint64_t payload = d(start.payload_bytes_appended, end.payload_bytes_appended);
  const uint64_t record = d(start.record_bytes_appended, end.record_bytes_appended);
  const uint64_t device = d(start.device_bytes_written, end.device_bytes_written);
  json j{{"transactions_committed", d(start.transactions_committed, end.transactions_committed)},
         {"commit_groups", d(start.commit_groups, end.commit_groups)},
         {"superseded_key_writes", d(start.superseded_key_writes, end.superseded_key_writes)},
         {"record_bytes_appended", record},
         {"payload_bytes_appended", payload},
         {"device_bytes_written", device},
         {"device_flushes", d(start.device_flushes, end.device_flushes)},
         {"device_writes", d(start.device_writes, end.device_writes)},
         {"device_seeks", d(start.device_seeks, end.device_seeks)},
         {"stream_records", d(start.stream_records, end.stream_records)},
         {"stream_writes", d(start.stream_writes, end.stream_writes)},
         {"stream_bytes_written", d(start.stream_bytes_written, end.stream_bytes_written)},
         {"home_writes", d(start.home_writes, end.home_writes)},
         {"home_bytes_written", d(start.home_bytes_written, end.home_bytes_written)},
         {"forced_homes", d(start.forced_homes, end.forced_homes)},
         {"stream_full_fallbacks", d(start.stream_full_fallbacks, end.stream_full_fallbacks)},
         {"stream_restates", d(start.stream_restates, end.stream_restates)},
         {"stream_restated_bytes", d(start.stream_restated_bytes, end.stream_restated_bytes)},
         {"stream_compressed_records",
          d(start.stream_compressed_records, end.stream_compressed_records)},
         {"stream_compression_saved_bytes",
          d(start.stream_compression_saved_bytes, end.stream_compression_saved_bytes)},
         {"stream_reads", d(start.stream_reads, end.stream_reads)},
         {"stream_bytes_read", d(start.stream_bytes_read, end.stream_bytes_read)},
         // A level, not a count: what the store holds at the end.
         {"unhomed_resident_bytes", end.unhomed_resident_bytes},
         {"stream_index_bytes", end.stream_index_bytes}};
  if (payload > 0) {
    j["record_bytes_per_payload_byte"] = static_cast<double>(record) / payload;
    j["device_bytes_per_payload_byte"] = static_cast<double>(device) / payload;
  }
  return j;
}

uint64_t RocksDbBytes(const IoSnapshot& start, const IoSnapshot& end) {
  uint64_t total = 0;
  for (int k = 0; k < RocksDbIoCounter::kKinds; ++k) total += end.rocksdb_bytes[k] - start.rocksdb_bytes[k];
  return total;
}

// What the measured run cost in work done: CPU time, and the writes and
// bytes of the client writes' metadata, each per client write committed
// between the two snapshots. A busy machine hardly moves the writes and
// bytes, as it moves IOPS and latency; it does move the CPU time.
// System calls over the run (syscall_counter.h): what was counted, or
// null and why not.
json SyscallsJson(const IoSnapshot& start, const IoSnapshot& end, const std::string& why) {
  json j{{"what", "system call entries (perf tracepoint raw_syscalls:sys_enter), one counter per "
                  "thread of the fio process, from the end of setup to the final sync; a thread "
                  "born later counted from the engine's next scan of /proc/self/task (a data "
                  "file's threads: its open, before its first write); io_uring's kernel workers "
                  "(iou-*) not counted (they make no system calls); the scans' own calls "
                  "(a few hundred) count on the thread that scans"}};
  if (!start.have_syscalls || !end.have_syscalls) {
    j["counted"] = false;
    j["total"] = nullptr;
    j["why_not"] = why.empty() ? "the counters were not read" : why;
    return j;
  }
  uint64_t total = 0;
  for (const auto& [name, count] : SyscallsByName(start.syscalls, end.syscalls)) total += count;
  j["counted"] = true;
  j["total"] = total;
  j["why_not"] = nullptr;
  j["threads_counted_late"] = end.syscalls.late;  // see "what"
  j["problems"] = end.syscalls.problems;
  return j;
}

json RunJson(const IoSnapshot& start, const IoSnapshot& end, const EngineStats& stats,
             uint64_t committed, double seconds, const std::string& syscalls_why) {
  const uint64_t user = Delta(start.cpu_user_us, end.cpu_user_us);
  const uint64_t sys = Delta(start.cpu_sys_us, end.cpu_sys_us);
  json j{{"seconds", seconds}, {"cpu_us", json{{"user", user}, {"sys", sys}, {"total", user + sys}}}};
  j["syscalls"] = SyscallsJson(start, end, syscalls_why);
  if (committed == 0) {
    j["per_write"] = nullptr;
    return j;
  }
  const double n = static_cast<double>(committed);
  const uint64_t log_bytes = Delta(start.store.device_bytes_written, end.store.device_bytes_written);
  const uint64_t rocksdb_bytes = RocksDbBytes(start, end);
  j["per_write"] = json{
      {"cpu_us", (user + sys) / n},
      {"cpu_user_us", user / n},
      {"cpu_sys_us", sys / n},
      {"log_partition_writes", Delta(start.store.device_writes, end.store.device_writes) / n},
      {"log_partition_seeks", Delta(start.store.device_seeks, end.store.device_seeks) / n},
      // The other devices' write requests, and those a disk would seek
      // for: the HDD model (docs/DESIGN.md §10). The data file's are the
      // whole job's (setup writes no data).
      {"data_writes", stats.data_writes.load() / n},
      {"data_seeks", stats.data_seeks.load() / n},
      {"rocksdb_writes", Delta(start.rocksdb_writes, end.rocksdb_writes) / n},
      {"rocksdb_seeks", Delta(start.rocksdb_seeks, end.rocksdb_seeks) / n},
      {"log_partition_bytes", log_bytes / n},
      {"rocksdb_bytes", rocksdb_bytes / n},
      {"metadata_bytes", (log_bytes + rocksdb_bytes) / n}};
  json by_thread = json::object();
  for (const auto& [name, ns] : ThreadCpuByName(start.threads, end.threads)) {
    by_thread[name] = static_cast<double>(ns) / 1000.0 / n;
  }
  j["per_write"]["cpu_us_by_thread"] = by_thread;
  const uint64_t voluntary = Delta(start.voluntary_switches, end.voluntary_switches);
  const uint64_t involuntary = Delta(start.involuntary_switches, end.involuntary_switches);
  j["per_write"]["context_switches"] = json{{"voluntary", voluntary / n},
                                            {"involuntary", involuntary / n},
                                            {"total", (voluntary + involuntary) / n}};
  json switches_by_thread = json::object();
  for (const auto& [name, count] : ThreadSwitchesByName(start.threads, end.threads)) {
    switches_by_thread[name] = static_cast<double>(count) / n;
  }
  j["per_write"]["context_switches_by_thread"] = switches_by_thread;
  json voluntary_by_thread = json::object(), involuntary_by_thread = json::object();
  for (const auto& [name, count] : ThreadVoluntarySwitchesByName(start.threads, end.threads)) {
    voluntary_by_thread[name] = static_cast<double>(count) / n;
  }
  for (const auto& [name, count] : ThreadInvoluntarySwitchesByName(start.threads, end.threads)) {
    involuntary_by_thread[name] = static_cast<double>(count) / n;
  }
  j["per_write"]["voluntary_switches_by_thread"] = voluntary_by_thread;
  j["per_write"]["involuntary_switches_by_thread"] = involuntary_by_thread;
  // System calls: null (run.syscalls.why_not says why) when not counted.
  if (j["syscalls"]["counted"].get<bool>()) {
    json syscalls_by_thread = json::object();
    for (const auto& [name, count] : SyscallsByName(start.syscalls, end.syscalls)) {
      syscalls_by_thread[name] = static_cast<double>(count) / n;
    }
    j["per_write"]["syscalls"] = j["syscalls"]["total"].get<uint64_t>() / n;
    j["per_write"]["syscalls_by_thread"] = syscalls_by_thread;
  } else {
    j["per_write"]["syscalls"] = nullptr;
    j["per_write"]["syscalls_by_thread"] = nullptr;
  }
  return j;
}

// The block devices' writes over the run (block_stats.h), as the devices
// counted them, beside the engine's own counts.
json BlockDevicesJson(const std::map<std::string, BlockStats::Delta>& devices,
                      const std::map<std::string, std::string>& unavailable, uint64_t committed) {
  json devs = json::object();
  for (const auto& [name, d] : devices) {
    const uint64_t bytes = d.counts.write_sectors * 512;
    json dev{{"roles", d.roles},
             {"disk", d.disk.empty() ? json(nullptr) : json(d.disk)},
             {"write_requests", d.counts.write_requests},
             {"bytes_written", bytes},
             {"flushes", d.counts.has_flushes ? json(d.counts.flushes) : json(nullptr)}};
    if (committed > 0) {
      const double n = static_cast<double>(committed);
      dev["per_write"] = json{
          {"write_requests", d.counts.write_requests / n},
          {"bytes", bytes / n},
          {"flushes", d.counts.has_flushes ? json(d.counts.flushes / n) : json(nullptr)}};
    } else {
      dev["per_write"] = nullptr;
    }
    devs[name] = dev;
  }
  return json{{"what", "/sys/class/block/<device>/stat (write requests completed, sectors x 512, "
                       "flush requests completed) of the device each path is or lives on (roles: "
                       "log, db, data; disk: a partition's whole disk, where Linux counts flushes), "
                       "from the end of setup (mkfs, PG creation, prefill and their sync; a data "
                       "file's device from the file's open) to the final sync: the timed run only; "
                       "every writer of the device counts, not only this process"},
              {"devices", devs},
              {"unavailable", unavailable}};
}

json RocksDbJson(const IoSnapshot& start, const IoSnapshot& end, uint64_t writes) {
  json bytes = json::object(), files = json::object();
  const uint64_t total = RocksDbBytes(start, end);
  for (int k = 0; k < RocksDbIoCounter::kKinds; ++k) {
    bytes[RocksDbIoCounter::KindName(k)] = end.rocksdb_bytes[k] - start.rocksdb_bytes[k];
    files[RocksDbIoCounter::KindName(k)] = end.rocksdb_files[k] - start.rocksdb_files[k];
  }
  bytes["total"] = total;
  json j{{"bytes_written", bytes},
         {"files_created", files},
         {"syncs", end.rocksdb_syncs - start.rocksdb_syncs},
         {"write_requests", end.rocksdb_writes - start.rocksdb_writes},
         {"noncontiguous_write_requests", end.rocksdb_seeks - start.rocksdb_seeks}};
  if (writes > 0) j["bytes_written_per_write"] = static_cast<double>(total) / writes;
  if (end.have_rocksdb_statistics) {
    // Every ticker that moved, and the compaction totals (the column
    // family's "Sum" row: KeyIn, KeyDrop, WriteGB, CompSec, ...).
    json tickers = json::object();
    for (const auto& [name, value] : end.tickers) {
      auto it = start.tickers.find(name);
      const uint64_t before = it == start.tickers.end() ? 0 : it->second;
      if (value > before) tickers[name] = value - before;
    }
    json compaction = json::object();
    for (const auto& [name, value] : end.compaction) {
      auto it = start.compaction.find(name);
      compaction[name] = value - (it == start.compaction.end() ? 0.0 : it->second);
    }
    const uint64_t keys = tickers.value("rocksdb.number.keys.written", uint64_t{0});
    j["keys_written"] = keys;
    if (writes > 0) j["keys_written_per_write"] = static_cast<double>(keys) / writes;
    j["compaction"] = compaction;
    j["tickers"] = tickers;
  } else {
    j["tickers"] = nullptr;  // the store does not expose its RocksDB statistics
  }
  return j;
}

json Summary(const std::vector<uint64_t>& v) {
  if (v.empty()) return json{{"min", 0}, {"mean", 0}, {"max", 0}};
  uint64_t sum = 0;
  for (uint64_t x : v) sum += x;
  return json{{"min", *std::min_element(v.begin(), v.end())},
              {"mean", static_cast<double>(sum) / v.size()},
              {"max", *std::max_element(v.begin(), v.end())}};
}

}  // namespace

json BuildReport(const ReportInputs& in) {
  const EngineConfig& c = *in.config;
  EngineStats& s = *in.stats;
  const ModelCounters& m = in.model->counters();
  json report;
  report["engine"] = "pgring";
  report["report_version"] = 1;
  report["backend"] = BackendName(in.backend);
  report["config"] = json{
      {"pgring_backend", BackendName(c.backend)},
      {"pgring_log_dev", c.log_dev},
      {"pgring_db", c.EffectiveDbPath()},
      {"pgring_preallocate", c.preallocate},
      {"pgring_log_size", c.log_size},
      {"pgring_mkfs", c.mkfs},
      {"pgring_chunk_size", c.chunk_size},
      {"pgring_pgs", c.pgs},
      {"pgring_single_pool_mode", c.single_pool_mode},
      {"pools", c.pools},
      {"pgring_object_size", c.object_size},
      {"pgring_onode_size", c.onode_size},
      {"pgring_oi_attr_len", c.oi_attr_len},
      {"pgring_dup_size", c.dup_size},
      {"pgring_entry_min", c.entry_min},
      {"pgring_entry_max", c.entry_max},
      {"pgring_fastinfo_size", c.fastinfo_size},
      {"pgring_info_size", c.info_size},
      {"pgring_full_info_every", c.full_info_every},
      {"pgring_prefill", c.prefill},
      {"pgring_payload", PayloadName(c.payload)},
      {"pgring_no_pg_log", c.no_pg_log},
      {"osd_min_pg_log_entries", c.osd_min_pg_log_entries},
      {"osd_max_pg_log_entries", c.osd_max_pg_log_entries},
      {"osd_target_pg_log_entries_per_osd", c.osd_target_pg_log_entries_per_osd},
      {"osd_pg_log_dups_tracked", c.osd_pg_log_dups_tracked},
      {"osd_pg_log_trim_min", c.osd_pg_log_trim_min},
      {"osd_pg_log_trim_max", c.osd_pg_log_trim_max},
      {"pgring_durability", DurabilityName(c.durability)},
      {"pgring_tail_policy", TailPolicyName(c.tail_policy)},
      {"pgring_layout", LayoutName(c.layout)},
      {"pgring_stream_chunks", c.stream_chunks},
      {"pgring_home_bytes", c.home_bytes},
      {"pgring_resident_bytes", c.resident_bytes},
      {"pgring_force_home_percent", c.force_home_percent},
      {"pgring_stream_bypass", c.stream_bypass},
      {"pgring_compression", CompressionName(c.compression)},
      {"pgring_io_engine", IoEngineName(c.io_engine)},
      {"pgring_shared_flush", SharedFlushName(c.shared_flush)},
      {"shared_flush", c.share_flush},
      {"shared_flush_why", c.share_flush_why},
      {"pgring_sync_covers", SyncCoversName(c.sync_covers)},
      {"sync_covers", c.sync_covers_partition},
      {"sync_covers_why", c.sync_covers_why},
      {"pgring_verify_log", c.verify_log},
      {"pgring_ack_file", c.ack_file},
      {"pgring_ack_check", c.ack_check},
      {"target_log_entries", c.TargetLogEntries()}};

  const uint64_t committed = s.writes_committed.load();
  const int64_t first = s.first_submit_ns.load(), last = s.last_commit_ns.load();
  const double seconds = (first > 0 && last > first) ? (last - first) / 1e9 : 0.0;
  report["setup_seconds"] = in.setup_seconds;
  report["run"] = RunJson(in.after_setup, in.at_end, s, committed, seconds, in.syscalls_why);
  report["block_devices"] = BlockDevicesJson(in.block_devices, in.block_unavailable, committed);
  report["writes"] = json{{"submitted", s.writes_submitted.load()},
                          {"committed", committed},
                          {"failed", s.writes_failed.load()},
                          {"bytes", s.write_bytes.load()},
                          {"iops", seconds > 0 ? committed / seconds : 0.0}};
  report["reads"] = json{{"count", s.reads.load()}, {"bytes", s.read_bytes.load()}};
  report["syncs"] = s.syncs.load();
  report["trims"] = s.trims.load();
  // The store's own distributions over the run (Store::GetMetrics), the
  // same an OSD would turn into its perf counters.
  const StoreMetrics& m0 = in.after_setup.metrics;
  const StoreMetrics& m1 = in.at_end.metrics;
  report["commit_latency_us"] =
      HistogramJson(HistogramDelta(m0.commit_latency_ns, m1.commit_latency_ns), 1e3);
  report["store_latency"] = json{
      {"flush_latency_us",
       HistogramJson(HistogramDelta(m0.flush_latency_ns, m1.flush_latency_ns), 1e3)},
      {"rocksdb_write_latency_us",
       HistogramJson(HistogramDelta(m0.rocksdb_write_latency_ns, m1.rocksdb_write_latency_ns),
                     1e3)},
      {"gate_wait_us", HistogramJson(HistogramDelta(m0.gate_wait_ns, m1.gate_wait_ns), 1e3)},
      {"group_size", HistogramJson(HistogramDelta(m0.group_size, m1.group_size), 1)}};
  report["osd_model"] = json{{"entries", m.entries.load()},
                             {"entry_bytes", m.entry_bytes.load()},
                             {"dups", m.dups.load()},
                             {"trims", m.trims.load()},
                             {"entries_trimmed", m.entries_trimmed.load()},
                             {"dups_trimmed", m.dups_trimmed.load()},
                             {"full_infos", m.full_infos.load()},
                             {"fast_infos", m.fast_infos.load()},
                             {"onode_bytes", m.onode_bytes.load()},
                             {"prefill_entries", m.prefill_entries.load()},
                             {"prefill_dups", m.prefill_dups.load()}};
  report["store"] = json{{"at_end", StoreStatsJson(in.at_end.metrics)},
                         {"run", StoreRunJson(in.after_setup.store, in.at_end.store)}};
  report["rocksdb"] = json{{"run", RocksDbJson(in.after_setup, in.at_end, committed)},
                           {"setup", RocksDbJson(IoSnapshot{}, in.after_setup, 0)}};
  report["data_file"] = json{{"bytes_written", s.data_bytes_written.load()},
                             {"flushes", s.data_flushes.load()},
                             {"write_requests", s.data_writes.load()},
                             {"noncontiguous_write_requests", s.data_seeks.load()}};

  json per_pg = json::array();
  std::vector<uint64_t> entries, dups, chunks, ring_bytes, writes;
  for (const PgStats& p : in.pgs) {
    const PgExpectation x =
        in.model->Expectation(SlotOf(p.pg, c.pgs, c.pools).value_or(0));
    per_pg.push_back(json{{"pg", p.pg.ToString()},
                          {"entries", p.entries},
                          {"entry_bytes", p.entry_bytes},
                          {"dups", p.dups},
                          {"dup_bytes", p.dup_bytes},
                          {"info_bytes", p.info_bytes},
                          {"first_version", p.entries ? p.first_version.ToString() : ""},
                          {"last_version", p.entries ? p.last_version.ToString() : ""},
                          {"chunks", p.chunks},
                          {"ring_bytes_used", p.ring_bytes_used},
                          {"writes", x.writes}});
    entries.push_back(p.entries);
    dups.push_back(p.dups);
    chunks.push_back(p.chunks);
    ring_bytes.push_back(p.ring_bytes_used);
    writes.push_back(x.writes);
  }
  report["pgs"] = json{{"count", in.pgs.size()},
                       {"entries", Summary(entries)},
                       {"dups", Summary(dups)},
                       {"chunks", Summary(chunks)},
                       {"ring_bytes_used", Summary(ring_bytes)},
                       {"writes", Summary(writes)},
                       {"per_pg", per_pg}};

  json verify{{"enabled", c.verify_log}};
  if (in.verified) {
    verify["ok"] = in.check_status.ok() && in.check.error_count == 0;
    verify["pgs"] = in.check.pgs;
    verify["entries"] = in.check.entries;
    verify["dups"] = in.check.dups;
    verify["error_count"] = in.check.error_count;
    json errors = in.check.errors;
    if (!in.check_status.ok()) errors.push_back(in.check_status.ToString());
    verify["errors"] = errors;
  }
  report["verify"] = verify;

  json acks{{"enabled", !c.ack_check.empty()}};
  if (in.ack_check != nullptr && in.ack_check->ran) {
    const AckCheckResult& a = *in.ack_check;
    acks["ok"] = a.ok();
    acks["durable"] = a.durable;
    acks["pgs"] = a.pgs;
    acks["acked_writes"] = a.acked_writes;
    acks["lost"] = a.lost;
    acks["beyond_submitted"] = a.beyond_submitted;
    acks["in_flight"] = a.in_flight;
    acks["committed_unacked"] = a.committed_unacked;
    acks["error_count"] = a.error_count;
    acks["errors"] = a.errors;
  }
  report["ack_check"] = acks;
  return report;
}

absl::Status WriteReport(const std::string& path, const nlohmann::json& report) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp, ": ", std::strerror(errno)));
    out << report.dump(2) << "\n";
    if (!out.flush()) return absl::UnavailableError(absl::StrCat("writing ", tmp, " failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("renaming ", tmp, " to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace pgring::fio
