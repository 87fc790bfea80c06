// commit_pipeline.h — the commit point. Transactions enter in submission
// order; once a transaction's ring writes and the embedder's writes (its
// CommitGates) have completed it is ready; the committer thread takes the
// ready prefix of the queue as one group, writes all the group's RocksDB
// batches as one synced write, and then fires the callbacks in order. One
// synced write for many transactions: group commit. The durability mode
// decides the group size and when the callback fires (see pgring/options.h).
//
// With a LogWriter (the log stream layout) the committer writes the log
// itself, and the ring writes staged with it: a transaction whose gates are
// done and whose writes are all the committer's (Txn::log_writes) wakes the
// committer, which starts every write staged by then in one round and waits
// for it, then commits the ready prefix (flushing the partition itself: no
// flusher thread). While it commits a group, it starts the round of what
// was staged since before the group's flush and reaps it after the group's
// RocksDB sync, before the group's callbacks, so the round overlaps the sync
// and its transactions make the next group. The committer is woken by what
// wakes it with no log at all (the gates), and no device thread wakes for
// the log (docs/DESIGN.md, "Who runs what").
//
// The records a group's pointers cover must be durable before that RocksDB
// write. In the durable modes a flusher thread flushes the partition as soon
// as a transaction's ring writes have completed, without waiting for its
// gates: the partition flush then runs alongside the embedder's own data
// flush and the previous group's RocksDB sync instead of after them (the
// three are flushes of the same disk in an OSD; issued together, the block
// layer can serve them with fewer cache flushes). A transaction can commit
// once a flush that started after its last ring write completed has
// finished. In kUnsynced mode the committer flushes just before it writes,
// as rarely as the mode allows.
//
// With Options::gated_writes_share_flush the embedder's writes are on the
// same disk and its gates open when those writes complete, unflushed; the
// partition flush must then start after the gates open, and it makes both
// durable. There is no data flush left to overlap with, so the committer
// flushes, once per group, just before the RocksDB write: fewer flushes per
// group than flushing as soon as ring writes complete
// (docs/decisions/2026-11-22-first-rounds.md).
//
// With Options::metadata_sync_flushes_partition the synced RocksDB write is
// a cache flush of the partition's disk too: the transactions whose writes
// (and gates) had all completed when a group's RocksDB write started are
// durable once it returns, and a later group made only of them skips the
// partition flush. One cache flush per group instead of two in steady state
// (docs/DESIGN.md, "The RocksDB sync as the next group's flush").
//
// Any failure (a ring write, the flush, the RocksDB write) is sticky: every
// queued transaction fails with it and the store refuses new ones until it
// is reopened. What was committed before stays committed.
//
// Where callbacks run: never on the thread that completed an I/O (a ring
// write's, a gate's) nor on a submitter's, and never under a lock. In the
// durable modes the committer fires them, after the group's commit; in
// kUnsynced a thread of their own, the acker, fires them in submission
// order, each as soon as it and every earlier transaction are ready (or
// have finished). Why: a callback may Submit, and Submit takes the staging
// lock exclusively; a reader holding it shared may be waiting for a ring
// write, and that write's completion, or the next write of the PG that the
// completion starts, must never wait behind a callback (issue 14: kUnsynced
// acks ran on the io_uring completion thread and deadlocked against
// ReadEntries). The acker keeps that off the completion thread at the cost
// of one thread hand-off per acknowledgement.
#ifndef PGRING_STORE_COMMIT_PIPELINE_H_
#define PGRING_STORE_COMMIT_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "device/block_device.h"
#include "pgring/log_sink.h"
#include "pgring/metrics.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "store/group_batch.h"
#include "util/histogram.h"
#include "util/sync.h"

