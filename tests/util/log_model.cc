#include "util/log_model.h"

#include <rocksdb/write_batch.h>

#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

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

namespace {

Version Next(const Version& v) {
  return v.version == UINT64_MAX ? Version{v.epoch + 1, 0} : Version{v.epoch, v.version + 1};
}

std::string Describe(const std::vector<LogEntry>& got, size_t i) {
  return i < got.size() ? got[i].version.ToString() : "nothing";
}

// A read of [from, to] against the model's entries in that range.
// The store's rules (PgLogState::EntrySlots): an inverted range is the
// caller's error, and a range that starts past the PG's last version (its
// floor: a rewind can leave it above every entry) is out of range.
std::string DiffRange(const Store& store, const PgId& id, const ModelPg& pg, const Version& from,
                      const Version& to) {
  const std::map<Version, std::string>& want = pg.entries;
  auto got = store.ReadEntries(id, from, to);
  const std::string range = "PG " + id.ToString() + " ReadEntries(" + from.ToString() + ", " +
                            to.ToString() + ")";
  if (from > to) {  // an inverted range is the caller's error
    return absl::IsInvalidArgument(got.status())
               ? ""
               : range + ": not refused as inverted (" + got.status().ToString() + ")";
  }
  if (from > pg.last && from != Version::Min()) {
    return absl::IsOutOfRange(got.status())
               ? ""
               : range + ": not refused as past the last version " + pg.last.ToString() + " (" +
                     got.status().ToString() + ")";
  }
  if (!got.ok()) return range + ": " + got.status().ToString();
  size_t i = 0;
  for (auto it = want.lower_bound(from); it != want.end() && it->first <= to; ++it, ++i) {
    if (i >= got->size() || (*got)[i].version != it->first || (*got)[i].payload != it->second) {
      return range + ": entry " + std::to_string(i) + " is " + Describe(*got, i) +
             ", model has " + it->first.ToString();
    }
  }
  if (i != got->size()) {
    return range + ": " + std::to_string(got->size()) + " entries, model has " + std::to_string(i);
  }
  return "";
}

}  // namespace

std::string LogModel::Diff(const Store& store, uint64_t seed) const {
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
    if (std::string d = DiffPg(store, id, seed); !d.empty()) return d;
  }
  return "";
}

std::string LogModel::DiffPg(const Store& store, const PgId& id, uint64_t seed) const {
  std::ostringstream out;
  auto found = pgs_.find(id);
  if (found == pgs_.end()) {
    // Every read of a PG the model lacks must say so.
    auto e = store.ReadEntries(id);
    if (!absl::IsNotFound(e.status())) {
      return "PG " + id.ToString() + " (absent from the model) ReadEntries: " +
             (e.ok() ? std::to_string(e->size()) + " entries" : e.status().ToString());
    }
    auto st = store.GetPgStats(id);
    if (!absl::IsNotFound(st.status())) {
      return "PG " + id.ToString() + " (absent from the model) GetPgStats: " +
             st.status().ToString();
    }
    return "";
  }
  const ModelPg& pg = found->second;
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
    if (!info.ok()) return "PG " + id.ToString() + " ReadInfo: " + info.status().ToString();
    if (*info != *pg.info) return "PG " + id.ToString() + ": info differs";
  } else if (info.ok()) {
    return "PG " + id.ToString() + ": has info the model lacks";
  } else if (!absl::IsNotFound(info.status())) {
    return "PG " + id.ToString() + " ReadInfo: " + info.status().ToString();
  }
  if (std::string d = DiffStats(store, id, pg); !d.empty()) return d;
  // Ranged reads: the mapping table's lookups at both ends.
  std::vector<Version> bounds{Version::Min(), Version::Max()};
  for (const auto& [v, payload] : pg.entries) {
    bounds.push_back(v);
    bounds.push_back(Next(v));  // absent unless the next version is live too
  }
  bounds.push_back(Next(pg.last));
  std::mt19937_64 rng(seed * 1000003 + std::hash<std::string>()(id.ToString()));
  for (int r = 0; r < 6; ++r) {
    const Version from = bounds[rng() % bounds.size()];
    const Version to = bounds[rng() % bounds.size()];  // inverted ranges too
    if (std::string d = DiffRange(store, id, pg, from, to); !d.empty()) return d;
  }
  return "";
}

