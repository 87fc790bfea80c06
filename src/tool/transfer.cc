#include "tool/transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/rocksdb_backend_keys.h"
#include "tool/export_file.h"
#include "tool/inspect.h"
#include "tool/pg_scan.h"
#include "tool/stream_view.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

// A transaction writes at most 16 MiB to one PG: import in batches of this
// much payload.
constexpr uint64_t kImportBatchBytes = 4u << 20;

absl::Status WriteFileAtomically(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::UnavailableError(absl::StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::InternalError(absl::StrCat("writing ", tmp, ": ", std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("syncing ", tmp, ": ", std::strerror(errno)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return absl::InternalError(
        absl::StrCat("renaming ", tmp, " to ", path, ": ", std::strerror(e)));
  }
  return absl::OkStatus();
}

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

std::string Summary(const ExportedPg& e) {
  return absl::StrFormat(
      "%u entr%s, %u dup%s, %s", e.entries.size(), e.entries.size() == 1 ? "y" : "ies",
      e.dups.size(), e.dups.size() == 1 ? "" : "s",
      e.info ? absl::StrFormat("info (%u bytes)", e.info->size()) : std::string("no info"));
}

absl::StatusOr<ExportedPg> CollectRing(const ReadAccess& a, const PgId& id) {
  ASSIGN_OR_RETURN(const RingPgKeys* k, a.RingPg(id));
  PgScanOptions so;
  so.keep_entry_payloads = true;
  so.keep_dup_payloads = true;
  PgScan scan = ScanRingPg(a.offline->device(), a.geometry, id, *k->pointer, *k->chunks,
                           a.Unhomed(id), so);
  for (const Problem& p : scan.problems) {
    if (p.severity == Problem::Severity::kError) {
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
  ASSIGN_OR_RETURN(auto db, MetadataDb::Open(MetadataLocation::OwnDb(ctx.db), false, true));
  ASSIGN_OR_RETURN(auto v, db->Get(PgLogKeyPrefix(id) + std::string(kStateKeyName)));
  if (v) {
    ASSIGN_OR_RETURN(PgStateValue st, PgStateValue::Decode(*v));
    e.entries_trimmed_to = st.entries_trimmed_to;
    e.dups_trimmed_to = st.dups_trimmed_to;
  }
  return e;
}

}  // namespace

void ExportCommand::AddOptions(CLI::App* app) {
  app->add_option("--pg", pg_, "PG id")->required();
  app->add_option("--file", file_, "the file to write")->required();
}

CommandResult ExportCommand::Run(const ToolContext& ctx) const {
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  auto e = a->backend == Backend::kRing ? CollectRing(*a, *id) : CollectRocksDb(ctx, *a, *id);
  if (!e.ok()) return Fail(ctx, e.status(), kExitFailed);
  Uuid uuid;
  // The source store, for the record (import does not require it to match).
  if (a->offline && a->offline->label().ok()) {
    uuid = a->offline->label()->uuid;
  } else {
    auto off = OfflineStore::Open(ctx.dev, "", false);
    if (off.ok() && (*off)->label().ok()) uuid = (*off)->label()->uuid;
  }
  e->source_uuid = uuid;
  const std::string bytes = EncodeExport(*e);
  absl::Status s = WriteFileAtomically(file_, bytes);
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["pg"] = id->ToString();
  j["file_bytes"] = bytes.size();
  j["entries"] = e->entries.size();
  j["dups"] = e->dups.size();
  j["info_bytes"] = e->info ? Json(e->info->size()) : Json(nullptr);
  r.text.Line(absl::StrFormat("exported PG %s: %s (%u bytes written)", id->ToString(), Summary(*e),
                              bytes.size()));
  return r;
}

void ImportCommand::AddOptions(CLI::App* app) {
  app->add_option("--file", file_, "the export file")->required();
  app->add_option("--pg", pg_, "import under this PG id instead of the file's");
}

CommandResult ImportCommand::Run(const ToolContext& ctx) const {
  std::optional<PgId> target;
  if (!pg_.empty()) {
    auto id = ParsePgId(pg_);
    if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
    target = *id;
  }
  auto bytes = ReadWholeFile(file_);
  if (!bytes.ok()) return Fail(ctx, bytes.status(), kExitUsage);
  auto e = DecodeExport(*bytes);
  if (!e.ok()) {
    return Fail(ctx, absl::StrCat("cannot import ", file_, ": ", std::string(e.status().message())),
                kExitFailed);
  }
  const PgId id = target ? *target : e->pg;
  if (ctx.db.empty())
    return Fail(ctx, "import needs the store's RocksDB: give --db PATH", kExitUsage);
  Options o;
  {
    auto off = OfflineStore::Open(ctx.dev, ctx.db, false);
    if (!off.ok()) return Fail(ctx, off.status(), kExitUsage);
    absl::Status b = (*off)->CheckBinding();
    if (!b.ok()) return Fail(ctx, b, kExitUsage);
    auto stream = LoadStreamKeys(**off);
    if (!stream.ok()) return Fail(ctx, stream.status(), kExitUsage);
    KeepLogLayout(*stream, &o);
  }
  o.io_engine = IoEngine::kPsync;
  o.io_queue_depth = 4;
  o.log_sink = NullLogSink();
  auto store = Store::Open(ctx.dev, MetadataLocation::OwnDb(ctx.db), o);
  if (!store.ok()) return Fail(ctx, ExplainOpenError(store.status(), "the store"), kExitUsage);
  Store& st = **store;
  auto existing = st.GetPgStats(id);
  if (existing.ok()) {
    return Fail(ctx,
                absl::StrCat("PG ", id.ToString(),
                             " already exists; import creates a new PG "
                             "(remove it first, or import --pg OTHER)"),
                kExitFailed);
  }
  // One transaction creates the PG and restores its trim points (an empty
  // entry/dup at each trim point, trimmed in the same transaction, leaves
  // exactly the source's floor); then batches of dups and entries; the info.
  std::vector<Transaction> txns(1);
  uint64_t bytes_in_txn = 0;
  txns[0].CreatePg(id);
  if (e->entries_trimmed_to != Version::Min()) {
    txns[0].AppendEntry(id, e->entries_trimmed_to, "");
    txns[0].Trim(id, e->entries_trimmed_to);
  }
  if (e->dups_trimmed_to != Version::Min()) {
    txns[0].AppendDup(id, e->dups_trimmed_to, "");
    txns[0].TrimDups(id, e->dups_trimmed_to);
  }
  auto room = [&](size_t n) {
    if (bytes_in_txn + n > kImportBatchBytes && bytes_in_txn > 0) {
      txns.emplace_back();
      bytes_in_txn = 0;
    }
    bytes_in_txn += n + 32;
  };
  for (const auto& d : e->dups) {
    room(d.payload.size());
    txns.back().AppendDup(id, d.version, d.payload);
  }
  for (const auto& en : e->entries) {
    room(en.payload.size());
    txns.back().AppendEntry(id, en.version, en.payload);
  }
  if (e->info) {
    room(e->info->size());
    txns.back().SetInfo(id, *e->info);
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
      return Fail(
          ctx,
          absl::StrCat("import of PG ", id.ToString(), " failed: ", std::string(s.message()), undo),
          kExitFailed);
    }
  }
  // Read it back.
  auto got = st.ReadEntries(id, Version::Min(), Version::Max());
  auto got_dups = st.ReadDups(id);
  if (!got.ok() || !got_dups.ok() || *got != e->entries || *got_dups != e->dups) {
    return Fail(ctx,
                absl::StrCat("PG ", id.ToString(),
                             " was imported but does not read back as "
                             "the file holds it"),
                kExitFailed);
  }
  absl::Status s = st.Close();
  if (!s.ok()) return Fail(ctx, s, kExitFailed);
  CommandResult r;
  Json& j = r.json;
  j["pg"] = id.ToString();
  j["source_pg"] = e->pg.ToString();
  j["source_uuid"] = e->source_uuid.ToString();
  j["entries"] = e->entries.size();
  j["dups"] = e->dups.size();
  j["info_bytes"] = e->info ? Json(e->info->size()) : Json(nullptr);
  r.text.Line(absl::StrFormat(
      "imported PG %s%s: %s", id.ToString(),
      id == e->pg ? std::string() : absl::StrCat(" (exported as PG ", e->pg.ToString(), ")"),
      Summary(*e)));
  return r;
}

}  // namespace pgring::tool
