#include "store/rocksdb_log_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "store/group_batch.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status_macros.h"

namespace pgring {

// ---------------------------------------------------------------------------
// Keys and the _state value

std::string RdbPgPrefix(const PgId& pg) {
  std::string p(kLogKeyPrefix);
  p += EncodePgKey(pg);
  p.push_back('.');
  return p;
}

std::string LogKeyName(const Version& v) {
  char buf[kLogKeyNameSize + 1];
  std::snprintf(buf, sizeof(buf), "%010u.%020llu", v.epoch,
                static_cast<unsigned long long>(v.version));
  return std::string(buf, kLogKeyNameSize);
}

bool ParseLogKeyName(std::string_view name, Version* v) {
  if (name.size() != kLogKeyNameSize || name[10] != '.') return false;
  uint64_t epoch = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    epoch = epoch * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (epoch > UINT32_MAX) return false;
  uint64_t version = 0;
  for (size_t i = 11; i < kLogKeyNameSize; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    uint64_t d = static_cast<uint64_t>(name[i] - '0');
    if (version > (UINT64_MAX - d) / 10) return false;
    version = version * 10 + d;
  }
  v->epoch = static_cast<uint32_t>(epoch);
  v->version = version;
  return true;
}

namespace {

constexpr uint8_t kStateFormat = 1;

void PutVersionVarint(std::string* d, const Version& v) {
  PutVarint64(d, v.epoch);
  PutVarint64(d, v.version);
}

bool GetVersionVarint(std::string_view* in, Version* v) {
  uint64_t e = 0;
  if (!GetVarint64(in, &e) || e > UINT32_MAX || !GetVarint64(in, &v->version)) return false;
  v->epoch = static_cast<uint32_t>(e);
  return true;
}

// Key bytes for messages (pgkeys are binary).
std::string Escaped(std::string_view s) {
  return absl::CHexEscape(absl::string_view(s.data(), s.size()));
}

// The DeleteRange end for a PG: its prefix with the final '.' made '/'.
std::string PrefixEnd(const std::string& prefix) {
  std::string e = prefix;
  e.back() = static_cast<char>(e.back() + 1);
  return e;
}

absl::Status CheckPayload(const std::string& pg_name, const Limits& limits, size_t size,
                          const char* what) {
  if (size > limits.max_payload_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PG %s: %s of %u bytes is larger than the %u-byte limit", pg_name, what, size,
        limits.max_payload_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

std::string RdbPgState::Encode() const {
  std::string v(1, static_cast<char>(kStateFormat));
  PutVersionVarint(&v, entries_trimmed_to);
  PutVersionVarint(&v, dups_trimmed_to);
  PutVersionVarint(&v, last_version);
  PutVersionVarint(&v, last_dup_version);
  PutFixed32(&v, crc32c::Mask(crc32c::Value(v.data(), v.size())));
  return v;
}

absl::StatusOr<RdbPgState> RdbPgState::Decode(std::string_view value) {
  if (value.size() < 5) {
    return absl::DataLossError(absl::StrFormat("_state value is truncated (%u bytes)", value.size()));
  }
  uint32_t stored = crc32c::Unmask(DecodeFixed32(value.data() + value.size() - 4));
  if (stored != crc32c::Value(value.data(), value.size() - 4)) {
    return absl::DataLossError("_state value is damaged: CRC mismatch");
  }
  if (static_cast<uint8_t>(value[0]) != kStateFormat) {
    return absl::DataLossError(absl::StrFormat(
        "_state value has unknown format %u", static_cast<unsigned>(static_cast<uint8_t>(value[0]))));
  }
  std::string_view in = value.substr(1, value.size() - 5);
  RdbPgState s;
  if (!(GetVersionVarint(&in, &s.entries_trimmed_to) && GetVersionVarint(&in, &s.dups_trimmed_to) &&
        GetVersionVarint(&in, &s.last_version) && GetVersionVarint(&in, &s.last_dup_version) &&
        in.empty())) {
    return absl::DataLossError("_state value has the wrong length");
  }
  return s;
}

// ---------------------------------------------------------------------------
// In-memory state

// One PG, as Ceph's in-memory PGLog keeps it (versions only; the payloads
// stay in RocksDB).
struct RocksDbLogStore::Pg {
  explicit Pg(const PgId& id_in)
      : id(id_in), name(id_in.ToString()), prefix(RdbPgPrefix(id_in)) {}

  const PgId id;
  const std::string name;
  const std::string prefix;

  // --- Staged state (every submitted transaction applied); guarded by the
  // store's staging lock.
  MappingTable entries;  // live entry versions; Slot::pos_low = payload size
  MappingTable dups;     // live dup versions; Slot::pos_low = payload size
  uint64_t entry_bytes = 0;
  uint64_t dup_bytes = 0;
  RdbPgState state;      // trim points and the exact last versions
  bool has_info = false;
  std::string info;
  absl::Status damage;   // non-OK: opened damaged (kMarkDamaged)
  uint64_t value_bytes_written = 0;
  uint64_t payload_bytes_written = 0;

  // --- Values put by transactions not yet durable, newest put per version,
  // with the sequence of the transaction that put it. Guarded by the
  // store's pending_mu_. A read takes these before it opens its RocksDB
  // iterator: a value leaves the overlay only once its batch is in RocksDB.
  struct Pending {
    uint64_t seq;
    std::string value;
  };
  std::map<Version, Pending> pending_entries;
  std::map<Version, Pending> pending_dups;
};

// What one transaction does to one PG object, and how to undo it.
struct RocksDbLogStore::Touch {
  enum Kind : uint8_t { kEntryAppended, kDupAppended, kEntryPoppedFront, kEntryPoppedBack,
                        kDupPoppedFront, kDupPoppedBack };

  explicit Touch(std::shared_ptr<Pg> p)
      : pg(std::move(p)),
        old_state(pg->state),
        old_entry_bytes(pg->entry_bytes),
        old_dup_bytes(pg->dup_bytes) {}

  void Restore() {
    for (auto it = journal.rbegin(); it != journal.rend(); ++it) {
      switch (it->first) {
        case kEntryAppended: pg->entries.PopBack(); break;
        case kDupAppended: pg->dups.PopBack(); break;
        case kEntryPoppedFront: pg->entries.PushFront(it->second); break;
        case kEntryPoppedBack: pg->entries.PushBack(it->second); break;
        case kDupPoppedFront: pg->dups.PushFront(it->second); break;
        case kDupPoppedBack: pg->dups.PushBack(it->second); break;
      }
    }
    journal.clear();
    pg->state = old_state;
    pg->entry_bytes = old_entry_bytes;
    pg->dup_bytes = old_dup_bytes;
    if (info_saved) {
      pg->has_info = old_has_info;
      pg->info = std::move(old_info);
    }
  }

  std::shared_ptr<Pg> pg;
  RdbPgState old_state;
  uint64_t old_entry_bytes;
  uint64_t old_dup_bytes;
  bool info_saved = false;  // the info is saved only if the txn sets it
  bool old_has_info = false;
  std::string old_info;
  std::vector<std::pair<Kind, MappingTable::Slot>> journal;

  bool created = false;
  bool removed = false;
  bool info_set = false;
  bool state_dirty = false;  // trim points or last-version floors changed
  uint64_t payload = 0;
};

// One RocksDB operation of a transaction, in op order.
struct RocksDbLogStore::KeyOp {
  enum Kind : uint8_t { kPutEntry, kPutDup, kDeleteEntry, kDeleteDup, kRemovePg };
  Kind kind;
  Touch* touch;
  Version version;
  const std::string* value = nullptr;  // the op's payload (puts)
};

// ---------------------------------------------------------------------------
// Open

RocksDbLogStore::RocksDbLogStore(std::shared_ptr<BlockDevice> device,
                                 std::unique_ptr<MetadataDb> db, const Options& options)
    : options_(options),
      log_(options.log_sink ? options.log_sink : StderrLogSink()),
      device_(std::move(device)),
      db_(std::move(db)) {}

RocksDbLogStore::~RocksDbLogStore() { Close().IgnoreError(); }

absl::StatusOr<std::unique_ptr<Store>> RocksDbLogStore::Open(
    std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db, const Label& label,
    const StoreMeta& meta, const Options& options) {
  (void)label;  // checked against `meta` by the caller; nothing else is needed
  (void)meta;
  if (options.gated_writes_share_flush && !options.read_only) {
    // Its commit is the synced RocksDB write alone: the embedder's writes
    // must be durable before the write that points at them, so there is no
    // earlier flush for them to share.
    return absl::InvalidArgumentError(
        "Options::gated_writes_share_flush needs the ring backend: the RocksDB backend has no "
        "partition flush before its commit to share with the embedder's writes");
  }
  if (options.metadata_sync_flushes_partition && !options.read_only) {
    // Nothing of its log is on the partition: there is no partition flush
    // for its RocksDB sync to stand in for.
    return absl::InvalidArgumentError(
        "Options::metadata_sync_flushes_partition needs the ring backend: the RocksDB backend "
        "writes no records to the partition, so it has no partition flush to leave out");
  }
  std::unique_ptr<RocksDbLogStore> s(new RocksDbLogStore(std::move(device), std::move(db), options));
  RETURN_IF_ERROR(s->Load());
  s->pipeline_ = std::make_unique<CommitPipeline>(s->db_->db(), nullptr, options, s->log_.get());
  return std::unique_ptr<Store>(std::move(s));
}

absl::Status RocksDbLogStore::LoadPg(const PgId& id, std::string_view suffix,
                                     std::string_view value, Pg* pg) {
  (void)id;
  Version v;
  auto size32 = [](size_t n) { return static_cast<uint32_t>(std::min<size_t>(n, UINT32_MAX)); };
  if (!suffix.empty() && suffix[0] >= '0' && suffix[0] <= '9') {
    if (!ParseLogKeyName(suffix, &v)) {
      return absl::DataLossError(absl::StrCat("PG ", pg->name, ": malformed entry key '",
                                              Escaped(suffix), "'"));
    }
    pg->entries.Append(v, size32(value.size()));  // keys come in version order
    pg->entry_bytes += value.size();
    return absl::OkStatus();
  }
  if (suffix.substr(0, kDupKeyNamePrefix.size()) == kDupKeyNamePrefix) {
    if (!ParseLogKeyName(suffix.substr(kDupKeyNamePrefix.size()), &v)) {
      return absl::DataLossError(absl::StrCat("PG ", pg->name, ": malformed dup key '",
                                              Escaped(suffix), "'"));
    }
    pg->dups.Append(v, size32(value.size()));
    pg->dup_bytes += value.size();
    return absl::OkStatus();
  }
  if (suffix == kInfoKeyName) {
    pg->has_info = true;
    pg->info.assign(value.data(), value.size());
    return absl::OkStatus();
  }
  if (suffix == kStateKeyName) {
    auto s = RdbPgState::Decode(value);
    if (!s.ok()) return absl::DataLossError(absl::StrCat("PG ", pg->name, ": ", s.status().message()));
    pg->state = *s;
    return absl::OkStatus();
  }
  return absl::DataLossError(absl::StrCat("PG ", pg->name, ": unknown key '",
                                          Escaped(suffix), "'"));
}

absl::Status RocksDbLogStore::FinishLoadPg(Pg* pg, bool have_state) {
  if (!have_state) {
    return absl::DataLossError(absl::StrCat("PG ", pg->name, ": has keys but no _state key"));
  }
  RdbPgState& s = pg->state;
  if (!pg->entries.empty() && pg->entries.front().v() <= s.entries_trimmed_to) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: entry %s survived the trim to %s", pg->name, pg->entries.front().v().ToString(),
        s.entries_trimmed_to.ToString()));
  }
  if (!pg->dups.empty() && pg->dups.front().v() <= s.dups_trimmed_to) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: dup %s survived the trim to %s", pg->name, pg->dups.front().v().ToString(),
        s.dups_trimmed_to.ToString()));
  }
  // The key holds floors; the newest key may be past them (appends do not
  // rewrite _state).
  s.last_version = std::max({s.last_version, s.entries_trimmed_to,
                             pg->entries.empty() ? Version::Min() : pg->entries.back().v()});
  s.last_dup_version = std::max({s.last_dup_version, s.dups_trimmed_to,
                                 pg->dups.empty() ? Version::Min() : pg->dups.back().v()});
  return absl::OkStatus();
}

