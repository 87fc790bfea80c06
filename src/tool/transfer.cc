#include "tool/transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "check/pg_scan.h"
#include "check/stream_view.h"
#include "format/rocksdb_backend_keys.h"
#include "tool/export_file.h"
#include "tool/inspect.h"
#include "tool/surgery.h"
#include "tool/tool_db.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

// A transaction writes at most 16 MiB to one PG: import in batches of this
// much payload.
constexpr uint64_t kImportBatchBytes = 4u << 20;

// --file's name for standard input or output.
constexpr char kStdio[] = "-";

// An output file replaced atomically: the bytes go to `path`.tmp, which
// Commit syncs and renames over `path`. Destroyed before Commit (an error
// part way) it removes the temporary, so no partial file is left and an
// earlier `path` is untouched.
class AtomicFile {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
    }
    return std::unique_ptr<AtomicFile>(new AtomicFile(path, tmp, fd));
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }

  absl::Status Write(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return absl::InternalError(
            absl::StrCat("writing ", tmp_, ": ", std::strerror(n < 0 ? errno : ENOSPC)));
      }
      done += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status Commit() {
    int e = 0;
    if (::fsync(fd_) != 0) e = errno;
    if (::close(fd_) != 0 && e == 0) e = errno;
    fd_ = -1;
    if (e != 0) return absl::InternalError(absl::StrCat("syncing ", tmp_, ": ", std::strerror(e)));
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
      return absl::InternalError(
          absl::StrCat("renaming ", tmp_, " to ", path_, ": ", std::strerror(errno)));
    }
    committed_ = true;
    return absl::OkStatus();
  }

 private:
  AtomicFile(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}

  const std::string path_, tmp_;
  int fd_;
  bool committed_ = false;
};

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the summaries say of a PG: export keeps this of each PG it has
// written, not the PG.
struct PgCounts {
  PgId pg;
  uint64_t entries = 0, dups = 0;
  std::optional<uint64_t> info_bytes;
  Version last_entry;  // if entries > 0
};

PgCounts CountsOf(const ExportedPg& e) {
  PgCounts c;
  c.pg = e.pg;
  c.entries = e.entries.size();
  c.dups = e.dups.size();
  if (e.info) c.info_bytes = e.info->size();
  if (!e.entries.empty()) c.last_entry = e.entries.back().version;
  return c;
}

std::string Summary(const PgCounts& c) {
  return absl::StrFormat(
      "%u entr%s, %u dup%s, %s", c.entries, c.entries == 1 ? "y" : "ies", c.dups,
      c.dups == 1 ? "" : "s",
      c.info_bytes ? absl::StrFormat("info (%u bytes)", *c.info_bytes) : std::string("no info"));
}

absl::StatusOr<ExportedPg> CollectRing(const ReadAccess& a, const PgId& id) {
  ASSIGN_OR_RETURN(const RingPgKeys* k, a.RingPg(id));
  PgScanOptions so;
  so.keep_entry_payloads = true;
  so.keep_dup_payloads = true;
  PgScan scan = ScanRingPg(a.offline->device(), a.geometry, id, *k->pointer, *k->chunks,
                           a.Unhomed(id), so);
  for (const VerifyProblem& p : scan.problems) {
    if (p.severity == VerifyProblem::Severity::kError) {
      return absl::DataLossError(absl::StrCat(
          "PG ", id.ToString(), "'s log is damaged; export refuses it: ", p.ToString()));
    }
  }
  ExportedPg e;
  e.pg = id;
  e.source_backend = Backend::kRing;
  e.entries_trimmed_to = k->pointer->entries_trimmed_to;
  e.dups_trimmed_to = k->pointer->dups_trimmed_to;
  for (auto& it : scan.entries) e.entries.push_back(LogEntry{it.version, std::move(it.payload)});
  for (auto& it : scan.dups) e.dups.push_back(LogEntry{it.version, std::move(it.payload)});
  if (scan.info) e.info = std::move(scan.info->payload);
  return e;
}

