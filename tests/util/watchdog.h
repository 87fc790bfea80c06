// watchdog.h — turns a hang into a test failure. A test that can deadlock
// (threads waiting on each other through the store's locks and its I/O
// completion threads) would otherwise sit until ctest's timeout and say
// nothing of where it stuck. If the Watchdog is still armed at its deadline
// it prints what was being waited for and every thread's stack (gdb attached
// to this process, when there is one; else each thread's name and what the
// kernel says it waits in), then aborts: deadlocked threads can be neither
// joined nor unwound, so the test cannot fail in the ordinary way.
#ifndef PGRING_TESTS_UTIL_WATCHDOG_H_
#define PGRING_TESTS_UTIL_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace pgring::testing {

class Watchdog {
 public:
  // Armed until destroyed. `what` names the wait in the failure message.
  Watchdog(std::chrono::seconds deadline, std::string what);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void Fire();

  const std::string what_;
  const std::chrono::seconds deadline_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;
};

// Prints every thread of this process's stack to stderr (see above).
void PrintAllThreadStacks();

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_WATCHDOG_H_
