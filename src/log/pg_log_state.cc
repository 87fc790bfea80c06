#include "log/pg_log_state.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pgring {

void PgLogState::Forget() {
  entries.Clear();
  dups.Clear();
  entry_bytes = dup_bytes = 0;
  has_info = false;
  info.clear();
}

PgLogUndo::PgLogUndo(PgLogState* pg)
    : pg_(pg),
      last_version_(pg->last_version),
      last_dup_version_(pg->last_dup_version),
      entries_trimmed_to_(pg->entries_trimmed_to),
      dups_trimmed_to_(pg->dups_trimmed_to),
      entry_bytes_(pg->entry_bytes),
      dup_bytes_(pg->dup_bytes) {}

void PgLogUndo::Restore() {
  for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
    switch (it->first) {
      case kEntryAppended: pg_->entries.PopBack(); break;
      case kDupAppended: pg_->dups.PopBack(); break;
      case kEntryPoppedFront: pg_->entries.PushFront(it->second); break;
      case kEntryPoppedBack: pg_->entries.PushBack(it->second); break;
      case kDupPoppedFront: pg_->dups.PushFront(it->second); break;
      case kDupPoppedBack: pg_->dups.PushBack(it->second); break;
    }
  }
  journal_.clear();
  pg_->last_version = last_version_;
  pg_->last_dup_version = last_dup_version_;
  pg_->entries_trimmed_to = entries_trimmed_to_;
  pg_->dups_trimmed_to = dups_trimmed_to_;
  pg_->entry_bytes = entry_bytes_;
  pg_->dup_bytes = dup_bytes_;
  if (info_saved_) {
    pg_->has_info = has_info_;
    pg_->info = std::move(info_);
    info_saved_ = false;
  }
}

absl::StatusOr<std::string> PgLogState::ReadInfo() const {
  if (!damage.ok()) return damage;
  if (!has_info) return absl::NotFoundError(absl::StrCat("PG ", name, " has no info"));
  return info;
}

absl::StatusOr<std::pair<size_t, size_t>> PgLogState::EntrySlots(const Version& from,
                                                                 const Version& to) const {
  if (!damage.ok()) return damage;
  if (from > to) {
    return absl::InvalidArgumentError(absl::StrFormat("version range %s..%s is empty",
                                                      from.ToString(), to.ToString()));
  }
  if (from > last_version && from != Version::Min()) {
    return absl::OutOfRangeError(absl::StrFormat("PG %s: %s is past the newest entry %s", name,
                                                 from.ToString(), last_version.ToString()));
  }
  return std::make_pair(entries.LowerBound(from), entries.UpperBound(to));
}

PgStats PgLogState::Stats() const {
  PgStats s;
  s.pg = id;
  s.entries = entries.size();
  s.entry_bytes = entry_bytes;
  s.dups = dups.size();
  s.dup_bytes = dup_bytes;
  s.has_info = has_info;
  s.info_bytes = info.size();
  if (!entries.empty()) {
    s.first_version = entries.front().v();
    s.last_version = entries.back().v();
  }
  s.damaged = !damage.ok();
  return s;
}

namespace {

// Effects that go nowhere (recovery of a backend that needs none).
class NoEffects final : public PgLogEffects {
 public:
  uint32_t Locator(std::string_view) override { return 0; }
  void EntryAppended(const Version&, std::string_view) override {}
  void DupAppended(const Version&, std::string_view) override {}
  void InfoSet(std::string_view) override {}
  void EntryDropped(const MappingTable::Slot&, bool) override {}
  void DupDropped(const MappingTable::Slot&, bool) override {}
  void TrimPointMoved() override {}
  void Rewound(const Version&) override {}
  void Reset() override {}
};

PgLogEffects* OrNone(PgLogEffects* e) {
  static NoEffects none;
  return e != nullptr ? e : &none;
}

}  // namespace

// The changes themselves, each journaled (when undoable) and told to the
// backend. ApplyOp and ReplayItem differ in what they check, never in what
// a change does.
class PgLogChange {
 public:
  PgLogChange(PgLogState* pg, PgLogUndo* undo, PgLogEffects* effects, uint64_t* live)
      : pg_(pg), undo_(undo), effects_(OrNone(effects)), live_(live) {}

