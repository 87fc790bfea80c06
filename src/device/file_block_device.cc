// file_block_device.cc — opening the device, the two write engines (io_uring
// and psync), reads and flushes.
#include "device/file_block_device.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "util/thread_name.h"

// ThreadSanitizer cannot see the happens-before edge that the kernel creates
// between io_uring_submit() on one thread and the CQE reaped on another, so
// the op handed through the ring is annotated explicitly.
#if defined(__SANITIZE_THREAD__)
#define PGRING_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PGRING_TSAN 1
#endif
#endif
#ifdef PGRING_TSAN
#include <sanitizer/tsan_interface.h>
#define PGRING_HANDOFF_RELEASE(p) __tsan_release(p)
#define PGRING_HANDOFF_ACQUIRE(p) __tsan_acquire(p)
#else
#define PGRING_HANDOFF_RELEASE(p) ((void)(p))
#define PGRING_HANDOFF_ACQUIRE(p) ((void)(p))
#endif

namespace pgring {
namespace file_block_device_internal {
namespace {

constexpr uint32_t kMaxUringEntries = 4096;
constexpr uint32_t kMaxPsyncThreads = 16;
// EAGAIN/EINTR on one write are retried this many times before the write
// fails with kUnavailable: transient, but never an endless loop.
constexpr int kMaxTransientRetries = 1000;
constexpr uint64_t kMaxBytesPerSqe = uint64_t{1} << 30;

// Held while an io_uring's rings are mapped (io_uring_queue_init) and
// unmapped (io_uring_queue_exit), process-wide. liburing maps the SQ and CQ
// rings with raw system calls, so ThreadSanitizer never sees them unmapped:
// when a new ring lands at the address of one torn down by an unrelated
// thread (fio's job threads each open their own data file), the new reaper's
// first CQ accesses looked like races with the old reaper's last ones (a
// false report in __io_uring_peek_cqe / io_uring_cqe_seen). Taking one lock
// on both sides orders every teardown before every later set-up, for TSan
// and in fact; it is taken once per device open and close, never per I/O.
std::mutex& RingMappingMutex() {
  static std::mutex mu;
  return mu;
}

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r: returns a pointer to the message (maybe not `buf`).
  const char* text = strerror_r(err, buf, sizeof(buf));
  return absl::StrFormat("%s (errno %d)", text, err);
}

// Maps an errno from an I/O system call to the most precise status code.
// EIO is kInternal, not kDataLoss: the device failed the operation, nothing
// says the data on it is corrupt.
absl::StatusCode CodeForErrno(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case ENOMEM:
      return absl::StatusCode::kResourceExhausted;
    case ENOENT:
    case ENXIO:
    case ENODEV:
      return absl::StatusCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::StatusCode::kPermissionDenied;
    case EINVAL:
      return absl::StatusCode::kInvalidArgument;
    case EAGAIN:
    case EINTR:
    case EBUSY:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status ErrnoError(int err, absl::string_view what) {
  return absl::Status(CodeForErrno(err),
                      absl::StrCat(what, ": ", ErrnoText(err)));
}

std::string IoWhat(const char* op, const std::string& path, uint64_t offset,
                   uint64_t length) {
  return absl::StrFormat("%s %s at offset %d (%d bytes)", op, path, offset,
                         length);
}

// A WriteEngine records the ids of the threads it owns, so WriteAsync called
// from one of its completion callbacks never blocks waiting for a free slot
// (which only that same thread could free). Not a thread_local: this code is
// also loaded with dlopen (the fio engine), where dynamic TLS is allocated and
// freed inside glibc in ways ThreadSanitizer cannot follow.

}  // namespace

// One write request, owned by the engine from WriteAsync until its callback.
struct WriteOp {
  uint64_t offset = 0;
  std::shared_ptr<AlignedBuffer> buf;
  IoCallback done;
  uint64_t written = 0;  // bytes already written (short writes resume here)
  int transient_retries = 0;
};

// The write half of a FileBlockDevice. The destructor drains: it returns
// only after every submitted op's callback has run.
class WriteEngine {
 public:
  // `bytes` and `writes` are the device's counters (FileBlockDevice::
  // bytes_written(), writes()), which the engine adds to as writes complete.
  WriteEngine(int fd, const std::string& path, std::atomic<uint64_t>* bytes,
              std::atomic<uint64_t>* writes)
      : fd_(fd), path_(path), bytes_written_(bytes), writes_(writes) {}
  virtual ~WriteEngine() = default;
  virtual void Submit(std::unique_ptr<WriteOp> op) = 0;
  // BlockDevice::Plug/Unplug.
  virtual void Plug() {}
  virtual void Unplug() {}

