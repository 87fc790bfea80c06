// problem.h — one thing the checks (fsck.h) found wrong (or worth knowing)
// in a store, with where it is: the PG, the chunk, the offset in the chunk
// and the lpos, as far as they apply. The checks, the PG scanner, the
// public Verify (pgring/verify.h) and the tool's fsck and repair all speak
// in Problems.
#ifndef PGRING_CHECK_PROBLEM_H_
#define PGRING_CHECK_PROBLEM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pgring {

struct Problem {
  enum class Severity {
    kError,  // the store is inconsistent or damaged (fsck exits 1)
    kNote,   // worth knowing, not wrong (e.g. uncommitted bytes past a tail)
  };
  Severity severity = Severity::kError;
  // Short, stable, machine-readable name ("record-crc", "chunk-owned-twice");
  // docs/TOOL.md lists them all.
  std::string kind;
  std::string pg;                  // "1.2a"; empty for store-wide problems
  // About the log stream (its keys, chunks or records; docs/DESIGN.md, "The
  // log stream"), not a PG: chunk and offset are then in the stream's
  // chunks and lpos is a stream lpos.
  bool stream = false;
  std::optional<uint64_t> chunk;   // chunk number
  std::optional<uint64_t> offset;  // byte offset in the chunk (or, with no
                                   // chunk, in the partition)
  std::optional<uint64_t> lpos;    // position in the PG's ring (the stream's
                                   // with `stream`)
  // A PG's problem with its bytes in the log stream: the stream lpos where
  // they were looked for.
  std::optional<uint64_t> stream_lpos;
  std::string message;             // what is wrong, in words
  bool fixable = false;            // `repair` can fix it without losing data

  // "PG 1.2a: chunk 7, offset 8192 (lpos 8192): record-crc: CRC mismatch",
  // "log stream: chunk 3, offset 512 (stream lpos 512): stream-record-crc: ...",
  // "PG 1.1 (lpos 8192, stream lpos 4096): unhomed-missing: ..."
  std::string ToString() const;
};

// The line Problem::ToString and the public VerifyProblem::ToString
// (pgring/verify.h) print, from `p`'s place (stream, chunk, offset, lpos,
// stream_lpos), kind and message; `pg` is the PG as text, empty for none.
// Defined for those two types.
template <typename P>
std::string ProblemLine(const P& p, std::string_view pg);

}  // namespace pgring

#endif  // PGRING_CHECK_PROBLEM_H_
