#include "tool/repair.h"

#include <rocksdb/write_batch.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "check/offline_store.h"
#include "device/aligned_buffer.h"
#include "tool/fsck.h"
#include "tool/tool_db.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

// Why repair leaves a problem alone.
std::string RefusalReason(const VerifyProblem& p) {
  const std::string& k = p.kind;
  // The log stream (stream mode): repair writes neither the stream nor any
  // pointer's unhomed/stream_pos, so nothing here has a safe fix.
  if (k == "tail-inside-record") {
    return "the PG's pointer ends inside a record: where its committed log ends cannot be "
           "trusted; the PG can only be removed (pgring-tool remove-pg)";
  }
  if (k == "unhomed-missing" || k == "unhomed-unknown-end") {
    return "the PG's newest committed bytes are not in the log stream as its pointer says: "
           "they cannot be rebuilt; the PG can only be removed (pgring-tool remove-pg)";
  }
  if (k.rfind("stream-record-", 0) == 0 || k == "stream-tail-seq" || k == "stream-read-error") {
    return "damage inside the log stream's committed range: the PGs whose newest bytes lay "
           "there lose them (reported against each); repair cannot recreate them";
  }
  if (k.rfind("stream-", 0) == 0) {
    return "the log stream's keys or chunks are damaged or contradict each other: where the "
           "PGs' newest bytes lie is unknown, and guessing would invent committed data";
  }
  if (k.rfind("record-", 0) == 0 || k == "entry-order" || k == "dup-order" || k == "tail-seq" ||
      k == "read-error") {
    return "damage inside the committed range [head, tail): any fix would drop or invent "
           "committed data; the PG can only be removed (pgring-tool remove-pg)";
  }
  if (k == "chunk-owned-twice") {
    return "a chunk claimed twice: repair cannot tell whose data it holds without risking the "
           "other PG's";
  }
  if (k == "chunk-out-of-range") return "the chunk list names a chunk the partition does not have";
  if (k == "pointer-damaged" || k == "chunk-list-damaged" || k == "pointer-without-chunk-list" ||
      k == "chunk-list-without-pointer") {
    return "the PG's head, tail or chunks are unknown: nothing can be rebuilt from the partition "
           "alone";
  }
  if (k == "pointer-outside-ring" || k == "chunk-list-misaligned") {
    return "the pointer and the chunk list contradict each other: which is right is unknown";
  }
  if (k == "meta-damaged") {
    return "pgring.meta cannot be rebuilt exactly: its next PG stamp is kept nowhere else";
  }
  if (k == "uuid-mismatch" || k == "geometry-mismatch") {
    return "the partition and the RocksDB are not one store's; repair touches neither";
  }
  if (k == "partition-truncated") return "the partition is smaller than the store: data is missing";
  if (k == "label-damaged") return "pgring.meta is damaged too: nothing to rebuild the label from";
  if (k == "stamp-invalid" || k == "stamp-shared") {
    return "a PG's stamp is wrong: changing it would orphan every record of the PG";
  }
  return "repair has no safe fix for it";
}

struct Plan {
  struct Fix {
    VerifyProblem problem;
    std::string action;
  };
  std::vector<Fix> fixes;
  std::vector<std::pair<VerifyProblem, std::string>> refused;
};

Plan MakePlan(const FsckResult& r) {
  Plan plan;
  // PGs with any problem repair refuses are not touched at all.
  std::set<PgId> untouchable;
  for (const VerifyProblem& p : r.report.problems) {
    if (p.severity == VerifyProblem::Severity::kError && !p.fixable && p.pg)
      untouchable.insert(*p.pg);
  }
  for (const VerifyProblem& p : r.report.problems) {
    if (!p.fixable) {
      if (p.severity == VerifyProblem::Severity::kError) {
        plan.refused.emplace_back(p, RefusalReason(p));
      }
      continue;
    }
    if (p.pg && untouchable.count(*p.pg)) {
      if (p.severity == VerifyProblem::Severity::kError) {
        plan.refused.emplace_back(p,
                                  "the PG has damage repair refuses (above); it is left as it is");
      }
      continue;
    }
    if (p.kind == "label-damaged") {
      plan.fixes.push_back({p, "write the label again from pgring.meta"});
    } else if (p.kind == "chunk-beyond-tail") {
      plan.fixes.push_back({p, "drop the chunks past the tail's chunk from the PG's list"});
    } else if (p.kind == "past-tail") {
      plan.fixes.push_back({p, "zero the uncommitted bytes past the tail"});
    }
  }
  return plan;
}

