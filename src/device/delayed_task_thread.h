// delayed_task_thread.h — one thread that runs tasks at their due times,
// earliest first: the completion thread of FaultInjectionDevice's timed
// mode, where writes complete later than they were issued, and out of order.
#ifndef PGRING_DEVICE_DELAYED_TASK_THREAD_H_
#define PGRING_DEVICE_DELAYED_TASK_THREAD_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace pgring {

// Tasks due at the same instant run in the order they were scheduled. A
// task may schedule more tasks; it must not call WaitIdle() or destroy the
// thread. Thread-safe.
class DelayedTaskThread {
 public:
  using Clock = std::chrono::steady_clock;

  // `name`: the thread's name (thread_name.h), for debuggers.
  explicit DelayedTaskThread(std::string name);
  // Runs every task still queued (each at its due time), then joins.
  ~DelayedTaskThread();

  DelayedTaskThread(const DelayedTaskThread&) = delete;
  DelayedTaskThread& operator=(const DelayedTaskThread&) = delete;

  void Schedule(Clock::time_point due, std::function<void()> task);
  // Returns once no task is queued or running (tasks scheduled meanwhile,
  // by tasks too, included).
  void WaitIdle();

 private:
  void Run();

  // std::mutex, not absl::Mutex: TSan sees it (see block_device.cc).
  std::mutex mu_;
  std::condition_variable cv_;
  // Keyed by (due, scheduling number): earliest first, ties in order.
  std::map<std::pair<Clock::time_point, uint64_t>, std::function<void()>> tasks_;
  uint64_t scheduled_ = 0;
  bool running_ = false;  // a task is running
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace pgring

#endif  // PGRING_DEVICE_DELAYED_TASK_THREAD_H_
