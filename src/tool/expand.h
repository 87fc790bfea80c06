// expand.h — `expand`: grows a store onto the rest of its partition after
// the partition (an LV, a file) was extended, as ceph-bluestore-tool's
// bluefs-bdev-expand grows BlueFS onto a grown device.
//
// The size of a store is in two places, the label (partition_size,
// chunk_count) and pgring.meta (the same fields). Growing writes the label
// first (one block, flushed), then pgring.meta (a synced RocksDB write). A
// crash between the two leaves a label larger than the metadata, and that
// pair — and no other disagreement — is read as a growth the crash cut
// short (IsInterruptedExpand, format/metadata_keys.h): the store opens
// grown, its next writable open writes the metadata, fsck notes it, and
// `expand` again finishes it. A crash before the label write leaves the old
// store; after the metadata write, the grown one. Nothing else records the
// size: the ring backend's free chunks are rebuilt from the chunk lists at
// every open, so the new chunks are free as soon as either write is done.
#ifndef PGRING_TOOL_EXPAND_H_
#define PGRING_TOOL_EXPAND_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "format/label.h"
#include "tool/command.h"
#include "tool/tool_common.h"

namespace pgring::tool {

struct ExpandResult {
  Label before;  // the label as it was
  Label after;   // the grown label (written unless a dry run)
  bool finished_interrupted = false;  // the label was already grown
};

// Grows the store at ctx.dev + ctx.db to `size` bytes of the partition (0:
// all of it). kFailedPrecondition when that adds no whole chunk (the
// partition did not grow, or by less than a chunk) or would shrink the
// store; nothing is written then. `dry_run`: only says what it would do,
// opening nothing for writing. `after_label` (tests) runs between the label
// write and the metadata write; an error from it stops there, as a crash
// would.
absl::StatusOr<ExpandResult> ExpandStore(const ToolContext& ctx, uint64_t size, bool dry_run,
                                         const std::function<absl::Status()>& after_label = {});

// `expand [--size N] [--dry-run]`.
class ExpandCommand final : public Command {
 public:
  ExpandCommand()
      : Command("expand",
                "grow the store onto the rest of its partition after the partition was extended") {}
  bool writes() const override { return true; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  uint64_t size_ = 0;
  bool dry_run_ = false;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_EXPAND_H_
