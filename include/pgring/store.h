// pgring/store.h — the PG log store: make one, open it, commit transactions,
// read logs back.
//
// A store is a partition (a block device or a preallocated file) plus
// metadata in RocksDB. pgring can own its RocksDB (opened from a path) or
// live in a column family of the embedder's RocksDB, in which case the
// embedder's keys and pgring's pointers commit in the same write batch.
//
// Thread safety: every method may be called from any thread. Transactions on
// different PGs proceed in parallel; a PG's operations are applied in the
// order their transactions were submitted.
//
// Errors: nothing throws. kDataLoss = damage on disk, kResourceExhausted =
// a bound or the partition is full, kNotFound = a missing PG,
// kAlreadyExists = a PG that exists, kInvalidArgument = a bad argument
// (non-increasing version, oversized payload, a PG id with a shard below -1),
// kOutOfRange = a version range
// past the end, kFailedPrecondition = the store failed earlier (an I/O error
// is sticky: reopen to recover) or is read-only.
#ifndef PGRING_STORE_H_
#define PGRING_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/metrics.h"
#include "pgring/options.h"
#include "pgring/transaction.h"
#include "pgring/types.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace pgring {

class Device;

// Called once per submitted transaction, from a pgring thread, when it is
// committed (OK) or has failed (kUnsynced: acknowledged; see DurabilityMode).
// Callbacks fire in submission order, one at a time, on a thread of the
// store's own that holds no pgring lock and is never the thread that
// completed an I/O (the partition's or a CommitGate's) nor the submitter's:
// so a callback may Submit and may read (ReadEntries, ReadInfo, ...), even
// entries whose writes are still in flight. It must not block for long (it
// holds back the callbacks after it) and must not wait for a commit: no
// Commit, Sync or Close from a callback.
using CommitCallback = std::function<void(absl::Status)>;

// Where the store's metadata lives.
struct MetadataLocation {
  // Either a path where pgring opens (or, at mkfs, creates) its own RocksDB...
  std::string db_path;
  // ...or the embedder's open RocksDB and the column family pgring may use.
  // The DB must outlive the store.
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* column_family = nullptr;

  static MetadataLocation OwnDb(std::string path) {
    MetadataLocation m;
    m.db_path = std::move(path);
    return m;
  }
  static MetadataLocation SharedDb(rocksdb::DB* db,
                                   rocksdb::ColumnFamilyHandle* cf) {
    MetadataLocation m;
    m.db = db;
    m.column_family = cf;
    return m;
  }
};

// Writes a new, empty store: the label on the partition and the store's
// metadata in RocksDB. Refuses a partition that already carries a pgring
// label unless `options.force`.
absl::Status Mkfs(const std::string& device_path, const MetadataLocation& meta,
                  const MkfsOptions& options);
// The same on a device the caller opened (pgring/device.h), e.g. an
// in-memory one.
absl::Status Mkfs(std::shared_ptr<Device> device, const MetadataLocation& meta,
                  const MkfsOptions& options);

