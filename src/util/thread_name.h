// thread_name.h — names pgring's threads, so that top -H, ps -L, gdb, perf
// and bench/threads.sh can tell the commit thread from a device's
// completion thread.
#ifndef PGRING_UTIL_THREAD_NAME_H_
#define PGRING_UTIL_THREAD_NAME_H_

#include <pthread.h>

#include <string>
#include <string_view>

namespace pgring {

// Linux keeps 15 bytes of a thread's name (16 with the NUL); a longer name
// is cut there rather than refused, since a name is only for people.
inline void NameThisThread(std::string_view name) {
  std::string n(name.substr(0, 15));
  pthread_setname_np(pthread_self(), n.c_str());
}

// "<prefix><file name>", the file name being the last component of path, so
// that a device's threads say which partition they serve ("io:log.part").
inline std::string ThreadNameFor(std::string_view prefix, std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string name(prefix);
  name += slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name;
}

}  // namespace pgring

#endif  // PGRING_UTIL_THREAD_NAME_H_