absl::StatusOr<ExportedPg> CollectRocksDb(const ToolContext& ctx, const ReadAccess& a,
                                          const PgId& id) {
  ExportedPg e;
  e.pg = id;
  e.source_backend = Backend::kRocksDb;
  ASSIGN_OR_RETURN(e.entries, a.store->ReadEntries(id, Version::Min(), Version::Max()));
  ASSIGN_OR_RETURN(e.dups, a.store->ReadDups(id));
  auto info = a.store->ReadInfo(id);
  if (info.ok()) {
    e.info = *std::move(info);
  } else if (!absl::IsNotFound(info.status())) {
    return info.status();
  }
  // The trim points live in the PG's _state key (a second read-only view of
  // the same RocksDB; read-only opens take no lock).
  ASSIGN_OR_RETURN(auto tool_db, ToolDb::Open(ctx, ToolDb::Mode::kReadOnly));
  ASSIGN_OR_RETURN(auto db, MetadataDb::Open(tool_db->location(), false, true));
  ASSIGN_OR_RETURN(auto v, db->Get(PgLogKeyPrefix(id) + std::string(kStateKeyName)));
  if (v) {
    ASSIGN_OR_RETURN(PgStateValue st, PgStateValue::Decode(*v));
    e.entries_trimmed_to = st.entries_trimmed_to;
    e.dups_trimmed_to = st.dups_trimmed_to;
  }
  return e;
}

// Where export's bytes go: `file` (replaced atomically: AtomicFile), standard
// output for "-", or nowhere for a dry run (the bytes are still counted).
// Each write goes straight through, so the caller holds no more than what
// it writes.
class ExportOutput {
 public:
  static absl::StatusOr<ExportOutput> Open(const ToolContext& ctx, const std::string& file,
                                           bool dry_run) {
    ExportOutput o;
    if (dry_run) return o;
    if (file == kStdio) {
      o.out_ = ctx.out;
      return o;
    }
    ASSIGN_OR_RETURN(o.file_, AtomicFile::Create(file));
    return o;
  }

  absl::Status Write(std::string_view bytes) {
    if (file_ != nullptr) {
      RETURN_IF_ERROR(file_->Write(bytes));
    } else if (out_ != nullptr) {
      out_->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!*out_) return absl::UnavailableError("writing the export to standard output failed");
    }
    bytes_ += bytes.size();
    return absl::OkStatus();
  }

  // The file synced and in place, or standard output flushed.
  absl::Status Commit() {
    if (file_ != nullptr) return file_->Commit();
    if (out_ != nullptr) {
      out_->flush();
      if (!*out_) return absl::UnavailableError("writing the export to standard output failed");
    }
    return absl::OkStatus();
  }

  // Bytes written (for a dry run: that would have been written).
  uint64_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<AtomicFile> file_;
  std::ostream* out_ = nullptr;
  uint64_t bytes_ = 0;
};

// The export's input: `file`, or standard input for "-".
absl::StatusOr<std::string> ReadExport(const ToolContext& ctx, const std::string& file) {
  if (file != kStdio) return ReadWholeFile(file);
  if (ctx.in == nullptr) return absl::InvalidArgumentError("no standard input to read");
  std::ostringstream ss;
  ss << ctx.in->rdbuf();
  std::string bytes = ss.str();
  if (bytes.empty()) {
    return absl::InvalidArgumentError(
        "standard input is empty: nothing to import (pipe an export file into --file -)");
  }
  return bytes;
}

std::string FileName(const std::string& file) {
  return file == kStdio ? std::string("standard output") : file;
}

}  // namespace

void ExportCommand::AddOptions(CLI::App* app) {
  CLI::Option* pg = app->add_option("--pg,--pgid", pg_, "PG id");
  app->add_option("--file", file_, "the file to write; - for standard output")->required();
  if (remove_) {
    pg->required();
    app->add_flag("--dry-run", dry_run_, "say what would be exported and removed; write nothing");
  } else {
    app->add_flag("--all", all_, "every PG of the store, in one file")->excludes(pg);
  }
}

