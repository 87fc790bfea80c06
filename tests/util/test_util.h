// test_util.h — helpers shared by the tests: temporary directories and
// status assertions that check the exact code.
#ifndef PGRING_TESTS_UTIL_TEST_UTIL_H_
#define PGRING_TESTS_UTIL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/options.h"

namespace pgring::testing {

// "Ring" or "RocksDb": the test name suffix of suites parameterized by backend.
inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kRing ? "Ring" : "RocksDb";
}

// What the store suites run over: the backend, and for the ring its log
// layout (per-PG rings alone, or rings behind the log stream).
enum class StoreMode : uint8_t { kRing, kRingStream, kRocksDb };
inline Backend BackendOf(StoreMode m) {
  return m == StoreMode::kRocksDb ? Backend::kRocksDb : Backend::kRing;
}
// Sets the layout `m` asks for (the backend is chosen at mkfs). The stream
// is the library's default and takes every transaction, even one that
// finds it idle (tests commit one at a time, which would otherwise bypass
// it).
inline void SetLayout(StoreMode m, Options* o) {
  o->log_layout = m == StoreMode::kRingStream ? LogLayout::kStream : LogLayout::kPerPgRings;
  o->stream.bypass_when_idle = false;
}
inline std::string StoreModeName(StoreMode m) {
  switch (m) {
    case StoreMode::kRing: return "Ring";
    case StoreMode::kRingStream: return "RingStream";
    case StoreMode::kRocksDb: return "RocksDb";
  }
  return "?";
}
inline std::string StoreModeParamName(const ::testing::TestParamInfo<StoreMode>& info) {
  return StoreModeName(info.param);
}
inline const auto kAllStoreModes =
    ::testing::Values(StoreMode::kRing, StoreMode::kRingStream, StoreMode::kRocksDb);

// A fresh directory under $PGRING_TEST_TMPDIR (or /tmp), removed on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Creates (or truncates) a file of `size` bytes, zero-filled.
void MakeFile(const std::string& path, uint64_t size);

// Each thread's name and its context switches so far (voluntary and not),
// from /proc/self/task; empty where /proc is not readable.
std::vector<std::pair<std::string, uint64_t>> ThreadSwitches();

}  // namespace pgring::testing

#define ASSERT_OK(expr)                                      \
  do {                                                       \
    ::absl::Status _s = ::pgring::testing::ToStatus(expr);   \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s;             \
  } while (0)
#define EXPECT_OK(expr)                                      \
  do {                                                       \
    ::absl::Status _s = ::pgring::testing::ToStatus(expr);   \
    EXPECT_TRUE(_s.ok()) << #expr << ": " << _s;             \
  } while (0)
// Asserts the exact status code.
#define EXPECT_CODE(expr, expected)                                          \
  do {                                                                       \
    ::absl::Status _s = ::pgring::testing::ToStatus(expr);                   \
    EXPECT_EQ(_s.code(), ::absl::StatusCode::expected) << #expr << ": " << _s; \
  } while (0)
#define ASSERT_CODE(expr, expected)                                          \
  do {                                                                       \
    ::absl::Status _s = ::pgring::testing::ToStatus(expr);                   \
    ASSERT_EQ(_s.code(), ::absl::StatusCode::expected) << #expr << ": " << _s; \
  } while (0)

namespace pgring::testing {
inline absl::Status ToStatus(const absl::Status& s) { return s; }
template <typename T>
absl::Status ToStatus(const absl::StatusOr<T>& s) {
  return s.status();
}
}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_TEST_UTIL_H_
