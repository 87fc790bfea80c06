#include "tool/surgery.h"

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/label.h"
#include "pgring/store.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "store/metadata_db.h"
#include "store/open_store.h"
#include "check/offline_store.h"
#include "check/stream_view.h"
#include "tool/tool_db.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

constexpr char kConfirmFlag[] = "--yes-i-really-mean-it";
constexpr char kConfirmHelp[] = "required: this changes the store";
constexpr char kDryRunHelp[] = "say what would be done; write nothing";

}  // namespace

absl::StatusOr<LibraryStore> OpenForWrite(const ToolContext& ctx, RecoveryPolicy policy) {
  if (ctx.db.empty()) {
    return absl::InvalidArgumentError("this command needs the store's RocksDB: give --db PATH");
  }
  Options o;
  {
    ASSIGN_OR_RETURN(auto off, OpenOfflineStore(ctx, /*writable=*/false));
    RETURN_IF_ERROR(off->CheckBinding());
    ASSIGN_OR_RETURN(StreamKeys stream, LoadStreamKeys(*off));
    KeepLogLayout(stream, &o);
  }
  o.io_engine = IoEngine::kPsync;
  o.io_queue_depth = 4;
  o.log_sink = NullLogSink();
  o.recovery_policy = policy;
  return OpenLibraryStore(ctx, o);
}

namespace {

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
  app->add_option("--pg,--pgid", pg_, "PG id")->required();
  app->add_option("--to", to_, std::string(to_help_))->required();
  app->add_flag(kConfirmFlag, confirmed_, kConfirmHelp);
  app->add_flag("--dry-run", dry_run_, kDryRunHelp);
}

absl::StatusOr<LibraryStore> OpenForDryRun(const ToolContext& ctx, RecoveryPolicy policy) {
  Options o;
  o.read_only = true;
  o.io_engine = IoEngine::kPsync;
  o.io_queue_depth = 4;
  o.log_sink = NullLogSink();
  o.recovery_policy = policy;
  {
    ASSIGN_OR_RETURN(auto off, OpenOfflineStore(ctx, /*writable=*/false));
    RETURN_IF_ERROR(off->CheckBinding());
  }
  return OpenLibraryStore(ctx, o);
}