CommandResult ExportCommand::Run(const ToolContext& ctx) const {
  std::vector<PgId> ids;
  if (!all_) {
    if (pg_.empty()) return Fail(ctx, "give the PG to export (--pg P) or --all", kExitUsage);
    auto id = ParsePgId(pg_);
    if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
    ids.push_back(*id);
  }
  std::vector<PgCounts> pgs;
  std::optional<ExportOutput> output;
  // A failure once the output is open. The file is not written (returning
  // drops `output`, which removes its temporary); standard output may hold
  // the start of the export, which import refuses as truncated.
  auto failed = [&](const absl::Status& s) {
    std::string what(s.message());
    if (!dry_run_ && file_ != kStdio) {
      absl::StrAppend(&what, "; ", file_, " was not written");
    } else if (!dry_run_ && output->bytes() > 0) {
      absl::StrAppend(&what, "; the ", output->bytes(),
                      " bytes written to standard output are an incomplete export");
    }
    return Fail(ctx, absl::Status(s.code(), what), kExitFailed);
  };
  {
    auto a = OpenForRead(ctx);
    if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
    if (all_) {
      if (a->backend == Backend::kRing) {
        for (const auto& [id, k] : a->ring_pgs) ids.push_back(id);
      } else {
        auto listed = a->store->ListPgs();
        if (!listed.ok()) return Fail(ctx, listed.status(), kExitFailed);
        ids = *std::move(listed);
      }
    }
    // The source store, for the record (import does not require it to match).
    Uuid uuid;
    if (a->offline && a->offline->label().ok()) {
      uuid = a->offline->label()->uuid;
    } else {
      ToolContext partition_only = ctx;
      partition_only.db.clear();
      auto off = OpenOfflineStore(partition_only, false);
      if (off.ok() && (*off)->label().ok()) uuid = (*off)->label()->uuid;
    }
    auto opened = ExportOutput::Open(ctx, file_, dry_run_);
    if (!opened.ok()) return Fail(ctx, opened.status(), kExitFailed);
    output = *std::move(opened);
    // Each PG is written as soon as it is encoded and dropped before the
    // next is read: memory is bounded by one PG's export, not the store's.
    ExportAllWriter all([&](std::string_view b) { return output->Write(b); });
    if (all_) {
      // The file's count is 32 bits (docs/FORMAT.md, "Export file").
      if (ids.size() > UINT32_MAX) {
        return failed(absl::FailedPreconditionError(absl::StrFormat(
            "%u PGs: more than an export file holds (%u); export them in parts with --pg",
            ids.size(), UINT32_MAX)));
      }
      absl::Status s = all.Begin(static_cast<uint32_t>(ids.size()));
      if (!s.ok()) return failed(s);
    }
    for (const PgId& id : ids) {
      std::string member;
      {
        auto e = a->backend == Backend::kRing ? CollectRing(*a, id) : CollectRocksDb(ctx, *a, id);
        if (!e.ok()) return failed(e.status());
        e->source_uuid = uuid;
        pgs.push_back(CountsOf(*e));
        member = EncodeExport(*e);
      }
      absl::Status s = all_ ? all.Add(member) : output->Write(member);
      if (!s.ok()) return failed(s);
    }
    if (all_) {
      absl::Status s = all.Finish();
      if (!s.ok()) return failed(s);
    }
  }
  // Durable (or flushed) before it is reported, and before export-remove
  // removes the PG.
  if (absl::Status s = output->Commit(); !s.ok()) return failed(s);
  const std::string verb = dry_run_ ? "would export" : "exported";
  CommandResult r;
  Json& j = r.json;
  Json list = Json::array();
  std::vector<std::string> lines;
  for (const PgCounts& c : pgs) {
    Json p;
    p["pg"] = c.pg.ToString();
    p["entries"] = c.entries;
    p["dups"] = c.dups;
    p["info_bytes"] = c.info_bytes ? Json(*c.info_bytes) : Json(nullptr);
    list.push_back(p);
    lines.push_back(absl::StrFormat("%s PG %s: %s", verb, c.pg.ToString(), Summary(c)));
  }
  j["dry_run"] = dry_run_;
  j["file"] = FileName(file_);
  j["file_bytes"] = output->bytes();
  j["pgs"] = list;
  j["removed"] = remove_ && !dry_run_;
  std::string done = absl::StrFormat(" (%u bytes %s %s)", output->bytes(),
                                     dry_run_ ? "not written to" : "written to", FileName(file_));
  if (all_) {
    lines.push_back(absl::StrFormat("%s %u PG%s%s", verb, pgs.size(), pgs.size() == 1 ? "" : "s",
                                    done));
  } else {
    lines.back() += done;
  }
  if (remove_) {
    const PgCounts& e = pgs.front();
    if (dry_run_) {
      lines.push_back(absl::StrFormat("would remove PG %s (dry run: nothing written)",
                                      e.pg.ToString()));
    } else {
      auto store = OpenForWrite(ctx, RecoveryPolicy::kRefuse);
      if (!store.ok()) return Fail(ctx, store.status(), kExitUsage);
      Store& st = *store->store;
      // Remove what was exported and nothing else: an offline store does
      // not change between the two opens, but a check costs one lookup.
      auto now = st.GetPgStats(e.pg);
      if (!now.ok()) return Fail(ctx, now.status(), kExitFailed);
      if (now->entries != e.entries || now->dups != e.dups ||
          (now->entries > 0 && now->last_version != e.last_entry)) {
        return Fail(ctx,
                    absl::StrCat("PG ", e.pg.ToString(),
                                 " changed after it was exported; it was not removed"),
                    kExitFailed);
      }
      Transaction t;
      t.RemovePg(e.pg);
      absl::Status s = st.Commit(std::move(t));
      if (s.ok()) s = st.Close();
      if (!s.ok()) {
        return Fail(ctx,
                    absl::StrCat("PG ", e.pg.ToString(), " was exported to ", FileName(file_),
                                 " but removing it failed: ", std::string(s.message())),
                    kExitFailed);
      }
      lines.push_back(absl::StrFormat("removed PG %s", e.pg.ToString()));
    }
  }
  if (file_ == kStdio && !dry_run_) {
    // Standard output holds the export alone: the summary goes to stderr.
    for (const std::string& l : lines) *ctx.err << l << "\n";
    ctx.err->flush();
    return CommandResult();
  }
  for (const std::string& l : lines) r.text.Line(l);
  return r;
}

