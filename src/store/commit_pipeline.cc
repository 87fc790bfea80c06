#include "store/commit_pipeline.h"

#include <algorithm>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/thread_name.h"

namespace pgring {

CommitPipeline::CommitPipeline(rocksdb::DB* db, BlockDevice* device,
                               const Options& options, LogSink* log,
                               LogWriter* log_writer)
    : db_(db),
      device_(device),
      max_in_flight_(options.limits.max_transactions_in_flight),
      mode_(options.durability),
      unsynced_delay_(absl::FromChrono(options.unsynced_max_delay)),
      max_group_(options.durability == DurabilityMode::kSyncEach
                     ? 1
                     : std::max<uint32_t>(1, options.max_group_size)),
      sync_covers_(device != nullptr && options.durability != DurabilityMode::kUnsynced &&
                   options.metadata_sync_flushes_partition),
      eager_flush_(device != nullptr && options.durability != DurabilityMode::kUnsynced &&
                   !options.gated_writes_share_flush && !sync_covers_ && !log_writer),
      durable_log_writes_(device != nullptr && log_writer != nullptr &&
                          options.durability != DurabilityMode::kUnsynced &&
                          !options.gated_writes_share_flush),
      log_(log),
      log_writer_(log_writer) {
  thread_ = std::thread([this] {
    NameThisThread("pgring-commit");
    Run();
  });
  if (eager_flush_) {
    flusher_ = std::thread([this] {
      NameThisThread("pgring-flush");
      FlushLoop();
    });
  }
  if (mode_ == DurabilityMode::kUnsynced) {
    acker_ = std::thread([this] {
      NameThisThread("pgring-ack");
      AckLoop();
    });
  }
}

CommitPipeline::~CommitPipeline() { Stop(); }

absl::Status CommitPipeline::failure() const {
  MutexLock l(&mu_);
  return failure_;
}

absl::StatusOr<std::shared_ptr<CommitPipeline::Txn>> CommitPipeline::NewTxn(bool from_caller) {
  if (!from_caller) {
    auto t = std::make_shared<Txn>();
    t->in_flight = in_flight_;
    t->from_caller = false;
    return t;
  }
  const uint64_t n = in_flight_->fetch_add(1) + 1;
  if (n > max_in_flight_) {
    in_flight_->fetch_sub(1);
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%u transactions in flight, the limit (limits.max_transactions_in_flight); wait for "
        "commits",
        n - 1));
  }
  auto t = std::make_shared<Txn>();
  t->in_flight = in_flight_;
  t->counted = true;
  return t;
}

void CommitPipeline::SetFailure(const absl::Status& s) {
  if (failure_.ok()) {
    failure_ = s;
    log_->Log(LogLevel::kError, absl::StrCat("store failed, refusing further writes until "
                                             "reopened: ", s.ToString()));
  }
}

void CommitPipeline::Enqueue(std::shared_ptr<Txn> t) {
  t->enqueue_time = absl::Now();
  MutexLock l(&mu_);
  ++enqueued_;
  if (mode_ == DurabilityMode::kUnsynced) unacked_.push_back(t);
  queue_.push_back(std::move(t));
}

void CommitPipeline::RingWriteDone(Txn* t, const absl::Status& s) {
  if (t->pending_writes.fetch_sub(1) == 1) {
    MutexLock l(&mu_);
    t->written = true;
    t->written_time = absl::Now();
    // Each of its writes was the LogWriter's, durable when done.
    if (durable_log_writes_ && s.ok() && !t->written_off_round.load()) {
      t->records_durable = true;
    }
    if (eager_flush_) {
      ++unflushed_;
      flush_cv_.Signal();
    }
  }
  IoDone(t, s);
}

