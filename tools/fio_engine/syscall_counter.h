// syscall_counter.h — system calls made by each thread of this process
// between two moments, for the report's syscalls per client write (issue 32:
// "counted where the device sees it"). /proc keeps no per-thread count of
// system calls, so this opens one perf counter per thread on the tracepoint
// raw_syscalls:sys_enter (perf_event_open, PERF_TYPE_TRACEPOINT, the id from
// tracefs), which the kernel bumps at every system call entry of that thread.
//
// What is counted:
//   - every thread of the process when Start() runs, from then on;
//   - a thread born later from the Rescan() that first sees it on (the
//     engine rescans at each data file's open, where its completion and
//     flusher threads are born, before the file's first write, and at each
//     snapshot): what it did before that rescan is not counted, and
//     SyscallReading::late names such threads;
//   - a thread that ends keeps its count (the counter stays open until the
//     reading), under the last name a scan saw it by.
// Not counted: io_uring's kernel workers (iou-wrk-*, iou-sqp-*), which make
// no system calls; threads of other processes. The counters are plain
// (not inherit): a thread's count is its own, never its children's.
// Counting needs a kernel with tracefs (/sys/kernel/tracing or
// /sys/kernel/debug/tracing) and permission to open the counter (root or
// CAP_PERFMON; with kernel.perf_event_paranoid <= 1 an unprivileged user may
// count its own threads' kernel-side events). When either is missing,
// Start() fails and says why: the report then shows null and the reason,
// never a guess.
#ifndef PGRING_FIO_ENGINE_SYSCALL_COUNTER_H_
#define PGRING_FIO_ENGINE_SYSCALL_COUNTER_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pgring::fio {

struct ThreadSyscalls {
  pid_t tid = 0;
  std::string name;    // /proc/self/task/<tid>/comm when last seen
  uint64_t count = 0;  // system calls since its counter opened
};

// Per-thread counts at one moment, by counter (a counter is one thread's: a
// tid the kernel gives to a new thread after the old one ended gets a new
// counter, told apart by the thread's start time).
struct SyscallReading {
  std::map<uint64_t, ThreadSyscalls> counters;
  // Names of threads whose counter opened after Start() (born since, or
  // missed by the scan before): counted from their first rescan on.
  std::set<std::string> late;
  // Threads that could not be counted, and why (e.g. "fio (tid 12):
  // Too many open files").
  std::vector<std::string> problems;
};

class SyscallCounter {
 public:
  // Where tracefs may keep the tracepoint's id, in order.
  static std::vector<std::string> DefaultIdPaths();

  // The content of an events/<system>/<event>/id file: a decimal number and
  // a newline. nullopt if it is anything else.
  static std::optional<uint64_t> ParseTracepointId(std::string_view text);

  // The first id found at `paths`; kNotFound (naming the paths) if none
  // exists, kPermissionDenied if one exists but cannot be read.
  static absl::StatusOr<uint64_t> FindTracepointId(const std::vector<std::string>& paths);

  // Opens a counter on every thread of this process now. Fails, saying why,
  // if the tracepoint is not found or the calling thread's counter cannot
  // be opened (not permitted, no perf events in the kernel).
  static absl::StatusOr<std::unique_ptr<SyscallCounter>> Start(
      const std::vector<std::string>& id_paths = DefaultIdPaths());

  ~SyscallCounter();
  SyscallCounter(const SyscallCounter&) = delete;
  SyscallCounter& operator=(const SyscallCounter&) = delete;

  // Opens counters on threads not seen before, and refreshes the names of
  // the live ones. Thread-safe.
  void Rescan();

  // Rescans, then reads every counter. Thread-safe.
  SyscallReading Read();

 private:
  explicit SyscallCounter(uint64_t tracepoint_id) : id_(tracepoint_id) {}
  // Opens counters on threads not counted yet (mu_ held); `late` marks
  // them as opened after Start(). An error for a thread that has ended in
  // the meantime is ignored.
  void ScanLocked(bool late);

  struct Counter {
    int fd = -1;
    pid_t tid = 0;
    uint64_t start_time = 0;  // field 22 of the thread's stat: tells a reused tid
    std::string name;
    bool late = false;
  };
  const uint64_t id_;
  std::mutex mu_;
  uint64_t next_key_ = 0;                  // guarded by mu_
  std::map<uint64_t, Counter> counters_;   // guarded by mu_; by key
  std::map<pid_t, uint64_t> live_;         // guarded by mu_; tid -> key of its current counter
  std::vector<std::string> problems_;      // guarded by mu_
};

// The system calls each thread name made between two readings: a counter in
// both counts its difference, one opened in between all of its count (from
// its opening on). Named by the end reading's name.
std::map<std::string, uint64_t> SyscallsByName(const SyscallReading& start,
                                               const SyscallReading& end);

}  // namespace pgring::fio

#endif  // PGRING_FIO_ENGINE_SYSCALL_COUNTER_H_
