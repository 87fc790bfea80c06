#include "shared_store.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "preallocate.h"
#include "report.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace pgring::fio {
namespace {

// The stores of this process, by log partition.
struct Registry {
  struct Entry {
    std::shared_ptr<SharedStore> store;
    int refs = 0;
    std::multiset<uint32_t> pools;  // the pool index of each job holding it
  };
  std::mutex mu;
  std::map<std::string, Entry> stores;
  std::set<std::string> made;  // partitions made by mkfs in this process
};

Registry& TheRegistry() {
  static Registry* r = new Registry;  // never destroyed: jobs may outlive statics
  return *r;
}

// The registry key: the partition's canonical path if it exists.
std::string Canonical(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// Reads RocksDB's tickers and compaction statistics into `s`.
void SnapshotRocksDbStatistics(const Store& store, IoSnapshot* s) {
  std::map<std::string, std::string> tickers;
  s->have_rocksdb_statistics = store.GetMapProperty("pgring.rocksdb_tickers", &tickers);
  for (const auto& [name, count] : tickers) s->tickers[name] = std::strtoull(count.c_str(), nullptr, 10);
  std::map<std::string, std::string> cfstats;
  if (store.GetMapProperty("rocksdb.cfstats", &cfstats)) {
    // The cumulative columns of the "Sum" row (the others, such as Score or
    // NumFiles, describe the moment, not the run).
    for (const char* col : {"KeyIn", "KeyDrop", "ReadGB", "WriteGB", "WnewGB", "MovedGB",
                            "CompSec", "CompCount"}) {
      auto it = cfstats.find(std::string("compaction.Sum.") + col);
      if (it != cfstats.end()) s->compaction[col] = std::strtod(it->second.c_str(), nullptr);
    }
  }
}

Options StoreOptions(const EngineConfig& c) {
  Options o;
  o.durability = c.durability;
  o.tail_block_policy = c.tail_policy;
  o.log_layout = c.layout;
  o.stream.max_chunks = c.stream_chunks;
  o.stream.home_bytes = c.home_bytes;
  o.stream.resident_bytes = c.resident_bytes;
  o.stream.force_home_percent = c.force_home_percent;
  o.stream.bypass_when_idle = c.stream_bypass;
  o.stream.compression = c.compression;
  o.io_engine = c.io_engine;
  o.gated_writes_share_flush = c.share_flush;
  o.metadata_sync_flushes_partition = c.sync_covers_partition;
  return o;
}

}  // namespace

SharedStore::SharedStore(const EngineConfig& config) : config_(config) {}

SharedStore::~SharedStore() = default;

void SharedStore::NoteThreads() {
  if (syscalls_) syscalls_->Rescan();
  std::map<pid_t, ThreadCpu> now = ReadThreadCpu();
  std::lock_guard<std::mutex> lock(threads_mu_);
  for (auto& [tid, t] : now) seen_threads_[tid] = std::move(t);
}

IoSnapshot SharedStore::Snapshot() {
  IoSnapshot s;
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    auto us = [](const timeval& t) {
      return static_cast<uint64_t>(t.tv_sec) * 1000000 + static_cast<uint64_t>(t.tv_usec);
    };
    s.cpu_user_us = us(ru.ru_utime);
    s.cpu_sys_us = us(ru.ru_stime);
    s.voluntary_switches = static_cast<uint64_t>(ru.ru_nvcsw);
    s.involuntary_switches = static_cast<uint64_t>(ru.ru_nivcsw);
  }
  NoteThreads();
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    s.threads = seen_threads_;
  }
  if (syscalls_) {
    s.have_syscalls = true;
    s.syscalls = syscalls_->Read();
  }
  s.metrics = store_->GetMetrics();
  s.store = s.metrics.stats;
  const auto& c = rocksdb_io_->counts();
  for (int k = 0; k < RocksDbIoCounter::kKinds; ++k) {
    s.rocksdb_bytes[k] = c.bytes[k].load();
    s.rocksdb_files[k] = c.files[k].load();
  }
  s.rocksdb_syncs = c.syncs.load();
  const WriteRequests::Counts requests = c.requests.Read();
  s.rocksdb_writes = requests.requests;
  s.rocksdb_seeks = requests.noncontiguous;
  SnapshotRocksDbStatistics(*store_, &s);
  return s;
}

