// verify.cc — the public Verify (pgring/verify.h): the checks (fsck.h) on an
// OfflineStore opened read-only; their report is the public one.
// (VerifyProblem::ToString is in problem.cc, with the line it prints.)
#include "pgring/verify.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "check/fsck.h"
#include "check/offline_store.h"
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

}  // namespace

absl::StatusOr<VerifyReport> Verify(const std::string& device_path, const MetadataLocation& meta,
                                    const VerifyOptions& options) {
  OfflineStoreOptions o;
  o.writable = false;
  o.lock_partition = true;
  o.explain_open_error = ExplainVerifyOpenError;
  ASSIGN_OR_RETURN(auto store, OfflineStore::Open(device_path, meta, o));
  ASSIGN_OR_RETURN(FsckResult r, RunFsck(*store, options));
  return std::move(r.report);
}

}  // namespace pgring
