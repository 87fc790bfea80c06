// problem.h — the checks' builders of problems (pgring/verify.h's
// VerifyProblem: one thing found wrong, or worth knowing, in a store, with
// where it is), and the one line a problem prints as. The checks (fsck.h),
// the PG scanner, the stream reader's reporter and the tool's fsck and
// repair all speak in VerifyProblems.
#ifndef PGRING_CHECK_PROBLEM_H_
#define PGRING_CHECK_PROBLEM_H_

#include <string>
#include <string_view>

#include "pgring/types.h"
#include "pgring/verify.h"

namespace pgring {

// An error of the whole store (the label, pgring.meta, a malformed key): no
// PG, no place.
VerifyProblem StoreProblem(std::string kind, std::string message);

// An error of PG `pg`, with no place yet.
VerifyProblem PgProblem(const PgId& pg, std::string kind, std::string message);

// An error of the log stream's keys, chunks or records (docs/DESIGN.md, "The
// log stream"): the kind of the PG problem it mirrors, with "stream-" in
// front ("chunk-owned-twice" becomes "stream-chunk-owned-twice").
VerifyProblem StreamProblem(std::string_view kind, std::string message);

// The line VerifyProblem::ToString prints (pgring-tool prints it as is):
// "PG 1.2a: chunk 7, offset 8192 (lpos 8192): record-crc: CRC mismatch",
// "log stream: chunk 3, offset 512 (stream lpos 512): stream-record-crc: ...",
// "PG 1.1: (lpos 8192, stream lpos 4096): unhomed-missing: ...",
// "partition offset 0: label-damaged: ...".
std::string ProblemLine(const VerifyProblem& p);

}  // namespace pgring

#endif  // PGRING_CHECK_PROBLEM_H_
