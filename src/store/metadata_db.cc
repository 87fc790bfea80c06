#include "store/metadata_db.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"

namespace pgring {

absl::Status FromRocks(const void* p, std::string_view context) {
  const auto& s = *static_cast<const rocksdb::Status*>(p);
  if (s.ok()) return absl::OkStatus();
  std::string msg = std::string(context) + ": " + s.ToString();
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(msg);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) return absl::UnavailableError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
    return absl::UnavailableError(msg);  // LOCK held by another process
  }
  return absl::InternalError(msg);
}

absl::StatusOr<std::unique_ptr<MetadataDb>> MetadataDb::Open(const MetadataLocation& meta,
                                                             bool create, bool read_only,
                                                             rocksdb::Env* env) {
  std::unique_ptr<MetadataDb> m(new MetadataDb);
  if (meta.db != nullptr) {
    m->db_ = meta.db;
    m->cf_ = meta.column_family != nullptr ? meta.column_family : meta.db->DefaultColumnFamily();
    m->description_ = absl::StrCat("the embedder's RocksDB, column family '",
                                   m->cf_->GetName(), "'");
    return m;
  }
  if (meta.db_path.empty()) {
    return absl::InvalidArgumentError("no metadata location: give a RocksDB path or a DB");
  }
  rocksdb::Options o;
  o.create_if_missing = create;
  // A torn WAL tail is the end of the log, never a partial write batch.
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  o.max_log_file_size = 64 << 20;
  if (env != nullptr) o.env = env;
  if (!create) {
    // Look before opening: rocksdb::DB::Open creates the directory, LOCK and
    // LOG before it finds CURRENT missing, so a refused open (a mistyped
    // path) would leave an empty DB directory behind.
    rocksdb::Status exists = o.env->FileExists(meta.db_path + "/CURRENT");
    if (exists.IsNotFound()) return absl::NotFoundError(absl::StrCat("no RocksDB at ", meta.db_path));
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = read_only ? rocksdb::DB::OpenForReadOnly(o, meta.db_path, &raw)
                                : rocksdb::DB::Open(o, meta.db_path, &raw);
  if (!s.ok()) {
    if (!create && s.IsInvalidArgument() && s.ToString().find("does not exist") != std::string::npos) {
      return absl::NotFoundError(absl::StrCat("no RocksDB at ", meta.db_path));
    }
    return FromRocks(&s, absl::StrCat("opening RocksDB at ", meta.db_path));
  }
  m->owned_.reset(raw);
  m->db_ = raw;
  m->cf_ = raw->DefaultColumnFamily();
  m->description_ = absl::StrCat("RocksDB at ", meta.db_path);
  return m;
}

MetadataDb::~MetadataDb() {
  if (owned_) {
    owned_->Close().PermitUncheckedError();
    owned_.reset();
  }
}

absl::StatusOr<std::optional<std::string>> MetadataDb::Get(std::string_view key) const {
  std::string v;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf_, rocksdb::Slice(key.data(), key.size()), &v);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return FromRocks(&s, description_ + ": reading " + std::string(key));
  return std::optional<std::string>(std::move(v));
}

absl::Status MetadataDb::Scan(
    std::string_view prefix,
    const std::function<absl::Status(std::string_view, std::string_view)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_));
  rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
    absl::Status s = fn(std::string_view(it->key().data(), it->key().size()),
                        std::string_view(it->value().data(), it->value().size()));
    if (!s.ok()) return s;
  }
  rocksdb::Status s = it->status();
  return FromRocks(&s, absl::StrCat(description_, ": scanning"));
}

absl::Status MetadataDb::WriteSync(rocksdb::WriteBatch* batch) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status s = db_->Write(wo, batch);
  return FromRocks(&s, absl::StrCat(description_, ": write"));
}

}  // namespace pgring