 protected:
  const int fd_;
  const std::string path_;
  std::atomic<uint64_t>* const bytes_written_;
  std::atomic<uint64_t>* const writes_;
};

namespace {

// pwrite until every byte of `op` is written (a short write resumes where
// it stopped), adding to the device's counters: the psync engine's threads
// and UringCallerWrites, on its caller's thread.
absl::Status PwriteAll(int fd, const std::string& path, WriteOp& op,
                       std::atomic<uint64_t>* bytes_written,
                       std::atomic<uint64_t>* writes) {
  const uint64_t length = op.buf->size();
  while (op.written < length) {
    const ssize_t n =
        ::pwrite(fd, op.buf->data() + op.written, length - op.written,
                 static_cast<off_t>(op.offset + op.written));
    if (n < 0) {
      const int err = errno;
      if ((err == EINTR || err == EAGAIN) &&
          op.transient_retries++ < kMaxTransientRetries) {
        continue;
      }
      return ErrnoError(err, IoWhat("pwrite", path, op.offset, length));
    }
    if (n == 0) {
      return absl::InternalError(
          absl::StrFormat("%s: the kernel wrote 0 bytes at offset %d",
                          IoWhat("pwrite", path, op.offset, length),
                          op.offset + op.written));
    }
    op.written += static_cast<uint64_t>(n);
    bytes_written->fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  }
  writes->fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

// pwrite on a small pool of threads: the fallback when io_uring is not
// available, and a reference to compare io_uring against.
class PsyncEngine final : public WriteEngine {
 public:
  PsyncEngine(int fd, const std::string& path, std::atomic<uint64_t>* bytes,
              std::atomic<uint64_t>* writes, uint32_t queue_depth)
      : WriteEngine(fd, path, bytes, writes),
        max_queued_(std::max<uint32_t>(queue_depth, 1)) {
    const uint32_t threads =
        std::clamp<uint32_t>(queue_depth, 1, kMaxPsyncThreads);
    for (uint32_t i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        NameThisThread(ThreadNameFor("iow:", path_));
        WorkerLoop();
      });
    }
  }

  ~PsyncEngine() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    // Workers finish the queue before they exit.
    for (std::thread& t : threads_) t.join();
  }

  void Submit(std::unique_ptr<WriteOp> op) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!IsWorkerLocked(std::this_thread::get_id())) {
        room_cv_.wait(lock, [this] { return queue_.size() < max_queued_; });
      }
      queue_.push_back(std::move(op));
    }
    work_cv_.notify_one();
  }

 private:
  bool IsWorkerLocked(std::thread::id id) const {
    return std::find(worker_ids_.begin(), worker_ids_.end(), id) !=
           worker_ids_.end();
  }

  void WorkerLoop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      worker_ids_.push_back(std::this_thread::get_id());
    }
    while (true) {
      std::unique_ptr<WriteOp> op;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and drained
        op = std::move(queue_.front());
        queue_.pop_front();
      }
      room_cv_.notify_one();
      absl::Status status = WriteAll(*op);
      IoCallback done = std::move(op->done);
      done(std::move(status));
      // `op` (and its buffer) die only after the callback, as promised.
    }
  }

  absl::Status WriteAll(WriteOp& op) {
    return PwriteAll(fd_, path_, op, bytes_written_, writes_);
  }

  const size_t max_queued_;
  std::vector<std::thread> threads_;
  // std::mutex rather than absl::Mutex: TSan sees it (see block_device.cc).
  std::mutex mu_;
  std::vector<std::thread::id> worker_ids_;  // guarded by mu_
  std::condition_variable work_cv_;  // queue_ not empty, or stopping_
  std::condition_variable room_cv_;  // queue_ below max_queued_
  std::deque<std::unique_ptr<WriteOp>> queue_;  // guarded by mu_
  bool stopping_ = false;                       // guarded by mu_
};

