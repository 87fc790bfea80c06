#include "syscall_counter.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pgring::fio {
namespace {

// (Named apart from thread_cpu.cc's helpers: the unity build may compile
// both files as one.)
std::string SyscallFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// starttime, field 22 of /proc/self/task/<tid>/stat (after the command
// name, which may hold spaces and parentheses); 0 if unreadable.
uint64_t ThreadStartTime(const std::string& stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return 0;
}

int OpenSyscallCounter(uint64_t tracepoint_id, pid_t tid) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = tracepoint_id;
  // The tracepoint fires in the kernel: excluding kernel events would count
  // nothing. Counting only, no samples.
  attr.exclude_kernel = 0;
  attr.exclude_hv = 1;
  return static_cast<int>(
      syscall(SYS_perf_event_open, &attr, tid, /*cpu=*/-1, /*group_fd=*/-1, PERF_FLAG_FD_CLOEXEC));
}

// io_uring's kernel workers run in this process but make no system calls,
// and come and go with the load: not counted.
bool IsIoUringWorker(const std::string& name) { return name.rfind("iou-", 0) == 0; }

std::string ParanoidLevel() {
  const std::string v = SyscallFirstLine("/proc/sys/kernel/perf_event_paranoid");
  return v.empty() ? "unknown" : v;
}

}  // namespace

std::vector<std::string> SyscallCounter::DefaultIdPaths() {
  return {"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
          "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id"};
}

std::optional<uint64_t> SyscallCounter::ParseTracepointId(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty() || text.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

absl::StatusOr<uint64_t> SyscallCounter::FindTracepointId(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) {
      if (errno == EACCES || errno == EPERM) {
        return absl::PermissionDeniedError(
            absl::StrCat("cannot read ", path, " (tracefs): ", std::strerror(errno)));
      }
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    std::optional<uint64_t> id = ParseTracepointId(text.str());
    if (!id) return absl::DataLossError(absl::StrCat(path, " holds no tracepoint id: '", text.str(), "'"));
    return *id;
  }
  return absl::NotFoundError(absl::StrCat("no tracepoint raw_syscalls:sys_enter: none of ",
                                          absl::StrJoin(paths, ", "),
                                          " exists (tracefs not mounted, or a kernel without "
                                          "syscall tracepoints)"));
}

absl::StatusOr<std::unique_ptr<SyscallCounter>> SyscallCounter::Start(
    const std::vector<std::string>& id_paths) {
  absl::StatusOr<uint64_t> id = FindTracepointId(id_paths);
  if (!id.ok()) return id.status();
  // The calling thread first: if its counter cannot be opened, none can.
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  const int probe = OpenSyscallCounter(*id, self);
  if (probe < 0) {
    const int err = errno;
    const std::string what = absl::StrCat("perf_event_open(raw_syscalls:sys_enter) failed: ",
                                          std::strerror(err));
    if (err == EACCES || err == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(
          what, " (kernel.perf_event_paranoid is ", ParanoidLevel(),
          "; counting a tracepoint needs root or CAP_PERFMON, or a level of 1 or less)"));
    }
    return absl::UnavailableError(absl::StrCat(what, " (no perf events in this kernel?)"));
  }
  close(probe);
  std::unique_ptr<SyscallCounter> counter(new SyscallCounter(*id));
  {
    std::lock_guard<std::mutex> lock(counter->mu_);
    counter->ScanLocked(/*late=*/false);
  }
  return counter;
}

SyscallCounter::~SyscallCounter() {
  for (auto& [key, c] : counters_) {
    if (c.fd >= 0) close(c.fd);
  }
}

void SyscallCounter::ScanLocked(bool late) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) {
    problems_.push_back(absl::StrCat("cannot list /proc/self/task: ", std::strerror(errno)));
    return;
  }
  while (dirent* e = readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    if (tid <= 0) continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    const std::string name = SyscallFirstLine(base + "/comm");
    if (name.empty() || IsIoUringWorker(name)) continue;
    const uint64_t start_time = ThreadStartTime(SyscallFirstLine(base + "/stat"));
    auto live = live_.find(tid);
    if (live != live_.end()) {
      Counter& c = counters_.at(live->second);
      if (c.start_time == start_time) {
        c.name = name;  // a thread may rename itself after it starts
        continue;
      }
      // The tid of an ended thread, given to a new one: the old counter
      // keeps the old thread's count; the new thread gets its own.
      live_.erase(live);
    }
    const int fd = OpenSyscallCounter(id_, tid);
    if (fd < 0) {
      if (errno != ESRCH) {
        problems_.push_back(absl::StrCat(name, " (tid ", tid, "): ", std::strerror(errno)));
      }
      // Not retried: it shows in problems once; a later scan that finds it
      // again opens nothing either (live_ marks it with no counter).
      counters_[next_key_] = Counter{-1, tid, start_time, name, late};
      live_[tid] = next_key_++;
      continue;
    }
    counters_[next_key_] = Counter{fd, tid, start_time, name, late};
    live_[tid] = next_key_++;
  }
  closedir(dir);
}

void SyscallCounter::Rescan() {
  std::lock_guard<std::mutex> lock(mu_);
  ScanLocked(/*late=*/true);
}

SyscallReading SyscallCounter::Read() {
  std::lock_guard<std::mutex> lock(mu_);
  ScanLocked(/*late=*/true);
  SyscallReading r;
  for (const auto& [key, c] : counters_) {
    if (c.fd < 0) continue;
    uint64_t value = 0;
    if (read(c.fd, &value, sizeof(value)) != static_cast<ssize_t>(sizeof(value))) {
      r.problems.push_back(absl::StrCat(c.name, " (tid ", c.tid, "): reading its counter: ",
                                        std::strerror(errno)));
      continue;
    }
    r.counters[key] = ThreadSyscalls{c.tid, c.name, value};
    if (c.late) r.late.insert(c.name);
  }
  r.problems.insert(r.problems.end(), problems_.begin(), problems_.end());
  return r;
}

std::map<std::string, uint64_t> SyscallsByName(const SyscallReading& start,
                                               const SyscallReading& end) {
  std::map<std::string, uint64_t> by_name;
  for (const auto& [key, t] : end.counters) {
    auto s = start.counters.find(key);
    const uint64_t before = (s != start.counters.end() && s->second.count <= t.count) ? s->second.count : 0;
    by_name[t.name] += t.count - before;
  }
  return by_name;
}

}  // namespace pgring::fio
