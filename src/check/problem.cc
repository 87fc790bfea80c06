#include "check/problem.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pgring/verify.h"

namespace pgring {

template <typename P>
std::string ProblemLine(const P& p, std::string_view pg) {
  std::string s;
  if (p.stream) {
    absl::StrAppend(&s, "log stream: ");
  } else if (!pg.empty()) {
    absl::StrAppend(&s, "PG ", std::string(pg), ": ");
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

template std::string ProblemLine(const Problem& p, std::string_view pg);
template std::string ProblemLine(const VerifyProblem& p, std::string_view pg);

std::string Problem::ToString() const { return ProblemLine(*this, pg); }

}  // namespace pgring