  void AppendEntry(const Version& v, std::string_view payload) {
    const uint32_t size = static_cast<uint32_t>(payload.size());  // < 4 GiB: Limits
    pg_->entries.Append(v, effects_->Locator(payload), size);
    pg_->entry_bytes += size;
    Journal(PgLogUndo::kEntryAppended, {});
    pg_->last_version = v;
    Count(+1);
    effects_->EntryAppended(v, payload);
  }
  void AppendDup(const Version& v, std::string_view payload) {
    const uint32_t size = static_cast<uint32_t>(payload.size());
    pg_->dups.Append(v, effects_->Locator(payload), size);
    pg_->dup_bytes += size;
    Journal(PgLogUndo::kDupAppended, {});
    pg_->last_dup_version = v;
    Count(+1);
    effects_->DupAppended(v, payload);
  }
  void SetInfo(std::string_view payload) {
    if (undo_ != nullptr && !undo_->info_saved_) {
      undo_->info_saved_ = true;
      undo_->has_info_ = pg_->has_info;
      undo_->info_ = std::move(pg_->info);
    }
    pg_->has_info = true;
    pg_->info.assign(payload.data(), payload.size());
    effects_->InfoSet(payload);
  }
  void TrimEntries(const Version& to) {
    while (!pg_->entries.empty() && pg_->entries.front().v() <= to) DropEntry(true);
    if (to > pg_->entries_trimmed_to) {
      pg_->entries_trimmed_to = to;
      effects_->TrimPointMoved();
    }
  }
  void TrimDups(const Version& to) {
    while (!pg_->dups.empty() && pg_->dups.front().v() <= to) DropDup(true);
    if (to > pg_->dups_trimmed_to) {
      pg_->dups_trimmed_to = to;
      effects_->TrimPointMoved();
    }
  }
  void Rewind(const Version& to) {
    while (!pg_->entries.empty() && pg_->entries.back().v() > to) DropEntry(false);
    pg_->last_version = to;
    effects_->Rewound(to);
  }
  void Reset() {
    while (!pg_->entries.empty()) DropEntry(false);
    while (!pg_->dups.empty()) DropDup(false);
    pg_->last_version = Version::Min();
    pg_->last_dup_version = Version::Min();
    pg_->entries_trimmed_to = Version::Min();
    pg_->dups_trimmed_to = Version::Min();
    effects_->Reset();
  }

 private:
  void DropEntry(bool front) {
    MappingTable::Slot s = front ? pg_->entries.PopFront() : pg_->entries.PopBack();
    pg_->entry_bytes -= s.size;
    Journal(front ? PgLogUndo::kEntryPoppedFront : PgLogUndo::kEntryPoppedBack, s);
    Count(-1);
    effects_->EntryDropped(s, front);
  }
  void DropDup(bool front) {
    MappingTable::Slot s = front ? pg_->dups.PopFront() : pg_->dups.PopBack();
    pg_->dup_bytes -= s.size;
    Journal(front ? PgLogUndo::kDupPoppedFront : PgLogUndo::kDupPoppedBack, s);
    Count(-1);
    effects_->DupDropped(s, front);
  }
  void Journal(PgLogUndo::Kind kind, const MappingTable::Slot& s) {
    if (undo_ != nullptr) undo_->journal_.push_back({kind, s});
  }
  void Count(int delta) {
    if (live_ != nullptr) *live_ += static_cast<uint64_t>(static_cast<int64_t>(delta));
  }

  PgLogState* pg_;
  PgLogUndo* undo_;
  PgLogEffects* effects_;
  uint64_t* live_;
};

namespace {

absl::Status CheckPayload(const PgLogState& pg, const Limits& limits, size_t size,
                          const char* what) {
  if (size > limits.max_payload_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PG %s: %s of %u bytes is larger than the %u-byte limit (limits.max_payload_bytes)",
        pg.name, what, size, limits.max_payload_bytes));
  }
  return absl::OkStatus();
}

