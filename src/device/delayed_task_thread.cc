// delayed_task_thread.cc — tasks run at their due times on one thread.
#include "device/delayed_task_thread.h"

#include "util/thread_name.h"

namespace pgring {

DelayedTaskThread::DelayedTaskThread(std::string name)
    : thread_([this, name = std::move(name)] {
        NameThisThread(name);
        Run();
      }) {}

DelayedTaskThread::~DelayedTaskThread() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
}

void DelayedTaskThread::Schedule(Clock::time_point due, std::function<void()> task) {
  std::lock_guard<std::mutex> l(mu_);
  tasks_.emplace(std::make_pair(due, scheduled_++), std::move(task));
  cv_.notify_all();
}

void DelayedTaskThread::WaitIdle() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return tasks_.empty() && !running_; });
}

void DelayedTaskThread::Run() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (tasks_.empty()) {
      if (stop_) return;
      cv_.wait(l);
      continue;
    }
    const Clock::time_point due = tasks_.begin()->first.first;
    if (Clock::now() < due) {
      // Woken early by a task due sooner, or by the stop: look again.
      cv_.wait_until(l, due);
      continue;
    }
    std::function<void()> task = std::move(tasks_.begin()->second);
    tasks_.erase(tasks_.begin());
    running_ = true;
    l.unlock();
    task();
    task = nullptr;  // what it holds goes before the thread looks idle
    l.lock();
    running_ = false;
    cv_.notify_all();
  }
}

}  // namespace pgring
