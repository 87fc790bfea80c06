#include "tool/surgery.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/label.h"
#include "pgring/store.h"
#include "tool/offline_store.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

constexpr char kConfirmFlag[] = "--yes-i-really-mean-it";

// Opens the store for writing, after checking read-only (without touching
// anything) that the partition and the RocksDB are one pgring store.
absl::StatusOr<std::unique_ptr<Store>> OpenForWrite(const ToolContext& ctx, RecoveryPolicy policy) {
  if (ctx.db.empty()) {
    return absl::InvalidArgumentError("this command needs the store's RocksDB: give --db PATH");
  }
  {
    ASSIGN_OR_RETURN(auto off, OfflineStore::Open(ctx.dev, ctx.db, /*writable=*/false));
    RETURN_IF_ERROR(off->CheckBinding());
  }
  Options o;
  o.io_engine = IoEngine::kPsync;
  o.io_queue_depth = 4;
  o.log_sink = NullLogSink();
  o.recovery_policy = policy;
  auto s = Store::Open(ctx.dev, MetadataLocation::OwnDb(ctx.db), o);
  if (!s.ok()) return ExplainOpenError(s.status(), "the store");
  return s;
}

int ExitFor(const absl::Status& s) { return absl::IsInvalidArgument(s) ? kExitUsage : kExitFailed; }

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

// trim and rewind: the same shape.
int RunVersionOp(const ToolContext& ctx, const std::string& op, const std::string& pg_text,
                 const std::string& to_text, bool confirmed) {
  auto id = ParsePgId(pg_text);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto to = ParseVersion(to_text);
  if (!to.ok()) return Fail(ctx, to.status(), kExitUsage);
  if (!confirmed) {
    return Fail(ctx, absl::StrCat(op, " changes the store; add ", kConfirmFlag, " to do it"),
                kExitUsage);
  }
  auto store = OpenForWrite(ctx, RecoveryPolicy::kRefuse);
  if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
  auto before = (*store)->GetPgStats(*id);
  if (!before.ok()) return Fail(ctx, before.status(), ExitFor(before.status()));
  Transaction t;
  if (op == "trim") {
    t.Trim(*id, *to);
  } else {
    t.Rewind(*id, *to);
  }
  absl::Status s = (*store)->Commit(std::move(t));
  if (!s.ok()) return Fail(ctx, s, ExitFor(s));
  auto after = (*store)->GetPgStats(*id);
  s = (*store)->Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  if (!after.ok()) return Fail(ctx, after.status(), kExitFailed);
  if (ctx.json()) {
    Json j;
    j["operation"] = op;
    j["pg"] = id->ToString();
    j["to"] = to->ToString();
    j["before"] = StatsJson(*before);
    j["after"] = StatsJson(*after);
    PrintJson(ctx, j);
  } else {
    *ctx.out << absl::StrFormat(
        "PG %s: %s to %s: %u entr%s dropped; %s left\n", id->ToString(),
        op == "trim" ? "trimmed" : "rewound", to->ToString(), before->entries - after->entries,
        before->entries - after->entries == 1 ? "y" : "ies", StatsText(*after));
  }
  return kExitOk;
}

}  // namespace

int MkfsCommand(const ToolContext& ctx, const MkfsArgs& args) {
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
  if (ctx.json()) {
    Json j;
    j["uuid"] = l.uuid.ToString();
    j["backend"] = args.backend;
    j["block_size"] = l.block_size;
    j["chunk_size"] = l.chunk_size;
    j["chunk_count"] = l.chunk_count;
    j["partition_size"] = l.partition_size;
    PrintJson(ctx, j);
  } else {
    *ctx.out << absl::StrFormat("made %s store %s: %u bytes, %u chunks of %s\n", args.backend,
                                l.uuid.ToString(), l.partition_size, l.chunk_count,
                                HumanBytes(l.chunk_size));
  }
  return kExitOk;
}

int TrimCommand(const ToolContext& ctx, const std::string& pg, const std::string& to,
                bool confirmed) {
  return RunVersionOp(ctx, "trim", pg, to, confirmed);
}

int RewindCommand(const ToolContext& ctx, const std::string& pg, const std::string& to,
                  bool confirmed) {
  return RunVersionOp(ctx, "rewind", pg, to, confirmed);
}

int RemovePgCommand(const ToolContext& ctx, const std::string& pg_text, bool confirmed) {
  auto id = ParsePgId(pg_text);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  if (!confirmed) {
    return Fail(ctx, absl::StrCat("remove-pg changes the store; add ", kConfirmFlag, " to do it"),
                kExitUsage);
  }
  // A damaged PG can only be removed: open with it marked, not refused.
  auto store = OpenForWrite(ctx, RecoveryPolicy::kMarkDamaged);
  if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
  auto before = (*store)->GetPgStats(*id);
  if (!before.ok()) return Fail(ctx, before.status(), ExitFor(before.status()));
  Transaction t;
  t.RemovePg(*id);
  absl::Status s = (*store)->Commit(std::move(t));
  if (!s.ok()) return Fail(ctx, s, ExitFor(s));
  s = (*store)->Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  if (ctx.json()) {
    Json j;
    j["operation"] = "remove-pg";
    j["pg"] = id->ToString();
    j["before"] = StatsJson(*before);
    j["damaged"] = before->damaged;
    PrintJson(ctx, j);
  } else {
    if (before->damaged) {
      *ctx.out << absl::StrFormat("PG %s removed (it was damaged): %u chunk%s freed\n",
                                  id->ToString(), before->chunks, before->chunks == 1 ? "" : "s");
    } else {
      *ctx.out << absl::StrFormat("PG %s removed: %s and %u dup%s dropped, %u chunk%s freed\n",
                                  id->ToString(), StatsText(*before), before->dups,
                                  before->dups == 1 ? "" : "s", before->chunks,
                                  before->chunks == 1 ? "" : "s");
    }
  }
  return kExitOk;
}

}  // namespace pgring::tool
