#include "tool/surgery.h"

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/label.h"
#include "pgring/store.h"
#include "tool/offline_store.h"
#include "tool/stream_view.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

constexpr char kConfirmFlag[] = "--yes-i-really-mean-it";
constexpr char kConfirmHelp[] = "required: this changes the store";

// Opens the store for writing, after checking read-only (without touching
// anything) that the partition and the RocksDB are one pgring store.
absl::StatusOr<std::unique_ptr<Store>> OpenForWrite(const ToolContext& ctx, RecoveryPolicy policy) {
  if (ctx.db.empty()) {
    return absl::InvalidArgumentError("this command needs the store's RocksDB: give --db PATH");
  }
  Options o;
  {
    ASSIGN_OR_RETURN(auto off, OfflineStore::Open(ctx.dev, ctx.db, /*writable=*/false));
    RETURN_IF_ERROR(off->CheckBinding());
    ASSIGN_OR_RETURN(StreamKeys stream, LoadStreamKeys(*off));
    KeepLogLayout(stream, &o);
  }
  o.io_engine = IoEngine::kPsync;
  o.io_queue_depth = 4;
  o.log_sink = NullLogSink();
  o.recovery_policy = policy;
  auto s = Store::Open(ctx.dev, MetadataLocation::OwnDb(ctx.db), o);
  if (!s.ok()) return ExplainOpenError(s.status(), "the store");
  return s;
}

struct Surgery {
  std::string op;
  PgId pg;
  Version to;
};

Json StatsJson(const PgStats& s) {
  Json j;
  j["entries"] = s.entries;
  j["first_version"] = s.entries ? Json(s.first_version.ToString()) : Json(nullptr);
  j["last_version"] = s.entries ? Json(s.last_version.ToString()) : Json(nullptr);
  j["chunks"] = s.chunks;
  return j;
}

std::string StatsText(const PgStats& s) {
  if (s.entries == 0) return "no entries";
  return absl::StrFormat("%u entr%s (%s .. %s)", s.entries, s.entries == 1 ? "y" : "ies",
                         s.first_version.ToString(), s.last_version.ToString());
}

}  // namespace

void VersionSurgeryCommand::AddOptions(CLI::App* app) {
  app->add_option("--pg", pg_, "PG id")->required();
  app->add_option("--to", to_, std::string(to_help_))->required();
  app->add_flag(kConfirmFlag, confirmed_, kConfirmHelp);
}