class Store {
 public:
  // Opens a store made by Mkfs, recovering every PG's log.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      const std::string& device_path, const MetadataLocation& meta,
      const Options& options);
  // The same on a device the caller opened (pgring/device.h); the store
  // keeps it. The device's own options apply: Options::io_engine and
  // io_queue_depth are for a device the store opens from a path.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      std::shared_ptr<Device> device, const MetadataLocation& meta,
      const Options& options);

  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Validates `txn` against the current state (every earlier submitted
  // transaction included) and starts its writes. On a validation error
  // nothing is changed, `done` is not called, and the error is returned.
  // Otherwise returns OK and calls `done` exactly once, later, with the
  // commit's outcome. Reads reflect the transaction from the moment Submit
  // returns OK, as an OSD's in-memory PG log does.
  virtual absl::Status Submit(Transaction txn, CommitCallback done) = 0;

  // Submit and wait for the commit.
  absl::Status Commit(Transaction txn);

  // Batches the partition writes of the Submit calls this thread makes
  // until UnplugWrites(): they are queued and sent to the device together,
  // in one system call, at UnplugWrites() (or earlier if the device's queue
  // fills). For an embedder that submits several transactions at once (an
  // OSD draining its op queue; fio's queue/commit): fewer system calls, and
  // one notification of the disk for the batch instead of one per write.
  // Nothing waits on a plugged write: call UnplugWrites() before waiting
  // for any commit (Commit(), Sync(), Close(), or a callback). Calls nest.
  // The RocksDB backend writes nothing to the partition and ignores both;
  // so does the ring backend in LogLayout::kStream, where the commit thread
  // issues every partition write, each commit group's in one system call.
  //
  //   store->PlugWrites();
  //   for (auto& op : ready_ops) store->Submit(BuildTxn(op), Done(op));
  //   store->UnplugWrites();
  virtual void PlugWrites() {}
  virtual void UnplugWrites() {}

  // Makes everything acknowledged so far durable (kUnsynced) and waits for
  // every submitted transaction to finish.
  virtual absl::Status Sync() = 0;

  // Reads. Versions are inclusive. Entries come in version order.
  virtual absl::StatusOr<std::vector<PgId>> ListPgs() const = 0;
  virtual absl::StatusOr<std::vector<LogEntry>> ReadEntries(
      const PgId& pg, const Version& from = Version::Min(),
      const Version& to = Version::Max()) const = 0;
  // The latest info; kNotFound if the PG never had one.
  virtual absl::StatusOr<std::string> ReadInfo(const PgId& pg) const = 0;
  virtual absl::StatusOr<std::vector<LogEntry>> ReadDups(
      const PgId& pg) const = 0;
  virtual absl::StatusOr<PgStats> GetPgStats(const PgId& pg) const = 0;
  virtual StoreStats GetStoreStats() const = 0;
  virtual Backend backend() const = 0;

  // Every counter and distribution an OSD turns into perf counters, in one
  // snapshot (pgring/metrics.h). Cheap enough to call every second: no PG is
  // walked beyond what GetStoreStats() walks.
  virtual StoreMetrics GetMetrics() const = 0;

  // Counters and statistics by name, as RocksDB's DB::GetProperty and
  // GetMapProperty give them: true and `*value` set for a property the store
  // has in that form, false otherwise (an unknown name, a map-only property
  // asked as a string or the reverse, statistics that are not collected).
  //
  //   "pgring.stats"            map: every StoreStats counter under its field
  //                             name ("pgs", "commit_groups", ...), decimal;
  //                             as a string, one "name: value" line each.
  //   "pgring.<field>"          string: one StoreStats counter, decimal, e.g.
  //                             "pgring.transactions_committed".
  //   "pgring.rocksdb_tickers"  map: every ticker of the RocksDB's statistics
  //                             (rocksdb::Statistics::getTickerMap: keys such
  //                             as "rocksdb.wal.bytes"), decimal. pgring's own
  //                             RocksDB always collects them; an embedder's
  //                             RocksDB when its DBOptions::statistics is set.
  //   "rocksdb.<name>"          RocksDB's own property on the column family
  //                             that holds pgring's keys, passed through:
  //                             "rocksdb.cfstats" (string or map),
  //                             "rocksdb.stats", "rocksdb.estimate-num-keys",
  //                             ... A DB-wide one describes the whole DB (an
  //                             embedder's keys included).
  //
  //   std::map<std::string, std::string> cf;
  //   if (store->GetMapProperty("rocksdb.cfstats", &cf)) use(cf["compaction.Sum.WriteGB"]);
  virtual bool GetProperty(std::string_view /*property*/, std::string* /*value*/) const {
    return false;
  }
  virtual bool GetMapProperty(std::string_view /*property*/,
                              std::map<std::string, std::string>* /*value*/) const {
    return false;
  }

  // Waits for in-flight transactions, commits what is pending, and closes.
  // Called by the destructor if not called before. From the moment Close
  // begins, Submit, Sync and the reads (ListPgs, ReadEntries, ReadInfo,
  // ReadDups, GetPgStats) return kFailedPrecondition ("store is closed"),
  // also from other threads and from callbacks while it runs; a call that
  // got in before still completes (a submitted transaction commits and its
  // callback fires). GetStoreStats and the properties keep answering.
  // Calling it again returns OK.
  virtual absl::Status Close() = 0;

 protected:
  Store() = default;
};

}  // namespace pgring

#endif  // PGRING_STORE_H_
