// thread_cpu.h — CPU time of each thread of this process, by thread name,
// so the report can say which thread a client write's CPU goes to: fio's
// job thread (the OSD model, Store::Submit, submitting I/O), the store's
// commit thread (pgring-commit: the RocksDB write and sync), each device's
// completion thread (io:<file>), RocksDB's own (rocksdb:*). pgring names
// its threads (util/thread_name.h); fio's inherit "fio".
#ifndef PGRING_FIO_ENGINE_THREAD_CPU_H_
#define PGRING_FIO_ENGINE_THREAD_CPU_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace pgring::fio {

struct ThreadCpu {
  std::string name;
  uint64_t cpu_ns = 0;  // on-CPU time since the thread started
  // Context switches since the thread started: it waited (voluntary), or
  // was preempted (involuntary).
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
};

// Every live thread of this process, by tid: /proc/self/task/<tid>/comm,
// the on-CPU time of schedstat (nanoseconds; utime + stime from stat, in
// clock ticks, where the kernel keeps no schedstat) and the context switches
// of status. Empty if /proc is not readable.
std::map<pid_t, ThreadCpu> ReadThreadCpu();

// The CPU time each thread name spent between two readings, in
// nanoseconds: a thread present in both counts its difference, one born in
// between all of its time; one that ended in between is not seen (its time
// is in getrusage's total, not here).
std::map<std::string, uint64_t> ThreadCpuByName(const std::map<pid_t, ThreadCpu>& start,
                                                const std::map<pid_t, ThreadCpu>& end);

// The same for context switches, voluntary and involuntary together.
std::map<std::string, uint64_t> ThreadSwitchesByName(const std::map<pid_t, ThreadCpu>& start,
                                                     const std::map<pid_t, ThreadCpu>& end);

// ... and each kind alone: the thread waited (voluntary), or was preempted
// (involuntary).
std::map<std::string, uint64_t> ThreadVoluntarySwitchesByName(
    const std::map<pid_t, ThreadCpu>& start, const std::map<pid_t, ThreadCpu>& end);
std::map<std::string, uint64_t> ThreadInvoluntarySwitchesByName(
    const std::map<pid_t, ThreadCpu>& start, const std::map<pid_t, ThreadCpu>& end);

}  // namespace pgring::fio

#endif  // PGRING_FIO_ENGINE_THREAD_CPU_H_