std::string LogModel::DiffStats(const Store& store, const PgId& id, const ModelPg& pg) {
  auto st = store.GetPgStats(id);
  const std::string who = "PG " + id.ToString() + " GetPgStats: ";
  if (!st.ok()) return who + st.status().ToString();
  uint64_t entry_bytes = 0, dup_bytes = 0;
  for (const auto& [v, p] : pg.entries) entry_bytes += p.size();
  for (const auto& [v, p] : pg.dups) dup_bytes += p.size();
  std::ostringstream out;
  auto check = [&](const char* field, auto got, auto want) {
    if (out.tellp() == 0 && got != want) out << who << field << " is " << got << ", model has " << want;
  };
  check("entries", st->entries, static_cast<uint64_t>(pg.entries.size()));
  check("entry_bytes", st->entry_bytes, entry_bytes);
  check("dups", st->dups, static_cast<uint64_t>(pg.dups.size()));
  check("dup_bytes", st->dup_bytes, dup_bytes);
  check("has_info", st->has_info, pg.info.has_value());
  check("info_bytes", st->info_bytes, static_cast<uint64_t>(pg.info ? pg.info->size() : 0));
  if (!pg.entries.empty()) {
    check("first_version", st->first_version.ToString(), pg.entries.begin()->first.ToString());
    check("last_version", st->last_version.ToString(), pg.entries.rbegin()->first.ToString());
  }
  return out.str();
}

std::string LogModel::ProbeFloors(Store& store) const {
  for (const auto& [id, pg] : pgs_) {
    std::vector<std::pair<std::string, Transaction>> probes;
    auto add = [&](std::string what, auto build) {
      Transaction t;
      build(t);
      probes.emplace_back(std::move(what), std::move(t));
    };
    add("an append at the last version " + pg.last.ToString(),
        [&](Transaction& t) { t.AppendEntry(id, pg.last, "floor probe"); });
    add("a dup at the last dup version " + pg.last_dup.ToString(),
        [&](Transaction& t) { t.AppendDup(id, pg.last_dup, "floor probe"); });
    if (pg.last != Version::Max()) {
      add("a trim past the last version " + pg.last.ToString(),
          [&](Transaction& t) { t.Trim(id, Next(pg.last)); });
    }
    if (pg.last_dup != Version::Max()) {
      add("a dup trim past the last dup version " + pg.last_dup.ToString(),
          [&](Transaction& t) { t.TrimDups(id, Next(pg.last_dup)); });
    }
    if (pg.trimmed.version > 0) {
      const Version below{pg.trimmed.epoch, pg.trimmed.version - 1};
      add("a rewind below the trim point " + pg.trimmed.ToString(),
          [&](Transaction& t) { t.Rewind(id, below); });
    }
    // A PG neither holds: the transaction's last op, refused (kNotFound)
    // whenever the probe before it is not.
    PgId absent{std::numeric_limits<int64_t>::max(), 0, -1};
    while (pgs_.count(absent) != 0) ++absent.seed;
    for (auto& [what, t] : probes) {
      t.AppendEntry(absent, Version{1, 1}, "never applied");
      LogModel scratch = *this;
      const absl::StatusCode want = scratch.Apply(t);
      if (want == absl::StatusCode::kNotFound) continue;  // the model allows the probe
      absl::Status s = store.Submit(std::move(t), [](absl::Status) {});
      if (s.code() != want) {
        return "PG " + id.ToString() + ": " + what + ": store says " + s.ToString() +
               ", model says " + absl::StatusCodeToString(want);
      }
    }
  }
  return "";
}

}  // namespace pgring::testing
