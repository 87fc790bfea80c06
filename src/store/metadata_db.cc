#include "store/metadata_db.h"

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pgring {
namespace {

// Why each of Ceph's bluestore_rocksdb_options (the default of
// Options::rocksdb_options, pgring/options.h; src/common/options/
// global.yaml.in, Reef v18.2; ceph/ceph PR #51821; docs/ROCKSDB_BACKEND.md
// has the table). pgring's own RocksDB is configured as BlueStore configures
// the RocksDB that holds the PG log, for both backends, so the two are
// compared with RocksDB at its best for this data:
//   compression=kNoCompression        Reef's default. Squid (v19) switched to
//                                     kLZ4Compression to save metadata space;
//                                     kept off here: compression is measured
//                                     before it is enabled (docs/decisions/
//                                     2026-11-26-compressing-log-records.md),
//                                     and both backends get the same setting.
//   max_write_buffer_number=64        up to 64 memtables queue before writes
//                                     stall on a slow flush
//   min_write_buffer_number_to_merge=6  (32, below) a flush merges several
//                                     memtables, so a key put and deleted
//                                     within them never reaches an SST
//   compaction_style=kCompactionStyleLevel  leveled compaction
//   write_buffer_size=16777216        16 MiB memtables: short sorted inserts
//                                     in the commit thread (Ceph measured
//                                     lower tail latency than 256 MiB ones)
//   max_background_jobs=4             flushes and compactions in parallel
//   level0_file_num_compaction_trigger=8  L0 may hold 8 files before L0->L1
//                                     compaction: less write amplification
//   max_bytes_for_level_base=1073741824, max_bytes_for_level_multiplier=8
//                                     a 1 GiB L1, each level 8x the last
//   compaction_readahead_size=2MB     sequential compaction reads
//   max_total_wal_size=1073741824     the WAL may reach 1 GiB before RocksDB
//                                     forces a flush to trim it
//   writable_file_max_buffer_size=0   no user-space write buffer in front of
//                                     the WAL/SST files (BlueFS buffers)
//   min_write_buffer_number_to_merge=32  BlueStore keeps the PG log in the
//                                     pgmeta omap column family "P", which
//                                     bluestore_rocksdb_cfs configures so:
//                                     32 x 16 MiB of memtables are merged at
//                                     flush, so most log entries are deleted
//                                     by their trim before they are ever
//                                     flushed. pgring's keys (either
//                                     backend's) play that family's part.

// Applies `text` (RocksDB's "name=value" pairs, separated by ',' as Ceph
// writes them or ';' as RocksDB does) to *o; later pairs win.
absl::Status ApplyRocksDbOptions(std::string_view text, rocksdb::Options* o) {
  rocksdb::ConfigOptions config;
  config.ignore_unknown_options = false;
  config.input_strings_escaped = false;
  const std::string given(text);
  const std::string opts = absl::StrReplaceAll(given, {{",", ";"}});
  rocksdb::Options out;
  rocksdb::Status s = rocksdb::GetOptionsFromString(config, *o, opts, &out);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rocksdb_options \"", given, "\": RocksDB refuses it: ", s.ToString()));
  }
  *o = out;
  return absl::OkStatus();
}

}  // namespace

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
                                                             rocksdb::Env* env,
                                                             std::string_view rocksdb_options) {
  std::unique_ptr<MetadataDb> m(new MetadataDb);
  if (meta.db != nullptr) {
    m->db_ = meta.db;
    m->cf_ = meta.column_family != nullptr ? meta.column_family : meta.db->DefaultColumnFamily();
    m->description_ = absl::StrCat("the embedder's RocksDB, column family '",
                                   m->cf_->GetName(), "'");
    m->statistics_ = meta.db->GetDBOptions().statistics;
    return m;
  }
  if (meta.db_path.empty()) {
    return absl::InvalidArgumentError("no metadata location: give a RocksDB path or a DB");
  }
  rocksdb::Options o;
  if (absl::Status s = ApplyRocksDbOptions(rocksdb_options, &o); !s.ok()) return s;
  o.statistics = rocksdb::CreateDBStatistics();
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
  m->statistics_ = o.statistics;
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
