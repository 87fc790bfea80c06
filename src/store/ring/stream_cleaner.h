// stream_cleaner.h — the thread that cleans the log stream when its PGs'
// records are written once (StreamOptions::home_bytes 0; docs/DESIGN.md,
// "Cleaning the stream"). The store wakes it from staging when the stream
// is full enough; it then asks the store to clean one PG at a time (read
// the PG's live log, state it again at the stream's tail, wait for that
// transaction to commit) until the store says there is nothing more to
// do. It is never in a commit group's critical path: a restatement is a
// transaction like any other, and a full stream still falls back to
// forced homes whatever the cleaner has done.
//
// Lock order: the store's staging lock before this class's own (Wake is
// called under the staging lock); the thread never holds its own while it
// cleans.
#ifndef PGRING_STORE_RING_STREAM_CLEANER_H_
#define PGRING_STORE_RING_STREAM_CLEANER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace pgring {

class StreamCleaner {
 public:
  // `clean_one` cleans one PG and returns once what it wrote has committed:
  // true if it cleaned one (or should try again), false when there is
  // nothing it can do now. With false it sets `*stuck_head` to the stream's
  // head when nothing can be done until that head moves (the PG that pins
  // it is cheaper to home, or its restatement was refused), and leaves it
  // at ~0 when the stream is empty enough.
  using CleanOne = std::function<bool(uint64_t* stuck_head)>;
  explicit StreamCleaner(CleanOne clean_one);
  ~StreamCleaner();  // Stop()
  StreamCleaner(const StreamCleaner&) = delete;
  StreamCleaner& operator=(const StreamCleaner&) = delete;

  // Asks for a pass, the stream's head being at `stream_head`. Cheap when
  // a pass is already wanted, and a no-op at the head the last pass got
  // stuck at: until that head moves there is nothing new to clean, so a
  // transaction does not wake the thread for nothing.
  void Wake(uint64_t stream_head);
  // Finishes the PG being cleaned (its transaction commits), then joins.
  // Idempotent.
  void Stop();

  uint64_t passes() const { return passes_.load(); }

 private:
  void Run();

  const CleanOne clean_one_;
  // std::mutex, not pgring::Mutex: a leaf lock with a condition variable.
  std::mutex mu_;
  std::condition_variable cv_;
  bool wanted_ = false;  // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  // The stream's head the last pass got stuck at (~0: none).
  std::atomic<uint64_t> gave_up_at_{~uint64_t{0}};
  std::atomic<bool> wanted_fast_{false};  // wanted_, read without mu_
  std::atomic<uint64_t> passes_{0};
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_STREAM_CLEANER_H_