CommandResult VersionSurgeryCommand::Run(const ToolContext& ctx) const {
  const std::string op(name());
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto to = ParseVersion(to_);
  if (!to.ok()) return Fail(ctx, to.status(), kExitUsage);
  if (!confirmed_ && !dry_run_) {
    return Fail(ctx,
                absl::StrCat(op, " changes the store; add ", kConfirmFlag,
                             " to do it (or --dry-run to see what it would do)"),
                kExitUsage);
  }
  auto store = dry_run_ ? OpenForDryRun(ctx, RecoveryPolicy::kRefuse)
                        : OpenForWrite(ctx, RecoveryPolicy::kRefuse);
  if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
  Store& st = *store->store;
  auto before = st.GetPgStats(*id);
  if (!before.ok()) return Fail(ctx, before.status(), ExitCodeFor(before.status()));
  absl::StatusOr<PgStats> after = *before;
  uint64_t dropped = 0;
  if (dry_run_) {
    // What the transaction would drop, counted on what the store reads.
    auto items = on_dups() ? st.ReadDups(*id) : st.ReadEntries(*id, Version::Min(), Version::Max());
    if (!items.ok()) return Fail(ctx, items.status(), ExitCodeFor(items.status()));
    for (const LogEntry& e : *items) dropped += Drops(e.version, *to) ? 1 : 0;
  } else {
    Transaction t;
    Apply(&t, *id, *to);
    absl::Status s = st.Commit(std::move(t));
    if (!s.ok()) return Fail(ctx, s, ExitCodeFor(s));
    after = st.GetPgStats(*id);
    if (after.ok()) {
      dropped = on_dups() ? before->dups - after->dups : before->entries - after->entries;
    }
  }
  absl::Status s = st.Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  if (!after.ok()) return Fail(ctx, after.status(), kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["operation"] = op;
  j["dry_run"] = dry_run_;
  j["pg"] = id->ToString();
  j["to"] = to->ToString();
  j["before"] = StatsJson(*before);
  j["dropped"] = dropped;
  j["after"] = dry_run_ ? Json(nullptr) : StatsJson(*after);
  const char* unit = on_dups() ? (dropped == 1 ? "dup" : "dups") : (dropped == 1 ? "entry" : "entries");
  if (dry_run_) {
    r.text.Line(absl::StrFormat("PG %s: %s to %s would drop %u %s (dry run: nothing written)",
                                id->ToString(), op, to->ToString(), dropped, unit));
  } else if (on_dups()) {
    r.text.Line(absl::StrFormat("PG %s: %s to %s: %u %s dropped; %u dup%s left", id->ToString(),
                                done_, to->ToString(), dropped, unit, after->dups,
                                after->dups == 1 ? "" : "s"));
  } else {
    r.text.Line(absl::StrFormat("PG %s: %s to %s: %u %s dropped; %s left", id->ToString(), done_,
                                to->ToString(), dropped, unit, StatsText(*after)));
  }
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
  app->add_flag("--dry-run", args_.dry_run, kDryRunHelp);
}

namespace {

// mkfs's checks, read-only: the label mkfs would write, or why it would
// refuse (an existing store without --force, a geometry that breaks a rule).
absl::StatusOr<Label> MkfsPreview(const ToolContext& ctx, const MkfsOptions& o) {
  FileBlockDeviceOptions d;
  d.read_only = true;
  d.use_io_uring = false;
  auto dev = OpenFileBlockDevice(ctx.dev, d);
  if (!dev.ok()) return ExplainOpenError(dev.status(), absl::StrCat("partition ", ctx.dev));
  if (!o.force) {
    auto region = ReadLabelRegion(dev->get(), ctx.dev);
    if (region.ok()) {
      auto existing = DecodeLabelRegion(*region, ctx.dev);
      if (existing.ok() || absl::IsDataLoss(existing.status())) {
        return absl::AlreadyExistsError(absl::StrCat(
            ctx.dev, " already holds a pgring ", existing.ok() ? "store" : "label (damaged)",
            "; mkfs refuses to overwrite it without force"));
      }
    }
  }
  ASSIGN_OR_RETURN(Label label, MakeLabel((*dev)->size(), (*dev)->logical_block_size(), o.size,
                                          o.chunk_size, o.backend));
  if (!o.force) {
    auto db = ToolDb::Open(ctx, ToolDb::Mode::kReadOnly);
    if (db.ok()) {
      ASSIGN_OR_RETURN(auto m, MetadataDb::Open((*db)->location(), false, true));
      ASSIGN_OR_RETURN(auto meta, m->Get(kMetaKey));
      if (meta) {
        return absl::AlreadyExistsError(absl::StrCat(
            DbName(ctx), " already holds a pgring store; mkfs refuses to overwrite it without force"));
      }
    } else if (!absl::IsNotFound(db.status())) {
      return db.status();  // a missing RocksDB or family mkfs would make
    }
  }
  return label;
}

}  // namespace

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
  if (args.dry_run) {
    auto label = MkfsPreview(ctx, o);
    if (!label.ok()) {
      const absl::Status& e = label.status();
      return Fail(ctx, e, absl::IsInvalidArgument(e) || absl::IsNotFound(e) ||
                                  absl::IsUnavailable(e) || absl::IsPermissionDenied(e)
                              ? kExitUsage
                              : kExitFailed);
    }
    CommandResult r;
    r.json["dry_run"] = true;
    r.json["backend"] = args.backend;
    r.json["block_size"] = label->block_size;
    r.json["chunk_size"] = label->chunk_size;
    r.json["chunk_count"] = label->chunk_count;
    r.json["partition_size"] = label->partition_size;
    r.text.Line(absl::StrFormat("would make a %s store: %u bytes, %u chunks of %s (dry run: "
                                "nothing written)",
                                args.backend, label->partition_size, label->chunk_count,
                                HumanBytes(label->chunk_size)));
    return r;
  }
  absl::Status s;
  {
    auto db = ToolDb::Open(ctx, ToolDb::Mode::kCreate);
    s = db.ok() ? Mkfs(ctx.dev, (*db)->location(), o) : db.status();
  }
  if (!s.ok()) {
    s = ExplainOpenError(s, absl::StrCat("partition ", ctx.dev));
    int code = kExitFailed;
    if (absl::IsInvalidArgument(s) || absl::IsNotFound(s) || absl::IsUnavailable(s) ||
        absl::IsPermissionDenied(s)) {
      code = kExitUsage;
    }
    return Fail(ctx, s, code);
  }
  auto off = OpenOfflineStore(ctx, /*writable=*/false);
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
  app->add_option("--pg,--pgid", pg_, "PG id")->required();
  app->add_flag(kConfirmFlag, confirmed_, kConfirmHelp);
  app->add_flag("--dry-run", dry_run_, kDryRunHelp);
}

CommandResult RemovePgCommand::Run(const ToolContext& ctx) const {
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  if (!confirmed_ && !dry_run_) {
    return Fail(ctx,
                absl::StrCat("remove-pg changes the store; add ", kConfirmFlag,
                             " to do it (or --dry-run to see what it would do)"),
                kExitUsage);
  }
  // A damaged PG can only be removed: open with it marked, not refused.
  auto store = dry_run_ ? OpenForDryRun(ctx, RecoveryPolicy::kMarkDamaged)
                        : OpenForWrite(ctx, RecoveryPolicy::kMarkDamaged);
  if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
  auto before = store->store->GetPgStats(*id);
  if (!before.ok()) return Fail(ctx, before.status(), ExitCodeFor(before.status()));
  if (!dry_run_) {
    Transaction t;
    t.RemovePg(*id);
    absl::Status s = store->store->Commit(std::move(t));
    if (!s.ok()) return Fail(ctx, s, ExitCodeFor(s));
  }
  absl::Status s = store->store->Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["operation"] = "remove-pg";
  j["dry_run"] = dry_run_;
  j["pg"] = id->ToString();
  j["before"] = StatsJson(*before);
  j["damaged"] = before->damaged;
  const std::string removed = dry_run_ ? "would be removed" : "removed";
  const std::string freed = dry_run_ ? "would be freed" : "freed";
  if (before->damaged) {
    r.text.Line(absl::StrFormat("PG %s %s (it %s damaged): %u chunk%s %s", id->ToString(), removed,
                                dry_run_ ? "is" : "was", before->chunks,
                                before->chunks == 1 ? "" : "s", freed));
  } else {
    r.text.Line(absl::StrFormat("PG %s %s: %s and %u dup%s dropped, %u chunk%s %s",
                                id->ToString(), removed, StatsText(*before), before->dups,
                                before->dups == 1 ? "" : "s", before->chunks,
                                before->chunks == 1 ? "" : "s", freed));
  }
  if (dry_run_) r.text.Line("dry run: nothing written");
  return r;
}

}  // namespace pgring::tool
