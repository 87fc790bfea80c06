// pgring/version.h — which pgring this is, and which on-disk formats it reads
// and writes.
//
// The library version follows the CMake package's (find_package(pgring 0.1)
// accepts any 0.1.x: SameMinorVersion). The format versions are those of the
// partition's label and of the store's metadata in RocksDB (docs/FORMAT.md,
// "Format versions"): a store is made at kFormatVersionWritten and becomes
// kFormatVersionStream the first time it is opened with a log stream; this
// library opens any version from kFormatVersionMinRead to
// kFormatVersionMaxRead and refuses others with an error naming the version.
//
//   if (std::string_view(pgring::LibraryVersion()) != PGRING_VERSION_STRING)
//     die("built against pgring " PGRING_VERSION_STRING);
#ifndef PGRING_VERSION_H_
#define PGRING_VERSION_H_

#include <cstdint>

// The top-level CMakeLists.txt reads its project version from these three
// lines: this header is the one place the version is written.
#define PGRING_VERSION_MAJOR 0
#define PGRING_VERSION_MINOR 2
#define PGRING_VERSION_PATCH 0

#define PGRING_VERSION_STRINGIFY_(x) #x
#define PGRING_VERSION_STRINGIFY(x) PGRING_VERSION_STRINGIFY_(x)
#define PGRING_VERSION_STRING                       \
  PGRING_VERSION_STRINGIFY(PGRING_VERSION_MAJOR)    \
  "." PGRING_VERSION_STRINGIFY(PGRING_VERSION_MINOR) \
  "." PGRING_VERSION_STRINGIFY(PGRING_VERSION_PATCH)

namespace pgring {

// What mkfs writes: a store whose log stream never held a record.
inline constexpr uint32_t kFormatVersionWritten = 1;
// A ring store that has been opened with a log stream (LogLayout::kStream):
// its PGs' records continue in the stream past their pointers' tails, and
// a PG's ring takes chunks only for the bytes homed to it. A reader of
// version 1 would not know to read the stream, one of version 2 (whose
// stream store rewrote every pointer with every transaction) would stop at
// the pointers' tails, and one of version 3 (whose rings took chunks for
// every byte, homed or not) would take a pointer past its chunks for
// damage; each refuses it. This library reads versions 2 and 3 too and
// makes either version 4 at the first open with a stream.
inline constexpr uint32_t kFormatVersionStream = 4;
// A stream store opened with StreamCompression::kLz4: its stream may hold
// compressed records (kRecordStreamLz4), which a reader of version 4 would
// take for damage; it refuses the store by its version instead. A store
// stays version 5 when it is opened without compression again (its stream
// may still hold such records).
inline constexpr uint32_t kFormatVersionCompressed = 5;
// The versions this library opens.
inline constexpr uint32_t kFormatVersionMinRead = 1;
inline constexpr uint32_t kFormatVersionMaxRead = kFormatVersionCompressed;

// The version of the library linked in, "major.minor.patch": the same as
// PGRING_VERSION_STRING unless the headers and the library differ.
const char* LibraryVersion();

}  // namespace pgring

#endif  // PGRING_VERSION_H_