absl::Status RocksDbLogStore::Load() {
  MutexLock l(&mu_);
  std::shared_ptr<Pg> cur;
  bool have_state = false;
  absl::Status cur_status;
  // Ends the PG being loaded: checks it, or marks it damaged.
  auto finish = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    if (!cur) return absl::OkStatus();
    if (cur_status.ok()) cur_status = FinishLoadPg(cur.get(), have_state);
    if (!cur_status.ok()) {
      if (options_.recovery_policy == RecoveryPolicy::kRefuse ||
          cur_status.code() != absl::StatusCode::kDataLoss) {
        return cur_status;
      }
      log_->Log(LogLevel::kError, absl::StrCat("opening with PG ", cur->name,
                                               " marked damaged: ", cur_status.message()));
      cur->damage = cur_status;
      cur->entries.Clear();
      cur->dups.Clear();
      cur->entry_bytes = cur->dup_bytes = 0;
      cur->has_info = false;
      cur->info.clear();
    }
    live_items_ += cur->entries.size() + cur->dups.size();
    pgs_.emplace(cur->id, std::move(cur));
    cur.reset();
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(db_->Scan(kLogKeyPrefix, [&](std::string_view k, std::string_view v)
                                               ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::string_view rest = k.substr(kLogKeyPrefix.size());
    PgId id;
    if (rest.size() < kPgKeySize + 1 || rest[kPgKeySize] != '.' ||
        !DecodePgKey(rest.substr(0, kPgKeySize), &id)) {
      return absl::DataLossError(absl::StrCat(db_->description(), ": malformed PG log key '",
                                              Escaped(k), "'"));
    }
    if (!cur || !(cur->id == id)) {
      RETURN_IF_ERROR(finish());
      cur = std::make_shared<Pg>(id);
      have_state = false;
      cur_status = absl::OkStatus();
    }
    if (!cur_status.ok()) return absl::OkStatus();  // already damaged: skip its keys
    std::string_view suffix = rest.substr(kPgKeySize + 1);
    have_state |= suffix == kStateKeyName;
    cur_status = LoadPg(id, suffix, v, cur.get());
    return absl::OkStatus();
  }));
  return finish();
}