// One io_uring shared by all writers. Submitters prepare SQEs under sq_mu_
// and submit everything prepared so far, so writers that arrive together
// share one io_uring_enter. One completion thread owns the CQ side: it reaps
// CQEs, resumes short writes, retries EAGAIN/EINTR and runs the callbacks.
class UringEngine final : public WriteEngine {
 public:
  // Returns an error (and the caller falls back to psync) if the kernel
  // refuses io_uring or lacks IORING_OP_WRITE (5.6+).
  static absl::StatusOr<std::unique_ptr<UringEngine>> Create(
      int fd, const std::string& path, std::atomic<uint64_t>* bytes,
      std::atomic<uint64_t>* writes, uint32_t entries) {
    auto engine = std::unique_ptr<UringEngine>(
        new UringEngine(fd, path, bytes, writes, entries));
    int r;
    {
      std::lock_guard<std::mutex> mapping(RingMappingMutex());
      r = io_uring_queue_init(entries, &engine->ring_, 0);
    }
    if (r < 0) {
      return ErrnoError(-r,
                        absl::StrFormat("io_uring_queue_init(%d)", entries));
    }
    engine->ring_ready_ = true;
    io_uring_probe* probe = io_uring_get_probe_ring(&engine->ring_);
    const bool has_write =
        probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_WRITE);
    if (probe != nullptr) io_uring_free_probe(probe);
    if (!has_write) {
      return absl::UnimplementedError(
          "the kernel's io_uring does not support IORING_OP_WRITE");
    }
    engine->reaper_ = std::thread([e = engine.get()] { e->ReapLoop(); });
    return engine;
  }

  ~UringEngine() override {
    if (reaper_.joinable()) {
      {
        // A plug left on would keep queued writes from ever finishing.
        std::lock_guard<std::mutex> lock(sq_mu_);
        plugs_.clear();
        SubmitLocked();
      }
      {
        std::unique_lock<std::mutex> lock(mu_);
        drained_cv_.wait(lock,
                         [this] { return inflight_ == 0 && pending_.empty(); });
      }
      // A NOP with null user data tells the reaper to exit once nothing is
      // in flight (a callback still running may chain another write).
      {
        std::lock_guard<std::mutex> lock(sq_mu_);
        io_uring_sqe* sqe = GetSqeLocked();
        if (sqe == nullptr) Fatal("no SQE for the shutdown NOP");
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data(sqe, nullptr);
        ++unsubmitted_;
        SubmitLocked();
      }
      reaper_.join();
    }
    if (ring_ready_) {
      std::lock_guard<std::mutex> mapping(RingMappingMutex());
      io_uring_queue_exit(&ring_);
    }
  }

  void Submit(std::unique_ptr<WriteOp> op) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (std::this_thread::get_id() == reaper_id_) {
        // A callback chaining a write: waiting here would deadlock, so the
        // op waits in pending_ and takes the next slot that frees up.
        if (inflight_ >= depth_) {
          pending_.push_back(std::move(op));
          return;
        }
      } else {
        if (inflight_ >= depth_) {
          // The slots may be held by writes queued under this thread's
          // plug: send them before waiting for one to finish.
          lock.unlock();
          {
            std::lock_guard<std::mutex> sq(sq_mu_);
            SubmitLocked();
          }
          lock.lock();
        }
        slot_cv_.wait(lock, [this] { return inflight_ < depth_; });
      }
      ++inflight_;
    }
    Enqueue(std::move(op));
  }

  void Plug() override {
    std::lock_guard<std::mutex> lock(sq_mu_);
    auto it = FindPlugLocked();
    if (it != plugs_.end()) {
      ++it->second;
    } else {
      plugs_.emplace_back(std::this_thread::get_id(), 1);
    }
  }

  void Unplug() override {
    std::lock_guard<std::mutex> lock(sq_mu_);
    auto it = FindPlugLocked();
    if (it == plugs_.end() || --it->second > 0) return;
    plugs_.erase(it);
    // Everything prepared goes, other plugged threads' writes too: they
    // only leave earlier than their own Unplug would send them.
    SubmitLocked();
  }

 private:
  using Plugs = std::vector<std::pair<std::thread::id, uint32_t>>;

  // This thread's entry in plugs_, or end(). Needs sq_mu_ held.
  Plugs::iterator FindPlugLocked() {
    const std::thread::id me = std::this_thread::get_id();
    return std::find_if(plugs_.begin(), plugs_.end(), [&](const auto& p) { return p.first == me; });
  }

  UringEngine(int fd, const std::string& path, std::atomic<uint64_t>* bytes,
              std::atomic<uint64_t>* writes, uint32_t entries)
      : WriteEngine(fd, path, bytes, writes), depth_(entries) {}

  [[noreturn]] void Fatal(const std::string& what) {
    // Only reachable if the kernel breaks io_uring's contract; continuing
    // would hang the writers (their CQEs would never come).
    std::fprintf(stderr, "pgring: io_uring on %s: %s\n", path_.c_str(),
                 what.c_str());
    std::abort();
  }

  // Needs sq_mu_ held.
  io_uring_sqe* GetSqeLocked() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      // The SQ holds only prepared-but-unsubmitted entries; submitting
      // frees them. In-flight ops never exceed the SQ size, so this is rare.
      SubmitLocked();
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  // Needs sq_mu_ held.
  void SubmitLocked() {
    int attempts = 0;
    while (unsubmitted_ > 0) {
      const int r = io_uring_submit(&ring_);
      if (r > 0) {
        unsubmitted_ -=
            std::min<uint32_t>(static_cast<uint32_t>(r), unsubmitted_);
        continue;
      }
      const int err = r == 0 ? EAGAIN : -r;
      if (err != EAGAIN && err != EBUSY && err != EINTR && err != ENOMEM) {
        Fatal(absl::StrCat("io_uring_submit: ", ErrnoText(err)));
      }
      // Transient (the kernel is short of memory or the CQ is backed up):
      // the entries stay in the SQ; back off and try again.
      if (++attempts > 100000) {
        Fatal(absl::StrCat("io_uring_submit keeps failing: ", ErrnoText(err)));
      }
      absl::SleepFor(absl::Microseconds(50));
    }
  }

  // Prepares the op's next (or first) write and submits it. The op already
  // holds an in-flight slot.
  void Enqueue(std::unique_ptr<WriteOp> op) {
    const uint64_t length = op->buf->size();
    {
      std::lock_guard<std::mutex> lock(sq_mu_);
      io_uring_sqe* sqe = GetSqeLocked();
      if (sqe == nullptr) Fatal("no free SQE although slots are bounded");
      // The SQE length is 32 bits; a larger write continues as if short.
      const uint64_t chunk =
          std::min<uint64_t>(length - op->written, kMaxBytesPerSqe);
      io_uring_prep_write(sqe, fd_, op->buf->data() + op->written,
                          static_cast<unsigned>(chunk),
                          op->offset + op->written);
      WriteOp* raw = op.release();
      PGRING_HANDOFF_RELEASE(raw);
      io_uring_sqe_set_data(sqe, raw);
      ++unsubmitted_;
    }
    // A second critical section, so that ops prepared meanwhile by other
    // writers go to the kernel in the same io_uring_enter. Under the plug
    // of this thread, they wait for Unplug().
    std::lock_guard<std::mutex> lock(sq_mu_);
    if (FindPlugLocked() != plugs_.end()) return;
    SubmitLocked();
  }

  void ReapLoop() {
    NameThisThread(ThreadNameFor("io:", path_));
    {
      std::lock_guard<std::mutex> lock(mu_);
      reaper_id_ = std::this_thread::get_id();
    }
    bool stop_seen = false;
    while (true) {
      io_uring_cqe* cqe = nullptr;
      const int r = io_uring_wait_cqe(&ring_, &cqe);
      if (r == -EINTR || r == -EAGAIN) continue;
      if (r < 0) Fatal(absl::StrCat("io_uring_wait_cqe: ", ErrnoText(-r)));
      void* data = io_uring_cqe_get_data(cqe);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (data == nullptr) {
        stop_seen = true;  // the shutdown NOP
      } else {
        PGRING_HANDOFF_ACQUIRE(data);
        Complete(std::unique_ptr<WriteOp>(static_cast<WriteOp*>(data)), res);
      }
      if (stop_seen) {
        std::lock_guard<std::mutex> lock(mu_);
        if (inflight_ == 0 && pending_.empty()) return;
      }
    }
  }

  void Complete(std::unique_ptr<WriteOp> op, int res) {
    const uint64_t length = op->buf->size();
    if (res < 0) {
      const int err = -res;
      if ((err == EAGAIN || err == EINTR) &&
          op->transient_retries++ < kMaxTransientRetries) {
        Enqueue(std::move(op));
        return;
      }
      absl::Status error =
          ErrnoError(err, IoWhat("write", path_, op->offset, length));
      Finish(std::move(op), std::move(error));
      return;
    }
    if (res == 0) {
      absl::Status error = absl::InternalError(
          absl::StrFormat("%s: the kernel wrote 0 bytes at offset %d",
                          IoWhat("write", path_, op->offset, length),
                          op->offset + op->written));
      Finish(std::move(op), std::move(error));
      return;
    }
    op->written += static_cast<uint64_t>(res);
    bytes_written_->fetch_add(static_cast<uint64_t>(res),
                              std::memory_order_relaxed);
    if (op->written < length) {
      Enqueue(std::move(op));  // a short write: resume where it stopped
      return;
    }
    writes_->fetch_add(1, std::memory_order_relaxed);
    Finish(std::move(op), absl::OkStatus());
  }

  // Frees the op's slot (or hands it to a pending op) and runs the callback.
  void Finish(std::unique_ptr<WriteOp> op, absl::Status status) {
    std::unique_ptr<WriteOp> next;
    bool drained = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!pending_.empty()) {
        next = std::move(pending_.front());
        pending_.pop_front();
      } else {
        --inflight_;
        drained = inflight_ == 0;
      }
    }
    if (next == nullptr) slot_cv_.notify_one();
    if (drained) drained_cv_.notify_all();
    if (next != nullptr) Enqueue(std::move(next));
    IoCallback done = std::move(op->done);
    done(std::move(status));
  }

  const uint32_t depth_;
  io_uring ring_{};
  bool ring_ready_ = false;
  std::thread reaper_;

  // std::mutex rather than absl::Mutex: TSan sees it (see block_device.cc).
  std::mutex sq_mu_;          // the SQ side of ring_
  uint32_t unsubmitted_ = 0;  // guarded by sq_mu_
  // Plug(): each plugging thread and its nesting depth; their writes stay
  // unsubmitted until they unplug (or someone else submits). Guarded by
  // sq_mu_.
  Plugs plugs_;

  std::mutex mu_;
  std::condition_variable slot_cv_;     // inflight_ fell below depth_
  std::condition_variable drained_cv_;  // inflight_ reached 0
  uint32_t inflight_ = 0;               // guarded by mu_
  std::thread::id reaper_id_;           // guarded by mu_
  // Ops queued by callbacks on the reaper thread while all slots were
  // taken; each takes over the slot of the next op to finish. Guarded by mu_.
  std::deque<std::unique_ptr<WriteOp>> pending_;
};