absl::Status RewriteLabel(OfflineStore& s) {
  AlignedBuffer buf(kLabelRegionSize);
  const std::string enc = (*s.meta())->ToLabel().Encode();
  std::memcpy(buf.data(), enc.data(), enc.size());
  RETURN_IF_ERROR(s.device()->Write(0, buf.span()));
  return s.device()->Flush();
}

absl::Status ZeroPastTail(OfflineStore& s, const Geometry& g, const FsckPg& f) {
  const PgPointer& p = *f.keys.pointer;
  const PgChunkList& c = *f.keys.chunks;
  const uint64_t end = f.scan->stale_end;
  if (end <= p.tail) return absl::OkStatus();
  const uint64_t align = std::max<uint64_t>(g.block_size, s.device()->logical_block_size());
  const uint64_t start = p.tail - (p.tail - c.base) % align;
  std::vector<Extent> extents;
  MapRange(c, g, start, end - start, &extents);
  uint64_t lpos = start;
  for (const Extent& e : extents) {
    AlignedBuffer buf(e.length);
    if (lpos < p.tail) {
      // Keep the committed bytes of the tail's block.
      RETURN_IF_ERROR(s.device()->Read(e.device_offset, {buf.data(), align}));
      std::memset(buf.data() + (p.tail - lpos), 0, align - (p.tail - lpos));
    }
    RETURN_IF_ERROR(s.device()->Write(e.device_offset, buf.span()));
    lpos += e.length;
  }
  return absl::OkStatus();
}

Json PlanJson(const Plan& plan, bool dry_run, bool clean_after,
              const std::vector<VerifyProblem>& left) {
  Json j;
  j["dry_run"] = dry_run;
  Json fixed = Json::array(), refused = Json::array(), remaining = Json::array();
  for (const auto& f : plan.fixes) {
    Json p = ProblemToJson(f.problem);
    p["action"] = f.action;
    fixed.push_back(std::move(p));
  }
  for (const auto& [p, why] : plan.refused) {
    Json jp = ProblemToJson(p);
    jp["reason"] = why;
    refused.push_back(std::move(jp));
  }
  for (const auto& p : left) remaining.push_back(ProblemToJson(p));
  j[dry_run ? "would_fix" : "fixed"] = std::move(fixed);
  j["refused"] = std::move(refused);
  j["clean"] = clean_after;
  if (!dry_run) j["remaining"] = std::move(remaining);
  return j;
}

// Under `repair --help`.
constexpr char kRepairFooter[] =
    "Fixes: a damaged label (written again from pgring.meta); chunks a PG's list holds\n"
    "past its tail's chunk (given back); uncommitted data past a PG's tail (zeroed).\n"
    "Refuses, naming the reason: damage inside a committed range, chunks owned twice\n"
    "or out of range, damaged keys or metadata, a partition of another store.\n"
    "Exit status: 0 the store is clean now, 1 something was refused, 2 cannot open.";

}  // namespace

RepairCommand::RepairCommand()
    : Command("repair", "fix what can be fixed without losing committed data; refuse the rest",
              kRepairFooter) {}

void RepairCommand::AddOptions(CLI::App* app) {
  app->add_flag("--dry-run", options_.dry_run, "only say what would be done");
}

