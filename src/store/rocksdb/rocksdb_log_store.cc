#include "store/rocksdb/rocksdb_log_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "log/pg_log_state.h"
#include "store/group_batch.h"
#include "util/status_macros.h"

namespace pgring {

namespace {
// Key bytes for messages (pgkeys are binary).
std::string Escaped(std::string_view s) {
  return absl::CHexEscape(absl::string_view(s.data(), s.size()));
}

// A key under a PG's prefix that is not one this backend writes.
absl::Status BadKey(const std::string& pg_name, const char* what, std::string_view name) {
  return absl::DataLossError(absl::StrCat("PG ", pg_name, ": ", what, " '", Escaped(name), "'"));
}
}  // namespace

// ---------------------------------------------------------------------------
// In-memory state

// One PG, as Ceph's in-memory PGLog keeps it: the versions and sizes
// (PgLogState); the payloads stay in RocksDB.
struct RocksDbPg : PgLogState {
  explicit RocksDbPg(const PgId& id_in) : PgLogState(id_in), prefix(PgLogKeyPrefix(id_in)) {}

  const std::string prefix;

  // --- Staged state (every submitted transaction applied); guarded by the
  // store's staging lock.
  uint64_t value_bytes_written = 0;
  uint64_t payload_bytes_written = 0;

  // The "_state" value this state writes.
  PgStateValue StateValue() const {
    return PgStateValue{entries_trimmed_to, dups_trimmed_to, last_version, last_dup_version};
  }

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
struct RocksDbLogStore::PgChange {
  explicit PgChange(std::shared_ptr<Pg> p)
      : pg(std::move(p)), undo(pg.get()) {}

  void Restore() { undo.Restore(); }

  std::shared_ptr<Pg> pg;
  PgLogUndo undo;

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
  PgChange* change;
  Version version;
  std::string_view value;  // the op's payload (puts)
};

// PG-log changes as BlueStore writes them: a put per appended item, a
// delete per dropped one, "_info" and "_state" rewritten when they change.
class RocksDbLogStore::KeyEffects final : public PgLogEffects {
 public:
  KeyEffects(PgChange* change, std::vector<KeyOp>* ops) : change_(change), ops_(ops) {}

  uint32_t Locator(std::string_view) override { return 0; }  // found by key
  void EntryAppended(const Version& v, std::string_view payload) override {
    Op(KeyOp::kPutEntry, v, payload);
  }
  void DupAppended(const Version& v, std::string_view payload) override {
    Op(KeyOp::kPutDup, v, payload);
  }
  void InfoSet(std::string_view) override {
    change_->info_set = true;  // one put at the end: latest wins
  }
  void EntryDropped(const MappingTable::Slot& s, bool) override {
    Op(KeyOp::kDeleteEntry, s.v(), {});
  }
  void DupDropped(const MappingTable::Slot& s, bool) override {
    Op(KeyOp::kDeleteDup, s.v(), {});
  }
  void TrimPointMoved() override { StateChanged(); }
  void Rewound(const Version&) override { StateChanged(); }
  void Reset() override { StateChanged(); }

 private:
  void Op(KeyOp::Kind kind, const Version& v, std::string_view value) {
    ops_->push_back({kind, change_, v, value});
  }
  void StateChanged() {
    change_->state_dirty = true;
  }

