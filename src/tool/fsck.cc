#include "tool/fsck.h"

#include <CLI/CLI.hpp>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tool/tool_db.h"

namespace pgring::tool {

absl::StatusOr<FsckResult> RunFsckWithProgress(const OfflineStore& store,
                                               const FsckOptions& options, const ToolContext& ctx) {
  std::optional<Progress> progress;  // made once the count of PGs to read is known
  FsckOptions o = options;
  o.progress = [&](uint64_t done, uint64_t total) {
    if (!progress) progress.emplace(ctx, "fsck --deep: PGs scanned", total);
    progress->Update(done);
  };
  return RunFsck(store, o);
}

namespace {

// The backend as fsck names it: "unknown" when neither the label nor
// pgring.meta decodes.
const char* BackendName(std::optional<Backend> b) {
  if (!b) return "unknown";
  switch (*b) {
    case Backend::kRing:
      return "ring";
    case Backend::kRocksDb:
      return "rocksdb";
  }
  return "unknown";
}

}  // namespace

Json FsckResultToJson(const FsckResult& result) {
  const VerifyReport& r = result.report;
  Json j;
  j["backend"] = BackendName(r.backend);
  j["uuid"] = r.uuid;
  j["deep"] = r.deep;
  j["clean"] = r.clean();
  j["errors"] = r.errors;
  j["fixable"] = r.fixable;
  Json problems = Json::array(), notes = Json::array();
  for (const auto& p : r.problems) {
    (p.severity == VerifyProblem::Severity::kError ? problems : notes).push_back(ProblemToJson(p));
  }
  j["problems"] = std::move(problems);
  j["notes"] = std::move(notes);
  j["not_checked"] = r.not_checked;
  Json s;
  s["pgs"] = r.pgs;
  s["chunks"] = r.chunk_count;
  s["owned_chunks"] = r.owned_chunks;
  s["free_chunks"] = r.free_chunks;
  s["records"] = r.records;
  s["entries"] = r.entries;
  s["dups"] = r.dups;
  if (r.stream) {
    s["stream"] = {{"head", r.stream->head},
                   {"tail", r.stream->tail},
                   {"tail_seq", result.stream_tail_seq.value_or(0)},
                   {"chunks", r.stream->chunks},
                   {"unhomed_pgs", r.stream->unhomed_pgs},
                   {"unhomed_bytes", r.stream->unhomed_bytes}};
  } else {
    s["stream"] = nullptr;
  }
  j["summary"] = std::move(s);
  return j;
}

TextOutput FsckResultText(const FsckResult& result) {
  const VerifyReport& r = result.report;
  const bool ring = r.backend == Backend::kRing;
  TextOutput t;
  t.Line(absl::StrCat("fsck", r.deep ? " --deep" : "", ": ", BackendName(r.backend), " store ",
                      r.uuid.empty() ? std::string("(uuid unknown)") : r.uuid));
  // Errors first, then notes: a reader looks for what is wrong.
  ProblemList problems;
  for (const auto& p : r.problems) {
    if (p.severity == VerifyProblem::Severity::kError) problems.Add("", p);
  }
  for (const auto& p : r.problems) {
    if (p.severity == VerifyProblem::Severity::kNote) problems.Add("note", p);
  }
  t.Add(std::move(problems));
  for (const auto& n : r.not_checked) t.Line("not checked: " + n);
  std::string summary;
  if (ring) {
    summary = absl::StrFormat("summary: %u PGs; %u chunks: %u owned, %u free", r.pgs, r.chunk_count,
                              r.owned_chunks, r.free_chunks);
  } else {
    summary = absl::StrFormat("summary: %u PGs", r.pgs);
  }
  if (r.deep || r.backend == Backend::kRocksDb) {
    if (ring) absl::StrAppendFormat(&summary, "; %u records", r.records);
    absl::StrAppendFormat(&summary, "; %u live entries, %u live dups", r.entries, r.dups);
  }
  t.Line(std::move(summary));
  if (r.stream) {
    std::string line = absl::StrFormat(
        "log stream: %u chunk%s, head %u, tail %u (%u bytes)", r.stream->chunks,
        r.stream->chunks == 1 ? "" : "s", r.stream->head, r.stream->tail,
        r.stream->tail - r.stream->head);
    if (r.deep) {
      absl::StrAppendFormat(&line, "; %u PGs read %u bytes from it", r.stream->unhomed_pgs,
                            r.stream->unhomed_bytes);
    }
    t.Line(std::move(line));
  }
  if (r.clean()) {
    t.Line("result: clean");
  } else {
    t.Line(absl::StrFormat("result: %u problem%s (%u fixable by repair)", r.errors,
                           r.errors == 1 ? "" : "s", r.fixable));
  }
  return t;
}

namespace {

// Under `fsck --help`.
constexpr char kFsckFooter[] =
    "Shallow checks: the label; the UUID and geometry binding between the label and\n"
    "pgring.meta; the partition's size; every pgring RocksDB key (each PG's pointer and\n"
    "chunk list, stamps); chunk ownership (every chunk number in range, in at most one\n"
    "list, once; no list holding chunks past its tail's chunk).\n"
    "--deep also reads every record between each PG's head and tail: length, CRC, type,\n"
    "PG stamp, lap, consecutive sequence, the last sequence against the pointer, and the\n"
    "items (entry and dup versions strictly increasing, the info); and notes uncommitted\n"
    "data past a tail. fsck reports every problem (PG, chunk, offset, lpos, what), never\n"
    "only the first. A PG whose keys are unusable is not read further, so one damage is\n"
    "reported once.\n"
    "Stream layout: also the log stream's keys and chunks, and each PG's stream position;\n"
    "--deep reads every stream record (stream lpos, chunk, offset) and each PG's bytes\n"
    "past its homed position from the stream, then reads the PG through them.\n"
    "Leaked chunks: pgring does not store a free map; a chunk is free exactly when no PG's\n"
    "chunk list names it, so a chunk cannot leak on disk. fsck reports owned + free =\n"
    "chunk_count, and flags what would make that count wrong: chunk numbers past the\n"
    "label's chunk_count, a chunk in two lists, chunks a list holds past what its ring\n"
    "needs.\n"
    "Exit status: 0 clean, 1 problems found, 2 usage error or the store cannot be opened.";

}  // namespace

FsckCommand::FsckCommand() : Command("fsck", "check the store; report every problem", kFsckFooter) {}

void FsckCommand::AddOptions(CLI::App* app) {
  app->add_flag("--deep", options_.deep, "also read and verify every committed record");
}

CommandResult FsckCommand::Run(const ToolContext& ctx) const {
  auto s = OpenOfflineStore(ctx, /*writable=*/false);
  if (!s.ok()) return Fail(ctx, s.status(), kExitUsage);
  auto found = RunFsckWithProgress(**s, options_, ctx);
  if (!found.ok()) return Fail(ctx, found.status(), kExitFailed);
  CommandResult r;
  r.exit_code = found->report.clean() ? kExitOk : kExitFailed;
  r.json = FsckResultToJson(*found);
  r.text = FsckResultText(*found);
  return r;
}

}  // namespace pgring::tool
