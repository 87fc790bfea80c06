// offline_store.h — a raw, offline view of a store for the checks and the
// tool: the partition, the RocksDB, the label and the store metadata, each
// kept even when it is damaged (so the checks can go on and report
// everything), and the ring backend's per-PG keys as they are in RocksDB.
//
// Read-only unless opened writable: the device is opened O_RDONLY with a
// shared flock (several inspectors may look at a store no process is
// running), the RocksDB with OpenForReadOnly. A store a process has open
// (Store::Open holds the partition's LOCK_EX, this process or another) is
// refused with kUnavailable ("in use by another process").
#ifndef PGRING_CHECK_OFFLINE_STORE_H_
#define PGRING_CHECK_OFFLINE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "check/problem.h"
#include "device/block_device.h"
#include "format/label.h"
#include "format/metadata_keys.h"
#include "log/ring_layout.h"
#include "pgring/store.h"
#include "store/metadata_db.h"

namespace pgring {

// How OfflineStore::Open opens the store.
struct OfflineStoreOptions {
  // The partition O_RDWR with LOCK_EX and the RocksDB read-write (repair,
  // expand); otherwise O_RDONLY with LOCK_SH and the RocksDB read-only.
  bool writable = false;
  // Take the partition's flock. Only a reader that accepts a view that may
  // be behind (pgring-tool --live) goes without it.
  bool lock_partition = true;
  // How messages name the RocksDB; empty: as MetadataDb describes it ("RocksDB
  // at PATH", "the embedder's RocksDB, column family 'x'").
  std::string db_name;
  // Rewrites an error opening the partition (`what`: "partition PATH") or
  // the RocksDB (`what`: the db name) before Open returns it: the tool adds
  // its hints, Verify its codes. Null: returned as it is.
  std::function<absl::Status(const absl::Status& error, std::string_view what)>
      explain_open_error;
};

class OfflineStore {
 public:
  // Opens the partition at `dev` and the store's keys at `meta` (an own
  // RocksDB is opened here, read-only unless writable; an
  // embedder's is used as it is given, already open). Fails when a path is
  // missing or unusable (kNotFound, kInvalidArgument, ...), when the
  // partition is in use (kUnavailable), when the partition has no pgring
  // label at all (kFailedPrecondition: no magic, not a pgring partition),
  // and when the RocksDB holds no pgring store (kFailedPrecondition). A
  // damaged label or metadata value is not an error here: see label() and
  // meta().
  static absl::StatusOr<std::unique_ptr<OfflineStore>> Open(const std::string& dev,
                                                            const MetadataLocation& meta,
                                                            const OfflineStoreOptions& options);
  // Open in two steps, for a caller that opens the RocksDB itself once the
  // partition is open (the tool's ToolDb: a column family, a secondary
  // instance), or reads the partition alone: the partition, then the keys
  // at `meta`, whose handle `db_owner` keeps alive (released after this
  // store's MetadataDb). The errors are Open's.
  static absl::StatusOr<std::unique_ptr<OfflineStore>> OpenPartition(
      const std::string& dev, const OfflineStoreOptions& options);
  absl::Status OpenMetadata(const MetadataLocation& meta, std::shared_ptr<void> db_owner);
  // A read-only view of a store whose partition and RocksDB its caller has
  // open already (Store::Open, checking the store before it writes:
  // Options::verify_on_open): `dev`, named `dev_name` in messages, and
  // `db`, which must outlive the view; neither is opened again nor closed
  // here. The errors are Open's, less those of opening.
  static absl::StatusOr<std::unique_ptr<OfflineStore>> Borrow(std::shared_ptr<BlockDevice> dev,
                                                              const std::string& dev_name,
                                                              MetadataDb* db);
  ~OfflineStore();
  OfflineStore(const OfflineStore&) = delete;
  OfflineStore& operator=(const OfflineStore&) = delete;

  BlockDevice* device() const { return device_.get(); }
  MetadataDb* db() const { return db_; }
  bool writable() const { return writable_; }
  const std::string& dev_path() const { return dev_path_; }