// An io_uring that one thread sets up, submits to and reaps alone, with no
// completion thread: UringCallerWrites (the commit thread's writes) and
// FileBlockDevice::ReadMany. Set up and torn down under RingMappingMutex.
// Where the kernel refuses a ring, ready() is false and the caller does its
// I/O with pread/pwrite instead.
class CallerRing {
 public:
  CallerRing(unsigned entries, const std::string& path) : path_(path) {
    std::lock_guard<std::mutex> mapping(RingMappingMutex());
    ready_ = io_uring_queue_init(entries, &ring_, 0) == 0;
  }
  ~CallerRing() {
    if (!ready_) return;
    std::lock_guard<std::mutex> mapping(RingMappingMutex());
    io_uring_queue_exit(&ring_);
  }
  CallerRing(const CallerRing&) = delete;
  CallerRing& operator=(const CallerRing&) = delete;

  bool ready() const { return ready_; }
  // The next free SQE, or null when the ring is full.
  io_uring_sqe* GetSqe() { return io_uring_get_sqe(&ring_); }
  // Sends every SQE filled since the last call in one io_uring_enter.
  void Submit() {
    int r;
    do {
      r = io_uring_submit(&ring_);
    } while (r == -EINTR || r == -EAGAIN);
    // The SQEs stay in the ring: they cannot be taken back and rewritten.
    if (r < 0) Fatal(absl::StrCat("io_uring_submit: ", ErrnoText(-r)));
  }
  // Waits for one completion: its user data and result.
  std::pair<uint64_t, int> WaitOne() {
    io_uring_cqe* cqe = nullptr;
    int r;
    do {
      r = io_uring_wait_cqe(&ring_, &cqe);
    } while (r == -EINTR);
    if (r < 0) Fatal(absl::StrCat("io_uring_wait_cqe: ", ErrnoText(-r)));
    const std::pair<uint64_t, int> out{io_uring_cqe_get_data64(cqe), cqe->res};
    io_uring_cqe_seen(&ring_, cqe);
    return out;
  }
  // Only reachable if the kernel breaks io_uring's contract (as in
  // UringEngine::Fatal): going on would lose track of an I/O whose buffer
  // the kernel may still use.
  [[noreturn]] void Fatal(const std::string& what) const {
    std::fprintf(stderr, "pgring: io_uring (caller's) on %s: %s\n", path_.c_str(), what.c_str());
    std::abort();
  }