absl::Status CheckStoreBound(const Limits& limits, uint64_t live_items) {
  if (live_items >= limits.max_total_entries) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "store holds %u entries and dups, the store-wide limit (limits.max_total_entries); "
        "trim logs", live_items));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyOp(const Transaction::Op& op, const Limits& limits, uint64_t* live_items,
                     PgLogState* pg, PgLogUndo* undo, PgLogEffects* effects) {
  PgLogChange change(pg, undo, effects, live_items);
  using T = Transaction::OpType;
  switch (op.type) {
    case T::kAppendEntry: {
      if (auto s = CheckPayload(*pg, limits, op.payload.size(), "entry"); !s.ok()) return s;
      if (op.version <= pg->last_version) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PG %s: entry version %s is not after the last version %s", pg->name,
            op.version.ToString(), pg->last_version.ToString()));
      }
      if (pg->entries.size() >= limits.max_entries_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: %u entries, the per-PG limit (limits.max_entries_per_pg); trim the log",
            pg->name, pg->entries.size()));
      }
      if (auto s = CheckStoreBound(limits, *live_items); !s.ok()) return s;
      change.AppendEntry(op.version, op.payload);
      return absl::OkStatus();
    }
    case T::kAppendDup: {
      if (auto s = CheckPayload(*pg, limits, op.payload.size(), "dup"); !s.ok()) return s;
      if (op.version <= pg->last_dup_version) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PG %s: dup version %s is not after the last dup version %s", pg->name,
            op.version.ToString(), pg->last_dup_version.ToString()));
      }
      if (pg->dups.size() >= limits.max_dups_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: %u dups, the per-PG limit (limits.max_dups_per_pg); trim the dups", pg->name,
            pg->dups.size()));
      }
      if (auto s = CheckStoreBound(limits, *live_items); !s.ok()) return s;
      change.AppendDup(op.version, op.payload);
      return absl::OkStatus();
    }
    case T::kSetInfo: {
      if (auto s = CheckPayload(*pg, limits, op.payload.size(), "info"); !s.ok()) return s;
      change.SetInfo(op.payload);
      return absl::OkStatus();
    }
    case T::kTrim: {
      if (op.version > pg->last_version) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: trim to %s is past the newest entry %s", pg->name, op.version.ToString(),
            pg->last_version.ToString()));
      }
      if (op.version <= pg->entries_trimmed_to) return absl::OkStatus();
      change.TrimEntries(op.version);
      return absl::OkStatus();
    }
    case T::kTrimDups: {
      if (op.version > pg->last_dup_version) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: trim of dups to %s is past the newest dup %s", pg->name,
            op.version.ToString(), pg->last_dup_version.ToString()));
      }
      if (op.version <= pg->dups_trimmed_to) return absl::OkStatus();
      change.TrimDups(op.version);
      return absl::OkStatus();
    }
    case T::kRewind: {
      if (op.version < pg->entries_trimmed_to) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: rewind to %s is before the log's tail (trimmed to %s)", pg->name,
            op.version.ToString(), pg->entries_trimmed_to.ToString()));
      }
      if (op.version >= pg->last_version) return absl::OkStatus();
      change.Rewind(op.version);
      return absl::OkStatus();
    }
    case T::kResetLog:
      change.Reset();
      return absl::OkStatus();
    case T::kCreatePg:
    case T::kRemovePg:
      break;
  }
  return absl::InternalError("ApplyOp: PG creation and removal belong to the store");
}

namespace {

bool SameItems(const MappingTable& table, const std::vector<LogEntry>& items) {
  if (table.size() != items.size()) return false;
  for (MappingTable::Cursor c = table.At(0); !c.done(); c.Next()) {
    const MappingTable::Slot s = c.slot();
    const LogEntry& e = items[c.index()];
    if (!(s.v() == e.version) || s.size != e.payload.size()) return false;
  }
  return true;
}

}  // namespace