  PgChange* change_;
  std::vector<KeyOp>* ops_;
};

// ---------------------------------------------------------------------------
// Open

RocksDbLogStore::RocksDbLogStore(std::shared_ptr<BlockDevice> device,
                                 std::unique_ptr<MetadataDb> db, const Options& options)
    : PgStore(std::move(device), std::move(db), options) {}

RocksDbLogStore::~RocksDbLogStore() { Close().IgnoreError(); }

absl::StatusOr<std::unique_ptr<Store>> RocksDbLogStore::Open(
    std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db, const Label& label,
    const StoreMeta& meta, const Options& options) {
  // The caller checked `label` against `meta` and `options` against the
  // label (store/options_check.h); nothing else of them is needed here.
  (void)label;
  (void)meta;
  std::unique_ptr<RocksDbLogStore> s(new RocksDbLogStore(std::move(device), std::move(db), options));
  RETURN_IF_ERROR(s->Load());
  s->StartPipeline(nullptr);
  return std::unique_ptr<Store>(std::move(s));
}

// One key of a PG, replayed as the item it holds (keys come in version
// order within each kind, so the state's ordering rules hold).
absl::Status RocksDbLogStore::LoadKey(std::string_view suffix, std::string_view value, Pg* pg,
                                      bool* have_state, PgStateValue* state) {
  Item item;
  item.payload = value;
  const PgLogKeyClass key = ClassifyPgLogKeyName(suffix);
  item.version = key.version;
  switch (key.kind) {
    case PgLogKeyKind::kEntry:
      item.kind = ItemKind::kEntry;
      break;
    case PgLogKeyKind::kDup:
      item.kind = ItemKind::kDup;
      break;
    case PgLogKeyKind::kInfo:
      item.kind = ItemKind::kInfo;
      break;
    case PgLogKeyKind::kState: {
      auto s = PgStateValue::Decode(value);
      if (!s.ok()) {
        return absl::DataLossError(absl::StrCat("PG ", pg->name, ": ", s.status().message()));
      }
      *state = *s;
      *have_state = true;
      return absl::OkStatus();
    }
    case PgLogKeyKind::kMalformedEntry:
      return BadKey(pg->name, "malformed entry key", suffix);
    case PgLogKeyKind::kMalformedDup:
      return BadKey(pg->name, "malformed dup key", suffix);
    case PgLogKeyKind::kUnknown:
      return BadKey(pg->name, "unknown key", suffix);
  }
  // Loading changes no key: no effects.
  absl::Status s = ReplayItem(item, pg, nullptr);
  if (!s.ok()) return absl::DataLossError(absl::StrCat("PG ", pg->name, ": ", s.message()));
  return absl::OkStatus();
}

absl::Status RocksDbLogStore::FinishLoadPg(Pg* pg, bool have_state, const PgStateValue& state) {
  if (!have_state) {
    return absl::DataLossError(absl::StrCat("PG ", pg->name, ": has keys but no _state key"));
  }
  if (!pg->entries.empty() && pg->entries.front().v() <= state.entries_trimmed_to) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: entry %s survived the trim to %s", pg->name, pg->entries.front().v().ToString(),
        state.entries_trimmed_to.ToString()));
  }
  if (!pg->dups.empty() && pg->dups.front().v() <= state.dups_trimmed_to) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: dup %s survived the trim to %s", pg->name, pg->dups.front().v().ToString(),
        state.dups_trimmed_to.ToString()));
  }
  // The key holds floors; the newest key may be past them (appends do not
  // rewrite _state).
  pg->entries_trimmed_to = state.entries_trimmed_to;
  pg->dups_trimmed_to = state.dups_trimmed_to;
  pg->last_version = std::max(pg->last_version, state.last_version);
  pg->last_dup_version = std::max(pg->last_dup_version, state.last_dup_version);
  FinishReplay(pg, nullptr);
  return absl::OkStatus();
}

absl::Status RocksDbLogStore::Load() {
  MutexLock l(&mu_);
  std::shared_ptr<Pg> cur;
  bool have_state = false;
  PgStateValue state;
  absl::Status cur_status;
  // Ends the PG being loaded: checks it, or marks it damaged.
  auto finish = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    if (!cur) return absl::OkStatus();
    if (cur_status.ok()) cur_status = FinishLoadPg(cur.get(), have_state, state);
    if (!cur_status.ok()) {
      if (options_.recovery_policy == RecoveryPolicy::kRefuse ||
          cur_status.code() != absl::StatusCode::kDataLoss) {
        return cur_status;
      }
      log_->Log(LogLevel::kError, absl::StrCat("opening with PG ", cur->name,
                                               " marked damaged: ", cur_status.message()));
      cur->Forget();
      cur->damage = cur_status;
    }
    live_items_ += cur->live_items();
    pgs_.Insert(std::move(cur));
    cur.reset();
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(db_->Scan(kLogKeyPrefix, [&](std::string_view k, std::string_view v)
                                               ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    PgId id;
    std::string_view name;
    if (!SplitPgLogKey(k, &id, &name)) {
      return absl::DataLossError(absl::StrCat(db_->description(), ": malformed PG log key '",
                                              Escaped(k), "'"));
    }
    if (!cur || !(cur->id == id)) {
      RETURN_IF_ERROR(finish());
      cur = std::make_shared<Pg>(id);
      have_state = false;
      state = PgStateValue{};
      cur_status = absl::OkStatus();
    }
    if (!cur_status.ok()) return absl::OkStatus();  // already damaged: skip its keys
    cur_status = LoadKey(name, v, cur.get(), &have_state, &state);
    return absl::OkStatus();
  }));
  return finish();
}

// ---------------------------------------------------------------------------
// Submit