 private:
  const std::string path_;
  io_uring ring_{};
  bool ready_ = false;
};

// CallerWrites on an io_uring of the caller's own: Start queues, Submit
// sends every queued write in one io_uring_enter, Wait reaps on the same
// thread, with no system call when the completions are already in the CQ
// ring; nothing else touches the ring, so no thread is woken for these
// writes. Where the kernel refuses io_uring, Start writes with pwrite at
// once. A short write or a transient error is finished with pwrite in Wait.
class UringCallerWrites final : public CallerWrites {
 public:
  // A commit group's round: its stream write (an extent or two) and the
  // home writes staged with it; more wait for room (ReapOne).
  static constexpr uint32_t kEntries = 64;

  // `use_ring` false (the device writes with psync): pwrite in Start.
  // `durable` (NewCallerWrites): each write is durable when Wait reports
  // it: RWF_DSYNC on the ring; a write finished with pwrite is made so by
  // `flush` (the device's Flush) in Wait.
  UringCallerWrites(int fd, const std::string& path, uint64_t size, uint32_t block_size,
                    std::atomic<uint64_t>* bytes, std::atomic<uint64_t>* writes, bool use_ring,
                    bool durable, std::function<absl::Status()> flush)
      : fd_(fd), path_(path), size_(size), block_size_(block_size), bytes_(bytes),
        writes_(writes), durable_(durable), flush_(std::move(flush)) {
    if (use_ring) ring_.emplace(kEntries, path_);
  }
  ~UringCallerWrites() override { Wait().IgnoreError(); }

  void Start(uint64_t offset, std::shared_ptr<AlignedBuffer> buf, IoCallback done) override {
    const uint64_t length = buf == nullptr ? 0 : buf->size();
    const size_t index = finished_.size() + in_flight_.size();
    absl::Status s = BlockDevice::CheckIoArgs(path_, "write", offset, length,
                                              buf == nullptr ? nullptr : buf->data(),
                                              block_size_, size_);
    if (!s.ok() || length == 0) return Finished(index, std::move(s), std::move(done));
    auto op = std::make_unique<WriteOp>();
    op->offset = offset;
    op->buf = std::move(buf);
    op->done = std::move(done);
    if (!ring_ || !ring_->ready()) {
      absl::Status w = PwriteAll(fd_, path_, *op, bytes_, writes_);
      return Finished(index, std::move(w), std::move(op->done), /*pwritten=*/true);
    }
    io_uring_sqe* sqe = ring_->GetSqe();
    while (sqe == nullptr) {
      Submit();
      ReapOne();  // the ring is full: one of ours must finish first
      sqe = ring_->GetSqe();
    }
    io_uring_prep_write(sqe, fd_, op->buf->data(),
                        static_cast<unsigned>(std::min(length, kMaxBytesPerSqe)),
                        op->offset);
    if (durable_) sqe->rw_flags = RWF_DSYNC;
    io_uring_sqe_set_data(sqe, op.get());
    ++unsubmitted_;
    in_flight_.push_back({index, std::move(op)});
  }