CommandResult RepairCommand::Run(const ToolContext& ctx) const {
  if (ctx.db.empty())
    return Fail(ctx, "repair needs the store's RocksDB: give --db PATH", kExitUsage);
  FsckOptions fo;
  fo.deep = true;
  // Look first without write access: a store with nothing to fix is never
  // opened for writing.
  Plan plan;
  {
    auto ro = OpenOfflineStore(ctx, /*writable=*/false);
    if (!ro.ok()) return Fail(ctx, ro.status(), kExitUsage);
    auto r = RunFsckWithProgress(**ro, fo, ctx);
    if (!r.ok()) return Fail(ctx, r.status(), kExitFailed);
    plan = MakePlan(*r);
  }
  std::vector<VerifyProblem> left;
  bool clean_after = plan.refused.empty();
  if (!options_.dry_run && !plan.fixes.empty()) {
    auto rw = OpenOfflineStore(ctx, /*writable=*/true);
    if (!rw.ok()) return Fail(ctx, rw.status(), kExitUsage);
    OfflineStore& s = **rw;
    // Plan again on what we now hold exclusively.
    auto r = RunFsckWithProgress(s, fo, ctx);
    if (!r.ok()) return Fail(ctx, r.status(), kExitFailed);
    plan = MakePlan(*r);
    const Geometry g = *s.geometry();
    rocksdb::WriteBatch batch;
    bool device_written = false;
    for (const auto& fix : plan.fixes) {
      absl::Status st;
      if (fix.problem.kind == "label-damaged") {
        st = RewriteLabel(s);
      } else {
        // chunk-beyond-tail and past-tail are PG problems (fsck.cc, pg_scan.cc).
        const PgId& id = *fix.problem.pg;
        FsckPg& f = r->ring_pgs[id];
        if (fix.problem.kind == "chunk-beyond-tail") {
          PgChunkList c = *f.keys.chunks;
          c.chunks.resize(f.needed_chunks);
          batch.Put(s.db()->cf(), PgChunksKey(id), c.Encode());
        } else if (fix.problem.kind == "past-tail") {
          st = ZeroPastTail(s, g, f);
          device_written = true;
        }
      }
      if (!st.ok())
        return Fail(ctx, absl::StrCat("repair failed: ", std::string(st.message())), kExitFailed);
    }
    // The partition first (durable), then the RocksDB keys.
    if (device_written) {
      absl::Status st = s.device()->Flush();
      if (!st.ok()) return Fail(ctx, st, kExitFailed);
    }
    if (batch.Count() > 0) {
      absl::Status st = s.db()->WriteSync(&batch);
      if (!st.ok()) return Fail(ctx, st, kExitFailed);
    }
    s.Release();
    // Check the result.
    auto again = OpenOfflineStore(ctx, /*writable=*/false);
    if (!again.ok()) return Fail(ctx, again.status(), kExitFailed);
    auto after = RunFsckWithProgress(**again, fo, ctx);
    if (!after.ok()) return Fail(ctx, after.status(), kExitFailed);
    for (const auto& p : after->report.problems) {
      if (p.severity == VerifyProblem::Severity::kError) left.push_back(p);
    }
    clean_after = left.empty();
  }
  CommandResult r;
  r.exit_code = plan.refused.empty() && clean_after ? kExitOk : kExitFailed;
  r.json = PlanJson(plan, options_.dry_run, clean_after, left);
  ProblemList lines;
  for (const auto& f : plan.fixes) {
    lines.Add(options_.dry_run ? "would fix" : "fixed", f.problem,
              {absl::StrCat(options_.dry_run ? "would " : "did: ", f.action)});
  }
  for (const auto& [p, why] : plan.refused) lines.Add("refused", p, {"why: " + why});
  if (!options_.dry_run) {
    for (const auto& p : left) lines.Add("still wrong", p);
  }
  r.text.Add(std::move(lines));
  r.text.Line(absl::StrFormat(
      "result: %u %s, %u refused%s", plan.fixes.size(), options_.dry_run ? "to fix" : "fixed",
      plan.refused.size(), plan.fixes.empty() && plan.refused.empty() ? " (nothing to do)" : ""));
  return r;
}

}  // namespace pgring::tool
