// fuzz_common.h — shared by the libFuzzer targets in tests/fuzz.
//
// Each <name>_fuzzer.cc defines its entry point as
//   extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size)
// which is LLVMFuzzerTestOneInput in the fuzzer executables and
// PgringFuzz_<name> in fuzz_replay_test (CMake defines PGRING_FUZZ_ENTRY), so
// the replay runs exactly the code the fuzzer runs.
//
// An invariant that does not hold is a crash: FUZZ_CHECK prints what failed
// and aborts, which libFuzzer reports (and saves the input as crash-*), and
// which fails the replay test.
#ifndef PGRING_TESTS_FUZZ_FUZZ_COMMON_H_
#define PGRING_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/coding.h"
#include "util/crc32c.h"

#ifndef PGRING_FUZZ_ENTRY
#define PGRING_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

namespace pgring::fuzz {

[[noreturn]] inline void FuzzFail(const char* file, int line, const char* cond,
                                  const std::string& what) {
  std::fprintf(stderr, "\nFUZZ INVARIANT FAILED at %s:%d: %s\n  %s\n", file, line, cond,
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Writes mask(CRC32C(s[from, to))) at s[at, at + 4).
inline void PutMaskedCrc(std::string* s, size_t at, size_t from, size_t to) {
  EncodeFixed32(s->data() + at, crc32c::Mask(crc32c::Value(s->data() + from, to - from)));
}

inline std::string Hex(std::string_view s, size_t max = 64) {
  static const char* k = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    out.push_back(k[static_cast<uint8_t>(s[i]) >> 4]);
    out.push_back(k[static_cast<uint8_t>(s[i]) & 15]);
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace pgring::fuzz

// FUZZ_CHECK(cond, what): `what` is a std::string (e.g. absl::StrFormat(...)),
// evaluated only when `cond` is false.
#define FUZZ_CHECK(cond, what)                                            \
  do {                                                                    \
    if (!(cond)) ::pgring::fuzz::FuzzFail(__FILE__, __LINE__, #cond, (what)); \
  } while (0)

#endif  // PGRING_TESTS_FUZZ_FUZZ_COMMON_H_