  void Submit() override {
    if (unsubmitted_ == 0) return;
    ring_->Submit();
    unsubmitted_ = 0;
  }

  absl::Status Wait() override {
    Submit();
    while (!in_flight_.empty()) ReapOne();
    std::sort(finished_.begin(), finished_.end(),
              [](const Done& a, const Done& b) { return a.index < b.index; });
    std::vector<Done> finished = std::move(finished_);
    finished_.clear();
    if (durable_ && pwritten_) {
      // What pwrite wrote is made durable before its callback hears of it;
      // if it cannot be, those writes fail.
      pwritten_ = false;
      const absl::Status f = flush_();
      for (Done& d : finished) {
        if (d.pwritten && d.status.ok() && !f.ok()) d.status = WriteThroughFlushError(f);
      }
    }
    absl::Status first;
    for (Done& d : finished) {
      if (!d.status.ok() && first.ok()) first = d.status;
      if (d.done) d.done(std::move(d.status));
    }
    return first;
  }

 private:
  struct InFlight {
    size_t index;  // in Start order since the last Wait
    std::unique_ptr<WriteOp> op;
  };
  struct Done {
    size_t index;
    absl::Status status;
    IoCallback done;
    bool pwritten;  // (in part) by pwrite: durable only after a flush
  };

  void Finished(size_t index, absl::Status s, IoCallback done, bool pwritten = false) {
    pwritten_ |= pwritten;
    finished_.push_back(Done{index, std::move(s), std::move(done), pwritten});
  }

  void ReapOne() {
    const auto [data, res] = ring_->WaitOne();
    auto* raw = reinterpret_cast<WriteOp*>(static_cast<uintptr_t>(data));
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [raw](const InFlight& f) { return f.op.get() == raw; });
    if (it == in_flight_.end()) ring_->Fatal("a caller's ring completed a write it did not start");
    const size_t index = it->index;
    std::unique_ptr<WriteOp> op = std::move(it->op);
    in_flight_.erase(it);
    if (res < 0 && res != -EINTR && res != -EAGAIN) {
      return Finished(index, ErrnoError(-res, IoWhat("write", path_, op->offset, op->buf->size())),
                      std::move(op->done));
    }
    if (res > 0) {
      op->written += static_cast<uint64_t>(res);
      bytes_->fetch_add(static_cast<uint64_t>(res), std::memory_order_relaxed);
    }
    if (op->written < op->buf->size()) {
      // Short, or a transient error: the rest here.
      absl::Status w = PwriteAll(fd_, path_, *op, bytes_, writes_);
      return Finished(index, std::move(w), std::move(op->done), /*pwritten=*/true);
    }
    writes_->fetch_add(1, std::memory_order_relaxed);
    Finished(index, absl::OkStatus(), std::move(op->done));
  }

  const int fd_;
  const std::string path_;
  const uint64_t size_;
  const uint32_t block_size_;
  std::atomic<uint64_t>* const bytes_;
  std::atomic<uint64_t>* const writes_;
  const bool durable_;
  const std::function<absl::Status()> flush_;
  std::optional<CallerRing> ring_;  // none: the device writes with psync
  uint32_t unsubmitted_ = 0;
  bool pwritten_ = false;  // a Done since the last Wait has `pwritten`
  std::vector<InFlight> in_flight_;
  std::vector<Done> finished_;
};

}  // namespace
}  // namespace file_block_device_internal

using file_block_device_internal::ErrnoError;
using file_block_device_internal::ErrnoText;
using file_block_device_internal::IoWhat;

namespace {

const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "another kind of file";
}

