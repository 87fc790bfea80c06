// offline_store.h — the tool's raw, offline view of a store: the partition,
// the RocksDB, the label and the store metadata, each kept even when it is
// damaged (so fsck can go on and report everything), and the ring backend's
// per-PG keys as they are in RocksDB.
//
// Read-only unless opened writable: the device is opened O_RDONLY with a
// shared flock (several inspectors may look at a store no process is
// running), the RocksDB with OpenForReadOnly. A store another process has
// open is refused with kUnavailable ("in use by another process").
#ifndef PGRING_TOOL_OFFLINE_STORE_H_
#define PGRING_TOOL_OFFLINE_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "format/label.h"
#include "log/ring_layout.h"
#include "format/metadata_keys.h"
#include "store/metadata_db.h"
#include "tool/problem.h"
#include "tool/tool_db.h"

namespace pgring::tool {

class OfflineStore {
 public:
  // Opens the partition at ctx.dev and, if ctx.db is not empty, the RocksDB
  // there (its column family ctx.column_family; with ctx.live, without the
  // partition's flock and as a secondary RocksDB: tool_db.h). Fails (the tool's "cannot open" errors) when a path is missing or
  // unusable, when either is in use by another process, when the partition
  // has no pgring label at all (no magic: not a pgring partition), and when
  // the RocksDB holds no pgring store. A damaged label or metadata value is
  // not an error here: see label() and meta().
  static absl::StatusOr<std::unique_ptr<OfflineStore>> Open(const ToolContext& ctx,
                                                            bool writable);
  // The same for a store whose keys are in the default column family of its
  // own RocksDB at `db` (no --column-family, no --live).
  static absl::StatusOr<std::unique_ptr<OfflineStore>> Open(const std::string& dev,
                                                            const std::string& db, bool writable);
  ~OfflineStore();
  OfflineStore(const OfflineStore&) = delete;
  OfflineStore& operator=(const OfflineStore&) = delete;

  BlockDevice* device() const { return device_.get(); }
  MetadataDb* db() const { return db_.get(); }
  bool writable() const { return writable_; }
  const std::string& dev_path() const { return dev_path_; }
  const std::string& db_path() const { return db_path_; }

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

  std::string dev_path_, db_path_;
  std::string db_name_;  // DbName: how messages name the RocksDB
  bool writable_ = false;
  std::unique_ptr<BlockDevice> device_;
  std::unique_ptr<ToolDb> tool_db_;  // outlives db_, which may wrap it
  std::unique_ptr<MetadataDb> db_;
  std::string label_region_;
  absl::StatusOr<Label> label_ = absl::UnknownError("not read");
  std::optional<absl::StatusOr<StoreMeta>> meta_;
  bool expand_interrupted_ = false;
};

// One ring-backend PG as its two RocksDB keys hold it. Either may be missing
// or damaged; fsck reports which.
struct RingPgKeys {
  PgId id;
  bool has_pointer_key = false;
  bool has_chunks_key = false;
  absl::StatusOr<PgPointer> pointer = absl::NotFoundError("no pointer key");
  absl::StatusOr<PgChunkList> chunks = absl::NotFoundError("no chunk-list key");
};

// The log stream's two keys (docs/FORMAT.md: pgring.stream.ptr and
// pgring.stream.chunks) as RocksDB holds them: a store has both (stream
// mode) or neither. Either may be missing or damaged; fsck reports which.
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
// keys) as Problems of kind "key-malformed". Errors: RocksDB read errors
// only.
absl::Status LoadRingPgKeys(const MetadataDb& db, std::map<PgId, RingPgKeys>* pgs,
                            StreamKeys* stream, std::vector<Problem>* problems);

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

// Parses "1.2a" / "1.2as0" / versions "12'345", with errors that say what
// was expected.
absl::StatusOr<PgId> ParsePgId(const std::string& text);
absl::StatusOr<Version> ParseVersion(const std::string& text);

}  // namespace pgring::tool

#endif  // PGRING_TOOL_OFFLINE_STORE_H_