// ---------------------------------------------------------------------------
// Submit

absl::Status RocksDbLogStore::CheckWritable() const {
  if (options_.read_only) return absl::FailedPreconditionError("store is open read-only");
  absl::Status f = pipeline_->failure();
  if (!f.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("store failed earlier and must be reopened: ", f.ToString()));
  }
  return absl::OkStatus();
}

// The same rules, codes and messages as the ring backend's ApplyOp
// (src/log/pg_log.cc).
absl::Status RocksDbLogStore::ApplyOp(const Transaction::Op& op, Touch* t, uint64_t* live,
                                      std::vector<KeyOp>* key_ops) {
  Pg* pg = t->pg.get();
  const Limits& limits = options_.limits;
  using T = Transaction::OpType;
  switch (op.type) {
    case T::kAppendEntry: {
      RETURN_IF_ERROR(CheckPayload(pg->name, limits, op.payload.size(), "entry"));
      if (op.version <= pg->state.last_version) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PG %s: entry version %s is not after the last version %s", pg->name,
            op.version.ToString(), pg->state.last_version.ToString()));
      }
      if (pg->entries.size() >= limits.max_entries_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: %u entries, the per-PG limit; trim the log", pg->name, pg->entries.size()));
      }
      if (*live >= limits.max_total_entries) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "store holds %u entries and dups, the store-wide limit; trim logs", *live));
      }
      pg->entries.Append(op.version, static_cast<uint32_t>(op.payload.size()));
      t->journal.push_back({Touch::kEntryAppended, {}});
      pg->entry_bytes += op.payload.size();
      pg->state.last_version = op.version;
      ++*live;
      key_ops->push_back({KeyOp::kPutEntry, t, op.version, &op.payload});
      return absl::OkStatus();
    }
    case T::kAppendDup: {
      RETURN_IF_ERROR(CheckPayload(pg->name, limits, op.payload.size(), "dup"));
      if (op.version <= pg->state.last_dup_version) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PG %s: dup version %s is not after the last dup version %s", pg->name,
            op.version.ToString(), pg->state.last_dup_version.ToString()));
      }
      if (pg->dups.size() >= limits.max_dups_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: %u dups, the per-PG limit; trim the dups", pg->name, pg->dups.size()));
      }
      if (*live >= limits.max_total_entries) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "store holds %u entries and dups, the store-wide limit; trim logs", *live));
      }
      pg->dups.Append(op.version, static_cast<uint32_t>(op.payload.size()));
      t->journal.push_back({Touch::kDupAppended, {}});
      pg->dup_bytes += op.payload.size();
      pg->state.last_dup_version = op.version;
      ++*live;
      key_ops->push_back({KeyOp::kPutDup, t, op.version, &op.payload});
      return absl::OkStatus();
    }
    case T::kSetInfo: {
      RETURN_IF_ERROR(CheckPayload(pg->name, limits, op.payload.size(), "info"));
      if (!t->info_saved) {
        t->info_saved = true;
        t->old_has_info = pg->has_info;
        t->old_info = std::move(pg->info);
      }
      pg->has_info = true;
      pg->info = op.payload;
      t->info_set = true;  // one Put of _info at the end: latest wins
      return absl::OkStatus();
    }
    case T::kTrim: {
      if (op.version > pg->state.last_version) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: trim to %s is past the newest entry %s", pg->name, op.version.ToString(),
            pg->state.last_version.ToString()));
      }
      if (op.version <= pg->state.entries_trimmed_to) return absl::OkStatus();
      while (!pg->entries.empty() && pg->entries.front().v() <= op.version) {
        MappingTable::Slot s = pg->entries.PopFront();
        t->journal.push_back({Touch::kEntryPoppedFront, s});
        pg->entry_bytes -= s.pos_low;
        --*live;
        key_ops->push_back({KeyOp::kDeleteEntry, t, s.v()});
      }
      pg->state.entries_trimmed_to = op.version;
      t->state_dirty = true;
      return absl::OkStatus();
    }
    case T::kTrimDups: {
      if (op.version > pg->state.last_dup_version) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: trim of dups to %s is past the newest dup %s", pg->name,
            op.version.ToString(), pg->state.last_dup_version.ToString()));
      }
      if (op.version <= pg->state.dups_trimmed_to) return absl::OkStatus();
      while (!pg->dups.empty() && pg->dups.front().v() <= op.version) {
        MappingTable::Slot s = pg->dups.PopFront();
        t->journal.push_back({Touch::kDupPoppedFront, s});
        pg->dup_bytes -= s.pos_low;
        --*live;
        key_ops->push_back({KeyOp::kDeleteDup, t, s.v()});
      }
      pg->state.dups_trimmed_to = op.version;
      t->state_dirty = true;
      return absl::OkStatus();
    }
    case T::kRewind: {
      if (op.version < pg->state.entries_trimmed_to) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: rewind to %s is before the log's tail (trimmed to %s)", pg->name,
            op.version.ToString(), pg->state.entries_trimmed_to.ToString()));
      }
      if (op.version >= pg->state.last_version) return absl::OkStatus();
      while (!pg->entries.empty() && pg->entries.back().v() > op.version) {
        MappingTable::Slot s = pg->entries.PopBack();
        t->journal.push_back({Touch::kEntryPoppedBack, s});
        pg->entry_bytes -= s.pos_low;
        --*live;
        key_ops->push_back({KeyOp::kDeleteEntry, t, s.v()});
      }
      pg->state.last_version = op.version;
      t->state_dirty = true;
      return absl::OkStatus();
    }
    case T::kResetLog: {
      while (!pg->entries.empty()) {
        MappingTable::Slot s = pg->entries.PopBack();
        t->journal.push_back({Touch::kEntryPoppedBack, s});
        --*live;
        key_ops->push_back({KeyOp::kDeleteEntry, t, s.v()});
      }
      while (!pg->dups.empty()) {
        MappingTable::Slot s = pg->dups.PopBack();
        t->journal.push_back({Touch::kDupPoppedBack, s});
        --*live;
        key_ops->push_back({KeyOp::kDeleteDup, t, s.v()});
      }
      pg->entry_bytes = 0;
      pg->dup_bytes = 0;
      pg->state = RdbPgState{};
      t->state_dirty = true;
      return absl::OkStatus();
    }
    case T::kCreatePg:
    case T::kRemovePg:
      break;
  }
  return absl::InternalError("ApplyOp: PG creation and removal belong to the store");
}

