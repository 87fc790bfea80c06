#include "util/test_util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

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

}  // namespace pgring::testing