void ImportCommand::AddOptions(CLI::App* app) {
  app->add_option("--file", file_, "the export file; - for standard input")->required();
  app->add_option("--pg,--pgid", pg_, "import under this PG id instead of the file's");
  app->add_flag("--dry-run", dry_run_, "check the file and the store; write nothing");
}

namespace {

// Creates PG `id` in `st` from `e`: one transaction creates the PG and
// restores its trim points (an empty entry/dup at each trim point, trimmed
// in the same transaction, leaves exactly the source's floor); then batches
// of dups and entries; the info. A failure after the first transaction
// removes the PG again.
absl::Status ImportOne(Store& st, const PgId& id, const ExportedPg& e) {
  std::vector<Transaction> txns(1);
  uint64_t bytes_in_txn = 0;
  txns[0].CreatePg(id);
  if (e.entries_trimmed_to != Version::Min()) {
    txns[0].AppendEntry(id, e.entries_trimmed_to, "");
    txns[0].Trim(id, e.entries_trimmed_to);
  }
  if (e.dups_trimmed_to != Version::Min()) {
    txns[0].AppendDup(id, e.dups_trimmed_to, "");
    txns[0].TrimDups(id, e.dups_trimmed_to);
  }
  auto room = [&](size_t n) {
    if (bytes_in_txn + n > kImportBatchBytes && bytes_in_txn > 0) {
      txns.emplace_back();
      bytes_in_txn = 0;
    }
    bytes_in_txn += n + 32;
  };
  for (const auto& d : e.dups) {
    room(d.payload.size());
    txns.back().AppendDup(id, d.version, d.payload);
  }
  for (const auto& en : e.entries) {
    room(en.payload.size());
    txns.back().AppendEntry(id, en.version, en.payload);
  }
  if (e.info) {
    room(e.info->size());
    txns.back().SetInfo(id, *e.info);
  }
  for (size_t i = 0; i < txns.size(); ++i) {
    absl::Status s = st.Commit(std::move(txns[i]));
    if (!s.ok()) {
      std::string undo;
      if (i > 0) {
        Transaction rm;
        rm.RemovePg(id);
        absl::Status r = st.Commit(std::move(rm));
        undo = r.ok() ? "; the partly imported PG was removed again"
                      : absl::StrCat("; removing the partly imported PG failed too: ",
                                     std::string(r.message()));
      }
      return absl::Status(s.code(), absl::StrCat("import of PG ", id.ToString(), " failed: ",
                                                 std::string(s.message()), undo));
    }
  }
  // Read it back.
  auto got = st.ReadEntries(id, Version::Min(), Version::Max());
  auto got_dups = st.ReadDups(id);
  if (!got.ok() || !got_dups.ok() || *got != e.entries || *got_dups != e.dups) {
    return absl::DataLossError(absl::StrCat(
        "PG ", id.ToString(), " was imported but does not read back as the file holds it"));
  }
  return absl::OkStatus();
}

}  // namespace