// Closes the fd unless released: every early return in Open() closes it.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FileBlockDevice>> FileBlockDevice::Open(
    const std::string& path, const FileBlockDeviceOptions& options) {
  // stat first: open() on a FIFO would block, and the type decides how the
  // geometry is read.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat("device ", path, " does not exist: ", ErrnoText(err)));
    }
    return ErrnoError(err, absl::StrCat("stat ", path));
  }
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device ", path, " is not a regular file or block device (it is ",
        FileTypeName(st.st_mode), ")"));
  }

  const int flags =
      (options.read_only ? O_RDONLY : O_RDWR) | O_DIRECT | O_CLOEXEC;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int err = errno;
    if (err == EINVAL) {
      return absl::InvalidArgumentError(absl::StrCat(
          "open ", path,
          ": the file system does not support O_DIRECT: ", ErrnoText(err)));
    }
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("device ", path, " does not exist: ", ErrnoText(err)));
    }
    return ErrnoError(
        err, absl::StrCat("open ", path,
                          options.read_only ? " read-only" : " read-write"));
  }
  FdCloser closer(fd);

  // Again on the fd: the path may have been replaced since stat().
  if (::fstat(fd, &st) != 0) {
    return ErrnoError(errno, absl::StrCat("fstat ", path));
  }
  const bool is_block_device = S_ISBLK(st.st_mode);
  if (!S_ISREG(st.st_mode) && !is_block_device) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device ", path, " is not a regular file or block device"));
  }

  if (options.exclusive_lock) {
    const int op = (options.read_only ? LOCK_SH : LOCK_EX) | LOCK_NB;
    int r;
    do {
      r = ::flock(fd, op);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        return absl::UnavailableError(absl::StrCat(
            "device ", path, " is in use by another process (flock ",
            options.read_only ? "LOCK_SH" : "LOCK_EX", " refused)"));
      }
      return ErrnoError(err, absl::StrCat("flock ", path));
    }
  }

  uint64_t size = 0;
  uint32_t block_size = 4096;  // regular files: see file_block_device.h
  if (is_block_device) {
    if (::ioctl(fd, BLKGETSIZE64, &size) != 0) {
      return ErrnoError(errno, absl::StrCat("ioctl(BLKGETSIZE64) on ", path));
    }
    int sector = 0;
    if (::ioctl(fd, BLKSSZGET, &sector) != 0) {
      return ErrnoError(errno, absl::StrCat("ioctl(BLKSSZGET) on ", path));
    }
    if (sector < 512 || sector > 65536 || (sector & (sector - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "device %s reports a logical block size of %d bytes; expected a "
          "power of two from 512 to 65536",
          path, sector));
    }
    block_size = static_cast<uint32_t>(sector);
  } else {
    size = static_cast<uint64_t>(st.st_size);
  }
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device %s is empty (0 bytes)", path));
  }
  if (size % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "device %s is %d bytes, not a multiple of the %d-byte logical block",
        path, size, block_size));
  }

  auto dev = std::unique_ptr<FileBlockDevice>(
      new FileBlockDevice(path, closer.release(), is_block_device,
                          options.read_only, size, block_size));
  if (options.read_only) return dev;

  if (options.use_io_uring) {
    const uint32_t entries = std::clamp<uint32_t>(
        options.queue_depth, 1, file_block_device_internal::kMaxUringEntries);
    auto engine = file_block_device_internal::UringEngine::Create(
        dev->fd_, path, &dev->bytes_written_, &dev->writes_, entries);
    if (engine.ok()) {
      dev->engine_ = *std::move(engine);
      dev->using_io_uring_ = true;
      dev->queue_depth_ = entries;
      return dev;
    }
    // Not an error: psync is correct, only slower. The reason stays visible.
    dev->io_uring_fallback_reason_ = engine.status().ToString();
  }
  dev->queue_depth_ = std::clamp<uint32_t>(
      options.queue_depth, 1, file_block_device_internal::kMaxPsyncThreads);
  dev->engine_ = std::make_unique<file_block_device_internal::PsyncEngine>(
      dev->fd_, path, &dev->bytes_written_, &dev->writes_, dev->queue_depth_);
  return dev;
}

FileBlockDevice::FileBlockDevice(std::string path, int fd, bool is_block_device,
                                 bool read_only, uint64_t size,
                                 uint32_t block_size)
    : path_(std::move(path)),
      fd_(fd),
      is_block_device_(is_block_device),
      read_only_(read_only),
      size_(size),
      block_size_(block_size) {}

FileBlockDevice::~FileBlockDevice() {
  engine_.reset();  // drains in-flight writes and joins the threads
  ::close(fd_);     // also releases the flock
}

