// verify.cc — the public Verify (pgring/verify.h): the checks (fsck.h) on an
// OfflineStore opened read-only, their result turned into the public report.
#include "pgring/verify.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "check/fsck.h"
#include "check/offline_store.h"
#include "check/problem.h"
#include "util/status_macros.h"

namespace pgring {
namespace {

// A partition another opener holds (flock refused: kUnavailable) is a store
// that is open: Verify checks closed stores only.
absl::Status ExplainVerifyOpenError(const absl::Status& error, std::string_view what) {
  if (!absl::IsUnavailable(error)) return error;
  return absl::FailedPreconditionError(
      absl::StrCat(std::string(what), " is in use (a Store has it open, in this process or another): "
                   "Verify checks a closed store; close it first (",
                   error.message(), ")"));
}

VerifyProblem ToVerifyProblem(const Problem& p) {
  VerifyProblem v;
  v.severity = p.severity == Problem::Severity::kError ? VerifyProblem::Severity::kError
                                                       : VerifyProblem::Severity::kNote;
  v.kind = p.kind;
  // Problem::pg is a PgId's ToString (fsck.cc, pg_scan.cc), so it parses.
  PgId id;
  if (!p.pg.empty() && PgId::Parse(p.pg, &id)) v.pg = id;
  v.stream = p.stream;
  v.chunk = p.chunk;
  v.offset = p.offset;
  v.lpos = p.lpos;
  v.stream_lpos = p.stream_lpos;
  v.message = p.message;
  v.fixable = p.fixable;
  return v;
}

VerifyReport ToReport(const FsckResult& r, std::optional<Backend> backend) {
  VerifyReport v;
  v.backend = backend;
  v.uuid = r.uuid;
  v.deep = r.deep;
  v.errors = r.errors();
  v.fixable = r.fixable();
  v.problems.reserve(r.problems.size());
  for (const Problem& p : r.problems) v.problems.push_back(ToVerifyProblem(p));
  v.not_checked = r.not_checked;
  v.pgs = r.pgs;
  v.chunk_count = r.chunk_count;
  v.owned_chunks = r.owned_chunks;
  v.free_chunks = r.free_chunks;
  v.records = r.records;
  v.entries = r.entries;
  v.dups = r.dups;
  if (r.stream) {
    v.stream = VerifyStreamSummary{r.stream->head, r.stream->tail, r.stream->chunks,
                                   r.stream->unhomed_pgs, r.stream->unhomed_bytes};
  }
  return v;
}

}  // namespace

std::string VerifyProblem::ToString() const {
  return ProblemLine(*this, pg ? pg->ToString() : std::string());
}

absl::StatusOr<VerifyReport> Verify(const std::string& device_path, const MetadataLocation& meta,
                                    const VerifyOptions& options) {
  OfflineStoreOptions o;
  o.writable = false;
  o.lock_partition = true;
  o.explain_open_error = ExplainVerifyOpenError;
  ASSIGN_OR_RETURN(auto store, OfflineStore::Open(device_path, meta, o));
  ASSIGN_OR_RETURN(FsckResult r, RunFsck(*store, options));
  return ToReport(r, store->backend());
}

}  // namespace pgring
