// fsck.h — `pgring-tool fsck`: the library's checks (check/fsck.h, the one
// checker behind the public Verify) run on the store the command line names,
// and their result rendered as text or JSON. What is checked is said in
// check/fsck.h and docs/TOOL.md.
#ifndef PGRING_TOOL_FSCK_H_
#define PGRING_TOOL_FSCK_H_

#include "check/fsck.h"
#include "tool/command.h"
#include "tool/text_output.h"
#include "tool/tool_common.h"

namespace pgring::tool {

// RunFsck with the tool's progress line (ctx.progress) while --deep reads
// the PGs.
absl::StatusOr<FsckResult> RunFsckWithProgress(const OfflineStore& store,
                                               const FsckOptions& options, const ToolContext& ctx);

Json FsckResultToJson(const FsckResult& r);
TextOutput FsckResultText(const FsckResult& r);

// `fsck [--deep]`: exit status 0 clean, 1 problems found, 2 cannot open.
class FsckCommand final : public Command {
 public:
  FsckCommand();
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  FsckOptions options_;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_FSCK_H_
