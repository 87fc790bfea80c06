#include "tool/offline_store.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "device/aligned_buffer.h"
#include "format/interrupted_expand.h"
#include "format/rocksdb_backend_keys.h"
#include "store/open_store.h"
#include "tool/tool_common.h"
#include "util/status_macros.h"

namespace pgring::tool {

OfflineStore::~OfflineStore() { Release(); }

void OfflineStore::Release() {
  db_.reset();
  tool_db_.reset();
  device_.reset();
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::Open(const ToolContext& ctx,
                                                                 bool writable) {
  const std::string& dev = ctx.dev;
  const std::string& db = ctx.db;
  std::unique_ptr<OfflineStore> s(new OfflineStore);
  s->dev_path_ = dev;
  s->db_path_ = db;
  s->db_name_ = DbName(ctx);
  s->writable_ = writable;
  if (dev.empty()) return absl::InvalidArgumentError("no partition given (--dev PATH)");
  FileBlockDeviceOptions o;
  o.read_only = !writable;
  o.use_io_uring = false;  // a handful of synchronous I/Os; no ring needed
  o.queue_depth = 4;
  // LOCK_SH read-only, LOCK_EX writable; none for --live (the process
  // holding the store has LOCK_EX).
  o.exclusive_lock = !ctx.live;
  if (ctx.live && writable) {
    return absl::InvalidArgumentError(
        "--live is for commands that only read: a store in use cannot be changed");
  }
  auto d = OpenFileBlockDevice(dev, o);
  if (!d.ok()) return ExplainOpenError(d.status(), absl::StrCat("partition ", dev));
  s->device_ = *std::move(d);
  ASSIGN_OR_RETURN(s->label_region_, ReadLabelRegion(s->device_.get(), dev));
  // A damaged label is kept to show; no label at all is refused.
  s->label_ = DecodeLabelRegion(s->label_region_, dev);
  if (s->label_.status().code() == absl::StatusCode::kFailedPrecondition) return s->label_.status();
  if (!db.empty()) {
    auto t = ToolDb::Open(ctx, writable ? ToolDb::Mode::kReadWrite : ToolDb::Mode::kReadOnly);
    if (!t.ok()) return ExplainOpenError(t.status(), s->db_name_);
    s->tool_db_ = *std::move(t);
    auto m = MetadataDb::Open(s->tool_db_->location(), /*create=*/false,
                              /*read_only=*/!writable);
    if (!m.ok()) return ExplainOpenError(m.status(), absl::StrCat("RocksDB at ", db));
    s->db_ = *std::move(m);
    ASSIGN_OR_RETURN(auto value, s->db_->Get(kMetaKey));
    if (!value) {
      return absl::FailedPreconditionError(
          absl::StrCat(s->db_name_, " holds no pgring store (no pgring.meta key)"));
    }
    s->meta_ = StoreMeta::Decode(*value);
    if (s->label_.ok() && s->meta_->ok() && IsInterruptedExpand(*s->label_, **s->meta_)) {
      // Read as the store's open reads it: grown (fsck notes it).
      s->expand_interrupted_ = true;
      s->meta_ = GrownMeta(*s->label_, **s->meta_);
    }
  }
  return s;
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::Open(const std::string& dev,
                                                                 const std::string& db,
                                                                 bool writable) {
  ToolContext ctx;
  ctx.dev = dev;
  ctx.db = db;
  return Open(ctx, writable);
}

std::optional<Geometry> OfflineStore::geometry() const {
  if (label_.ok()) return MakeGeometry(label_->block_size, label_->chunk_size, label_->chunk_count);
  if (meta_ && meta_->ok()) {
    // The label's decoder checks its geometry; pgring.meta's does not, so
    // check it here before anything divides by it.
    const StoreMeta& m = **meta_;
    if (CheckMetaGeometry(m).ok()) return MakeGeometry(m.block_size, m.chunk_size, m.chunk_count);
  }
  return std::nullopt;
}

std::optional<Backend> OfflineStore::backend() const {
  if (label_.ok()) return label_->backend;
  if (meta_ && meta_->ok()) return (*meta_)->backend;
  return std::nullopt;
}

absl::Status OfflineStore::CheckBinding() const {
  if (!label_.ok())
    return absl::DataLossError(absl::StrCat(dev_path_, ": ", label_.status().message()));
  if (device_) RETURN_IF_ERROR(CheckDeviceSize(*label_, device_->size(), dev_path_));
  if (!meta_) return absl::OkStatus();
  if (!meta_->ok()) {
    return absl::DataLossError(
        absl::StrCat(db_name_, ": ", meta_->status().message()));
  }
  return CheckMetaMatchesLabel(*label_, **meta_, dev_path_, db_name_);
}

absl::Status LoadRingPgKeys(const MetadataDb& db, std::map<PgId, RingPgKeys>* pgs,
                            StreamKeys* stream, std::vector<Problem>* problems) {
  auto malformed = [&](std::string_view key, std::string_view why) {
    Problem p;
    p.kind = "key-malformed";
    p.message =
        absl::StrCat("RocksDB key '", absl::CHexEscape(std::string(key)), "' ", std::string(why));
    problems->push_back(std::move(p));
  };
  return db.Scan(kKeyPrefix, [&](std::string_view k, std::string_view v) {
    const StoreKeyKind kind = ClassifyStoreKey(k);
    if (kind == StoreKeyKind::kMeta) return absl::OkStatus();
    if (kind == StoreKeyKind::kPgPointer || kind == StoreKeyKind::kPgChunks) {
      const bool pointer = kind == StoreKeyKind::kPgPointer;
      PgId id;
      if (!DecodePgKey(k.substr((pointer ? kPgPointerPrefix : kPgChunksPrefix).size()), &id)) {
        malformed(k, pointer ? "is not a valid pointer key (bad PG id)"
                             : "is not a valid chunk-list key (bad PG id)");
        return absl::OkStatus();
      }
      RingPgKeys& e = (*pgs)[id];
      e.id = id;
      if (pointer) {
        e.has_pointer_key = true;
        e.pointer = PgPointer::Decode(v);
      } else {
        e.has_chunks_key = true;
        e.chunks = PgChunkList::Decode(v);
      }
      return absl::OkStatus();
    }
    if (kind == StoreKeyKind::kStreamPointer) {
      stream->has_pointer_key = true;
      stream->pointer = StreamPointer::Decode(v);
      return absl::OkStatus();
    }
    if (kind == StoreKeyKind::kStreamChunks) {
      stream->has_chunks_key = true;
      stream->chunks = PgChunkList::Decode(v);
      return absl::OkStatus();
    }
    malformed(k, kind == StoreKeyKind::kPgLog
                     ? "belongs to the RocksDB backend, but this is a ring store"
                     : "is not a key pgring writes");
    return absl::OkStatus();
  });
}

absl::StatusOr<StreamKeys> LoadStreamKeys(const OfflineStore& store) {
  StreamKeys k;
  if (store.db() == nullptr) return k;
  ASSIGN_OR_RETURN(auto ptr, store.db()->Get(kStreamPointerKey));
  ASSIGN_OR_RETURN(auto chunks, store.db()->Get(kStreamChunksKey));
  if (ptr) {
    k.has_pointer_key = true;
    k.pointer = StreamPointer::Decode(*ptr);
  }
  if (chunks) {
    k.has_chunks_key = true;
    k.chunks = PgChunkList::Decode(*chunks);
  }
  return k;
}

absl::Status CheckRingPgKeys(const RingPgKeys& pg, const Geometry& g) {
  if (!pg.pointer.ok()) return pg.pointer.status();
  if (!pg.chunks.ok()) return pg.chunks.status();
  RETURN_IF_ERROR(CheckChunkListBase(*pg.chunks, g.chunk_size));
  RETURN_IF_ERROR(
      CheckPointerInChunks(pg.pointer->head, pg.pointer->tail, *pg.chunks, g.chunk_size));
  // The decoder bounds unhomed by the tail only; recovery also needs the
  // ring to hold the head (RecoverRingPgLog refuses the same).
  if (pg.pointer->homed() < pg.pointer->head) {
    return absl::DataLossError(absl::StrFormat(
        "pointer's homed position %u (tail %u less %u unhomed bytes) is before its head %u",
        pg.pointer->homed(), pg.pointer->tail, pg.pointer->unhomed, pg.pointer->head));
  }
  return absl::OkStatus();
}

absl::Status CheckStreamKeys(const StreamKeys& stream, const Geometry& g) {
  auto stream_error = [](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("log stream: ", s.message()));
  };
  if (!stream.pointer.ok()) return stream_error(stream.pointer.status());
  if (!stream.chunks.ok()) return stream_error(stream.chunks.status());
  for (const absl::Status& s :
       {CheckChunkListBase(*stream.chunks, g.chunk_size),
        CheckPointerInChunks(stream.pointer->head, stream.pointer->tail, *stream.chunks,
                             g.chunk_size)}) {
    if (!s.ok()) return stream_error(s);
  }
  return absl::OkStatus();
}

absl::StatusOr<PgId> ParsePgId(const std::string& text) {
  PgId id;
  if (!PgId::Parse(text, &id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad PG id '", text,
                     "': expected POOL.SEED in hex, or POOL.SEEDsSHARD (e.g. 1.2a, 3.1fs0)"));
  }
  return id;
}

absl::StatusOr<Version> ParseVersion(const std::string& text) {
  std::string t = text;
  // Ceph prints eversion_t as 12'345; 12.345 saves quoting in shells.
  if (t.find('\'') == std::string::npos) {
    auto dot = t.find('.');
    if (dot != std::string::npos) t[dot] = '\'';
  }
  Version v;
  if (!Version::Parse(t, &v) || t.empty() || t.front() == '-' || t.find('-') != std::string::npos ||
      t.find('+') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad version '", text, "': expected EPOCH'VERSION or EPOCH.VERSION (e.g. 12'345)"));
  }
  return v;
}

}  // namespace pgring::tool