void CommitPipeline::FlushLoop() {
  MutexLock l(&mu_);
  while (true) {
    while (!flusher_stop_ && unflushed_ == 0) flush_cv_.Wait(&mu_);
    if (flusher_stop_) break;
    // Let the ring writes already in flight join this flush, for a little
    // while: a commit group's writes are issued together and finish close
    // together, and one flush for all of them keeps the partition from
    // adding more flushes to the disk than there are commit groups.
    const absl::Time deadline = absl::Now() + kFlushCoalesce;
    const size_t in_flight = queue_.size();
    auto joined = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      size_t n = 0;
      for (const auto& t : queue_) {
        if (n++ == in_flight) break;
        if (t->needs_flush && !t->written) return false;
      }
      return true;
    };
    while (!flusher_stop_ && !joined() && absl::Now() < deadline) {
      flush_cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    // Every transaction whose writes have all completed by now is covered
    // by the flush that starts next.
    std::vector<std::shared_ptr<Txn>> covered;
    for (const auto& t : queue_) {
      if (t->written && !t->flush_started) {
        t->flush_started = true;
        covered.push_back(t);
      }
    }
    unflushed_ = 0;
    if (covered.empty() || !failure_.ok()) continue;
    mu_.Unlock();
    absl::Status s = FlushPartition();
    mu_.Lock();
    if (!s.ok()) {
      SetFailure(s);
    } else {
      for (const auto& t : covered) t->records_durable = true;
    }
    work_cv_.Signal();
  }
}

void CommitPipeline::IoDone(Txn* t, const absl::Status& s) {
  if (!s.ok()) {
    MutexLock l(&mu_);
    SetFailure(s);
    work_cv_.Signal();
  }
  const int left = t->pending_ios.fetch_sub(1) - 1;
  if (left > 0 && left == t->log_writes.load()) {
    // Only writes the committer makes left: wake it. (If it finished them
    // meanwhile, it wakes for nothing.)
    return LogWanted();
  }
  if (left != 0) return;
  MutexLock l(&mu_);
  t->ready = true;
  t->ready_time = absl::Now();
  if (t->gates > 0) {
    const absl::Time own_done = t->written ? t->written_time : t->enqueue_time;
    gate_wait_.Record(static_cast<uint64_t>(
        std::max<int64_t>(0, absl::ToInt64Nanoseconds(t->ready_time - own_done))));
  }
  work_cv_.Signal();
  // kUnsynced: acknowledged once its writes are done, by the acker, never
  // here: this may be an I/O completion thread (see the header comment).
  if (mode_ == DurabilityMode::kUnsynced) ack_cv_.Signal();
}

void CommitPipeline::LogWanted() {
  MutexLock l(&mu_);
  log_wanted_ = true;
  work_cv_.Signal();
}

void CommitPipeline::AckLoop() {
  // Deliverable: committed or failed (the committer's outcome), or ready
  // while the store has not failed (kUnsynced's acknowledgement: its commit
  // follows). Ready in a failed store: the committer decides, as a group
  // being written when the failure came may still commit.
  auto deliverable = [this](const Txn& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return t.settled || (t.ready && failure_.ok());
  };
  std::vector<std::pair<std::shared_ptr<Txn>, absl::Status>> batch;
  MutexLock l(&mu_);
  while (true) {
    while (!acker_stop_ && (unacked_.empty() || !deliverable(*unacked_.front()))) {
      ack_cv_.Wait(&mu_);
    }
    if (unacked_.empty() || !deliverable(*unacked_.front())) {
      // Stopping: the committer settled everything before it exited.
      break;
    }
    while (!unacked_.empty() && deliverable(*unacked_.front())) {
      const std::shared_ptr<Txn>& t = unacked_.front();
      batch.emplace_back(t, t->settled ? t->outcome : absl::OkStatus());
      unacked_.pop_front();
    }
    mu_.Unlock();
    for (auto& [t, status] : batch) Finish(t.get(), status);
    mu_.Lock();
    // Counted only after the callbacks ran: Sync() returns after them.
    acked_ += batch.size();
    batch.clear();
    finished_cv_.SignalAll();
  }
}

void CommitPipeline::Finish(Txn* t, const absl::Status& s) {
  if (t->from_caller) {
    commit_latency_.Record(
        static_cast<uint64_t>(absl::ToInt64Nanoseconds(absl::Now() - t->enqueue_time)));
  }
  // Before the callback: a caller at the limit that submits from it, or as
  // soon as it returns, is not refused for a transaction that has finished.
  t->LeaveInFlight();
  if (t->done) t->done(s);
}

void CommitPipeline::AddMetrics(StoreMetrics* m) const {
  m->commit_latency_ns = commit_latency_.Snapshot();
  m->flush_latency_ns = flush_latency_.Snapshot();
  m->rocksdb_write_latency_ns = rocksdb_write_latency_.Snapshot();
  m->gate_wait_ns = gate_wait_.Snapshot();
  m->group_size = group_size_.Snapshot();
}

