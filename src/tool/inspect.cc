#include "tool/inspect.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "check/pg_scan.h"
#include "format/rocksdb_backend_keys.h"
#include "util/coding.h"
#include "util/status_macros.h"

namespace pgring::tool {
namespace {

std::string BackendName(Backend b) {
  switch (b) {
    case Backend::kRing:
      return "ring";
    case Backend::kRocksDb:
      return "rocksdb";
  }
  return absl::StrCat("unknown(", static_cast<int>(b), ")");
}

Json PosJson(const ReadAccess& a, const PgChunkList& c, uint64_t lpos) {
  Json j;
  j["lpos"] = lpos;
  ChunkPos cp = Locate(c, a.geometry, lpos);
  j["chunk"] = cp.chunk >= 0 ? Json(cp.chunk) : Json(nullptr);
  j["offset"] = cp.chunk >= 0 ? Json(cp.offset) : Json(nullptr);
  return j;
}

std::string PosText(const Json& p) {
  if (p["chunk"].is_null())
    return absl::StrCat(p["lpos"].get<uint64_t>(), " (in no chunk of its ring)");
  return absl::StrFormat("%u (chunk %u, offset %u)", p["lpos"].get<uint64_t>(),
                         p["chunk"].get<uint64_t>(), p["offset"].get<uint64_t>());
}

void SplitProblems(const std::vector<VerifyProblem>& ps, Json* problems, Json* notes) {
  *problems = Json::array();
  *notes = Json::array();
  for (const auto& p : ps) {
    Json* list = p.severity == VerifyProblem::Severity::kError ? problems : notes;
    list->push_back(ProblemToJson(p));
  }
}

ProblemList ProblemLines(const std::vector<VerifyProblem>& ps) {
  ProblemList list;
  for (const auto& p : ps) {
    list.Add(p.severity == VerifyProblem::Severity::kError ? "problem" : "note", p);
  }
  return list;
}

// A table cell for a JSON value: "-" for null, strings without quotes.
std::string Cell(const Json& v) {
  return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
}

constexpr char kPgHelp[] = "PG id, e.g. 1.2a";

// Reads a ring PG (keys checked) with `options`; the scan reports problems
// itself.
absl::StatusOr<std::pair<const RingPgKeys*, PgScan>> ScanPg(const ReadAccess& a, const PgId& id,
                                                            const PgScanOptions& options) {
  ASSIGN_OR_RETURN(const RingPgKeys* k, a.RingPg(id));
  PgScan scan = ScanRingPg(a.offline->device(), a.geometry, id, *k->pointer, *k->chunks,
                           a.Unhomed(id), options);
  return std::make_pair(k, std::move(scan));
}


}  // namespace

absl::StatusOr<const RingPgKeys*> ReadAccess::RingPg(const PgId& pg) const {
  auto it = ring_pgs.find(pg);
  if (it == ring_pgs.end())
    return absl::NotFoundError(absl::StrCat("PG ", pg.ToString(), " does not exist"));
  absl::Status s = CheckRingPgKeys(it->second, geometry);
  if (!s.ok()) {
    return absl::DataLossError(absl::StrCat(
        "PG ", pg.ToString(), ": its RocksDB keys cannot be used: ", std::string(s.message()),
        " (run pgring-tool fsck)"));
  }
  if (auto u = unhomed.find(pg); u != unhomed.end() && !u->second.error.ok()) {
    return absl::DataLossError(absl::StrCat(u->second.error.message(),
                                            " (run pgring-tool fsck --deep)"));
  }
  return &it->second;
}

std::string_view ReadAccess::Unhomed(const PgId& pg) const {
  auto u = unhomed.find(pg);
  return u == unhomed.end() ? std::string_view() : std::string_view(u->second.bytes);
}

absl::StatusOr<ReadAccess> OpenForRead(const ToolContext& ctx) {
  if (ctx.db.empty()) {
    return absl::InvalidArgumentError("this command needs the store's RocksDB: give --db PATH");
  }
  ASSIGN_OR_RETURN(auto off, OpenOfflineStore(ctx, /*writable=*/false));
  RETURN_IF_ERROR(off->CheckBinding());
  ReadAccess a;
  a.backend = off->label()->backend;
  a.uuid = off->label()->uuid.ToString();
  if (a.backend == Backend::kRocksDb) {
    off->Release();
    Options o;
    o.read_only = true;
    o.recovery_policy = RecoveryPolicy::kMarkDamaged;  // inspect the healthy PGs
    o.log_sink = NullLogSink();
    o.io_engine = IoEngine::kPsync;
    o.io_queue_depth = 4;
    ASSIGN_OR_RETURN(LibraryStore st, OpenLibraryStore(ctx, o));
    a.tool_db = std::move(st.db);
    a.store = std::move(st.store);
    return a;
  }
  a.geometry = *off->geometry();
  std::vector<VerifyProblem> ignored;  // malformed keys: fsck reports them
  RETURN_IF_ERROR(LoadRingPgKeys(*off->db(), &a.ring_pgs, &a.stream, &ignored));
  // Each PG's newest bytes, as the store reads them at open: one pass over
  // the stream for all the PGs (it is bounded by the stream's size).
  std::map<PgId, const RingPgKeys*> readable;
  for (const auto& [id, k] : a.ring_pgs) {
    if (CheckRingPgKeys(k, a.geometry).ok()) readable.emplace(id, &k);
  }
  ASSIGN_OR_RETURN(StreamRead read, ReadStreamForPgs(off->device(), a.geometry, a.stream,
                                                     readable, /*report=*/false));
  a.unhomed = std::move(read.unhomed);
  // The commands show and read each PG's log as the store would: its
  // records past its pointer's tail in the stream included.
  for (auto& [id, u] : a.unhomed) {
    RingPgKeys& k = a.ring_pgs.at(id);
    k.pointer = LogPointer(*k.pointer, u);
  }
  a.offline = std::move(off);
  return a;
}

uint64_t DirectoryBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) {
      uint64_t n = it->file_size(ec2);
      if (!ec2) total += n;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------
// show-label

CommandResult ShowLabelCommand::Run(const ToolContext& ctx) const {
  auto opened = OpenOfflineStore(ctx, /*writable=*/false);
  if (!opened.ok()) return Fail(ctx, opened.status(), kExitUsage);
  const OfflineStore& s = **opened;
  const StoredLabel stored = StoredLabel::Read(s.label_region());
  const uint32_t stored_crc = stored.stored_crc;
  const uint32_t computed_crc = stored.computed_crc;
  Json l;
  l["magic"] = stored.magic;
  l["format_version"] = stored.fields.format_version;
  l["encoded_size"] = stored.encoded_size;
  l["uuid"] = stored.fields.uuid.ToString();
  l["block_size"] = stored.fields.block_size;
  l["chunk_size"] = stored.fields.chunk_size;
  l["partition_size"] = stored.fields.partition_size;
  l["data_offset"] = stored.fields.data_offset;
  l["chunk_count"] = stored.fields.chunk_count;
  l["backend"] = BackendName(stored.fields.backend);
  l["crc"] = Hex32(stored_crc);
  l["computed_crc"] = Hex32(computed_crc);
  CommandResult r;
  Json& j = r.json;
  j["label"] = l;
  const bool valid = s.label().ok();
  j["valid"] = valid;
  j["error"] = valid ? Json(nullptr) : Json(std::string(s.label().status().message()));
  j["device_size"] = s.device()->size();
  std::string size_problem;
  if (valid && s.device()->size() < s.label()->partition_size) {
    size_problem = absl::StrFormat(
        "the device is %u bytes but the label says the store spans %u "
        "(truncated, or the wrong device)",
        s.device()->size(), s.label()->partition_size);
  }
  j["device_problem"] = size_problem.empty() ? Json(nullptr) : Json(size_problem);
  Json meta = nullptr;
  Json binding = nullptr;
  if (s.meta()) {
    if (s.meta()->ok()) {
      const StoreMeta& m = **s.meta();
      meta["uuid"] = m.uuid.ToString();
      meta["block_size"] = m.block_size;
      meta["chunk_size"] = m.chunk_size;
      meta["partition_size"] = m.partition_size;
      meta["chunk_count"] = m.chunk_count;
      meta["backend"] = BackendName(m.backend);
      meta["next_pg_stamp"] = m.next_pg_stamp;
    } else {
      meta["error"] = std::string(s.meta()->status().message());
    }
    absl::Status b = s.CheckBinding();
    binding = b.ok() ? Json("ok") : Json(std::string(b.message()));
  }
  j["metadata"] = meta;
  j["binding"] = binding;
  const bool ok = valid && size_problem.empty() && (binding.is_null() || binding == "ok");
  r.exit_code = ok ? kExitOk : kExitFailed;
  r.text.Line(absl::StrCat("label (partition offset 0, ", kLabelEncodedSize, " bytes):"));
  KeyValues kv;
  kv.key_width = 16;
  for (const char* key : {"magic", "format_version", "encoded_size", "uuid", "block_size"}) {
    kv.Add(key, Cell(l[key]));
  }
  for (const char* key : {"chunk_size", "partition_size"}) {
    kv.Add(key, absl::StrCat(Cell(l[key]), " (", HumanBytes(l[key].get<uint64_t>()), ")"));
  }
  for (const char* key : {"data_offset", "chunk_count", "backend"}) kv.Add(key, Cell(l[key]));
  kv.Add("crc",
         absl::StrCat(Hex32(stored_crc), " (",
                      stored_crc == computed_crc ? std::string("matches")
                                                 : "MISMATCH: computed " + Hex32(computed_crc),
                      ")"));
  r.text.Add(std::move(kv));
  r.text.Line(absl::StrCat(
      "label: ", valid ? std::string("valid") : "DAMAGED: " + j["error"].get<std::string>()));
  r.text.Line(absl::StrFormat("device: %u bytes%s", s.device()->size(),
                              size_problem.empty() ? std::string() : "; PROBLEM: " + size_problem));
  if (s.meta()) {
    if (s.meta()->ok()) {
      r.text.Line(absl::StrFormat(
          "metadata: store %s, backend %s, next PG stamp %u", meta["uuid"].get<std::string>(),
          meta["backend"].get<std::string>(), meta["next_pg_stamp"].get<uint32_t>()));
    } else {
      r.text.Line("metadata: DAMAGED: " + meta["error"].get<std::string>());
    }
    r.text.Line("binding: " + binding.get<std::string>());
  }
  return r;
}

// ---------------------------------------------------------------------------
// list-pgs

CommandResult ListPgsCommand::Run(const ToolContext& ctx) const {
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  CommandResult r;
  Json& j = r.json;
  j["backend"] = BackendName(a->backend);
  Json pgs = Json::array();
  Table t;
  if (a->backend == Backend::kRing) {
    t.columns = {Column::Left("PG", 12, 0),      Column::Right("STAMP", 8),
                 Column::Right("CHUNKS", 7),     Column::Right("HEAD(lpos)", 14),
                 Column::Right("TAIL(lpos)", 14), Column::Right("USED(B)", 12),
                 Column::Left("STATUS", 0, 2)};
    for (const auto& [id, k] : a->ring_pgs) {
      Json p;
      p["pg"] = id.ToString();
      auto usable = a->RingPg(id);
      p["status"] = usable.ok() ? std::string("ok")
                                : absl::StrCat("damaged: ", std::string(usable.status().message()));
      p["stamp"] = k.pointer.ok() ? Json(k.pointer->stamp) : Json(nullptr);
      p["chunks"] = k.chunks.ok() ? Json(k.chunks->chunks.size()) : Json(nullptr);
      p["head"] = k.pointer.ok() ? Json(k.pointer->head) : Json(nullptr);
      p["tail"] = k.pointer.ok() ? Json(k.pointer->tail) : Json(nullptr);
      p["used_bytes"] = k.pointer.ok() ? Json(k.pointer->tail - k.pointer->head) : Json(nullptr);
      t.AddRow({Cell(p["pg"]), Cell(p["stamp"]), Cell(p["chunks"]), Cell(p["head"]),
                Cell(p["tail"]), Cell(p["used_bytes"]), Cell(p["status"])});
      pgs.push_back(std::move(p));
    }
  } else {
    t.columns = {Column::Left("PG", 12, 0), Column::Right("ENTRIES", 9), Column::Right("DUPS", 9),
                 Column::Right("INFO", 5),  Column::Left("FIRST", 24),   Column::Left("LAST", 24),
                 Column::Left("STATUS", 0)};
    auto ids = a->store->ListPgs();
    if (!ids.ok()) return Fail(ctx, ids.status(), ExitCodeFor(ids.status()));
    for (const PgId& id : *ids) {
      auto st = a->store->GetPgStats(id);
      if (!st.ok()) return Fail(ctx, st.status(), ExitCodeFor(st.status()));
      Json p;
      p["pg"] = id.ToString();
      p["status"] = st->damaged ? "damaged" : "ok";
      p["entries"] = st->entries;
      p["dups"] = st->dups;
      p["has_info"] = st->has_info;
      p["first_version"] = st->entries ? Json(st->first_version.ToString()) : Json(nullptr);
      p["last_version"] = st->entries ? Json(st->last_version.ToString()) : Json(nullptr);
      t.AddRow({Cell(p["pg"]), Cell(p["entries"]), Cell(p["dups"]), st->has_info ? "yes" : "no",
                Cell(p["first_version"]), Cell(p["last_version"]), Cell(p["status"])});
      pgs.push_back(std::move(p));
    }
  }
  r.text.Add(std::move(t));
  r.text.Line(absl::StrCat(pgs.size(), " PG", pgs.size() == 1 ? "" : "s"));
  j["pgs"] = std::move(pgs);
  return r;
}

// ---------------------------------------------------------------------------
// info

void InfoCommand::AddOptions(CLI::App* app) {
  app->add_option("--pg,--pgid", pg_, kPgHelp)->required();
  ceph::AddDecodeOption(app, &decode_);
}

CommandResult InfoCommand::Run(const ToolContext& ctx) const {
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  CommandResult r;
  Json& j = r.json;
  j["pg"] = id->ToString();
  j["backend"] = BackendName(a->backend);
  KeyValues kv;
  // "20 (1'1 .. 1'20), 80 payload bytes"; a count alone when there are none.
  auto items_text = [](const Json& e) {
    const uint64_t n = e["count"].get<uint64_t>();
    if (n == 0) return absl::StrCat(n);
    return absl::StrFormat("%u (%s .. %s), %u payload bytes", n, e["first"].get<std::string>(),
                           e["last"].get<std::string>(), e["payload_bytes"].get<uint64_t>());
  };
  ceph::PayloadShown info_shown;
  if (a->backend == Backend::kRing) {
    PgScanOptions so;
    so.inspect_past_tail = true;
    auto scanned = ScanPg(*a, *id, so);
    if (!scanned.ok()) {
      return Fail(ctx, scanned.status(), ExitCodeFor(scanned.status()));
    }
    const RingPgKeys& k = *scanned->first;
    const PgScan& scan = scanned->second;
    const PgPointer& p = *k.pointer;
    const PgChunkList& c = *k.chunks;
    j["stamp"] = p.stamp;
    j["head"] = PosJson(*a, c, p.head);
    j["tail"] = PosJson(*a, c, p.tail);
    j["tail_seq"] = p.tail_seq;
    // Stream mode: the bytes [homed, tail) are read from the log stream,
    // from the stream record at stream_pos (0 when nothing is unhomed).
    j["homed"] = PosJson(*a, c, p.homed());
    j["unhomed"] = p.unhomed;
    j["stream_pos"] = p.stream_pos;
    j["entries_trimmed_to"] = p.entries_trimmed_to.ToString();
    j["dups_trimmed_to"] = p.dups_trimmed_to.ToString();
    j["chunk_list"] = {{"base", c.base}, {"chunks", c.chunks}};
    j["ring_bytes"] = static_cast<uint64_t>(c.chunks.size()) * a->geometry.chunk_size;
    j["used_bytes"] = p.tail - p.head;
    j["records"] = scan.records;
    auto items = [](const std::deque<ScannedItem>& d) {
      Json e;
      e["count"] = d.size();
      e["first"] = d.empty() ? Json(nullptr) : Json(d.front().version.ToString());
      e["last"] = d.empty() ? Json(nullptr) : Json(d.back().version.ToString());
      uint64_t bytes = 0;
      for (const auto& i : d) bytes += i.payload_size;
      e["payload_bytes"] = bytes;
      return e;
    };
    j["entries"] = items(scan.entries);
    j["dups"] = items(scan.dups);
    if (scan.info) {
      Json i = PosJson(*a, c, scan.info->item_lpos);
      i["size"] = scan.info->payload_size;
      i["record_lpos"] = scan.info->record_lpos;
      i["payload"] = Hex(scan.info->payload);
      info_shown = ceph::ShowPayload(decode_, ceph::CephType::kPgInfo, scan.info->payload, &i);
      j["info"] = i;
    } else {
      j["info"] = nullptr;
    }
    Json problems, notes;
    SplitProblems(scan.problems, &problems, &notes);
    j["problems"] = problems;
    j["notes"] = notes;
    if (scan.has_errors() || info_shown.failed) r.exit_code = kExitFailed;

    r.text.Line(absl::StrCat("PG ", id->ToString(), " (ring backend)"));
    kv.Add("stamp", absl::StrCat(p.stamp));
    kv.Add("head", PosText(j["head"]));
    kv.Add("tail", PosText(j["tail"]));
    kv.Add("next sequence", absl::StrCat(p.tail_seq));
    if (p.unhomed != 0) {
      kv.Add("homed", PosText(j["homed"]));
      kv.Add("unhomed", absl::StrFormat("%u bytes [%u, %u), in the log stream from stream lpos %u",
                                        p.unhomed, p.homed(), p.tail, p.stream_pos));
    }
    kv.Add("entries trimmed to", p.entries_trimmed_to.ToString());
    kv.Add("dups trimmed to", p.dups_trimmed_to.ToString());
    kv.Add("chunk list", absl::StrFormat("base %u: [%s]", c.base, absl::StrJoin(c.chunks, ", ")));
    kv.Add("ring", absl::StrFormat("%u bytes in %u chunk%s, %u used (head to tail)",
                                   j["ring_bytes"].get<uint64_t>(), c.chunks.size(),
                                   c.chunks.size() == 1 ? "" : "s", p.tail - p.head));
    kv.Add("records", absl::StrCat(scan.records));
    kv.Add("entries", items_text(j["entries"]));
    kv.Add("dups", items_text(j["dups"]));
    kv.Add("info", scan.info ? absl::StrFormat("%u bytes at %s: %s", scan.info->payload_size,
                                               PosText(j["info"]), info_shown.cell)
                             : std::string("none"));
    r.text.Add(std::move(kv));
    r.text.Add(ProblemLines(scan.problems));
    return r;
  }
  auto st = a->store->GetPgStats(*id);
  if (!st.ok()) return Fail(ctx, st.status(), ExitCodeFor(st.status()));
  j["damaged"] = st->damaged;
  j["entries"] = {{"count", st->entries},
                  {"first", st->entries ? Json(st->first_version.ToString()) : Json(nullptr)},
                  {"last", st->entries ? Json(st->last_version.ToString()) : Json(nullptr)},
                  {"payload_bytes", st->entry_bytes}};
  j["dups"] = {{"count", st->dups}, {"payload_bytes", st->dup_bytes}};
  auto info = a->store->ReadInfo(*id);
  if (info.ok()) {
    j["info"] = {{"size", info->size()}, {"payload", Hex(*info)}};
    info_shown = ceph::ShowPayload(decode_, ceph::CephType::kPgInfo, *info, &j["info"]);
  } else if (absl::IsNotFound(info.status())) {
    j["info"] = nullptr;
  } else {
    return Fail(ctx, info.status(), ExitCodeFor(info.status()));
  }
  if (st->damaged || info_shown.failed) r.exit_code = kExitFailed;
  r.text.Line(
      absl::StrCat("PG ", id->ToString(), " (rocksdb backend)", st->damaged ? ": DAMAGED" : ""));
  // The entries' payload bytes are shown even when there are none.
  kv.Add("entries", st->entries ? items_text(j["entries"])
                                : absl::StrFormat("0, %u payload bytes", st->entry_bytes));
  kv.Add("dups", absl::StrFormat("%u, %u payload bytes", st->dups, st->dup_bytes));
  kv.Add("info", info.ok() ? absl::StrFormat("%u bytes: %s", info->size(), info_shown.cell)
                           : std::string("none"));
  r.text.Add(std::move(kv));
  return r;
}

// ---------------------------------------------------------------------------
// log and dups

namespace {

// Which items `log` and `dups` list: versions in [from, to], at most `max`
// of them (0: all).
struct ItemRange {
  Version from = Version::Min();
  Version to = Version::Max();
  uint64_t max = 0;
};

absl::StatusOr<ItemRange> ParseItemRange(const std::string& from, const std::string& to,
                                         uint64_t max) {
  ItemRange r;
  r.max = max;
  if (!from.empty()) {
    ASSIGN_OR_RETURN(r.from, ParseVersion(from));
  }
  if (!to.empty()) {
    ASSIGN_OR_RETURN(r.to, ParseVersion(to));
  }
  if (r.from > r.to) {
    return absl::InvalidArgumentError(
        absl::StrFormat("version range %s..%s is empty (--from is after --to)",
                        r.from.ToString(), r.to.ToString()));
  }
  return r;
}

void AddRangeOptions(CLI::App* app, std::string* from, std::string* to, uint64_t* max) {
  app->add_option("--from", *from, "first version (EPOCH'VERSION or EPOCH.VERSION)");
  app->add_option("--to", *to, "last version");
  app->add_option("--max", *max, "list at most this many (the oldest first; 0: all)");
}

// The entries (or dups) of one PG in `range`.
CommandResult ListItems(const ReadAccess& a, const PgId& id, bool dups, const ItemRange& range,
                        ceph::DecodeMode decode) {
  const ceph::CephType type = dups ? ceph::CephType::kLogDup : ceph::CephType::kLogEntry;
  bool undecoded = false;  // --decode=ceph and a payload did not decode
  const Version& from = range.from;
  const Version& to = range.to;
  bool more = false;  // --max cut the list
  auto full = [&](size_t listed) {
    if (range.max == 0 || listed < range.max) return false;
    more = true;
    return true;
  };
  CommandResult r;
  Json& j = r.json;
  j["pg"] = id.ToString();
  j["backend"] = BackendName(a.backend);
  Json items = Json::array();
  std::vector<VerifyProblem> problems;
  Table t;
  // What the payload column holds: hex, or Ceph's one-line form where the
  // payload decodes (hex where it does not).
  const char* payload_header =
      decode == ceph::DecodeMode::kNone ? "PAYLOAD(hex)" : "PAYLOAD(decoded|hex)";
  if (a.backend == Backend::kRing) {
    t.columns = {Column::Left("VERSION", 16, 0),   Column::Right("LPOS(B)", 12),
                 Column::Right("CHUNK", 8),        Column::Right("OFFSET(B)", 10),
                 Column::Right("LEN(B)", 7),       Column::Right("RECORD-LPOS(B)", 14),
                 Column::Right("RECORD-SEQ", 10),  Column::Left("RECORD-CRC", 10),
                 Column::Left(payload_header, 0, 2)};
    PgScanOptions so;
    so.keep_entry_payloads = !dups;
    so.keep_dup_payloads = dups;
    so.from = from;
    so.to = to;
    auto scanned = ScanPg(a, id, so);
    if (!scanned.ok()) {
      return CommandResult::Failure(scanned.status(), ExitCodeFor(scanned.status()));
    }
    const RingPgKeys& k = *scanned->first;
    const PgScan& scan = scanned->second;
    problems = scan.problems;
    if (!dups && from != Version::Min() && from > scan.last_version &&
        !scan.has_errors()) {
      return CommandResult::Failure(
          absl::StrFormat("PG %s: version %s is past the newest entry %s", id.ToString(),
                          from.ToString(), scan.last_version.ToString()),
          kExitFailed);
    }
    for (const ScannedItem& it : dups ? scan.dups : scan.entries) {
      if (it.version < from || it.version > to) continue;
      if (full(items.size())) break;
      Json e;
      e["version"] = it.version.ToString();
      Json pos = PosJson(a, *k.chunks, it.item_lpos);
      e["lpos"] = pos["lpos"];
      e["chunk"] = pos["chunk"];
      e["offset"] = pos["offset"];
      e["length"] = it.payload_size;
      e["record"] = {{"lpos", it.record_lpos},
                     {"size", it.record_size},
                     {"seq", it.record_seq},
                     {"crc", Hex32(it.record_crc)}};
      e["payload"] = Hex(it.payload);
      const ceph::PayloadShown shown = ceph::ShowPayload(decode, type, it.payload, &e);
      undecoded |= shown.failed;
      t.AddRow({e["version"].get<std::string>(), absl::StrCat(it.item_lpos), Cell(e["chunk"]),
                Cell(e["offset"]), absl::StrCat(it.payload_size), absl::StrCat(it.record_lpos),
                absl::StrCat(it.record_seq), Hex32(it.record_crc), shown.cell});
      items.push_back(std::move(e));
    }
  } else {
    t.columns = {Column::Left("VERSION", 16, 0), Column::Left("KEY", 36),
                 Column::Right("LEN(B)", 7), Column::Left(payload_header, 0, 2)};
    absl::StatusOr<std::vector<LogEntry>> read =
        dups ? a.store->ReadDups(id) : a.store->ReadEntries(id, from, to);
    if (!read.ok()) return CommandResult::Failure(read.status(), ExitCodeFor(read.status()));
    for (const LogEntry& le : *read) {
      if (le.version < from || le.version > to) continue;
      if (full(items.size())) break;
      Json e;
      e["version"] = le.version.ToString();
      e["key"] = absl::StrCat(dups ? std::string(kDupKeyNamePrefix) : std::string(),
                              LogKeyName(le.version));
      e["length"] = le.payload.size();
      e["payload"] = Hex(le.payload);
      const ceph::PayloadShown shown = ceph::ShowPayload(decode, type, le.payload, &e);
      undecoded |= shown.failed;
      t.AddRow({e["version"].get<std::string>(), e["key"].get<std::string>(),
                absl::StrCat(le.payload.size()), shown.cell});
      items.push_back(std::move(e));
    }
  }
  const size_t n = items.size();
  j[dups ? "dups" : "entries"] = std::move(items);
  if (range.max != 0) j["more"] = more;
  Json ps, notes;
  SplitProblems(problems, &ps, &notes);
  if (a.backend == Backend::kRing) {
    j["problems"] = ps;
    j["notes"] = notes;
  }
  if (!ps.empty() || undecoded) r.exit_code = kExitFailed;
  r.text.Add(std::move(t));
  r.text.Line(absl::StrCat(dups ? absl::StrCat(n, " dup", n == 1 ? "" : "s")
                                : absl::StrCat(n, " entr", n == 1 ? "y" : "ies"),
                           more ? absl::StrCat(" (--max ", range.max, "; more follow)") : ""));
  r.text.Add(ProblemLines(problems));
  return r;
}

}  // namespace

void LogCommand::AddOptions(CLI::App* app) {
  app->add_option("--pg,--pgid", pg_, kPgHelp)->required();
  AddRangeOptions(app, &from_, &to_, &max_);
  ceph::AddDecodeOption(app, &decode_);
}

CommandResult LogCommand::Run(const ToolContext& ctx) const {
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto range = ParseItemRange(from_, to_, max_);
  if (!range.ok()) return Fail(ctx, range.status(), kExitUsage);
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  return ListItems(*a, *id, /*dups=*/false, *range, decode_);
}

void DupsCommand::AddOptions(CLI::App* app) {
  app->add_option("--pg,--pgid", pg_, kPgHelp)->required();
  AddRangeOptions(app, &from_, &to_, &max_);
  ceph::AddDecodeOption(app, &decode_);
}

CommandResult DupsCommand::Run(const ToolContext& ctx) const {
  auto id = ParsePgId(pg_);
  if (!id.ok()) return Fail(ctx, id.status(), kExitUsage);
  auto range = ParseItemRange(from_, to_, max_);
  if (!range.ok()) return Fail(ctx, range.status(), kExitUsage);
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  return ListItems(*a, *id, /*dups=*/true, *range, decode_);
}

// ---------------------------------------------------------------------------
// stats

CommandResult StatsCommand::Run(const ToolContext& ctx) const {
  auto a = OpenForRead(ctx);
  if (!a.ok()) return Fail(ctx, a.status(), kExitUsage);
  CommandResult r;
  Json& j = r.json;
  j["backend"] = BackendName(a->backend);
  Json pgs = Json::array();
  uint64_t payload_total = 0, used_total = 0, damaged = 0;
  const uint64_t rocksdb_bytes = DirectoryBytes(ctx.db);
  // "-" where a ratio has no payload to divide by.
  auto ratio = [](const Json& v) {
    return v.is_null() ? std::string("-") : absl::StrFormat("%.3f", v.get<double>());
  };
  Table t;
  if (a->backend == Backend::kRing) {
    t.columns = {
        Column::Left("PG", 12, 0),       Column::Right("CHUNKS", 7),
        Column::Right("RING(B)", 12),    Column::Right("USED(B)", 12),
        Column::Right("ENTRIES", 9),     Column::Right("DUPS", 9),
        Column::Right("PAYLOAD(B)", 12), Column::Right("LOG/PAYLD(B/B)", 14),
        Column::Left("STATUS", 0, 2)};
    const Geometry& g = a->geometry;
    std::vector<uint32_t> owned;  // chunk numbers, sorted below (no per-chunk array:
                                  // a partition may have billions of chunks)
    uint64_t discontiguous = 0, listed = 0;
    Progress progress(ctx, "stats: PGs scanned", a->ring_pgs.size());
    uint64_t done = 0;
    for (const auto& [id, k] : a->ring_pgs) {
      Json p;
      p["pg"] = id.ToString();
      auto keys = a->RingPg(id);
      if (k.chunks.ok()) {
        const auto& cs = k.chunks->chunks;
        for (size_t i = 0; i < cs.size(); ++i) {
          if (cs[i] < g.chunk_count) owned.push_back(cs[i]);
          if (i > 0 && cs[i] != cs[i - 1] + 1) ++discontiguous;
        }
        listed += cs.size();
      }
      if (!keys.ok()) {
        p["status"] = std::string(keys.status().message());
        ++damaged;
        t.AddRow({Cell(p["pg"]), Cell(p["status"])});
        pgs.push_back(std::move(p));
        progress.Update(++done);
        continue;
      }
      PgScan scan = ScanRingPg(a->offline->device(), g, id, *k.pointer, *k.chunks,
                               a->Unhomed(id), PgScanOptions());
      const uint64_t used = k.pointer->tail - k.pointer->head;
      const uint64_t payload = scan.live_payload_bytes();
      p["status"] = scan.has_errors() ? "damaged (run fsck --deep)" : "ok";
      p["chunks"] = k.chunks->chunks.size();
      p["ring_bytes"] = static_cast<uint64_t>(k.chunks->chunks.size()) * g.chunk_size;
      p["used_bytes"] = used;
      p["entries"] = scan.entries.size();
      p["dups"] = scan.dups.size();
      p["live_payload_bytes"] = payload;
      p["log_bytes_per_payload_byte"] =
          payload ? Json(static_cast<double>(used) / payload) : Json(nullptr);
      if (scan.has_errors()) {
        ++damaged;
      } else {
        used_total += used;
        payload_total += payload;
      }
      t.AddRow({Cell(p["pg"]), Cell(p["chunks"]), Cell(p["ring_bytes"]), Cell(p["used_bytes"]),
                Cell(p["entries"]), Cell(p["dups"]), Cell(p["live_payload_bytes"]),
                ratio(p["log_bytes_per_payload_byte"]), Cell(p["status"])});
      pgs.push_back(std::move(p));
      progress.Update(++done);
    }
    // The log stream's chunks are owned too (by the stream, not a PG).
    Json stream = nullptr;
    if (a->stream.chunks.ok()) {
      const auto& cs = a->stream.chunks->chunks;
      for (uint32_t c : cs) {
        if (c < g.chunk_count) owned.push_back(c);
      }
      stream = Json::object();
      stream["chunks"] = cs.size();
      stream["ring_bytes"] = static_cast<uint64_t>(cs.size()) * g.chunk_size;
      if (a->stream.pointer.ok()) {
        stream["head"] = a->stream.pointer->head;
        stream["tail"] = a->stream.pointer->tail;
        stream["used_bytes"] = a->stream.pointer->tail - a->stream.pointer->head;
      }
      uint64_t pgs_in = 0, bytes_in = 0;
      for (const auto& [id, u] : a->unhomed) {
        ++pgs_in;
        bytes_in += a->ring_pgs.at(id).pointer->unhomed;
      }
      stream["unhomed_pgs"] = pgs_in;
      stream["unhomed_bytes"] = bytes_in;
    }
    std::sort(owned.begin(), owned.end());
    owned.erase(std::unique(owned.begin(), owned.end()), owned.end());
    const uint64_t owned_n = owned.size();
    uint64_t extents = 0, largest = 0, next_free = 0;
    auto gap = [&](uint64_t end) {  // free chunks [next_free, end)
      if (end > next_free) {
        ++extents;
        largest = std::max(largest, end - next_free);
      }
    };
    for (uint32_t c : owned) {
      gap(c);
      next_free = static_cast<uint64_t>(c) + 1;
    }
    gap(g.chunk_count);
    const uint64_t free_n = g.chunk_count - owned_n;
    j["chunk_size"] = g.chunk_size;
    j["chunks"] = g.chunk_count;
    j["owned_chunks"] = owned_n;
    j["free_chunks"] = free_n;
    j["free_extents"] = extents;
    j["largest_free_extent"] = largest;
    // 0: all free space in one run; near 1: scattered single chunks.
    j["fragmentation"] = free_n ? 1.0 - static_cast<double>(largest) / free_n : 0.0;
    j["discontiguous_chunks"] = discontiguous;
    j["listed_chunks"] = listed;
    j["stream"] = std::move(stream);
  }
  if (a->backend == Backend::kRocksDb) {
    t.columns = {Column::Left("PG", 12, 0), Column::Right("ENTRIES", 9), Column::Right("DUPS", 9),
                 Column::Right("PAYLOAD(B)", 12), Column::Left("STATUS", 0, 2)};
    auto ids = a->store->ListPgs();
    if (!ids.ok()) return Fail(ctx, ids.status(), ExitCodeFor(ids.status()));
    for (const PgId& id : *ids) {
      auto st = a->store->GetPgStats(id);
      if (!st.ok()) return Fail(ctx, st.status(), ExitCodeFor(st.status()));
      Json p;
      p["pg"] = id.ToString();
      p["status"] = st->damaged ? "damaged" : "ok";
      p["entries"] = st->entries;
      p["dups"] = st->dups;
      const uint64_t payload = st->entry_bytes + st->dup_bytes + st->info_bytes;
      p["live_payload_bytes"] = payload;
      payload_total += payload;
      damaged += st->damaged;
      t.AddRow({Cell(p["pg"]), Cell(p["entries"]), Cell(p["dups"]), Cell(p["live_payload_bytes"]),
                Cell(p["status"])});
      pgs.push_back(std::move(p));
    }
  }
  j["pgs_total"] = pgs.size();
  j["damaged_pgs"] = damaged;
  if (a->backend == Backend::kRing) j["used_bytes"] = used_total;
  j["live_payload_bytes"] = payload_total;
  if (a->backend == Backend::kRing) {
    j["log_bytes_per_payload_byte"] =
        payload_total ? Json(static_cast<double>(used_total) / payload_total) : Json(nullptr);
  }
  j["rocksdb_bytes"] = rocksdb_bytes;
  j["rocksdb_bytes_per_payload_byte"] =
      payload_total ? Json(static_cast<double>(rocksdb_bytes) / payload_total) : Json(nullptr);
  const uint64_t pg_count = pgs.size();
  j["pgs"] = std::move(pgs);
  r.exit_code = damaged ? kExitFailed : kExitOk;
  r.text.Add(std::move(t));
  if (a->backend == Backend::kRing) {
    r.text.Line(absl::StrFormat("store: %u PGs (%u damaged); %u chunks of %s", pg_count, damaged,
                                j["chunks"].get<uint64_t>(),
                                HumanBytes(j["chunk_size"].get<uint64_t>())));
    r.text.Line(absl::StrFormat(
        "chunks: %u owned, %u free in %u extent(s), the largest %u chunks (fragmentation %.3f)",
        j["owned_chunks"].get<uint64_t>(), j["free_chunks"].get<uint64_t>(),
        j["free_extents"].get<uint64_t>(), j["largest_free_extent"].get<uint64_t>(),
        j["fragmentation"].get<double>()));
    r.text.Line(absl::StrFormat(
        "chunk lists: %u of %u chunks do not follow their predecessor on the partition",
        j["discontiguous_chunks"].get<uint64_t>(), j["listed_chunks"].get<uint64_t>()));
    r.text.Line(absl::StrFormat(
        "log: %u ring bytes hold %u live payload bytes: %s log bytes per payload byte", used_total,
        payload_total, ratio(j["log_bytes_per_payload_byte"])));
    if (!j["stream"].is_null()) {
      const Json& st = j["stream"];
      const uint64_t n = st["chunks"].get<uint64_t>();
      std::string line =
          absl::StrFormat("log stream: %u chunk%s (%s)", n, n == 1 ? "" : "s",
                          HumanBytes(st["ring_bytes"].get<uint64_t>()));
      if (st.contains("used_bytes")) {
        absl::StrAppendFormat(&line, ", %u bytes from head %u to tail %u",
                              st["used_bytes"].get<uint64_t>(), st["head"].get<uint64_t>(),
                              st["tail"].get<uint64_t>());
      }
      absl::StrAppendFormat(&line, "; %u PGs have %u bytes only there",
                            st["unhomed_pgs"].get<uint64_t>(), st["unhomed_bytes"].get<uint64_t>());
      r.text.Line(std::move(line));
    }
  } else {
    r.text.Line(absl::StrFormat("store: %u PGs (%u damaged); %u live payload bytes", pg_count,
                                damaged, payload_total));
  }
  r.text.Line(absl::StrFormat("rocksdb: %u bytes on disk (%s per payload byte)", rocksdb_bytes,
                              ratio(j["rocksdb_bytes_per_payload_byte"])));
  return r;
}

}  // namespace pgring::tool
