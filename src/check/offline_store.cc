#include "check/offline_store.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "device/aligned_buffer.h"
#include "format/interrupted_expand.h"
#include "format/rocksdb_backend_keys.h"
#include "store/open_store.h"
#include "util/status_macros.h"

namespace pgring {

OfflineStore::~OfflineStore() { Release(); }

void OfflineStore::Release() {
  db_ = nullptr;
  owned_db_.reset();
  db_owner_.reset();
  device_.reset();
}

absl::Status OfflineStore::ExplainOpenError(const absl::Status& error,
                                            std::string_view what) const {
  return options_.explain_open_error ? options_.explain_open_error(error, what) : error;
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::OpenPartition(
    const std::string& dev, const OfflineStoreOptions& options) {
  std::unique_ptr<OfflineStore> s(new OfflineStore);
  s->dev_path_ = dev;
  s->options_ = options;
  s->writable_ = options.writable;
  if (dev.empty()) return absl::InvalidArgumentError("no partition path given");
  FileBlockDeviceOptions o;
  o.read_only = !options.writable;
  o.use_io_uring = false;  // a handful of synchronous I/Os; no ring needed
  o.queue_depth = 4;
  // LOCK_SH read-only, LOCK_EX writable: a store that is open holds LOCK_EX.
  o.exclusive_lock = options.lock_partition;
  auto d = OpenFileBlockDevice(dev, o);
  if (!d.ok()) return s->ExplainOpenError(d.status(), absl::StrCat("partition ", dev));
  s->device_ = *std::move(d);
  RETURN_IF_ERROR(s->ReadLabel(dev));
  return s;
}

absl::Status OfflineStore::ReadLabel(const std::string& name) {
  ASSIGN_OR_RETURN(label_region_, ReadLabelRegion(device_.get(), name));
  // A damaged label is kept to show; no label at all is refused.
  label_ = DecodeLabelRegion(label_region_, name);
  if (label_.status().code() == absl::StatusCode::kFailedPrecondition) return label_.status();
  return absl::OkStatus();
}

absl::Status OfflineStore::OpenMetadata(const MetadataLocation& meta,
                                        std::shared_ptr<void> db_owner) {
  db_owner_ = std::move(db_owner);
  db_name_ = options_.db_name;
  if (db_name_.empty()) {
    db_name_ = meta.db == nullptr ? absl::StrCat("RocksDB at ", meta.db_path)
                                  : std::string("the embedder's RocksDB");
  }
  auto m = MetadataDb::Open(meta, /*create=*/false, /*read_only=*/!writable_);
  if (!m.ok()) return ExplainOpenError(m.status(), db_name_);
  owned_db_ = *std::move(m);
  db_ = owned_db_.get();
  if (options_.db_name.empty()) db_name_ = db_->description();
  return ReadMeta();
}

absl::Status OfflineStore::ReadMeta() {
  ASSIGN_OR_RETURN(auto value, db_->Get(kMetaKey));
  if (!value) {
    return absl::FailedPreconditionError(
        absl::StrCat(db_name_, " holds no pgring store (no pgring.meta key)"));
  }
  meta_ = StoreMeta::Decode(*value);
  if (label_.ok() && meta_->ok() && IsInterruptedExpand(*label_, **meta_)) {
    // Read as the store's open reads it: grown (the checks note it).
    expand_interrupted_ = true;
    meta_ = GrownMeta(*label_, **meta_);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::Borrow(
    std::shared_ptr<BlockDevice> dev, const std::string& dev_name, MetadataDb* db) {
  std::unique_ptr<OfflineStore> s(new OfflineStore);
  s->dev_path_ = dev_name;
  s->device_ = std::move(dev);
  RETURN_IF_ERROR(s->ReadLabel(dev_name));
  s->db_ = db;
  s->db_name_ = db->description();
  RETURN_IF_ERROR(s->ReadMeta());
  return s;
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::Open(
    const std::string& dev, const MetadataLocation& meta, const OfflineStoreOptions& options) {
  ASSIGN_OR_RETURN(auto s, OpenPartition(dev, options));
  RETURN_IF_ERROR(s->OpenMetadata(meta, nullptr));
  return s;
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
                            StreamKeys* stream, std::vector<VerifyProblem>* problems) {
  auto malformed = [&](std::string_view key, std::string_view why) {
    problems->push_back(StoreProblem(
        "key-malformed",
        absl::StrCat("RocksDB key '", absl::CHexEscape(std::string(key)), "' ", std::string(why))));
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
  return CheckPgPointerInChunks(pg.pointer->head, pg.pointer->homed(), pg.pointer->tail,
                                *pg.chunks, g.chunk_size);
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

}  // namespace pgring
