#include "thread_cpu.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

namespace pgring::fio {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// utime and stime, fields 14 and 15 of /proc/<pid>/task/<tid>/stat, counted
// after the command name, which may itself hold spaces and parentheses.
uint64_t StatCpuNs(const std::string& stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? (utime + stime) * (1000000000ull / static_cast<uint64_t>(ticks)) : 0;
}

// voluntary_ctxt_switches and nonvoluntary_ctxt_switches of
// /proc/<pid>/task/<tid>/status.
void ReadSwitches(const std::string& path, ThreadCpu* t) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string_view key(line.data(), colon);
    const uint64_t value = std::strtoull(line.c_str() + colon + 1, nullptr, 10);
    if (key == "voluntary_ctxt_switches") t->voluntary_switches = value;
    if (key == "nonvoluntary_ctxt_switches") t->involuntary_switches = value;
  }
}

// Per thread name, what `field` grew by between two readings (see
// ThreadCpuByName).
std::map<std::string, uint64_t> ByName(const std::map<pid_t, ThreadCpu>& start,
                                       const std::map<pid_t, ThreadCpu>& end,
                                       uint64_t (*field)(const ThreadCpu&)) {
  std::map<std::string, uint64_t> by_name;
  for (const auto& [tid, t] : end) {
    auto s = start.find(tid);
    // A tid reused by a new thread of another name started from zero.
    const bool same = s != start.end() && s->second.name == t.name &&
                      field(s->second) <= field(t) && s->second.cpu_ns <= t.cpu_ns;
    by_name[t.name] += same ? field(t) - field(s->second) : field(t);
  }
  return by_name;
}

}  // namespace

std::map<pid_t, ThreadCpu> ReadThreadCpu() {
  std::map<pid_t, ThreadCpu> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  while (dirent* e = readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    if (tid <= 0) continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    ThreadCpu t;
    t.name = ReadFirstLine(base + "/comm");
    // The kernel's io_uring workers are named by their tid: one name for all.
    if (t.name.rfind("iou-wrk-", 0) == 0) t.name = "iou-wrk";
    const std::string schedstat = ReadFirstLine(base + "/schedstat");
    if (!schedstat.empty()) {
      t.cpu_ns = std::strtoull(schedstat.c_str(), nullptr, 10);
    } else {
      t.cpu_ns = StatCpuNs(ReadFirstLine(base + "/stat"));
    }
    ReadSwitches(base + "/status", &t);
    if (!t.name.empty()) threads.emplace(tid, std::move(t));
  }
  closedir(dir);
  return threads;
}

std::map<std::string, uint64_t> ThreadCpuByName(const std::map<pid_t, ThreadCpu>& start,
                                                const std::map<pid_t, ThreadCpu>& end) {
  return ByName(start, end, [](const ThreadCpu& t) { return t.cpu_ns; });
}

std::map<std::string, uint64_t> ThreadSwitchesByName(const std::map<pid_t, ThreadCpu>& start,
                                                     const std::map<pid_t, ThreadCpu>& end) {
  return ByName(start, end,
                [](const ThreadCpu& t) { return t.voluntary_switches + t.involuntary_switches; });
}

std::map<std::string, uint64_t> ThreadVoluntarySwitchesByName(
    const std::map<pid_t, ThreadCpu>& start, const std::map<pid_t, ThreadCpu>& end) {
  return ByName(start, end, [](const ThreadCpu& t) { return t.voluntary_switches; });
}

std::map<std::string, uint64_t> ThreadInvoluntarySwitchesByName(
    const std::map<pid_t, ThreadCpu>& start, const std::map<pid_t, ThreadCpu>& end) {
  return ByName(start, end, [](const ThreadCpu& t) { return t.involuntary_switches; });
}

}  // namespace pgring::fio