namespace rocksdb {
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace pgring {

class CommitPipeline {
 public:
  // How long the flusher waits for ring writes in flight to join a flush.
  static constexpr absl::Duration kFlushCoalesce = absl::Microseconds(500);

  struct Txn {
    ~Txn() { LeaveInFlight(); }
    // NewTxn's count of transactions in flight, which this one leaves just
    // before its callback fires (Finish), or when it goes if it never
    // reached the pipeline (a Submit refused after NewTxn).
    std::shared_ptr<std::atomic<uint64_t>> in_flight;
    std::atomic<bool> counted{false};
    void LeaveInFlight() {
      if (counted.exchange(false)) in_flight->fetch_sub(1);
    }
    // A caller's transaction (Submit), not one the store makes for itself
    // (the cleaner's restatements): only those count in
    // transactions_committed, commit_latency_ns, group_size and the
    // in-flight limit (NewTxn).
    bool from_caller = true;
    std::unique_ptr<rocksdb::WriteBatch> batch;
    // The store's whole-value keys in `batch` (StoreKeyWriter): a group
    // writes only the last of each.
    std::vector<StoreKeyWrite> store_keys;
    CommitCallback done;
    // Runs on the committer thread once the commit is durable, before `done`
    // (the ring backend releases chunks and advances durable heads here).
    std::function<void()> on_durable;
    // Ring writes and gates still running. Starts at writes + gates + 1; the
    // submitter drops the extra one (IoDone) after starting them all.
    std::atomic<int> pending_ios{1};
    // Ring writes alone still running (RingWriteDone), set before the first
    // starts.
    std::atomic<int> pending_writes{0};
    // Of its writes, those the LogWriter issues (its stream record, and in
    // the stream layout its ring writes), still to finish: set before
    // Enqueue, each dropped before its RingWriteDone. Once they are all the
    // transaction still waits for, the committer is woken to write them.
    std::atomic<int> log_writes{0};
    // The partition must be flushed before the commit: the transaction has
    // ring writes, or gates whose writes the flush covers
    // (Options::gated_writes_share_flush).
    bool needs_flush = false;
    // Set under the pipeline's lock.
    bool ready = false;
    // kUnsynced: the committer is done with it; `outcome` is its commit's
    // status, which the acker reports if it had not acknowledged it yet.
    bool settled = false;
    absl::Status outcome;
    bool written = false;          // every ring write has completed
    bool flush_started = false;    // a flush covering them has started
    bool records_durable = false;  // ... and has finished
    absl::Time ready_time;
    // For the metrics: when it was enqueued (Submit accepted it), when its
    // ring writes had all completed (with `written`), and how many gates it
    // waits for (set before the submitter's guard is dropped).
    absl::Time enqueue_time;
    absl::Time written_time;
    size_t gates = 0;
    // A reader issued one of its log writes (RingStore::WaitWritten) as a
    // plain write, not one of the LogWriter's durable ones: its records
    // need the partition flush.
    std::atomic<bool> written_off_round{false};
  };

  // The log's writer, driven by the committer thread alone, under none of
  // the pipeline's locks (the ring backend's CommitWriter): the thread that
  // commits a group writes its log, as RocksDB's WAL writer does, and no
  // other thread wakes for it.
  class LogWriter {
   public:
    virtual ~LogWriter() = default;
    // Starts the writes of every log record (and ring write) staged so far,
    // unless a round is in flight; true if it started any (or failed the
    // staged records). `durable` (the same on every call): each write is
    // durable once it is reported done (BlockDevice::NewCallerWrites).
    virtual bool StartWrite(bool durable) = 0;
    // Waits for the round StartWrite started and reports each write's
    // transaction (RingWriteDone) before it returns; false if none was in
    // flight.
    virtual bool FinishWrite() = 0;
  };

  // `device` may be null (nothing to flush: the RocksDB backend).
  CommitPipeline(rocksdb::DB* db, BlockDevice* device, const Options& options,
                 LogSink* log, LogWriter* log_writer = nullptr);
  ~CommitPipeline();
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // The sticky failure, or OK.
  absl::Status failure() const;

  // A new transaction. A caller's is counted in flight until its callback
  // fires (kResourceExhausted when Limits::max_transactions_in_flight are);
  // the store's own (from_caller false: the stream cleaner's, one at a
  // time) is not, so it never takes a caller's place.
  absl::StatusOr<std::shared_ptr<Txn>> NewTxn(bool from_caller = true);

  // Appends `t` to the queue. Callers serialise Enqueue calls in the order
  // their writes were planned.
  void Enqueue(std::shared_ptr<Txn> t);

  // One of `t`'s gates (or the submitter's guard) finished.
  void IoDone(Txn* t, const absl::Status& s);
  // One of `t`'s ring writes finished (counts for IoDone too).
  void RingWriteDone(Txn* t, const absl::Status& s);
  // The LogWriter has writes queued whose transactions wait for nothing
  // else (a PG's next ring write, queued when the one before it finished):
  // the committer writes again.
  void LogWanted();

  // Waits until every transaction enqueued before the call has committed or
  // failed, forcing the commit of acknowledged ones (kUnsynced).
  absl::Status Sync();

  // Commits what can be committed, fails the rest, stops the thread.
  void Stop();

  // The pipeline's distributions (pgring/metrics.h): commit latency, flush
  // latency, RocksDB write latency, gate wait, group size.
  void AddMetrics(StoreMetrics* m) const;

  uint64_t committed_txns() const { return committed_txns_.load(); }
  uint64_t commit_groups() const { return commit_groups_.load(); }
  // Store-key writes a later write of the same key in their group replaced.
  uint64_t superseded_store_writes() const { return superseded_store_writes_.load(); }

 private:
  void Run();
  void FlushLoop();
  // kUnsynced: fires the callbacks (see the header comment).
  void AckLoop();
  bool Committable(const Txn& t) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool CommitTriggered() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Flushes the partition first if `flush`, then writes the group's batches.
  // `*synced`: a synced RocksDB write was made (the group had keys).
  absl::Status WriteGroup(const std::vector<std::shared_ptr<Txn>>& group, bool flush,
                          bool* synced) ABSL_LOCKS_EXCLUDED(mu_);
  // Flushes the partition; an error is named as the flush's.
  absl::Status FlushPartition();
  // The partition must be flushed before `t` commits.
  static bool NeedsFlush(const Txn& t);
  // Fires `t`'s callback with `s`, timing its commit latency.
  void Finish(Txn* t, const absl::Status& s);
  void SetFailure(const absl::Status& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  rocksdb::DB* const db_;
  BlockDevice* const device_;
  // Limits::max_transactions_in_flight, and the count NewTxn keeps (shared
  // with the transactions, which may outlive the pipeline).
  const uint64_t max_in_flight_;
  const std::shared_ptr<std::atomic<uint64_t>> in_flight_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  const DurabilityMode mode_;
  const absl::Duration unsynced_delay_;
  const size_t max_group_;
  // Options::metadata_sync_flushes_partition, in a durable mode with a
  // device: each group's synced RocksDB write also makes durable the writes
  // of the transactions that were ready when it started.
  const bool sync_covers_;
  // The flusher thread runs (durable modes with a device to flush, unless
  // the gates share the flush or the RocksDB sync covers it).
  const bool eager_flush_;
  // The LogWriter's writes are durable when done (LogWriter::StartWrite),
  // so its transactions' records need no flush of the partition and their
  // group makes none: with a LogWriter and a device in the durable modes,
  // unless the gates share the partition's flush (their writes need it).
  // One write-through write per round in place of a flush in the
  // committer's path between the records and the RocksDB sync.
  const bool durable_log_writes_;
  LogSink* const log_;
  // The log's writer, or null (ring writes are issued where they are
  // staged and complete on the device's thread).
  LogWriter* const log_writer_;

  mutable Mutex mu_;
  CondVar work_cv_;      // the committer: a transaction got ready, stop, sync
  CondVar finished_cv_;  // Sync(): transactions finished
  CondVar flush_cv_;     // the flusher: a transaction's writes completed, stop
  CondVar ack_cv_;       // the acker: the oldest unacknowledged got ready or settled
  std::deque<std::shared_ptr<Txn>> queue_ ABSL_GUARDED_BY(mu_);
  // kUnsynced: every transaction whose callback has not fired, in
  // submission order, and how many callbacks have fired.
  std::deque<std::shared_ptr<Txn>> unacked_ ABSL_GUARDED_BY(mu_);
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  bool acker_stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  uint64_t enqueued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  int sync_waiters_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // A transaction waits for nothing but its log record: the committer
  // writes the staged log.
  bool log_wanted_ ABSL_GUARDED_BY(mu_) = false;
  // Transactions written but not yet covered by a started flush.
  size_t unflushed_ ABSL_GUARDED_BY(mu_) = 0;
  bool flusher_stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> committed_txns_{0};
  std::atomic<uint64_t> commit_groups_{0};
  std::atomic<uint64_t> superseded_store_writes_{0};
  Histogram commit_latency_;
  Histogram flush_latency_;
  Histogram rocksdb_write_latency_;
  Histogram gate_wait_;
  Histogram group_size_;
  // The committer's alone.
  std::vector<GroupMember> members_;
  std::vector<std::shared_ptr<Txn>> covered_;
  GroupBatchMerger merger_;
  std::thread thread_;
  std::thread flusher_;
  std::thread acker_;
};

}  // namespace pgring

#endif  // PGRING_STORE_COMMIT_PIPELINE_H_