CommandResult VersionSurgeryCommand::Run(const ToolContext& ctx) const {
  const std::string op(name());
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto to = ParseVersion(to_);
  if (!to.ok()) return Fail(ctx, to.status(), kExitUsage);
  if (!confirmed_) {
    return Fail(ctx, absl::StrCat(op, " changes the store; add ", kConfirmFlag, " to do it"),
                kExitUsage);
  }
  auto store = OpenForWrite(ctx, RecoveryPolicy::kRefuse);
  if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
  auto before = (*store)->GetPgStats(*id);
  if (!before.ok()) return Fail(ctx, before.status(), ExitCodeFor(before.status()));
  Transaction t;
  Apply(&t, *id, *to);
  absl::Status s = (*store)->Commit(std::move(t));
  if (!s.ok()) return Fail(ctx, s, ExitCodeFor(s));
  auto after = (*store)->GetPgStats(*id);
  s = (*store)->Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  if (!after.ok()) return Fail(ctx, after.status(), kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["operation"] = op;
  j["pg"] = id->ToString();
  j["to"] = to->ToString();
  j["before"] = StatsJson(*before);
  j["after"] = StatsJson(*after);
  const uint64_t dropped = before->entries - after->entries;
  r.text.Line(absl::StrFormat("PG %s: %s to %s: %u entr%s dropped; %s left", id->ToString(), done_,
                              to->ToString(), dropped, dropped == 1 ? "y" : "ies",
                              StatsText(*after)));
  return r;
}

void MkfsCommand::AddOptions(CLI::App* app) {
  app->add_option("--chunk-size", args_.chunk_size, "chunk size (power of two, 64K..256M)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  app->add_option("--size", args_.size, "bytes of the device to use (default: all)")
      ->transform(CLI::AsSizeValue(false));
  app->add_option("--backend", args_.backend, "ring (default) or rocksdb")
      ->check(CLI::IsMember({"ring", "rocksdb"}));
  app->add_flag("--force", args_.force, "overwrite an existing pgring label or store");
}

CommandResult MkfsCommand::Run(const ToolContext& ctx) const {
  const MkfsArgs& args = args_;
  if (ctx.db.empty()) {
    return Fail(ctx, "mkfs needs a RocksDB directory for the store's metadata: give --db PATH",
                kExitUsage);
  }
  // Checked before the narrowing to MkfsOptions' 32 bits, which could turn a
  // size too large into a valid one.
  if (absl::Status c = CheckChunkSize(args.chunk_size); !c.ok()) {
    return Fail(ctx, c, kExitUsage);
  }
  if (args.backend != "ring" && args.backend != "rocksdb") {
    return Fail(ctx, absl::StrCat("unknown backend '", args.backend, "': ring or rocksdb"),
                kExitUsage);
  }
  MkfsOptions o;
  o.chunk_size = static_cast<uint32_t>(args.chunk_size);
  o.size = args.size;
  o.backend = args.backend == "rocksdb" ? Backend::kRocksDb : Backend::kRing;
  o.force = args.force;
  absl::Status s = Mkfs(ctx.dev, MetadataLocation::OwnDb(ctx.db), o);
  if (!s.ok()) {
    s = ExplainOpenError(s, absl::StrCat("partition ", ctx.dev));
    int code = kExitFailed;
    if (absl::IsInvalidArgument(s) || absl::IsNotFound(s) || absl::IsUnavailable(s) ||
        absl::IsPermissionDenied(s)) {
      code = kExitUsage;
    }
    return Fail(ctx, s, code);
  }
  auto off = OfflineStore::Open(ctx.dev, ctx.db, /*writable=*/false);
  if (!off.ok()) return Fail(ctx, off.status(), kExitFailed);
  if (!(*off)->label().ok()) return Fail(ctx, (*off)->label().status(), kExitFailed);
  const Label& l = *(*off)->label();
  CommandResult r;
  Json& j = r.json;
  j["uuid"] = l.uuid.ToString();
  j["backend"] = args.backend;
  j["block_size"] = l.block_size;
  j["chunk_size"] = l.chunk_size;
  j["chunk_count"] = l.chunk_count;
  j["partition_size"] = l.partition_size;
  r.text.Line(absl::StrFormat("made %s store %s: %u bytes, %u chunks of %s", args.backend,
                              l.uuid.ToString(), l.partition_size, l.chunk_count,
                              HumanBytes(l.chunk_size)));
  return r;
}

void RemovePgCommand::AddOptions(CLI::App* app) {
  app->add_option("--pg", pg_, "PG id")->required();
  app->add_flag(kConfirmFlag, confirmed_, kConfirmHelp);
}

CommandResult RemovePgCommand::Run(const ToolContext& ctx) const {
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  if (!confirmed_) {
    return Fail(ctx, absl::StrCat("remove-pg changes the store; add ", kConfirmFlag, " to do it"),
                kExitUsage);
  }
  // A damaged PG can only be removed: open with it marked, not refused.
  auto store = OpenForWrite(ctx, RecoveryPolicy::kMarkDamaged);
  if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
  auto before = (*store)->GetPgStats(*id);
  if (!before.ok()) return Fail(ctx, before.status(), ExitCodeFor(before.status()));
  Transaction t;
  t.RemovePg(*id);
  absl::Status s = (*store)->Commit(std::move(t));
  if (!s.ok()) return Fail(ctx, s, ExitCodeFor(s));
  s = (*store)->Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["operation"] = "remove-pg";
  j["pg"] = id->ToString();
  j["before"] = StatsJson(*before);
  j["damaged"] = before->damaged;
  if (before->damaged) {
    r.text.Line(absl::StrFormat("PG %s removed (it was damaged): %u chunk%s freed", id->ToString(),
                                before->chunks, before->chunks == 1 ? "" : "s"));
  } else {
    r.text.Line(absl::StrFormat("PG %s removed: %s and %u dup%s dropped, %u chunk%s freed",
                                id->ToString(), StatsText(*before), before->dups,
                                before->dups == 1 ? "" : "s", before->chunks,
                                before->chunks == 1 ? "" : "s"));
  }
  return r;
}

}  // namespace pgring::tool
