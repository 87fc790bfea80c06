#include "check/problem.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pgring {

std::string Problem::ToString() const {
  std::string s;
  if (stream) {
    absl::StrAppend(&s, "log stream: ");
  } else if (!pg.empty()) {
    absl::StrAppend(&s, "PG ", pg, ": ");
  }
  std::vector<std::string> where;
  if (chunk) where.push_back(absl::StrCat("chunk ", *chunk));
  if (offset) where.push_back(absl::StrCat(chunk ? "offset " : "partition offset ", *offset));
  if (!where.empty()) absl::StrAppend(&s, absl::StrJoin(where, ", "));
  std::vector<std::string> positions;
  if (lpos) positions.push_back(absl::StrCat(stream ? "stream lpos " : "lpos ", *lpos));
  if (stream_lpos) positions.push_back(absl::StrCat("stream lpos ", *stream_lpos));
  if (!positions.empty()) {
    absl::StrAppend(&s, where.empty() ? "" : " ", "(", absl::StrJoin(positions, ", "), ")");
  }
  if (!where.empty() || !positions.empty()) absl::StrAppend(&s, ": ");
  absl::StrAppend(&s, kind, ": ", message);
  return s;
}

}  // namespace pgring
