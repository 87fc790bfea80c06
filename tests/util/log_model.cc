#include "util/log_model.h"

#include <rocksdb/write_batch.h>

#include <sstream>

namespace pgring::testing {

uint64_t LogModel::live_items() const {
  uint64_t n = 0;
  for (const auto& [id, pg] : pgs_) n += pg.entries.size() + pg.dups.size();
  return n;
}

absl::StatusCode LogModel::Apply(const Transaction& txn) {
  using T = Transaction::OpType;
  auto next = pgs_;
  uint64_t live = live_items();
  for (const auto& op : txn.ops()) {
    auto it = next.find(op.pg);
    if (op.type == T::kCreatePg) {
      if (it != next.end()) return absl::StatusCode::kAlreadyExists;
      next[op.pg] = ModelPg{};
      continue;
    }
    if (it == next.end()) return absl::StatusCode::kNotFound;
    ModelPg& pg = it->second;
    switch (op.type) {
      case T::kRemovePg:
        live -= pg.entries.size() + pg.dups.size();
        next.erase(it);
        break;
      case T::kAppendEntry:
        if (op.payload.size() > limits_.max_payload_bytes) return absl::StatusCode::kInvalidArgument;
        if (op.version <= pg.last) return absl::StatusCode::kInvalidArgument;
        if (pg.entries.size() >= limits_.max_entries_per_pg || live >= limits_.max_total_entries)
          return absl::StatusCode::kResourceExhausted;
        pg.entries[op.version] = op.payload;
        pg.last = op.version;
        ++live;
        break;
      case T::kAppendDup:
        if (op.payload.size() > limits_.max_payload_bytes) return absl::StatusCode::kInvalidArgument;
        if (op.version <= pg.last_dup) return absl::StatusCode::kInvalidArgument;
        if (pg.dups.size() >= limits_.max_dups_per_pg || live >= limits_.max_total_entries)
          return absl::StatusCode::kResourceExhausted;
        pg.dups[op.version] = op.payload;
        pg.last_dup = op.version;
        ++live;
        break;
      case T::kSetInfo:
        if (op.payload.size() > limits_.max_payload_bytes) return absl::StatusCode::kInvalidArgument;
        pg.info = op.payload;
        break;
      case T::kTrim:
        if (op.version > pg.last) return absl::StatusCode::kOutOfRange;
        if (op.version <= pg.trimmed) break;
        while (!pg.entries.empty() && pg.entries.begin()->first <= op.version) {
          pg.entries.erase(pg.entries.begin());
          --live;
        }
        pg.trimmed = op.version;
        break;
      case T::kTrimDups:
        if (op.version > pg.last_dup) return absl::StatusCode::kOutOfRange;
        if (op.version <= pg.dups_trimmed) break;
        while (!pg.dups.empty() && pg.dups.begin()->first <= op.version) {
          pg.dups.erase(pg.dups.begin());
          --live;
        }
        pg.dups_trimmed = op.version;
        break;
      case T::kRewind:
        if (op.version < pg.trimmed) return absl::StatusCode::kOutOfRange;
        if (op.version >= pg.last) break;
        while (!pg.entries.empty() && pg.entries.rbegin()->first > op.version) {
          pg.entries.erase(std::prev(pg.entries.end()));
          --live;
        }
        pg.last = op.version;
        break;
      case T::kResetLog:
        live -= pg.entries.size() + pg.dups.size();
        pg.entries.clear();
        pg.dups.clear();
        pg.last = pg.last_dup = pg.trimmed = pg.dups_trimmed = Version::Min();
        break;
      case T::kCreatePg:
        break;
    }
  }
  pgs_ = std::move(next);
  if (txn.batch_if_any() != nullptr) {
    struct Collect : rocksdb::WriteBatch::Handler {
      std::map<std::string, std::string>* kv;
      void Put(const rocksdb::Slice& k, const rocksdb::Slice& v) override {
        (*kv)[k.ToString()] = v.ToString();
      }
      void Delete(const rocksdb::Slice& k) override { kv->erase(k.ToString()); }
    } c;
    c.kv = &kv_;
    txn.batch_if_any()->Iterate(&c).PermitUncheckedError();
  }
  return absl::StatusCode::kOk;
}

std::string LogModel::Diff(const Store& store) const {
  std::ostringstream out;
  auto list = store.ListPgs();
  if (!list.ok()) return "ListPgs: " + list.status().ToString();
  std::vector<PgId> want;
  for (const auto& [id, pg] : pgs_) want.push_back(id);
  if (*list != want) {
    out << "PG list differs: store has " << list->size() << ", model " << want.size();
    return out.str();
  }
  for (const auto& [id, pg] : pgs_) {
    auto e = store.ReadEntries(id);
    if (!e.ok()) return "PG " + id.ToString() + " ReadEntries: " + e.status().ToString();
    if (e->size() != pg.entries.size()) {
      out << "PG " << id.ToString() << ": " << e->size() << " entries, model has "
          << pg.entries.size();
      return out.str();
    }
    auto m = pg.entries.begin();
    for (const auto& le : *e) {
      if (le.version != m->first || le.payload != m->second) {
        out << "PG " << id.ToString() << ": entry " << le.version.ToString()
            << " differs from model entry " << m->first.ToString();
        return out.str();
      }
      ++m;
    }
    auto d = store.ReadDups(id);
    if (!d.ok()) return "PG " + id.ToString() + " ReadDups: " + d.status().ToString();
    if (d->size() != pg.dups.size()) {
      out << "PG " << id.ToString() << ": " << d->size() << " dups, model has " << pg.dups.size();
      return out.str();
    }
    auto md = pg.dups.begin();
    for (const auto& le : *d) {
      if (le.version != md->first || le.payload != md->second) {
        out << "PG " << id.ToString() << ": dup " << le.version.ToString() << " differs";
        return out.str();
      }
      ++md;
    }
    auto info = store.ReadInfo(id);
    if (pg.info) {
      if (!info.ok() || *info != *pg.info) return "PG " + id.ToString() + ": info differs";
    } else if (info.ok() || !absl::IsNotFound(info.status())) {
      return "PG " + id.ToString() + ": has info the model lacks";
    }
  }
  return "";
}

}  // namespace pgring::testing
