#include "check/problem.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pgring {

VerifyProblem StoreProblem(std::string kind, std::string message) {
  VerifyProblem p;
  p.kind = std::move(kind);
  p.message = std::move(message);
  return p;
}

VerifyProblem PgProblem(const PgId& pg, std::string kind, std::string message) {
  VerifyProblem p = StoreProblem(std::move(kind), std::move(message));
  p.pg = pg;
  return p;
}

VerifyProblem StreamProblem(std::string_view kind, std::string message) {
  VerifyProblem p = StoreProblem(absl::StrCat("stream-", std::string(kind)), std::move(message));
  p.stream = true;
  return p;
}

std::string ProblemLine(const VerifyProblem& p) {
  std::string s;
  if (p.stream) {
    absl::StrAppend(&s, "log stream: ");
  } else if (p.pg) {
    absl::StrAppend(&s, "PG ", p.pg->ToString(), ": ");
  }
  std::vector<std::string> where;
  if (p.chunk) where.push_back(absl::StrCat("chunk ", *p.chunk));
  if (p.offset) {
    where.push_back(absl::StrCat(p.chunk ? "offset " : "partition offset ", *p.offset));
  }
  if (!where.empty()) absl::StrAppend(&s, absl::StrJoin(where, ", "));
  std::vector<std::string> positions;
  if (p.lpos) positions.push_back(absl::StrCat(p.stream ? "stream lpos " : "lpos ", *p.lpos));
  if (p.stream_lpos) positions.push_back(absl::StrCat("stream lpos ", *p.stream_lpos));
  if (!positions.empty()) {
    absl::StrAppend(&s, where.empty() ? "" : " ", "(", absl::StrJoin(positions, ", "), ")");
  }
  if (!where.empty() || !positions.empty()) absl::StrAppend(&s, ": ");
  absl::StrAppend(&s, p.kind, ": ", p.message);
  return s;
}

// Declared in pgring/verify.h; defined here, with the line it prints.
std::string VerifyProblem::ToString() const { return ProblemLine(*this); }

}  // namespace pgring
