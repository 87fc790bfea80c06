#include "store/ring/stream_cleaner.h"

#include <utility>

#include "util/thread_name.h"

namespace pgring {

StreamCleaner::StreamCleaner(CleanOne clean_one)
    : clean_one_(std::move(clean_one)), thread_([this] { Run(); }) {}

StreamCleaner::~StreamCleaner() { Stop(); }

void StreamCleaner::Wake(uint64_t stream_head) {
  if (wanted_fast_.load(std::memory_order_relaxed)) return;
  if (gave_up_at_.load(std::memory_order_relaxed) == stream_head) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (wanted_ || stop_) return;
    wanted_ = true;
    wanted_fast_.store(true, std::memory_order_relaxed);
  }
  cv_.notify_one();
}

void StreamCleaner::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void StreamCleaner::Run() {
  NameThisThread("pgring-clean");
  while (true) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return wanted_ || stop_; });
      if (stop_) return;
      wanted_ = false;
      wanted_fast_.store(false, std::memory_order_relaxed);
    }
    passes_.fetch_add(1);
    while (true) {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stop_) return;
      }
      uint64_t stuck_head = ~uint64_t{0};
      const bool more = clean_one_(&stuck_head);
      gave_up_at_.store(stuck_head, std::memory_order_relaxed);
      if (!more) break;
    }
  }
}

}  // namespace pgring
