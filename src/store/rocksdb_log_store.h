// rocksdb_log_store.h — the RocksDB backend (Backend::kRocksDb): the PG log
// kept in RocksDB the way BlueStore keeps it, so the ring backend can be
// measured against it side by side. Same public interface and semantics as
// the ring backend; the partition is used for nothing but its label.
//
// Key layout (specified in docs/FORMAT.md, "RocksDB backend keys"), after
// BlueStore's pgmeta omap (one omap object per PG; Ceph's PGLog writes one
// key per entry named by eversion_t::get_key_name(), "dup_" + that name per
// dup, the info under "_info" & co., and removes trimmed entries key by key):
//
//   prefix(pg) = "pgring.log." + pgkey + "."     pgkey: 13 bytes, EncodePgKey
//
//   prefix + "%010u.%020llu" (epoch.version)      an entry; value = payload
//   prefix + "dup_%010u.%020llu"                  a dup;    value = payload
//   prefix + "_info"                              the info; value = the blob
//                                                 (rewritten by every
//                                                 transaction that sets it)
//   prefix + "_state"                             RdbPgState (below): the PG
//                                                 exists, its trim points and
//                                                 the floors of its last
//                                                 versions
//
// Within a PG the keys sort: entries ('0'-'9', in version order because the
// fields are fixed-width decimal), then "_info", "_state", then the dups
// ('d'). The store-wide key "pgring.meta" is shared with the ring backend.
//
// What one transaction writes, per PG it touches, in one WriteBatch:
//   - a Put per appended entry and per appended dup;
//   - a Delete per entry removed by a trim, a rewind or a reset, and per dup
//     removed by a dup trim or a reset (the tombstones BlueStore leaves);
//   - one Put of "_info" if the transaction sets the info (latest wins);
//   - one Put of "_state" if the PG was created or its trim points, last
//     version floors changed (trim, dup trim, effective rewind, reset); not
//     for plain appends, whose versions the keys themselves record;
//   - for PG removal, one DeleteRange over [prefix, prefix with '.'+1)
//     (BlueStore clears an omap object with rm_range_keys; see
//     docs/ROCKSDB_BACKEND.md for how Ceph turns that into deletes).
//
// In memory, as Ceph's PGLog: per PG the versions of the live entries and
// dups (a MappingTable whose 32-bit slot field holds the payload size), the
// latest info, the trim points and last versions. Trims therefore know which
// keys to delete without reading. Open rebuilds all of it by iterating every
// key under "pgring.log." (the restart cost). Values of transactions not yet
// durable are kept in a per-PG overlay until their commit, so reads reflect
// every submitted transaction, as the ring backend's do.
//
// Commit: through CommitPipeline with no device (group commit, durability
// modes, embedder batches and CommitGates, sticky failure, in order).
#ifndef PGRING_STORE_ROCKSDB_LOG_STORE_H_
#define PGRING_STORE_ROCKSDB_LOG_STORE_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "format/label.h"
#include "log/mapping_table.h"
#include "meta/meta_keys.h"
#include "pgring/store.h"
#include "store/commit_pipeline.h"
#include "store/metadata_db.h"
#include "util/sync.h"

namespace pgring {

inline constexpr std::string_view kLogKeyPrefix = "pgring.log.";
inline constexpr std::string_view kInfoKeyName = "_info";
inline constexpr std::string_view kStateKeyName = "_state";
inline constexpr std::string_view kDupKeyNamePrefix = "dup_";
inline constexpr size_t kLogKeyNameSize = 31;  // "%010u.%020llu"

// "pgring.log." + pgkey + "."
std::string RdbPgPrefix(const PgId& pg);
// "%010u.%020llu", as Ceph's eversion_t::get_key_name().
std::string LogKeyName(const Version& v);
// Parses exactly what LogKeyName prints (31 bytes, values in range).
bool ParseLogKeyName(std::string_view name, Version* v);

// The value of "_state". Encoded as format:u8 (1), eight LEB128 varints
// (entries_trimmed_to epoch, version; dups_trimmed_to epoch, version;
// last_version epoch, version; last_dup_version epoch, version), masked
// crc32c:u32 (little-endian) of the bytes before it. 13 to 65 bytes; about 25
// for a busy PG.
struct RdbPgState {
  Version entries_trimmed_to;  // entries <= this were trimmed
  Version dups_trimmed_to;     // dups <= this were trimmed
  // Appends must be greater than last_version (last_dup_version). The key
  // records a floor: the value is the greater of it and the newest key.
  Version last_version;
  Version last_dup_version;