absl::Status CommitPipeline::FlushPartition() {
  const absl::Time start = absl::Now();
  absl::Status s = device_->Flush();
  flush_latency_.Record(static_cast<uint64_t>(absl::ToInt64Nanoseconds(absl::Now() - start)));
  if (s.ok()) return s;
  // The device's error says what failed on it; the callbacks that get it
  // (and Submit's refusals after it) say it was the flush.
  return absl::Status(s.code(), absl::StrCat("partition flush: ", s.message()));
}

bool CommitPipeline::Committable(const Txn& t) const {
  if (!t.ready) return false;
  // Stopping: the committer flushes what the flusher has not.
  if (!t.needs_flush || !eager_flush_ || stop_) return true;
  return t.records_durable;
}

bool CommitPipeline::NeedsFlush(const Txn& t) { return t.needs_flush && !t.records_durable; }

bool CommitPipeline::CommitTriggered() const {
  if (!failure_.ok()) return !queue_.empty();
  if (queue_.empty() || !Committable(*queue_.front())) return false;
  if (mode_ != DurabilityMode::kUnsynced || stop_ || sync_waiters_ > 0) return true;
  size_t ready = 0;
  for (const auto& t : queue_) {
    if (!t->ready || ++ready >= max_group_) break;
  }
  return ready >= max_group_ || absl::Now() - queue_.front()->ready_time >= unsynced_delay_;
}