absl::Status RocksDbLogStore::Submit(Transaction txn, CommitCallback done) {
  RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(std::shared_ptr<CommitPipeline::Txn> ctxn, pipeline_->NewTxn());
  ctxn->done = std::move(done);
  {
    MutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    Staging staging(&pgs_, options_.limits, live_items_);
    std::vector<KeyOp> key_ops;
    absl::Status status = staging.StageOps(
        txn, [](const PgId& id) -> absl::StatusOr<std::shared_ptr<Pg>> {
          return std::make_shared<Pg>(id);
        },
        [&](const Transaction::Op& op, PgChange* t, uint64_t* live) {
          KeyEffects effects(t, &key_ops);
          return ApplyOp(op, options_.limits, live, t->pg.get(), &t->undo, &effects);
        },
        [&](PgChange* t) { key_ops.push_back({KeyOp::kRemovePg, t, {}, {}}); });
    if (!status.ok()) {
      staging.Rollback();
      return status;
    }
    // Accepted: nothing fails from here.
    FillBatch(staging, key_ops, &txn, ctxn);
    live_items_ = staging.live_items();
    pipeline_->Enqueue(ctxn);
  }
  // The embedder's writes are the only I/O the commit waits for.
  WaitForGatesAndRelease(ctxn, txn.gates());
  return absl::OkStatus();
}

void RocksDbLogStore::FillBatch(const Staging& staging, const std::vector<KeyOp>& key_ops,
                                Transaction* txn,
                                const std::shared_ptr<CommitPipeline::Txn>& ctxn) {
  // The batch carries the embedder's keys first, then this transaction's,
  // in op order.
  const uint64_t seq = next_seq_++;
  ctxn->batch = txn->ReleaseBatch();
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
      Pg* pg = k.change->pg.get();
      key = pg->prefix;
      switch (k.kind) {
        case KeyOp::kPutEntry:
        case KeyOp::kPutDup: {
          const bool dup = k.kind == KeyOp::kPutDup;
          if (dup) key += kDupKeyNamePrefix;
          key += LogKeyName(k.version);
          wb->Put(cf, key, rocksdb::Slice(k.value.data(), k.value.size()));
          auto& overlay = dup ? pg->pending_dups : pg->pending_entries;
          overlay[k.version] = Pg::Pending{seq, std::string(k.value)};
          puts.emplace_back(k.change->pg, dup, k.version);
          value_bytes += k.value.size();
          pg->value_bytes_written += k.value.size();
          break;
        }
        case KeyOp::kDeleteEntry:
        case KeyOp::kDeleteDup:
          if (k.kind == KeyOp::kDeleteDup) key += kDupKeyNamePrefix;
          key += LogKeyName(k.version);
          wb->Delete(cf, key);
          break;
        case KeyOp::kRemovePg:
          wb->DeleteRange(cf, pg->prefix, PgLogKeyPrefixEnd(pg->id));
          break;
      }
    }
  }
  // A PG's info and state are whole values the store alone writes: a
  // commit group keeps only the last write of each (group_batch.h). The
  // log entries are keys of their own, each written once.
  StoreKeyWriter store_keys(wb, cf, &ctxn->store_keys);
  for (const auto& t : staging.changes()) {
    Pg* pg = t->pg.get();
    if (t->removed) continue;
    if (t->info_set) {
      store_keys.Put(pg->prefix + std::string(kInfoKeyName), pg->info);
      value_bytes += pg->info.size();
      pg->value_bytes_written += pg->info.size();
    }
    if (t->created || t->state_dirty) {
      std::string v = pg->StateValue().Encode();
      store_keys.Put(pg->prefix + std::string(kStateKeyName), v);
      value_bytes += v.size();
      pg->value_bytes_written += v.size();
    }
    pg->payload_bytes_written += t->payload;
    payload_bytes_.fetch_add(t->payload);
  }
  value_bytes_.fetch_add(value_bytes);
  ctxn->needs_flush = false;
  ctxn->pending_ios.store(static_cast<int>(txn->gates().size()) + 1);
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
}

// ---------------------------------------------------------------------------
// Reads

absl::StatusOr<std::vector<LogEntry>> RocksDbLogStore::ReadSlots(Pg* pg_ptr, ItemKind kind,
                                                                 size_t i, size_t j) const {
  std::vector<LogEntry> out;
  if (i >= j) return out;
  const Pg& pg = *pg_ptr;
  const bool dups = kind == ItemKind::kDup;
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
  for (MappingTable::Cursor k = table.At(i); k.index() < j; k.Next()) {
    const Version v = k.slot().v();
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

void RocksDbLogStore::AddPgStats(const Pg& pg, PgStats* s) const {
  s->bytes_written = pg.value_bytes_written;
  s->payload_bytes_written = pg.payload_bytes_written;
}

void RocksDbLogStore::AddStoreStats(StoreStats* s) const {
  s->record_bytes_appended = value_bytes_.load();
  s->payload_bytes_appended = payload_bytes_.load();
}

}  // namespace pgring
