// sync.h — pgring's mutex, condition variable and notification.
//
// Why not absl::Mutex: Debian's Abseil is a prebuilt library without
// ThreadSanitizer annotations, so TSAN cannot see its lock/unlock and
// reports every access the mutex protects as a race. These thin wrappers over
// the standard library (pthreads, which TSAN intercepts) keep Abseil's
// thread-safety annotations, so clang's -Wthread-safety still checks them.
#ifndef PGRING_UTIL_SYNC_H_
#define PGRING_UTIL_SYNC_H_

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace pgring {

// A reader/writer mutex that prefers writers: once a writer waits, new
// readers wait behind it. (std::shared_mutex is glibc's default rwlock,
// which prefers readers: readers looping over a PG's log, each holding the
// lock across device reads, kept Submit from ever getting it — found by the
// concurrency campaign.) Not recursive: a thread must not take it shared
// twice, as a writer waiting in between would deadlock both.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&mu_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~Mutex() { pthread_rwlock_destroy(&mu_); }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { pthread_rwlock_wrlock(&mu_); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { pthread_rwlock_unlock(&mu_); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { pthread_rwlock_rdlock(&mu_); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { pthread_rwlock_unlock(&mu_); }

  // For std::condition_variable_any.
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { Lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { Unlock(); }

 private:
  pthread_rwlock_t mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) { mu_->ReaderLock(); }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Waits with the mutex held exclusively.
class CondVar {
 public:
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { cv_.wait(*mu); }
  // False on timeout.
  bool WaitWithTimeout(Mutex* mu, absl::Duration d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return cv_.wait_for(*mu, absl::ToChronoNanoseconds(d)) == std::cv_status::no_timeout;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

// A one-shot event.
class Notification {
 public:
  void Notify() {
    std::lock_guard<std::mutex> l(mu_);
    notified_ = true;
    cv_.notify_all();
  }
  void WaitForNotification() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return notified_; });
  }
  bool HasBeenNotified() {
    std::lock_guard<std::mutex> l(mu_);
    return notified_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;
};

}  // namespace pgring

#endif  // PGRING_UTIL_SYNC_H_
