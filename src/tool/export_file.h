// export_file.h — the portable file of one PG's log that `export` writes and
// `import` reads: versioned, every section checksummed, the whole file
// checksummed at its end. Specified in docs/FORMAT.md, "Export file".
//
// Format (little-endian, CRCs masked as everywhere in pgring):
//   file    := header section* end
//   header  := magic "PGRINGEX" version:u32 flags:u32 crc:u32     (20 bytes)
//   section := type:u8 length:u32 data[length] crc:u32
//              crc = mask(CRC32C(type, length, data))
//   type 1 PG    (first, once) pool:i64 seed:u32 shard:i8 source_uuid[16]
//                source_backend:u8 entries_trimmed_to:version
//                dups_trimmed_to:version entry_count:u64 dup_count:u64
//                has_info:u8                                       (71 bytes)
//   type 2 DUP   version payload          (increasing versions)
//   type 3 ENTRY version payload          (increasing versions)
//   type 4 INFO  payload                  (at most once)
//   type 5 END   file_crc:u32 = mask(CRC32C(every byte before the section))
//   version := epoch:u32 version:u64; order PG DUP* ENTRY* INFO? END; nothing
//   may follow END.
#ifndef PGRING_TOOL_EXPORT_FILE_H_
#define PGRING_TOOL_EXPORT_FILE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/label.h"
#include "pgring/options.h"
#include "pgring/types.h"

namespace pgring::tool {

inline constexpr char kExportMagic[8] = {'P', 'G', 'R', 'I', 'N', 'G', 'E', 'X'};
inline constexpr uint32_t kExportFormatVersion = 1;
inline constexpr size_t kExportHeaderSize = 20;
// A section's data is at most this long (a payload is at most 1 MiB by
// default; this leaves room for stores with larger limits).
inline constexpr uint32_t kExportMaxSection = 64u << 20;

enum class ExportSection : uint8_t { kPg = 1, kDup = 2, kEntry = 3, kInfo = 4, kEnd = 5 };

struct ExportedPg {
  PgId pg;
  Uuid source_uuid;
  Backend source_backend = Backend::kRing;
  Version entries_trimmed_to;  // the source's trim points (entries/dups <= are gone)
  Version dups_trimmed_to;
  std::vector<LogEntry> entries;  // strictly increasing versions, all > entries_trimmed_to
  std::vector<LogEntry> dups;     // strictly increasing versions, all > dups_trimmed_to
  std::optional<std::string> info;

  friend bool operator==(const ExportedPg&, const ExportedPg&) = default;
};

// The whole file.
std::string EncodeExport(const ExportedPg& pg);

// An export of several PGs (`export --all`), one file:
//   all     := header member*
//   header  := magic "PGRINGEA" version:u32 count:u32 crc:u32      (20 bytes)
//              crc = mask(CRC32C(header[0, 16)))
//   member  := length:u64 export[length]     (a whole single-PG file above)
// with exactly `count` members and nothing after them.
inline constexpr char kExportAllMagic[8] = {'P', 'G', 'R', 'I', 'N', 'G', 'E', 'A'};
inline constexpr uint32_t kExportAllFormatVersion = 1;

// Writes an export of several PGs as it goes, so that the caller holds one
// member at a time: Begin(count) writes the header, each Add one member
// (its length, then its bytes), Finish checks that `count` were added.
// Every byte goes to `sink` in file order and the writer keeps none of them,
// so memory is bounded by the largest member, not the file. The first error
// (the sink's, or a call out of order) is returned by that call and by
// every later one.
class ExportAllWriter {
 public:
  using Sink = std::function<absl::Status(std::string_view bytes)>;

  explicit ExportAllWriter(Sink sink) : sink_(std::move(sink)) {}

  absl::Status Begin(uint32_t count);
  // `member` is an EncodeExport output.
  absl::Status Add(std::string_view member);
  absl::Status Finish();

  // Bytes the sink has taken.
  uint64_t bytes() const { return bytes_; }

 private:
  absl::Status Write(std::string_view bytes);

  Sink sink_;
  absl::Status status_;
  bool begun_ = false, finished_ = false;
  uint32_t count_ = 0, added_ = 0;
  uint64_t bytes_ = 0;
};

// The whole file in memory (through ExportAllWriter); `members` are
// EncodeExport outputs.
std::string EncodeExportAll(const std::vector<std::string>& members);

// Either kind of file: one PG's (DecodeExport) or several PGs' (every member
// verified as DecodeExport does; the count must match). Errors as
// DecodeExport's; a member's damage names the member's offset in the file.
absl::StatusOr<std::vector<ExportedPg>> DecodeExportAny(std::string_view file);

// Parses and verifies a whole file. kFailedPrecondition: not an export file
// (no magic) or a version/flags this reader does not know; kDataLoss: a
// damaged file (CRC mismatch, truncated, sections out of order, counts that
// do not add up, bytes after the end), naming the offset.
absl::StatusOr<ExportedPg> DecodeExport(std::string_view file);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_EXPORT_FILE_H_