absl::Status CommitPipeline::WriteGroup(const std::vector<std::shared_ptr<Txn>>& group,
                                        bool flush, bool* synced) {
  *synced = false;
  members_.clear();
  for (const auto& t : group) {
    if (t->batch && t->batch->Count() > 0) members_.push_back({t->batch.get(), &t->store_keys});
  }
  // The records staged since the group formed go out now, alongside its
  // flush and RocksDB sync; the committer reaps them after the sync (Run),
  // or before it where the sync covers them. Not covered by this flush:
  // their transactions are not in the group.
  if (log_writer_) log_writer_->StartWrite(durable_log_writes_);
  // Records first: the pointers must never reach stable storage before the
  // records they cover.
  if (flush && device_ != nullptr) {
    absl::Status s = FlushPartition();
    if (!s.ok()) return s;
  }
  if (members_.empty()) return absl::OkStatus();
  // metadata_sync_flushes_partition: the transactions whose writes have all
  // completed by now. The synced RocksDB write starts after this point, and
  // the cache flush it ends with makes their writes durable too. Taken after
  // the partition flush, as late as possible: what completed during that
  // flush is covered as well, and the log staged by now is written first,
  // so that the sync covers it.
  covered_.clear();
  if (sync_covers_) {
    // The write started before the flush, reaped now: its transactions are
    // covered by the sync too. (Not waited for where it is durable itself.)
    if (log_writer_ && !durable_log_writes_) log_writer_->FinishWrite();
    MutexLock l(&mu_);
    for (const auto& t : queue_) {
      if (t->ready && NeedsFlush(*t)) covered_.push_back(t);
    }
  }
  std::unique_ptr<rocksdb::WriteBatch> merged;
  rocksdb::WriteBatch* batch = members_.front().batch;
  if (members_.size() > 1) {
    uint64_t dropped = 0;
    merged = merger_.Merge(members_, &dropped);
    superseded_store_writes_.fetch_add(dropped);
    batch = merged.get();
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  const absl::Time start = absl::Now();
  rocksdb::Status rs = db_->Write(wo, batch);
  rocksdb_write_latency_.Record(
      static_cast<uint64_t>(absl::ToInt64Nanoseconds(absl::Now() - start)));
  if (!rs.ok()) {
    if (rs.IsNoSpace()) return absl::ResourceExhaustedError(absl::StrCat("RocksDB write: ", rs.ToString()));
    return absl::InternalError(absl::StrCat("RocksDB write: ", rs.ToString()));
  }
  *synced = true;
  return absl::OkStatus();
}

void CommitPipeline::Run() {
  mu_.Lock();
  while (true) {
    while (!stop_ && !log_wanted_ && !CommitTriggered()) {
      if (mode_ == DurabilityMode::kUnsynced && !queue_.empty()) {
        // Wake up when the oldest acknowledged transaction is due.
        work_cv_.WaitWithTimeout(&mu_, unsynced_delay_ / 2 + absl::Milliseconds(1));
      } else {
        work_cv_.Wait(&mu_);
      }
    }
    if (log_writer_ && (log_wanted_ || stop_)) {
      // The log first: what it finishes may complete the group. Stopping,
      // whatever is staged goes before the last groups.
      log_wanted_ = false;
      mu_.Unlock();
      bool wrote = log_writer_->StartWrite(durable_log_writes_);
      wrote |= log_writer_->FinishWrite();
      mu_.Lock();
      if (wrote) continue;
    }
    if (!stop_ && !CommitTriggered()) continue;  // woken for a log already written
    if (!CommitTriggered()) {
      // Stopping, and nothing can commit.
      if (queue_.empty()) break;
      // What is left never got its writes done (the device died): fail it.
      SetFailure(absl::AbortedError("store closed with transactions in flight"));
      continue;
    }
    std::vector<std::shared_ptr<Txn>> group;
    absl::Status status = failure_;
    if (status.ok()) {
      bool flush = false;  // some records are not durable yet
      // metadata_sync_flushes_partition: when the head's records are durable
      // already (the previous group's synced write covered them), the group
      // stops before the first transaction that would need a flush; that
      // one will be covered by this group's synced write instead.
      const bool covered_only = sync_covers_ && !NeedsFlush(*queue_.front());
      while (!queue_.empty() && Committable(*queue_.front()) && group.size() < max_group_) {
        const Txn& t = *queue_.front();
        if (covered_only && NeedsFlush(t)) break;
        flush |= NeedsFlush(t);
        group.push_back(queue_.front());
        queue_.pop_front();
      }
      mu_.Unlock();
      bool synced = false;
      status = WriteGroup(group, flush, &synced);
      mu_.Lock();
      if (!status.ok()) {
        SetFailure(status);
      } else if (synced) {
        for (const auto& t : covered_) t->records_durable = true;
      }
      covered_.clear();
    } else {
      // Failed: every queued transaction fails; those still waiting for
      // their writes are failed too (their writes may still complete).
      group.assign(queue_.begin(), queue_.end());
      queue_.clear();
    }
    mu_.Unlock();
    if (status.ok()) {
      commit_groups_.fetch_add(1);
      const auto from_caller = static_cast<uint64_t>(std::count_if(
          group.begin(), group.end(), [](const auto& t) { return t->from_caller; }));
      committed_txns_.fetch_add(from_caller);
      group_size_.Record(from_caller);
    }
    // The log write WriteGroup started (its transactions may make the next
    // group), reaped before the callbacks: a callback may Submit, and wait
    // for the staging lock behind a reader that waits for one of its writes.
    if (log_writer_) log_writer_->FinishWrite();
    for (auto& t : group) {
      if (status.ok() && t->on_durable) t->on_durable();
      if (mode_ != DurabilityMode::kUnsynced) Finish(t.get(), status);
    }
    mu_.Lock();
    if (mode_ == DurabilityMode::kUnsynced) {
      for (auto& t : group) {
        t->settled = true;
        t->outcome = status;
      }
      ack_cv_.Signal();
    }
    // Counted only after the callbacks ran: Sync() returns after them.
    finished_ += group.size();
    finished_cv_.SignalAll();
    group.clear();
  }
  mu_.Unlock();
}

absl::Status CommitPipeline::Sync() {
  MutexLock l(&mu_);
  uint64_t target = enqueued_;
  ++sync_waiters_;
  work_cv_.Signal();
  // kUnsynced: the callbacks too, which the acker fires apart.
  while (finished_ < target || (mode_ == DurabilityMode::kUnsynced && acked_ < target)) {
    finished_cv_.Wait(&mu_);
  }
  --sync_waiters_;
  return failure_;
}

void CommitPipeline::Stop() {
  {
    MutexLock l(&mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
    work_cv_.Signal();
  }
  thread_.join();
  if (flusher_.joinable()) {
    {
      MutexLock l(&mu_);
      flusher_stop_ = true;
      flush_cv_.Signal();
    }
    flusher_.join();
  }
  if (acker_.joinable()) {
    {
      MutexLock l(&mu_);
      acker_stop_ = true;
      ack_cv_.Signal();
    }
    acker_.join();
  }
}

}  // namespace pgring
