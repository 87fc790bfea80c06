#include "util/test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace pgring::testing {

TempDir::TempDir() {
  const char* base = std::getenv("PGRING_TEST_TMPDIR");
  std::string root = base != nullptr ? base : "/tmp";
  std::filesystem::create_directories(root);
  std::string tmpl = root + "/pgring-XXXXXX";
  char* p = mkdtemp(tmpl.data());
  if (p == nullptr) {
    ADD_FAILURE() << "mkdtemp failed under " << root;
  }
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void MakeFile(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << "open " << path;
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
  ::close(fd);
}

std::vector<std::pair<std::string, uint64_t>> ThreadSwitches() {
  std::vector<std::pair<std::string, uint64_t>> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::ifstream comm(base + "/comm");
    std::string name;
    std::getline(comm, name);
    std::ifstream status(base + "/status");
    uint64_t switches = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
          line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        switches += std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
      }
    }
    out.emplace_back(name, switches);
  }
  closedir(dir);
  return out;
}

}  // namespace pgring::testing