absl::Status RocksDbLogStore::Submit(Transaction txn, CommitCallback done) {
  RETURN_IF_ERROR(CheckWritable());
  auto ctxn = std::make_shared<CommitPipeline::Txn>();
  ctxn->done = std::move(done);
  {
    MutexLock l(&mu_);
    if (closed_) return absl::FailedPreconditionError("store is closed");
    std::vector<std::unique_ptr<Touch>> touches;
    absl::flat_hash_map<Pg*, Touch*> touch_of;
    // (added?, id, pg) in the order the map changed, to undo in reverse.
    std::vector<std::tuple<bool, PgId, std::shared_ptr<Pg>>> map_journal;
    std::vector<KeyOp> key_ops;
    uint64_t live = live_items_;
    auto touch = [&](const std::shared_ptr<Pg>& pg) {
      auto it = touch_of.find(pg.get());
      if (it != touch_of.end()) return it->second;
      touches.push_back(std::make_unique<Touch>(pg));
      touch_of[pg.get()] = touches.back().get();
      return touches.back().get();
    };
    absl::Status status;
    for (const Transaction::Op& op : txn.ops()) {
      auto it = pgs_.find(op.pg);
      if (op.type == Transaction::OpType::kCreatePg) {
        if (it != pgs_.end()) {
          status = absl::AlreadyExistsError(absl::StrCat("PG ", op.pg.ToString(), " already exists"));
          break;
        }
        if (pgs_.size() >= options_.limits.max_pgs) {
          status = absl::ResourceExhaustedError(absl::StrFormat(
              "store holds %u PGs, the limit", pgs_.size()));
          break;
        }
        auto pg = std::make_shared<Pg>(op.pg);
        pgs_.emplace(op.pg, pg);
        map_journal.emplace_back(true, op.pg, pg);
        touch(pg)->created = true;
        continue;
      }
      if (it == pgs_.end()) {
        status = absl::NotFoundError(absl::StrCat("PG ", op.pg.ToString(), " does not exist"));
        break;
      }
      std::shared_ptr<Pg> pg = it->second;
      Touch* t = touch(pg);
      if (op.type == Transaction::OpType::kRemovePg) {
        live -= pg->entries.size() + pg->dups.size();
        t->removed = true;
        key_ops.push_back({KeyOp::kRemovePg, t, {}});
        map_journal.emplace_back(false, op.pg, pg);
        pgs_.erase(it);
        continue;
      }
      if (!pg->damage.ok()) {
        status = absl::DataLossError(absl::StrCat(pg->damage.message(),
                                                  " (the PG is damaged; it can only be removed)"));
        break;
      }
      status = ApplyOp(op, t, &live, &key_ops);
      if (!status.ok()) break;
      t->payload += op.payload.size();
    }
    if (!status.ok()) {
      for (auto it = touches.rbegin(); it != touches.rend(); ++it) (*it)->Restore();
      for (auto it = map_journal.rbegin(); it != map_journal.rend(); ++it) {
        auto& [added, id, pg] = *it;
        if (added) {
          pgs_.erase(id);
        } else {
          pgs_[id] = pg;
        }
      }
      return status;
    }
    // Accepted: nothing fails from here. The batch carries the embedder's
    // keys first, then this transaction's, in op order.
    const uint64_t seq = next_seq_++;
    ctxn->batch = txn.ReleaseBatch();
    if (!ctxn->batch) ctxn->batch = std::make_unique<rocksdb::WriteBatch>();
    rocksdb::WriteBatch* wb = ctxn->batch.get();
    rocksdb::ColumnFamilyHandle* cf = db_->cf();
    // What leaves the overlay once this transaction is durable.
    std::vector<std::tuple<std::shared_ptr<Pg>, bool, Version>> puts;
    uint64_t value_bytes = 0;
    std::string key;
    {
      MutexLock pl(&pending_mu_);
      for (const KeyOp& k : key_ops) {
        Pg* pg = k.touch->pg.get();
        key = pg->prefix;
        switch (k.kind) {
          case KeyOp::kPutEntry:
          case KeyOp::kPutDup: {
            const bool dup = k.kind == KeyOp::kPutDup;
            if (dup) key += kDupKeyNamePrefix;
            key += LogKeyName(k.version);
            wb->Put(cf, key, *k.value);
            auto& overlay = dup ? pg->pending_dups : pg->pending_entries;
            overlay[k.version] = Pg::Pending{seq, *k.value};
            puts.emplace_back(k.touch->pg, dup, k.version);
            value_bytes += k.value->size();
            pg->value_bytes_written += k.value->size();
            break;
          }
          case KeyOp::kDeleteEntry:
          case KeyOp::kDeleteDup:
            if (k.kind == KeyOp::kDeleteDup) key += kDupKeyNamePrefix;
            key += LogKeyName(k.version);
            wb->Delete(cf, key);
            break;
          case KeyOp::kRemovePg:
            wb->DeleteRange(cf, pg->prefix, PrefixEnd(pg->prefix));
            break;
        }
      }
    }
    // A PG's info and state are whole values the store alone writes: a
    // commit group keeps only the last write of each (group_batch.h). The
    // log entries are keys of their own, each written once.
    StoreKeyWriter store_keys(wb, cf, &ctxn->store_keys);
    for (const auto& t : touches) {
      Pg* pg = t->pg.get();
      if (t->removed) continue;
      if (t->info_set) {
        store_keys.Put(pg->prefix + std::string(kInfoKeyName), pg->info);
        value_bytes += pg->info.size();
        pg->value_bytes_written += pg->info.size();
      }
      if (t->created || t->state_dirty) {
        std::string v = pg->state.Encode();
        store_keys.Put(pg->prefix + std::string(kStateKeyName), v);
        value_bytes += v.size();
        pg->value_bytes_written += v.size();
      }
      pg->payload_bytes_written += t->payload;
      payload_bytes_.fetch_add(t->payload);
    }
    value_bytes_.fetch_add(value_bytes);
    live_items_ = live;
    ctxn->needs_flush = false;
    ctxn->pending_ios.store(static_cast<int>(txn.gates().size()) + 1);
    if (!puts.empty()) {
      ctxn->on_durable = [this, seq, puts = std::move(puts)]() {
        MutexLock pl(&pending_mu_);
        for (const auto& [pg, dup, v] : puts) {
          auto& overlay = dup ? pg->pending_dups : pg->pending_entries;
          auto it = overlay.find(v);
          if (it != overlay.end() && it->second.seq == seq) overlay.erase(it);
        }
      };
    }
    pipeline_->Enqueue(ctxn);
  }
  // The embedder's writes are the only I/O the commit waits for.
  for (const auto& gate : txn.gates()) {
    gate->OnOpen([this, ctxn](absl::Status s) {
      pipeline_->IoDone(ctxn.get(), s.ok() ? s
                                           : absl::Status(s.code(), absl::StrCat(
                                                 "embedder's write: ", s.message())));
    });
  }
  pipeline_->IoDone(ctxn.get(), absl::OkStatus());  // the submitter's guard
  return absl::OkStatus();
}