absl::Status SharedStore::Open() {
  const auto start = std::chrono::steady_clock::now();
  const MetadataLocation meta = MetadataLocation::OwnDb(config_.EffectiveDbPath());
  Registry& reg = TheRegistry();
  const std::string key = Canonical(config_.log_dev);
  if (config_.mkfs && !reg.made.count(key)) {
    // A new store gets a new RocksDB: mkfs alone would only delete the old
    // store's keys, leaving its SST files and tombstones to be compacted
    // away during the run — someone else's work in this run's numbers.
    rocksdb::Status d = rocksdb::DestroyDB(config_.EffectiveDbPath(), rocksdb::Options());
    if (!d.ok() && !d.IsNotFound()) {
      return absl::UnavailableError(absl::StrCat("pgring engine: mkfs: removing the old RocksDB at ",
                                                 config_.EffectiveDbPath(), ": ", d.ToString()));
    }
    MkfsOptions m;
    m.backend = config_.backend;
    m.chunk_size = config_.chunk_size;
    m.force = true;
    absl::Status s = Mkfs(config_.log_dev, meta, m);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("pgring engine: mkfs: ", s.message()));
    reg.made.insert(key);
  }
  rocksdb_io_ = std::make_shared<RocksDbIoCounter>();
  Options options = StoreOptions(config_);
  options.rocksdb_env = RocksDbIoCounter::NewEnv(rocksdb_io_);
  auto store = Store::Open(config_.log_dev, meta, options);
  if (!store.ok()) {
    std::string hint;
    if (absl::IsUnavailable(store.status())) {
      hint = " (another process holds it: jobs in separate processes cannot share a store; "
             "with numjobs>1 or several jobs on one pgring_log_dev, set thread=1)";
    } else if (absl::IsFailedPrecondition(store.status()) || absl::IsNotFound(store.status())) {
      hint = " (set pgring_mkfs=1 to make a new store)";
    }
    return absl::Status(store.status().code(),
                        absl::StrCat("pgring engine: opening the store: ", store.status().message(), hint));
  }
  store_ = std::move(*store);
  // The store says which backend it is; pgring_backend only matters at mkfs.
  backend_ = store_->backend();
  // The record of an earlier run is checked before setup writes anything.
  if (!config_.ack_check.empty()) ack_check_ = CheckAcks(config_.ack_check, *store_, config_.pgs);
  model_ = std::make_unique<OsdModel>(config_);
  absl::Status s = model_->Setup(store_.get());
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("pgring engine: creating the PGs: ", s.message()));
  s = store_->Sync();
  if (!s.ok()) return s;
  // The measured run starts here: the devices' counts, and the system
  // calls of every thread there is now (a data file's threads are counted
  // from its open, NoteThreads).
  block_stats_.Add("log", config_.log_dev);
  block_stats_.Add("db", config_.EffectiveDbPath());
  auto counter = SyscallCounter::Start();
  if (counter.ok()) {
    syscalls_ = std::move(*counter);
  } else {
    syscalls_why_ = std::string(counter.status().message());
  }
  after_setup_ = Snapshot();
  setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!config_.ack_file.empty()) {
    std::vector<uint64_t> heads;
    for (uint32_t pg = 0; pg < model_->slots(); ++pg) heads.push_back(model_->Expectation(pg).head);
    auto record = AckRecord::Create(config_.ack_file,
                                    config_.durability != DurabilityMode::kUnsynced, heads);
    if (!record.ok()) return record.status();
    ack_record_ = std::move(*record);
    model_->SetAckRecord(ack_record_.get());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<SharedStore>> SharedStore::Acquire(const EngineConfig& config,
                                                                  uint32_t pool) {
  absl::Status valid = config.Validate();
  if (!valid.ok()) return valid;
  if (pool >= config.pools) {
    return absl::InvalidArgumentError(absl::StrCat("pgring engine: pool index ", pool,
                                                   " of a store with ", config.pools, " pool(s)"));
  }
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lk(reg.mu);
  if (config.preallocate && reg.stores.count(Canonical(config.log_dev)) == 0) {
    // Before the store opens, by the first job (under the registry's lock:
    // zeros written into a hole the store has just written would destroy a
    // record), and before the key is taken: a file made here changes it.
    auto p = PreallocateZeroed(config.log_dev, config.log_size);
    if (!p.ok()) return p.status();
  }
  const std::string key = Canonical(config.log_dev);
  auto it = reg.stores.find(key);
  if (it != reg.stores.end()) {
    const std::string mine = config.StoreSignature();
    const std::string theirs = it->second.store->config().StoreSignature();
    if (mine != theirs) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pgring engine: jobs sharing pgring_log_dev=", config.log_dev,
          " must use the same store and model settings; this job has\n  ", mine,
          "\nbut the job that opened the store has\n  ", theirs));
    }
    if (!config.single_pool_mode && it->second.pools.count(pool) != 0) {
      // Two jobs of one index: two job sections sharing the partition, each
      // numbering its jobs from 0.
      return absl::InvalidArgumentError(absl::StrCat(
          "pgring engine: two jobs on pgring_log_dev=", config.log_dev, " both want pool ",
          kFirstPool + pool, " (each job is a pool of its own, numbered by its place among its "
          "section's numjobs): give each job section its own pgring_log_dev, or share one pool "
          "with pgring_single_pool_mode=1"));
    }
    ++it->second.refs;
    it->second.pools.insert(pool);
    return it->second.store;
  }
  std::shared_ptr<SharedStore> store(new SharedStore(config));
  absl::Status s = store->Open();
  if (!s.ok()) return s;
  reg.stores[key] = Registry::Entry{store, 1, {pool}};
  return store;
}

