// StreamCleaner, the thread that cleans the log stream: a wake runs a pass
// that calls the store's step until it says there is nothing more; a wake
// at the head the last pass got stuck at runs nothing (a transaction does
// not wake the thread for nothing), one at another head does; Stop lets the
// step in progress finish, then joins.
#include "store/ring/stream_cleaner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace pgring {
namespace {

// Waits (at most 10 s) for `pred`.
template <typename Pred>
bool WaitFor(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(StreamCleanerTest, APassRunsUntilTheStepSaysNoMore) {
  std::atomic<int> steps{0};
  StreamCleaner cleaner([&](uint64_t*) { return ++steps < 3; });
  EXPECT_EQ(steps.load(), 0);  // nothing before a wake
  cleaner.Wake(100);
  ASSERT_TRUE(WaitFor([&] { return steps.load() == 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(steps.load(), 3);
  EXPECT_EQ(cleaner.passes(), 1u);
}

TEST(StreamCleanerTest, AWakeAtTheStuckHeadRunsNothing) {
  std::atomic<int> steps{0};
  StreamCleaner cleaner([&](uint64_t* stuck_head) {
    ++steps;
    *stuck_head = 100;  // nothing to do until the head moves from 100
    return false;
  });
  cleaner.Wake(100);
  ASSERT_TRUE(WaitFor([&] { return steps.load() == 1; }));
  ASSERT_TRUE(WaitFor([&] { return cleaner.passes() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 0; i < 100; ++i) cleaner.Wake(100);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(steps.load(), 1);
  EXPECT_EQ(cleaner.passes(), 1u);
  cleaner.Wake(200);  // the head moved
  ASSERT_TRUE(WaitFor([&] { return steps.load() == 2; }));
}

TEST(StreamCleanerTest, StopLetsTheStepInProgressFinish) {
  std::atomic<bool> in_step{false}, release{false}, finished{false};
  StreamCleaner cleaner([&](uint64_t*) {
    in_step = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    finished = true;
    return true;  // more to do: Stop must end the pass anyway
  });
  cleaner.Wake(1);
  ASSERT_TRUE(WaitFor([&] { return in_step.load(); }));
  std::thread stopper([&] { cleaner.Stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(finished.load());
  release = true;
  stopper.join();
  EXPECT_TRUE(finished.load());
  cleaner.Stop();  // idempotent
}

}  // namespace
}  // namespace pgring
