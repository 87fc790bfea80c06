#include "util/watchdog.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pgring::testing {
namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

void PrintAllThreadStacks() {
  std::fflush(stdout);
  // gdb's backtraces name the locks and the functions; it may be missing,
  // or not allowed to attach (ptrace restrictions), hence the fallback too.
  const std::string gdb = "gdb -p " + std::to_string(::getpid()) +
                          " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' "
                          "1>&2 2>/dev/null";
  if (std::system(gdb.c_str()) == 0) return;
  std::fprintf(stderr, "(gdb could not attach; the threads and their kernel wait channels)\n");
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    std::fprintf(stderr, "  thread %s (%s): wchan=%s syscall=%s\n", e->d_name,
                 ReadSmallFile(task + "/comm").c_str(), ReadSmallFile(task + "/wchan").c_str(),
                 ReadSmallFile(task + "/syscall").c_str());
  }
  ::closedir(d);
}

Watchdog::Watchdog(std::chrono::seconds deadline, std::string what)
    : what_(std::move(what)), deadline_(deadline) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> l(mu_);
    if (!cv_.wait_for(l, deadline_, [this] { return disarmed_; })) Fire();
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> l(mu_);
    disarmed_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::Fire() {
  std::fprintf(stderr,
               "WATCHDOG: %s did not finish within %lld s: a deadlock (or a hang). Every "
               "thread's stack follows; then the test aborts, as deadlocked threads cannot be "
               "joined.\n",
               what_.c_str(), static_cast<long long>(deadline_.count()));
  PrintAllThreadStacks();
  std::fflush(stderr);
  std::abort();
}

}  // namespace pgring::testing
