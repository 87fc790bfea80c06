// The engine's system calls per thread (tools/fio_engine/syscall_counter.h):
// the report's syscalls per client write must count what each named thread
// did between two readings, and say why when it cannot count, never guess.
#include "syscall_counter.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace pgring::fio {
namespace {

TEST(SyscallCounterTest, ParsesATracepointId) {
  EXPECT_EQ(SyscallCounter::ParseTracepointId("443\n"), 443u);
  EXPECT_EQ(SyscallCounter::ParseTracepointId("17"), 17u);
  EXPECT_FALSE(SyscallCounter::ParseTracepointId(""));
  EXPECT_FALSE(SyscallCounter::ParseTracepointId("\n"));
  EXPECT_FALSE(SyscallCounter::ParseTracepointId("-1\n"));
  EXPECT_FALSE(SyscallCounter::ParseTracepointId("12 34\n"));
  EXPECT_FALSE(SyscallCounter::ParseTracepointId("id: 5\n"));
  EXPECT_FALSE(SyscallCounter::ParseTracepointId("123456789012345678901234\n"));
}

std::string TempDir() {
  const char* base = std::getenv("PGRING_TEST_TMPDIR");
  std::filesystem::path p = std::filesystem::path(base ? base : "/tmp") /
                            ("syscall_counter_test." + std::to_string(getpid()));
  std::filesystem::create_directories(p);
  return p.string();
}

TEST(SyscallCounterTest, FindsTheIdInTheFirstPathThatHasIt) {
  const std::string dir = TempDir();
  const std::string id = dir + "/id", bad = dir + "/bad";
  std::ofstream(id) << "321\n";
  std::ofstream(bad) << "not a number\n";
  auto found = SyscallCounter::FindTracepointId({dir + "/missing", id});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, 321u);
  EXPECT_FALSE(SyscallCounter::FindTracepointId({bad, id}).ok());  // the first found must parse
  std::filesystem::remove_all(dir);
}

// No tracefs: Start fails and says why (the report then shows null and the
// reason), and names the paths it tried.
TEST(SyscallCounterTest, WithoutTracefsStartSaysWhy) {
  auto counter = SyscallCounter::Start({"/nonexistent/tracing/events/raw_syscalls/sys_enter/id"});
  ASSERT_FALSE(counter.ok());
  EXPECT_TRUE(absl::IsNotFound(counter.status())) << counter.status();
  EXPECT_NE(counter.status().message().find("/nonexistent/tracing"), std::string::npos);
}

// A counter with a bogus tracepoint id cannot be opened: Start fails (it
// probes the calling thread first) instead of counting zeros.
TEST(SyscallCounterTest, AnIdThatIsNoTracepointFailsStart) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/id") << "999999999\n";
  auto counter = SyscallCounter::Start({dir + "/id"});
  EXPECT_FALSE(counter.ok());
  std::filesystem::remove_all(dir);
}

TEST(SyscallCounterTest, ByNameCountsDifferencesAndCountersOpenedInBetween) {
  SyscallReading a, b;
  a.counters[0] = {10, "fio", 100};
  a.counters[1] = {11, "io:data", 50};
  b.counters[0] = {10, "fio", 160};      // 60 more
  b.counters[1] = {11, "io:data", 50};   // none
  b.counters[2] = {12, "io:data", 7};    // opened in between: all 7
  b.counters[3] = {13, "fio", 3};        // another fio thread: all 3
  const auto by_name = SyscallsByName(a, b);
  EXPECT_EQ(by_name.at("fio"), 63u);
  EXPECT_EQ(by_name.at("io:data"), 7u);
}

// When the kernel lets this process count (root, CAP_PERFMON, or
// perf_event_paranoid <= 1): a thread that makes N getpid calls between two
// readings is counted at least N, under its name; an idle thread far less;
// and a thread born after Start is counted from the rescan that finds it.
TEST(SyscallCounterTest, CountsEachNamedThreadsSystemCalls) {
  auto counter = SyscallCounter::Start();
  if (!counter.ok()) GTEST_SKIP() << "cannot count system calls here: " << counter.status();
  constexpr int kCalls = 5000;
  std::atomic<int> phase{0};
  auto worker = [&](const char* name, bool busy) {
    pthread_setname_np(pthread_self(), name);
    phase.fetch_add(1);
    while (phase.load() < 3) std::this_thread::yield();  // sched_yield: a system call, before the reading
    if (busy) {
      for (int i = 0; i < kCalls; ++i) syscall(SYS_getpid);
    }
    phase.fetch_add(1);
    while (phase.load() < 100) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  std::thread busy(worker, "sc-busy", true);
  std::thread idle(worker, "sc-idle", false);
  while (phase.load() < 2) std::this_thread::yield();
  // Both were born after Start: a rescan opens their counters.
  (*counter)->Rescan();
  const SyscallReading start = (*counter)->Read();
  phase.store(3);
  while (phase.load() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const SyscallReading end = (*counter)->Read();
  phase.store(100);
  busy.join();
  idle.join();
  EXPECT_TRUE(end.late.count("sc-busy"));
  const auto by_name = SyscallsByName(start, end);
  ASSERT_TRUE(by_name.count("sc-busy"));
  EXPECT_GE(by_name.at("sc-busy"), static_cast<uint64_t>(kCalls));
  EXPECT_LT(by_name.at("sc-busy"), static_cast<uint64_t>(kCalls) * 2);
  ASSERT_TRUE(by_name.count("sc-idle"));
  EXPECT_LT(by_name.at("sc-idle"), static_cast<uint64_t>(kCalls) / 10);

  // A thread that has ended keeps its count, under its last name.
  const SyscallReading after = (*counter)->Read();
  const auto total = SyscallsByName(SyscallReading{}, after);
  ASSERT_TRUE(total.count("sc-busy"));
  EXPECT_GE(total.at("sc-busy"), static_cast<uint64_t>(kCalls));
}

}  // namespace
}  // namespace pgring::fio
