// verify.cc — the public Verify (pgring/verify.h): the checks (fsck.h) on an
// OfflineStore opened read-only; their report is the public one. And the
// same checks at open (Options::verify_on_open; VerifyAtOpen, declared in
// store/open_store.h), on the partition and RocksDB Store::Open has open.
// (VerifyProblem::ToString is in problem.cc, with the line it prints.)
#include "pgring/verify.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "check/fsck.h"
#include "check/offline_store.h"
#include "store/open_store.h"
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

absl::Status VerifyAtOpen(const std::shared_ptr<BlockDevice>& dev, const std::string& dev_name,
                          MetadataDb* db, bool deep) {
  ASSIGN_OR_RETURN(auto store, OfflineStore::Borrow(dev, dev_name, db));
  FsckOptions o;
  o.deep = deep;
  ASSIGN_OR_RETURN(FsckResult r, RunFsck(*store, o));
  const VerifyReport& report = r.report;
  if (report.clean()) return absl::OkStatus();
  // The first errors as Verify's report words them; all of them would make
  // an error line of any length.
  constexpr size_t kNamed = 3;
  std::vector<std::string> named;
  for (const VerifyProblem& p : report.problems) {
    if (p.severity != VerifyProblem::Severity::kError) continue;
    if (named.size() == kNamed) break;
    named.push_back(p.ToString());
  }
  const std::string more =
      report.errors > named.size()
          ? absl::StrFormat("; and %u more", report.errors - named.size())
          : std::string();
  return absl::DataLossError(absl::StrFormat(
      "%s: the %s check at open (Options::verify_on_open) found %u error%s, so the store was "
      "not opened and nothing was written: %s%s (pgring::Verify or pgring-tool fsck lists every "
      "problem)",
      dev_name, deep ? "deep" : "shallow", report.errors, report.errors == 1 ? "" : "s",
      absl::StrJoin(named, "; "), more));
}

}  // namespace pgring
