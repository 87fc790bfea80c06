// report.h — the engine's JSON report (pgring_stats=FILE), written when the
// last job releases the store. Field by field:
//
//   backend, config              the settings (EngineConfig)
//   run.seconds                  first Submit → last commit callback
//   run.cpu_us                   user, sys and total CPU time of the fio
//                                process (getrusage: fio's jobs, the engine,
//                                the store's and RocksDB's threads) from
//                                the store's open (after mkfs and prefill)
//                                to its last release (after the final Sync),
//                                the moments store.run and rocksdb.run
//                                subtract; with several jobs on one store,
//                                their own setup falls inside
//   run.per_write                per committed client write, over the same
//                                interval: cpu_us (and its user and sys
//                                parts), log_partition_writes (write
//                                requests to the log partition,
//                                StoreStats::device_writes) and
//                                log_partition_seeks (those not starting
//                                where the one before ended:
//                                device_seeks), data_writes and data_seeks
//                                (the same for fio's data files, each
//                                file's requests in their own order),
//                                rocksdb_writes and rocksdb_seeks (RocksDB's
//                                files in one order, a request to another
//                                file counting as a seek): the HDD model;
//                                log_partition_
//                                bytes, rocksdb_bytes (rocksdb.run's total)
//                                and metadata_bytes (the two together; minus
//                                the floor's rocksdb_bytes, what the PG log
//                                costs: scripts/main-job.sh, bench/report.py),
//                                and cpu_us_by_thread: the CPU time per
//                                thread name (fio: the job threads;
//                                pgring-commit; io:<file>: a device's
//                                completions; rocksdb:*), from
//                                /proc/self/task (thread_cpu.h);
//                                context_switches (getrusage: voluntary,
//                                involuntary, total) and
//                                context_switches_by_thread (both kinds,
//                                per thread name, /proc/self/task/*/status),
//                                voluntary_switches_by_thread and
//                                involuntary_switches_by_thread (each kind);
//                                syscalls and syscalls_by_thread (system
//                                calls per client write, overall and per
//                                thread name: syscall_counter.h; null when
//                                they could not be counted);
//                                null if no write committed
//   run.syscalls                 how the system calls were counted (what),
//                                counted, total, why_not (the reason when
//                                counted is false: no tracefs, not
//                                permitted), threads_counted_late, problems
//   block_devices                per device the engine's paths are or live
//                                on (block_stats.h): roles (log, db, data;
//                                disk: a partition's whole disk), disk,
//                                write_requests, bytes_written, flushes (null
//                                where the kernel has no flush field) and
//                                per_write, from /sys/class/block/*/stat
//                                over the same interval as run (the timed
//                                run only); unavailable: role -> why
//   writes, reads, syncs, trims  what fio asked for; writes.iops over run.seconds
//   commit_latency_us            Submit → commit callback over the run: count,
//                                mean, p50, p90, p99, p99.9, max (since open),
//                                from Store::GetMetrics (pgring/metrics.h: ±3%)
//   store_latency                the store's other distributions over the run
//                                (GetMetrics): flush_latency_us,
//                                rocksdb_write_latency_us, gate_wait_us (the
//                                data write after the log's), group_size
//   osd_model                    what the OSD model put into transactions:
//                                entries, dups, trims, full/fast infos, onodes
//   store.at_end                 every counter of Store::GetMetrics() after
//                                the final Sync, by StoreMetrics::Visit name
//   store.run                    the cumulative StoreStats counters minus
//                                their values after setup (mkfs, PG creation,
//                                prefill), i.e. what the fio writes cost
//   rocksdb.run / rocksdb.setup  bytes RocksDB wrote by file kind (wal, sst =
//                                flushes + compactions, manifest, other),
//                                files created, syncs, write requests and
//                                the noncontiguous ones (RocksDbIoCounter);
//                                per_write = run bytes / committed writes
//   data_file                    bytes written to fio's files, flushes,
//                                write requests and the noncontiguous ones
//   pgs                          per-PG entries, dups, versions, chunks and
//                                ring bytes (GetPgStats), with min/mean/max
//   verify                       the log check (pgring_verify_log=1)
//   ack_check                    the check against an earlier run's ack
//                                record (pgring_ack_check=FILE, ack_record.h):
//                                PGs, acked_writes, lost, beyond_submitted,
//                                in_flight, committed_unacked, errors
#ifndef PGRING_TOOLS_FIO_ENGINE_REPORT_H_
#define PGRING_TOOLS_FIO_ENGINE_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "block_stats.h"
#include "engine_config.h"
#include "osd_model.h"
#include "shared_store.h"

#include <nlohmann/json.hpp>

namespace pgring::fio {

struct ReportInputs {
  const EngineConfig* config = nullptr;
  Backend backend = Backend::kRing;  // of the store (pgring_backend only applies at mkfs)
  const OsdModel* model = nullptr;
  EngineStats* stats = nullptr;
  double setup_seconds = 0;
  IoSnapshot after_setup;
  IoSnapshot at_end;
  // Why system calls were not counted (empty when they were).
  std::string syscalls_why;
  // The block devices' writes from the end of setup to at_end, and the
  // roles whose device could not be counted (why).
  std::map<std::string, BlockStats::Delta> block_devices;
  std::map<std::string, std::string> block_unavailable;
  std::vector<PgStats> pgs;
  bool verified = false;     // pgring_verify_log ran
  CheckResult check;
  absl::Status check_status; // reopening for the check, if that failed
  const AckCheckResult* ack_check = nullptr;  // pgring_ack_check, if it ran
};

nlohmann::json BuildReport(const ReportInputs& in);

// Writes `report` to `path` (via a temporary file and rename).
absl::Status WriteReport(const std::string& path, const nlohmann::json& report);

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_REPORT_H_