  // The first kLabelRegionSize bytes of the partition.
  const std::string& label_region() const { return label_region_; }
  // The decoded label, or why it does not decode (kDataLoss).
  const absl::StatusOr<Label>& label() const { return label_; }
  // pgring.meta; nullopt when no RocksDB was given. After an interrupted
  // expand (IsInterruptedExpand), the grown metadata the store's open reads
  // and finishes writing.
  const std::optional<absl::StatusOr<StoreMeta>>& meta() const { return meta_; }
  // Whether pgring.meta is that of a store whose growth a crash cut short.
  bool expand_interrupted() const { return expand_interrupted_; }

  // The geometry to read the partition with: the label's, or the metadata's
  // when the label is damaged. nullopt when neither decodes.
  std::optional<Geometry> geometry() const;
  // The backend, from the same source as geometry().
  std::optional<Backend> backend() const;

  // OK when the label and metadata decode and agree (UUID and geometry) and
  // the device is as large as the label says: what Store::Open requires
  // before it reads any PG. Otherwise the error Store::Open would give.
  absl::Status CheckBinding() const;

  // Closes the device and the RocksDB (so Store::Open can take them).
  void Release();

 private:
  OfflineStore() = default;
  // options_.explain_open_error applied to `error`.
  absl::Status ExplainOpenError(const absl::Status& error, std::string_view what) const;
  // Reads and decodes the partition's label region.
  absl::Status ReadLabel(const std::string& name);
  // Reads pgring.meta from db_ (kFailedPrecondition: no pgring store).
  absl::Status ReadMeta();

  std::string dev_path_;
  OfflineStoreOptions options_;
  std::string db_name_;  // how messages name the RocksDB
  bool writable_ = false;
  std::shared_ptr<BlockDevice> device_;  // shared with the caller of Borrow
  std::shared_ptr<void> db_owner_;  // outlives owned_db_, which may wrap it
  std::unique_ptr<MetadataDb> owned_db_;  // none when borrowed
  MetadataDb* db_ = nullptr;              // owned_db_, or the caller's
  std::string label_region_;
  absl::StatusOr<Label> label_ = absl::UnknownError("not read");
  std::optional<absl::StatusOr<StoreMeta>> meta_;
  bool expand_interrupted_ = false;
};

// One ring-backend PG as its two RocksDB keys hold it. Either may be missing
// or damaged; the checks report which.
struct RingPgKeys {
  PgId id;
  bool has_pointer_key = false;
  bool has_chunks_key = false;
  absl::StatusOr<PgPointer> pointer = absl::NotFoundError("no pointer key");
  absl::StatusOr<PgChunkList> chunks = absl::NotFoundError("no chunk-list key");
};

// The log stream's two keys (docs/FORMAT.md: pgring.stream.ptr and
// pgring.stream.chunks) as RocksDB holds them: a store has both (stream
// mode) or neither. Either may be missing or damaged; the checks report
// which.
struct StreamKeys {
  bool has_pointer_key = false;
  bool has_chunks_key = false;
  absl::StatusOr<StreamPointer> pointer = absl::NotFoundError("no stream pointer key");
  absl::StatusOr<PgChunkList> chunks = absl::NotFoundError("no stream chunk-list key");

  // Whether the store has a log stream at all (either key).
  bool present() const { return has_pointer_key || has_chunks_key; }
};

// Reads every "pgring.*" key. Fills `pgs` (ordered by PG id) and `stream`,
// and reports keys it cannot parse (malformed PG keys, unknown "pgring."
// keys) as problems of kind "key-malformed". Errors: RocksDB read errors
// only.
absl::Status LoadRingPgKeys(const MetadataDb& db, std::map<PgId, RingPgKeys>* pgs,
                            StreamKeys* stream, std::vector<VerifyProblem>* problems);

// The log stream's two keys alone (for a command that then opens the store
// through the library). None without a RocksDB. Errors: RocksDB read errors.
absl::StatusOr<StreamKeys> LoadStreamKeys(const OfflineStore& store);

// Why a PG's keys cannot be used to read its log (a missing or damaged key,
// a pointer outside its chunks, a homed position before its head), or OK.
// Does not look at other PGs or at the log stream.
absl::Status CheckRingPgKeys(const RingPgKeys& pg, const Geometry& g);

// The same for the log stream's keys: both decode, the chunk list is
// aligned and the pointer lies in it. Messages start "log stream: ".
absl::Status CheckStreamKeys(const StreamKeys& stream, const Geometry& g);

}  // namespace pgring

#endif  // PGRING_CHECK_OFFLINE_STORE_H_
