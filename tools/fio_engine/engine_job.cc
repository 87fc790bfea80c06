#include "engine_job.h"

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace pgring::fio {

int ErrnoOf(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return 0;
    case absl::StatusCode::kInvalidArgument: return EINVAL;
    case absl::StatusCode::kOutOfRange: return EINVAL;
    case absl::StatusCode::kResourceExhausted: return ENOSPC;
    case absl::StatusCode::kNotFound: return ENOENT;
    case absl::StatusCode::kAlreadyExists: return EEXIST;
    case absl::StatusCode::kPermissionDenied: return EACCES;
    case absl::StatusCode::kUnavailable: return EBUSY;
    case absl::StatusCode::kUnimplemented: return ENOTSUP;
    case absl::StatusCode::kDataLoss: return EBADMSG;
    default: return EIO;  // kFailedPrecondition (a failed store), kInternal, ...
  }
}

absl::StatusOr<std::unique_ptr<EngineJob>> EngineJob::Create(const EngineConfig& config,
                                                             uint32_t iodepth, uint32_t pool) {
  auto store = SharedStore::Acquire(config, pool);
  if (!store.ok()) return store.status();
  return std::unique_ptr<EngineJob>(new EngineJob(std::move(*store), iodepth, pool));
}

EngineJob::EngineJob(std::shared_ptr<SharedStore> store, uint32_t iodepth, uint32_t pool)
    : store_(std::move(store)), iodepth_(iodepth == 0 ? 1 : iodepth), pool_(pool) {}

EngineJob::~EngineJob() { Close().IgnoreError(); }

void EngineJob::WaitIdle() {
  std::unique_lock<std::mutex> lk(cq_->mu);
  cq_->cv.wait(lk, [&] { return cq_->in_flight == 0; });
}

absl::Status EngineJob::Close() {
  if (!store_) return absl::OkStatus();
  Commit();
  WaitIdle();
  files_.clear();  // fio closes its files first; this covers an aborted job
  return SharedStore::Release(std::move(store_), pool_);
}

absl::StatusOr<DataFile*> EngineJob::OpenFile(const std::string& path) {
  const EngineConfig& c = store_->config();
  // With a shared flush the store's partition flush covers the data write:
  // the gate opens as soon as it completes.
  const bool flush = c.durability != DurabilityMode::kUnsynced && !c.share_flush;
  auto file = DataFile::Open(path, c.io_engine == IoEngine::kIoUring, iodepth_ * 2,
                             /*flush_before_commit=*/flush);
  if (!file.ok()) return file.status();
  files_.push_back(std::move(*file));
  // Its completion and flusher threads were born just now: their system
  // calls are counted from here, before the file's first write; and its
  // device's writes, unless another of the store's paths is on it.
  store_->NoteThreads();
  store_->NoteDataFile(path);
  return files_.back().get();
}

void EngineJob::CloseFile(DataFile* file) {
  Commit();
  for (auto it = files_.begin(); it != files_.end(); ++it) {
    if (it->get() != file) continue;
    EngineStats& stats = store_->stats();
    store_->NoteThreads();
    std::unique_ptr<DataFile> f = std::move(*it);
    files_.erase(it);
    const uint64_t bytes = f->bytes_written(), flushes = f->flushes();
    const WriteRequests::Counts requests = f->requests().Read();
    f.reset();  // waits for its writes in flight
    stats.data_bytes_written += bytes;
    stats.data_flushes += flushes;
    stats.data_writes += requests.requests;
    stats.data_seeks += requests.noncontiguous;
    return;
  }
}

absl::Status EngineJob::QueueWrite(void* token, DataFile* file, uint64_t offset, const char* data,
                                   size_t len) {
  EngineStats& stats = store_->stats();
  const uint64_t object = offset / store_->config().object_size;
  auto gate = std::make_shared<CommitGate>();
  const int64_t start = EngineStats::NowNs();
  stats.NoteSubmit(start);
  {
    std::lock_guard<std::mutex> lk(cq_->mu);
    ++cq_->in_flight;
  }
  auto done = [cq = cq_, token, &stats](OsdModel::WriteOp, absl::Status s) {
    const int64_t now = EngineStats::NowNs();
    if (s.ok()) {
      stats.writes_committed.fetch_add(1, std::memory_order_relaxed);
      stats.NoteCommit(now);
    } else {
      stats.writes_failed.fetch_add(1, std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lk(cq->mu);
    cq->done.push_back(Completion{token, ErrnoOf(s)});
    --cq->in_flight;
    cq->cv.notify_all();
  };
  // Plugged until Commit(): the batch's ring writes go to the kernel
  // together, and so do its data writes.
  if (!store_plugged_) {
    store_->store()->PlugWrites();
    store_plugged_ = true;
  }
  if (std::find(plugged_files_.begin(), plugged_files_.end(), file) == plugged_files_.end()) {
    file->Plug();
    plugged_files_.push_back(file);
  }
  auto op = store_->model().SubmitWrite(store_->store(), object, gate, std::move(done), pool_);
  if (!op.ok()) {
    stats.writes_failed.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lk(cq_->mu);
    --cq_->in_flight;
    cq_->cv.notify_all();
    return op.status();
  }
  stats.writes_submitted.fetch_add(1, std::memory_order_relaxed);
  stats.write_bytes.fetch_add(len, std::memory_order_relaxed);
  // The transaction's ring (or RocksDB) writes have started; the data write
  // runs beside them and opens the gate the commit waits for.
  file->Write(offset, data, len, std::move(gate));
  return absl::OkStatus();
}

void EngineJob::Commit() {
  if (store_plugged_) {
    store_->store()->UnplugWrites();
    store_plugged_ = false;
  }
  for (DataFile* f : plugged_files_) f->Unplug();
  plugged_files_.clear();
}

absl::Status EngineJob::Read(DataFile* file, uint64_t offset, char* buf, size_t len) {
  EngineStats& stats = store_->stats();
  stats.reads.fetch_add(1, std::memory_order_relaxed);
  stats.read_bytes.fetch_add(len, std::memory_order_relaxed);
  return file->Read(offset, buf, len);
}

absl::Status EngineJob::Sync(DataFile* file) {
  Commit();
  store_->stats().syncs.fetch_add(1, std::memory_order_relaxed);
  absl::Status s = store_->store()->Sync();
  if (!s.ok()) return s;
  return file != nullptr ? file->Flush() : absl::OkStatus();
}

void EngineJob::NoteTrim() { store_->stats().trims.fetch_add(1, std::memory_order_relaxed); }

int EngineJob::Reap(unsigned min, unsigned max, const struct timespec* timeout) {
  Commit();
  std::unique_lock<std::mutex> lk(cq_->mu);
  auto ready = [&] { return cq_->done.size() >= min; };
  if (timeout != nullptr) {
    const auto d = std::chrono::seconds(timeout->tv_sec) + std::chrono::nanoseconds(timeout->tv_nsec);
    cq_->cv.wait_for(lk, d, ready);
  } else {
    cq_->cv.wait(lk, ready);
  }
  const size_t n = std::min<size_t>(cq_->done.size(), max);
  events_.assign(cq_->done.begin(), cq_->done.begin() + static_cast<std::ptrdiff_t>(n));
  cq_->done.erase(cq_->done.begin(), cq_->done.begin() + static_cast<std::ptrdiff_t>(n));
  return static_cast<int>(n);
}

}  // namespace pgring::fio
