#include "tool/expand.h"

#include <rocksdb/write_batch.h>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "check/offline_store.h"
#include "format/interrupted_expand.h"
#include "format/metadata_keys.h"
#include "store/open_store.h"
#include "tool/tool_db.h"
#include "util/status_macros.h"

namespace pgring::tool {

absl::StatusOr<ExpandResult> ExpandStore(const ToolContext& ctx, uint64_t size, bool dry_run,
                                         const std::function<absl::Status()>& after_label) {
  if (ctx.db.empty()) {
    return absl::InvalidArgumentError("expand needs the store's RocksDB: give --db PATH");
  }
  ASSIGN_OR_RETURN(auto s, OpenOfflineStore(ctx, /*writable=*/!dry_run));
  RETURN_IF_ERROR(s->CheckBinding());
  ExpandResult r;
  r.before = *s->label();
  r.finished_interrupted = s->expand_interrupted();
  const StoreMeta meta = **s->meta();  // grown already if interrupted
  const uint64_t device_size = s->device()->size();
  if (size != 0 && size < r.before.partition_size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "expand grows a store and never shrinks one: --size %u is less than the %u bytes the "
        "store spans",
        size, r.before.partition_size));
  }
  ASSIGN_OR_RETURN(r.after, MakeLabel(device_size, r.before.block_size, size,
                                      r.before.chunk_size, r.before.backend));
  r.after.uuid = r.before.uuid;
  r.after.format_version = r.before.format_version;
  if (r.after.chunk_count <= r.before.chunk_count && !r.finished_interrupted) {
    const uint64_t target = size == 0 ? device_size : size;
    if (target == r.before.partition_size) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s did not grow: it is %u bytes and the store already spans %u (%u chunks); extend "
          "the partition first",
          ctx.dev, target, r.before.partition_size, r.before.chunk_count));
    }
    return absl::FailedPreconditionError(absl::StrFormat(
        "growing the store from %u to %u bytes adds no whole chunk (%u bytes) past its %u "
        "chunks: it would gain nothing",
        r.before.partition_size, target, r.before.chunk_size, r.before.chunk_count));
  }
  if (r.after.chunk_count < r.before.chunk_count) r.after = r.before;  // finish, never shrink
  if (dry_run) return r;
  // The label first: until pgring.meta follows, the pair reads as this
  // growth cut short (expand.h).
  RETURN_IF_ERROR(WriteLabelRegion(s->device(), r.after));
  if (after_label) RETURN_IF_ERROR(after_label());
  StoreMeta grown = GrownMeta(r.after, meta);
  rocksdb::WriteBatch batch;
  batch.Put(s->db()->cf(), std::string(kMetaKey), grown.Encode());
  RETURN_IF_ERROR(s->db()->WriteSync(&batch));
  s->Release();
  // What is on disk now must be one grown store.
  ASSIGN_OR_RETURN(auto check, OpenOfflineStore(ctx, /*writable=*/false));
  RETURN_IF_ERROR(check->CheckBinding());
  if (check->expand_interrupted() || !(*check->label() == r.after)) {
    return absl::InternalError("the grown store does not read back as written");
  }
  return r;
}

void ExpandCommand::AddOptions(CLI::App* app) {
  app->add_option("--size", size_, "bytes of the partition the store spans after (default: all)")
      ->transform(CLI::AsSizeValue(false));
  app->add_flag("--dry-run", dry_run_, "say what would be done; write nothing");
}

CommandResult ExpandCommand::Run(const ToolContext& ctx) const {
  auto r = ExpandStore(ctx, size_, dry_run_);
  if (!r.ok()) {
    const absl::Status& e = r.status();
    return Fail(ctx, e, absl::IsFailedPrecondition(e) || absl::IsDataLoss(e) ? kExitFailed
                                                                               : kExitUsage);
  }
  CommandResult c;
  Json& j = c.json;
  j["dry_run"] = dry_run_;
  j["partition_size"] = {{"before", r->before.partition_size}, {"after", r->after.partition_size}};
  j["chunk_count"] = {{"before", r->before.chunk_count}, {"after", r->after.chunk_count}};
  j["finished_interrupted"] = r->finished_interrupted;
  const uint64_t added = r->after.chunk_count - r->before.chunk_count;
  if (r->finished_interrupted && added == 0) {
    c.text.Line(absl::StrFormat(
        "%s the interrupted growth to %u bytes, %u chunks: pgring.meta %s the new size",
        dry_run_ ? "would finish" : "finished", r->after.partition_size, r->after.chunk_count,
        dry_run_ ? "would get" : "got"));
  } else {
    c.text.Line(absl::StrFormat("%s the store from %u to %u bytes: %u to %u chunks (%u free chunks "
                                "of %s added)",
                                dry_run_ ? "would grow" : "grew", r->before.partition_size,
                                r->after.partition_size, r->before.chunk_count,
                                r->after.chunk_count, added, HumanBytes(r->after.chunk_size)));
  }
  if (dry_run_) c.text.Line("dry run: nothing written");
  return c;
}

}  // namespace pgring::tool
