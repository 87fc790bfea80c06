// problem.h — one thing fsck found wrong (or worth knowing) in a store, with
// where it is: the PG, the chunk, the offset in the chunk and the lpos, as far
// as they apply. fsck, repair and the PG scanner all speak in Problems.
#ifndef PGRING_TOOL_PROBLEM_H_
#define PGRING_TOOL_PROBLEM_H_

#include <cstdint>
#include <optional>
#include <string>

namespace pgring::tool {

struct Problem {
  enum class Severity {
    kError,  // the store is inconsistent or damaged: fsck exits 1
    kNote,   // worth knowing, not wrong (e.g. uncommitted bytes past a tail)
  };
  Severity severity = Severity::kError;
  // Short, stable, machine-readable name ("record-crc", "chunk-owned-twice");
  // docs/TOOL.md lists them all.
  std::string kind;
  std::string pg;                  // "1.2a"; empty for store-wide problems
  std::optional<uint64_t> chunk;   // chunk number
  std::optional<uint64_t> offset;  // byte offset in the chunk (or, with no
                                   // chunk, in the partition)
  std::optional<uint64_t> lpos;    // position in the PG's log stream
  std::string message;             // what is wrong, in words
  bool fixable = false;            // `repair` can fix it without losing data

  // "PG 1.2a: chunk 7, offset 8192 (lpos 8192): record-crc: CRC mismatch"
  std::string ToString() const;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_PROBLEM_H_