absl::Status SharedStore::Release(std::shared_ptr<SharedStore> store, uint32_t pool) {
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lk(reg.mu);
  auto it = reg.stores.find(Canonical(store->config().log_dev));
  if (it == reg.stores.end() || it->second.store != store) {
    return absl::InternalError("pgring engine: releasing a store that is not registered");
  }
  if (auto p = it->second.pools.find(pool); p != it->second.pools.end()) it->second.pools.erase(p);
  if (--it->second.refs > 0) return absl::OkStatus();
  reg.stores.erase(it);
  // Finish under the registry lock: a job that starts now (stonewall) must
  // not open the partition before this one has closed it.
  return store->Finish();
}

absl::Status SharedStore::Finish() {
  std::vector<std::string> problems;
  absl::Status sync = store_->Sync();
  if (!sync.ok()) problems.push_back(absl::StrCat("final sync: ", sync.ToString()));

  ReportInputs in;
  in.config = &config_;
  in.backend = backend_;
  in.model = model_.get();
  in.stats = &stats_;
  in.setup_seconds = setup_seconds_;
  in.after_setup = after_setup_;
  in.at_end = Snapshot();
  in.block_devices = block_stats_.Read(&in.block_unavailable);
  in.syscalls_why = syscalls_why_;
  in.ack_check = &ack_check_;
  if (ack_check_.ran && !ack_check_.ok()) {
    problems.push_back(absl::StrCat("ack check (", config_.ack_check, "): ", ack_check_.error_count,
                                    " problem(s): ", absl::StrJoin(ack_check_.errors, "; ")));
  }
  for (uint32_t pg = 0; pg < model_->slots(); ++pg) {
    auto st = store_->GetPgStats(model_->PgIdOf(pg));
    if (st.ok()) in.pgs.push_back(*st);
  }
  absl::Status close = store_->Close();
  if (!close.ok()) problems.push_back(absl::StrCat("close: ", close.ToString()));
  store_.reset();

  if (config_.verify_log) {
    in.verified = true;
    Options o = StoreOptions(config_);
    o.read_only = true;
    auto reopened = Store::Open(config_.log_dev, MetadataLocation::OwnDb(config_.EffectiveDbPath()), o);
    if (!reopened.ok()) {
      in.check_status = reopened.status();
      problems.push_back(absl::StrCat("log check: reopening the store: ", reopened.status().ToString()));
    } else {
      in.check = model_->CheckStore(**reopened);
      if (in.check.error_count > 0) {
        problems.push_back(absl::StrCat("log check: ", in.check.error_count, " mismatch(es): ",
                                        absl::StrJoin(in.check.errors, "; ")));
      }
      absl::Status c = (*reopened)->Close();
      if (!c.ok()) problems.push_back(absl::StrCat("log check: close: ", c.ToString()));
    }
  }
  if (!config_.stats_file.empty()) {
    absl::Status w = WriteReport(config_.stats_file, BuildReport(in));
    if (!w.ok()) problems.push_back(absl::StrCat("report: ", w.ToString()));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("pgring engine: ", absl::StrJoin(problems, "\n")));
}

}  // namespace pgring::fio
