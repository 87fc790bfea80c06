// shared_store.h — the pgring store of a fio process, one per log partition,
// shared by every job (thread) that names that partition and counted by
// reference: the first job to start opens it (after mkfs, with
// pgring_mkfs=1, at most once per process), the last one to finish closes it,
// checks the logs (pgring_verify_log=1) and writes the JSON report
// (pgring_stats=FILE).
//
// Jobs in separate processes cannot share a store: the partition is locked by
// its opener. With numjobs>1, or several jobs on one partition, set thread=1.
//
// The store models one OSD with config.pools pools of config.pgs PGs each,
// all created (and prefilled) when it opens: a job writes to the pool its
// Acquire names (pool index i is pool kFirstPool + i), and two jobs may
// share a pool only in pgring_single_pool_mode.
#ifndef PGRING_TOOLS_FIO_ENGINE_SHARED_STORE_H_
#define PGRING_TOOLS_FIO_ENGINE_SHARED_STORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ack_record.h"
#include "block_stats.h"
#include "engine_config.h"
#include "osd_model.h"
#include "pgring/store.h"
#include "rocksdb_io_counter.h"
#include "syscall_counter.h"
#include "thread_cpu.h"

namespace pgring::fio {

// What the engine counts while fio runs (all jobs together).
struct EngineStats {
  std::atomic<uint64_t> writes_submitted{0};
  std::atomic<uint64_t> writes_committed{0};
  std::atomic<uint64_t> writes_failed{0};   // refused at Submit or failed commits
  std::atomic<uint64_t> write_bytes{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<uint64_t> syncs{0};
  std::atomic<uint64_t> trims{0};           // fio trims: completed without I/O
  std::atomic<uint64_t> data_bytes_written{0};  // added when a data file closes
  std::atomic<uint64_t> data_flushes{0};
  std::atomic<uint64_t> data_writes{0};         // write requests (added at close)
  std::atomic<uint64_t> data_seeks{0};          // ... not contiguous with the one before
  std::atomic<int64_t> first_submit_ns{0};  // steady clock; 0 = none yet
  std::atomic<int64_t> last_commit_ns{0};

  static int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void NoteSubmit(int64_t now) {
    int64_t zero = 0;
    first_submit_ns.compare_exchange_strong(zero, now);
  }
  void NoteCommit(int64_t now) {
    int64_t cur = last_commit_ns.load();
    while (now > cur && !last_commit_ns.compare_exchange_weak(cur, now)) {
    }
  }
};

// The cumulative counters of the store, of its RocksDB and of the process's
// CPU time at one moment, so the report can show what the run itself cost
// (the setup — mkfs, PG creation, prefill — excluded).
struct IoSnapshot {
  // Store::GetMetrics: the counters and the commit path's distributions.
  StoreMetrics metrics;
  StoreStats store;  // metrics.stats
  // getrusage(RUSAGE_SELF): every thread of the fio process — fio's jobs,
  // the engine, the store's and RocksDB's threads — since it started.
  uint64_t cpu_user_us = 0;
  uint64_t cpu_sys_us = 0;
  // ... and its voluntary (waits) and involuntary (preemptions) context
  // switches.
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  // The same, thread by thread (thread_cpu.h).
  std::map<pid_t, ThreadCpu> threads;
  // System calls by thread (syscall_counter.h), when they can be counted.
  bool have_syscalls = false;
  SyscallReading syscalls;
  uint64_t rocksdb_bytes[RocksDbIoCounter::kKinds] = {};
  uint64_t rocksdb_files[RocksDbIoCounter::kKinds] = {};
  uint64_t rocksdb_syncs = 0;
  uint64_t rocksdb_writes = 0;  // write requests to RocksDB's files
  uint64_t rocksdb_seeks = 0;   // ... not contiguous with the one before
  // RocksDB's own statistics (Store::GetMapProperty): every ticker, and the
  // "Sum" row of the column family's compaction statistics (KeyIn, KeyDrop,
  // WriteGB, CompSec, ...).
  bool have_rocksdb_statistics = false;
  std::map<std::string, uint64_t> tickers;
  std::map<std::string, double> compaction;
};

class SharedStore {
 public:
  // kInvalidArgument for a pool index >= config.pools, or one another job
  // holds (unless config.single_pool_mode).
  static absl::StatusOr<std::shared_ptr<SharedStore>> Acquire(const EngineConfig& config,
                                                              uint32_t pool);
  // Drops the reference Acquire(…, pool) took. The last closes the store,
  // checks the logs and writes the report; its status says what failed there.
  static absl::Status Release(std::shared_ptr<SharedStore> store, uint32_t pool);

  ~SharedStore();
  SharedStore(const SharedStore&) = delete;
  SharedStore& operator=(const SharedStore&) = delete;

  Store* store() const { return store_.get(); }
  OsdModel& model() { return *model_; }
  const EngineConfig& config() const { return config_; }
  EngineStats& stats() { return stats_; }
  // Reads every thread's CPU time now and keeps it, so that the report
  // still counts a thread that ends before the store is released (a data
  // file's completion thread ends when fio closes the file), and starts
  // counting the system calls of threads born since the last call: called
  // just after a job opens a data file (its threads are born then) and
  // just before it closes one.
  void NoteThreads();
  // Counts the writes of the block device a data file is or lives on from
  // now (block_stats.h), if no other path of the store is on it already:
  // called when a job opens the file, before its first write.
  void NoteDataFile(const std::string& path) { block_stats_.Add("data", path); }

 private:
  explicit SharedStore(const EngineConfig& config);
  absl::Status Open();
  absl::Status Finish();
  IoSnapshot Snapshot();

  const EngineConfig config_;
  std::shared_ptr<RocksDbIoCounter> rocksdb_io_;  // under the store's RocksDB Env
  std::unique_ptr<AckRecord> ack_record_;     // pgring_ack_file; outlives store_
  AckCheckResult ack_check_;                   // pgring_ack_check, done at open
  std::unique_ptr<Store> store_;
  std::unique_ptr<OsdModel> model_;
  EngineStats stats_;
  Backend backend_ = Backend::kRing;  // the opened store's
  IoSnapshot after_setup_;
  double setup_seconds_ = 0;
  // System calls per thread, from the end of setup on; null, and why, when
  // the kernel does not let this process count them.
  std::unique_ptr<SyscallCounter> syscalls_;
  std::string syscalls_why_;
  // The block devices under the log partition, RocksDB and the data files.
  BlockStats block_stats_;
  std::mutex threads_mu_;
  // The latest CPU time read of every thread seen since setup (NoteThreads).
  std::map<pid_t, ThreadCpu> seen_threads_;  // guarded by threads_mu_
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_SHARED_STORE_H_