CommandResult ImportCommand::Run(const ToolContext& ctx) const {
  std::optional<PgId> target;
  if (!pg_.empty()) {
    auto id = ParsePgId(pg_);
    if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
    target = *id;
  }
  if (ctx.db.empty())
    return Fail(ctx, "import needs the store's RocksDB: give --db PATH", kExitUsage);
  auto bytes = ReadExport(ctx, file_);
  if (!bytes.ok()) return Fail(ctx, bytes.status(), kExitUsage);
  const std::string source = file_ == kStdio ? std::string("standard input") : file_;
  auto decoded = DecodeExportAny(*bytes);
  if (!decoded.ok()) {
    return Fail(ctx,
                absl::StrCat("cannot import ", source, ": ",
                             std::string(decoded.status().message())),
                kExitFailed);
  }
  std::vector<ExportedPg>& pgs = *decoded;
  if (target && pgs.size() != 1) {
    return Fail(ctx,
                absl::StrCat(source, " holds ", pgs.size(),
                             " PGs; --pg renames the one PG of a single-PG export"),
                kExitUsage);
  }
  std::vector<PgId> ids;
  for (const ExportedPg& e : pgs) ids.push_back(target ? *target : e.pg);
  auto opened = dry_run_ ? OpenForDryRun(ctx, RecoveryPolicy::kRefuse)
                         : OpenForWrite(ctx, RecoveryPolicy::kRefuse);
  if (!opened.ok()) return Fail(ctx, opened.status(), kExitUsage);
  Store& st = *opened->store;
  for (const PgId& id : ids) {
    if (st.GetPgStats(id).ok()) {
      return Fail(ctx,
                  absl::StrCat("PG ", id.ToString(),
                               " already exists; import creates a new PG "
                               "(remove it first, or import --pg OTHER)"),
                  kExitFailed);
    }
  }
  for (size_t i = 0; i < ids.size() && !dry_run_; ++i) {
    absl::Status s = ImportOne(st, ids[i], pgs[i]);
    if (!s.ok()) {
      std::string undo;
      for (size_t k = 0; k < i; ++k) {
        Transaction rm;
        rm.RemovePg(ids[k]);
        absl::Status r = st.Commit(std::move(rm));
        if (!r.ok()) absl::StrAppend(&undo, "; removing PG ", ids[k].ToString(), " failed too");
      }
      if (i > 0) undo = absl::StrCat("; the ", i, " PGs imported before it were removed", undo);
      return Fail(ctx, absl::StrCat(std::string(s.message()), undo), kExitFailed);
    }
  }
  absl::Status s = st.Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["dry_run"] = dry_run_;
  Json list = Json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    const ExportedPg& e = pgs[i];
    Json p;
    p["pg"] = ids[i].ToString();
    p["source_pg"] = e.pg.ToString();
    p["source_uuid"] = e.source_uuid.ToString();
    p["entries"] = e.entries.size();
    p["dups"] = e.dups.size();
    p["info_bytes"] = e.info ? Json(e.info->size()) : Json(nullptr);
    list.push_back(p);
    r.text.Line(absl::StrFormat(
        "%s PG %s%s: %s", dry_run_ ? "would import" : "imported", ids[i].ToString(),
        ids[i] == e.pg ? std::string() : absl::StrCat(" (exported as PG ", e.pg.ToString(), ")"),
        Summary(CountsOf(e))));
  }
  j["pgs"] = list;
  if (dry_run_) r.text.Line("dry run: nothing written");
  return r;
}

}  // namespace pgring::tool