absl::Status RestateLog(const LiveLog& live, PgLogState* pg, PgLogUndo* undo,
                        PgLogEffects* effects) {
  if (!SameItems(pg->entries, live.entries) || !SameItems(pg->dups, live.dups) ||
      live.has_info != pg->has_info || (live.has_info && live.info != pg->info)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("PG %s changed after its live log was read", pg->name));
  }
  // Net zero live items: no store-wide count to keep.
  PgLogChange change(pg, undo, effects, nullptr);
  const Version last = pg->last_version, last_dup = pg->last_dup_version;
  const Version entries_to = pg->entries_trimmed_to, dups_to = pg->dups_trimmed_to;
  // A replay keeps the trim points across a reset (they are the pointer's).
  change.Reset();
  pg->entries_trimmed_to = entries_to;
  pg->dups_trimmed_to = dups_to;
  for (const LogEntry& d : live.dups) change.AppendDup(d.version, d.payload);
  for (const LogEntry& e : live.entries) change.AppendEntry(e.version, e.payload);
  if (live.has_info) change.SetInfo(live.info);
  if (pg->last_version < last) {
    // A rewind left the last version where no entry is: only a marker
    // holds it (a replay raises it to the trim point without one).
    if (last > entries_to) {
      change.Rewind(last);
    } else {
      pg->last_version = last;
    }
  }
  // Dups are dropped from the back only by a reset, so the newest live dup
  // or the trim point holds the last dup version, as a replay finds it.
  pg->last_dup_version = last_dup;
  return absl::OkStatus();
}

absl::Status ReplayItem(const Item& item, PgLogState* pg, PgLogEffects* effects) {
  PgLogChange change(pg, nullptr, effects, nullptr);
  switch (item.kind) {
    case ItemKind::kEntry:
      if (item.version <= pg->last_version) {
        return absl::DataLossError(absl::StrFormat("entry version %s is not after %s",
                                                   item.version.ToString(),
                                                   pg->last_version.ToString()));
      }
      change.AppendEntry(item.version, item.payload);
      break;
    case ItemKind::kDup:
      if (item.version <= pg->last_dup_version) {
        return absl::DataLossError(absl::StrFormat("dup version %s is not after %s",
                                                   item.version.ToString(),
                                                   pg->last_dup_version.ToString()));
      }
      change.AppendDup(item.version, item.payload);
      break;
    case ItemKind::kInfo:
      change.SetInfo(item.payload);
      break;
    case ItemKind::kRewind:
      // A marker is written only when it lowers the last version, so it sets
      // it even when the entries it dropped lie behind the head.
      change.Rewind(item.version);
      break;
    case ItemKind::kReset: {
      // A reset starts the versions over but leaves the trim points, which
      // a backend stores apart from the items, to what it read.
      const Version entries_trimmed_to = pg->entries_trimmed_to;
      const Version dups_trimmed_to = pg->dups_trimmed_to;
      change.Reset();
      pg->entries_trimmed_to = entries_trimmed_to;
      pg->dups_trimmed_to = dups_trimmed_to;
      break;
    }
    case ItemKind::kPgBytes:
      // Stream records carry them; a PG's own records never do, and taking
      // one's bytes for the PG's log would replay another PG's records.
      return absl::DataLossError(absl::StrFormat(
          "a stream item (PG bytes of stamp %u at lpos %u) in a PG's record", item.pg_stamp,
          item.lpos));
    case ItemKind::kPad:
      break;
  }
  return absl::OkStatus();
}

void FinishReplay(PgLogState* pg, PgLogEffects* effects) {
  PgLogChange change(pg, nullptr, effects, nullptr);
  const Version entries_to = pg->entries_trimmed_to, dups_to = pg->dups_trimmed_to;
  change.TrimEntries(entries_to);
  change.TrimDups(dups_to);
  pg->last_version = std::max(pg->last_version, pg->entries_trimmed_to);
  pg->last_dup_version = std::max(pg->last_dup_version, pg->dups_trimmed_to);
}

std::vector<Item> LiveItems(std::string_view body, ItemKind kind) {
  std::vector<Item> out;
  ForEachItem(body, [&](const Item& it) {
    if (it.kind == kind) {
      out.push_back(it);
    } else if (it.kind == ItemKind::kReset) {
      out.clear();
    } else if (it.kind == ItemKind::kRewind && kind == ItemKind::kEntry) {
      while (!out.empty() && out.back().version > it.version) out.pop_back();
    }
    return absl::OkStatus();
  }).IgnoreError();  // the caller's record passed its CRC check; items parse
  return out;
}

}  // namespace pgring
