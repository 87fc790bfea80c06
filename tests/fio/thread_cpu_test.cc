// The engine's per-thread CPU accounting (tools/fio_engine/thread_cpu.h):
// the report's cpu_us_by_thread says which thread a client write's CPU goes
// to, so it must find threads by name and count only what they spent
// between two readings.
#include "thread_cpu.h"

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "gtest/gtest.h"

namespace pgring::fio {
namespace {

uint64_t ThisThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Spins until this thread has spent `ns` of CPU time (not wall time: a busy
// machine only makes it take longer).
void Burn(uint64_t ns) {
  const uint64_t start = ThisThreadCpuNs();
  volatile uint64_t sink = 0;
  while (ThisThreadCpuNs() - start < ns) {
    for (int i = 0; i < 1000; ++i) sink = sink + i;
  }
}

TEST(ThreadCpuTest, CountsWhatEachNamedThreadSpentBetweenTwoReadings) {
  constexpr uint64_t kBusyNs = 60'000'000;  // 60 ms of CPU
  std::atomic<int> phase{0};
  std::thread busy([&] {
    pthread_setname_np(pthread_self(), "tc-busy");
    Burn(kBusyNs);  // before the first reading: not counted
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    Burn(kBusyNs);  // between the readings
    phase = 3;
    while (phase.load() != 4) std::this_thread::yield();
  });
  std::thread idle([&] {
    pthread_setname_np(pthread_self(), "tc-idle");
    while (phase.load() != 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  while (phase.load() != 1) std::this_thread::yield();
  const auto start = ReadThreadCpu();
  phase = 2;
  while (phase.load() != 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto end = ReadThreadCpu();
  phase = 4;
  busy.join();
  idle.join();

  const auto by_name = ThreadCpuByName(start, end);
  ASSERT_TRUE(by_name.count("tc-busy"));
  ASSERT_TRUE(by_name.count("tc-idle"));
  // Its 60 ms between the readings, not the 60 ms before them (the clock
  // of schedstat and CLOCK_THREAD_CPUTIME_ID is the same; stat's ticks are
  // 10 ms coarse).
  EXPECT_GE(by_name.at("tc-busy"), kBusyNs - 20'000'000);
  EXPECT_LT(by_name.at("tc-busy"), 2 * kBusyNs - 20'000'000);
  EXPECT_LT(by_name.at("tc-idle"), kBusyNs / 2);
}

TEST(ThreadCpuTest, ANewThreadCountsAllItsTimeAndAReusedTidStartsAgain) {
  std::map<pid_t, ThreadCpu> start{{10, {"fio", 1000}}, {11, {"io:old", 500}},
                                   {12, {"gone", 70}}};
  std::map<pid_t, ThreadCpu> end{{10, {"fio", 1600}},      // 600 more
                                 {11, {"io:new", 200}},    // tid 11 reused: all 200
                                 {13, {"fio", 50}}};       // born between: all 50
  const auto by_name = ThreadCpuByName(start, end);
  EXPECT_EQ(by_name.at("fio"), 650u);
  EXPECT_EQ(by_name.at("io:new"), 200u);
  EXPECT_FALSE(by_name.count("io:old"));
  EXPECT_FALSE(by_name.count("gone"));  // ended between: not seen here
}

// A thread that waits 50 times between the readings switches at least 50
// times (each sleep is a voluntary switch); one that only spins and is
// never asked to wait switches far less.
TEST(ThreadCpuTest, CountsEachNamedThreadsContextSwitchesBetweenTwoReadings) {
  constexpr int kWaits = 50;
  std::atomic<int> phase{0};
  std::thread waiter([&] {
    pthread_setname_np(pthread_self(), "tc-waiter");
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    for (int i = 0; i < kWaits; ++i) std::this_thread::sleep_for(std::chrono::microseconds(200));
    phase = 3;
    while (phase.load() != 4) std::this_thread::yield();
  });
  while (phase.load() != 1) std::this_thread::yield();
  const auto start = ReadThreadCpu();
  ASSERT_TRUE(start.size() >= 2u);
  phase = 2;
  while (phase.load() != 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto end = ReadThreadCpu();
  phase = 4;
  waiter.join();
  const auto switches = ThreadSwitchesByName(start, end);
  ASSERT_TRUE(switches.count("tc-waiter"));
  EXPECT_GE(switches.at("tc-waiter"), static_cast<uint64_t>(kWaits));
  EXPECT_LT(switches.at("tc-waiter"), 20u * kWaits);

  // A reused tid starts from zero, as for CPU time.
  std::map<pid_t, ThreadCpu> a{{10, {"fio", 100, 5, 1}}, {11, {"io:old", 100, 9, 0}}};
  std::map<pid_t, ThreadCpu> b{{10, {"fio", 150, 8, 2}}, {11, {"io:new", 10, 2, 1}}};
  const auto by_name = ThreadSwitchesByName(a, b);
  EXPECT_EQ(by_name.at("fio"), 4u);
  EXPECT_EQ(by_name.at("io:new"), 3u);
}

}  // namespace
}  // namespace pgring::fio