absl::Status RocksDbLogStore::Sync() { return pipeline_->Sync(); }

absl::Status RocksDbLogStore::Close() {
  {
    MutexLock l(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
  }
  absl::Status s;
  if (pipeline_) {
    s = pipeline_->Sync();
    pipeline_->Stop();
  }
  return s;
}

// ---------------------------------------------------------------------------
// Reads

absl::StatusOr<std::shared_ptr<RocksDbLogStore::Pg>> RocksDbLogStore::FindPg(
    const PgId& id) const {
  auto it = pgs_.find(id);
  if (it == pgs_.end()) return absl::NotFoundError(absl::StrCat("PG ", id.ToString(), " does not exist"));
  return it->second;
}

absl::StatusOr<std::vector<LogEntry>> RocksDbLogStore::ReadSlots(const Pg& pg, bool dups,
                                                                 size_t i, size_t j) const {
  std::vector<LogEntry> out;
  if (i >= j) return out;
  const MappingTable& table = dups ? pg.dups : pg.entries;
  const Version first = table.at(i).v(), last = table.at(j - 1).v();
  // The overlay first, then the iterator: a value leaves the overlay only
  // after its batch is in RocksDB, so whatever is not in the copy taken here
  // is in every iterator opened after it. (No transaction can be submitted
  // meanwhile: the caller holds the staging lock.)
  std::map<Version, std::string> overlay;
  {
    MutexLock pl(&pending_mu_);
    const auto& m = dups ? pg.pending_dups : pg.pending_entries;
    for (auto it = m.lower_bound(first); it != m.end() && it->first <= last; ++it) {
      overlay.emplace(it->first, it->second.value);
    }
  }
  out.reserve(j - i);
  const std::string key_prefix = dups ? pg.prefix + std::string(kDupKeyNamePrefix) : pg.prefix;
  std::unique_ptr<rocksdb::Iterator> it;
  std::string want;
  for (size_t k = i; k < j; ++k) {
    const Version v = table.at(k).v();
    if (auto o = overlay.find(v); o != overlay.end()) {
      out.push_back(LogEntry{v, std::move(o->second)});
      continue;
    }
    want = key_prefix + LogKeyName(v);
    rocksdb::Slice w(want);
    if (!it) {
      it.reset(db_->db()->NewIterator(rocksdb::ReadOptions(), db_->cf()));
      it->Seek(w);
    } else if (it->Valid() && it->key().compare(w) < 0) {
      // Keys between are stale (deleted by a transaction not yet durable).
      it->Seek(w);
    }
    if (!it->Valid() || it->key() != w) {
      rocksdb::Status s = it->status();
      if (!s.ok()) return FromRocks(&s, absl::StrCat(db_->description(), ": reading PG ", pg.name));
      return absl::DataLossError(absl::StrFormat(
          "PG %s: %s %s is in the log but its key is missing from %s", pg.name,
          dups ? "dup" : "entry", v.ToString(), db_->description()));
    }
    out.push_back(LogEntry{v, it->value().ToString()});
    it->Next();
  }
  if (it) {
    rocksdb::Status s = it->status();
    if (!s.ok()) return FromRocks(&s, absl::StrCat(db_->description(), ": reading PG ", pg.name));
  }
  return out;
}

absl::StatusOr<std::vector<LogEntry>> RocksDbLogStore::ReadEntries(const PgId& id,
                                                                   const Version& from,
                                                                   const Version& to) const {
  ReaderMutexLock l(&mu_);
  ASSIGN_OR_RETURN(auto pg, FindPg(id));
  if (!pg->damage.ok()) return pg->damage;
  if (from > to) {
    return absl::InvalidArgumentError(absl::StrFormat("version range %s..%s is empty",
                                                      from.ToString(), to.ToString()));
  }
  if (from > pg->state.last_version && from != Version::Min()) {
    return absl::OutOfRangeError(absl::StrFormat("PG %s: %s is past the newest entry %s",
                                                 pg->name, from.ToString(),
                                                 pg->state.last_version.ToString()));
  }
  return ReadSlots(*pg, false, pg->entries.LowerBound(from), pg->entries.UpperBound(to));
}

absl::StatusOr<std::vector<LogEntry>> RocksDbLogStore::ReadDups(const PgId& id) const {
  ReaderMutexLock l(&mu_);
  ASSIGN_OR_RETURN(auto pg, FindPg(id));
  if (!pg->damage.ok()) return pg->damage;
  return ReadSlots(*pg, true, 0, pg->dups.size());
}

absl::StatusOr<std::string> RocksDbLogStore::ReadInfo(const PgId& id) const {
  ReaderMutexLock l(&mu_);
  ASSIGN_OR_RETURN(auto pg, FindPg(id));
  if (!pg->damage.ok()) return pg->damage;
  if (!pg->has_info) return absl::NotFoundError(absl::StrCat("PG ", pg->name, " has no info"));
  return pg->info;
}

absl::StatusOr<std::vector<PgId>> RocksDbLogStore::ListPgs() const {
  ReaderMutexLock l(&mu_);
  std::vector<PgId> out;
  out.reserve(pgs_.size());
  for (const auto& [id, pg] : pgs_) out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<PgStats> RocksDbLogStore::GetPgStats(const PgId& id) const {
  ReaderMutexLock l(&mu_);
  ASSIGN_OR_RETURN(auto pg, FindPg(id));
  PgStats s;
  s.pg = id;
  s.entries = pg->entries.size();
  s.entry_bytes = pg->entry_bytes;
  s.dups = pg->dups.size();
  s.dup_bytes = pg->dup_bytes;
  s.has_info = pg->has_info;
  s.info_bytes = pg->info.size();
  if (!pg->entries.empty()) {
    s.first_version = pg->entries.front().v();
    s.last_version = pg->entries.back().v();
  }
  s.bytes_written = pg->value_bytes_written;
  s.payload_bytes_written = pg->payload_bytes_written;
  s.damaged = !pg->damage.ok();
  return s;
}

StoreStats RocksDbLogStore::GetStoreStats() const {
  ReaderMutexLock l(&mu_);
  StoreStats s;
  s.pgs = pgs_.size();
  for (const auto& [id, pg] : pgs_) {
    s.live_entries += pg->entries.size();
    s.live_dups += pg->dups.size();
    s.mapping_table_bytes += pg->entries.MemoryBytes() + pg->dups.MemoryBytes();
  }
  s.transactions_committed = pipeline_ ? pipeline_->committed_txns() : 0;
  s.commit_groups = pipeline_ ? pipeline_->commit_groups() : 0;
  s.superseded_key_writes = pipeline_ ? pipeline_->superseded_store_writes() : 0;
  s.record_bytes_appended = value_bytes_.load();
  s.payload_bytes_appended = payload_bytes_.load();
  s.device_bytes_written = device_->bytes_written();
  s.device_flushes = device_->flushes();
  return s;
}

}  // namespace pgring