absl::Status FileBlockDevice::Read(uint64_t offset, absl::Span<char> buf) {
  absl::Status s = CheckIoArgs(path_, "read", offset, buf.size(), buf.data(),
                               block_size_, size_);
  if (!s.ok()) return s;
  uint64_t done = 0;
  int retries = 0;
  while (done < buf.size()) {
    const ssize_t n = ::pread(fd_, buf.data() + done, buf.size() - done,
                              static_cast<off_t>(offset + done));
    if (n < 0) {
      const int err = errno;
      if ((err == EINTR || err == EAGAIN) &&
          retries++ < file_block_device_internal::kMaxTransientRetries) {
        continue;
      }
      return ErrnoError(err, IoWhat("pread", path_, offset, buf.size()));
    }
    if (n == 0) {
      // The range was checked against the size at open: the file shrank.
      return absl::InternalError(absl::StrFormat(
          "%s: unexpected end of file at offset %d (was the device "
          "truncated?)",
          IoWhat("pread", path_, offset, buf.size()), offset + done));
    }
    done += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status FileBlockDevice::ReadMany(absl::Span<const ReadRequest> reads) {
  // Below this many reads, a ring's set-up (two mappings and their
  // teardown) costs more than the reads' overlap saves.
  constexpr size_t kMinRingReads = 4;
  constexpr size_t kRingEntries = 64;
  for (const ReadRequest& r : reads) {
    absl::Status s =
        CheckIoArgs(path_, "read", r.offset, r.buf.size(), r.buf.data(), block_size_, size_);
    if (!s.ok()) return s;
  }
  if (!using_io_uring_ || reads.size() < kMinRingReads) return BlockDevice::ReadMany(reads);
  file_block_device_internal::CallerRing ring(
      static_cast<unsigned>(std::min(reads.size(), kRingEntries)), path_);
  if (!ring.ready()) return BlockDevice::ReadMany(reads);
  // Each read's outcome; a short or interrupted one is finished with pread.
  std::vector<absl::Status> status(reads.size());
  size_t next = 0, in_flight = 0;
  while (next < reads.size() || in_flight > 0) {
    size_t queued = 0;
    for (io_uring_sqe* sqe; next < reads.size() && (sqe = ring.GetSqe()) != nullptr; ++next) {
      const ReadRequest& r = reads[next];
      io_uring_prep_read(sqe, fd_, r.buf.data(),
                         static_cast<unsigned>(std::min<uint64_t>(
                             r.buf.size(), file_block_device_internal::kMaxBytesPerSqe)),
                         r.offset);
      io_uring_sqe_set_data64(sqe, next);
      ++queued;
    }
    if (queued > 0) {
      ring.Submit();
      in_flight += queued;
    }
    const auto [i, res] = ring.WaitOne();
    --in_flight;
    const ReadRequest& r = reads[i];
    if (res >= 0 && static_cast<uint64_t>(res) == r.buf.size()) continue;
    // A transient error, or a short read: pread finishes it (and names a
    // real error as Read does).
    if (res < 0 && res != -EINTR && res != -EAGAIN) {
      status[i] = ErrnoError(-res, IoWhat("read", path_, r.offset, r.buf.size()));
    } else {
      const uint64_t done = res > 0 ? static_cast<uint64_t>(res) : 0;
      status[i] = Read(r.offset + done, r.buf.subspan(done));
    }
  }
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void FileBlockDevice::WriteAsync(uint64_t offset,
                                 std::shared_ptr<AlignedBuffer> buf,
                                 IoCallback done) {
  if (read_only_) {
    done(absl::FailedPreconditionError(absl::StrFormat(
        "write %s at offset %d: the device was opened read-only", path_,
        offset)));
    return;
  }
  const uint64_t length = buf == nullptr ? 0 : buf->size();
  absl::Status s =
      CheckIoArgs(path_, "write", offset, length,
                  buf == nullptr ? nullptr : buf->data(), block_size_, size_);
  if (!s.ok() || length == 0) {
    done(std::move(s));
    return;
  }
  auto op = std::make_unique<file_block_device_internal::WriteOp>();
  op->offset = offset;
  op->buf = std::move(buf);
  op->done = std::move(done);
  engine_->Submit(std::move(op));
}

std::unique_ptr<CallerWrites> FileBlockDevice::NewCallerWrites(bool durable) {
  if (read_only_) return BlockDevice::NewCallerWrites(durable);  // refuses each write
  return std::make_unique<file_block_device_internal::UringCallerWrites>(
      fd_, path_, size_, block_size_, &bytes_written_, &writes_, using_io_uring_, durable,
      [this] { return Flush(); });
}

void FileBlockDevice::Plug() {
  if (engine_) engine_->Plug();
}

void FileBlockDevice::Unplug() {
  if (engine_) engine_->Unplug();
}

absl::Status FileBlockDevice::Flush() {
  if (read_only_) return absl::OkStatus();
  // Held across fdatasync: of two concurrent calls on one fd, only one is
  // told about a write-back error, and the other must not report success.
  std::lock_guard<std::mutex> lock(flush_mu_);
  if (!flush_error_.ok()) {
    // A fresh Status per caller: no payload shared between threads.
    return absl::Status(
        flush_error_.code(),
        absl::StrCat(flush_error_.message(),
                     " (an earlier flush failed; the device stays failed)"));
  }
  int r;
  do {
    r = ::fdatasync(fd_);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    flush_error_ = ErrnoError(errno, absl::StrCat("fdatasync ", path_));
    return absl::Status(flush_error_.code(), flush_error_.message());
  }
  flushes_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BlockDevice>> OpenFileBlockDevice(
    const std::string& path, const FileBlockDeviceOptions& options) {
  auto dev = FileBlockDevice::Open(path, options);
  if (!dev.ok()) return dev.status();
  return std::unique_ptr<BlockDevice>(*std::move(dev));
}

}  // namespace pgring