  friend bool operator==(const RdbPgState&, const RdbPgState&) = default;
  std::string Encode() const;
  static absl::StatusOr<RdbPgState> Decode(std::string_view value);
};

class RocksDbLogStore final : public Store {
 public:
  // Opens the store on an opened device (label only) and metadata DB, and
  // loads every PG's keys.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
      const Label& label, const StoreMeta& meta, const Options& options);
  ~RocksDbLogStore() override;

  absl::Status Submit(Transaction txn, CommitCallback done) override;
  absl::Status Sync() override;
  absl::StatusOr<std::vector<PgId>> ListPgs() const override;
  absl::StatusOr<std::vector<LogEntry>> ReadEntries(const PgId& pg, const Version& from,
                                                    const Version& to) const override;
  absl::StatusOr<std::string> ReadInfo(const PgId& pg) const override;
  absl::StatusOr<std::vector<LogEntry>> ReadDups(const PgId& pg) const override;
  // chunks, ring_bytes_used: 0 (no ring). bytes_written: value bytes put to
  // RocksDB for the PG since open (payloads, info and _state values);
  // payload_bytes_written: the caller's payload bytes among them.
  absl::StatusOr<PgStats> GetPgStats(const PgId& pg) const override;
  // total_chunks, free_chunks, chunk_size: 0 (the partition holds only the
  // label). record_bytes_appended: value bytes put to RocksDB since open;
  // mapping_table_bytes: the in-memory version indexes.
  StoreStats GetStoreStats() const override;
  Backend backend() const override { return Backend::kRocksDb; }
  absl::Status Close() override;

  // The metadata DB (for tests and statistics).
  MetadataDb* metadata_db() const { return db_.get(); }

 private:
  struct Pg;
  struct Touch;
  struct KeyOp;
  RocksDbLogStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
                  const Options& options);
  absl::Status Load();
  absl::Status LoadPg(const PgId& id, std::string_view suffix, std::string_view value, Pg* pg);
  absl::Status FinishLoadPg(Pg* pg, bool have_state);
  absl::Status CheckWritable() const;
  absl::StatusOr<std::shared_ptr<Pg>> FindPg(const PgId& id) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status ApplyOp(const Transaction::Op& op, Touch* t, uint64_t* live,
                       std::vector<KeyOp>* key_ops) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the values of slots [i, j) of `table` (entries or dups).
  absl::StatusOr<std::vector<LogEntry>> ReadSlots(const Pg& pg, bool dups, size_t i,
                                                  size_t j) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::shared_ptr<LogSink> log_;
  std::shared_ptr<BlockDevice> device_;
  std::unique_ptr<MetadataDb> db_;

  mutable Mutex mu_;  // the staging lock; reads take it shared
  absl::flat_hash_map<PgId, std::shared_ptr<Pg>> pgs_ ABSL_GUARDED_BY(mu_);
  uint64_t live_items_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;

  // Guards every Pg's overlay of values not yet durable (Pg::pending_*).
  mutable Mutex pending_mu_ ABSL_ACQUIRED_AFTER(mu_);

  std::unique_ptr<CommitPipeline> pipeline_;
  std::atomic<uint64_t> value_bytes_{0};
  std::atomic<uint64_t> payload_bytes_{0};
};

}  // namespace pgring

#endif  // PGRING_STORE_ROCKSDB_LOG_STORE_H_
