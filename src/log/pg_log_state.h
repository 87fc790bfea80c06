// pg_log_state.h — one PG's log as both backends keep it in memory, and the
// rules every PG-log operation follows: validation (codes and messages), the
// changes it makes, the undo of a refused transaction, and the replay of what
// a backend reads back at open. The ring backend, the RocksDB backend and the
// tool's scan all go through these functions; a backend supplies only where
// the bytes go (PgLogEffects), never the rules.
//
// The state: the versions and sizes of the live entries and dups
// (MappingTable, with a 32-bit locator the backend chooses), the trim points, the last versions
// (appends must be greater), and the latest info.
#ifndef PGRING_LOG_PG_LOG_STATE_H_
#define PGRING_LOG_PG_LOG_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/record.h"
#include "log/mapping_table.h"
#include "pgring/options.h"
#include "pgring/transaction.h"
#include "pgring/types.h"

namespace pgring {

struct PgLogState {
  explicit PgLogState(const PgId& id_in) : id(id_in), name(id_in.ToString()) {}

  const PgId id;
  const std::string name;  // "1.2a", for messages

  MappingTable entries;      // live entries, oldest first
  MappingTable dups;         // live dups, oldest first
  uint64_t entry_bytes = 0;  // payload bytes of the live entries
  uint64_t dup_bytes = 0;    // payload bytes of the live dups
  Version last_version;      // entry appends must be greater
  Version last_dup_version;  // dup appends must be greater
  Version entries_trimmed_to;  // entries <= this are trimmed
  Version dups_trimmed_to;     // dups <= this are trimmed
  bool has_info = false;
  std::string info;
  absl::Status damage;  // non-OK: opened damaged (RecoveryPolicy::kMarkDamaged)

  uint64_t live_items() const { return entries.size() + dups.size(); }
  // Forgets every entry, dup and the info (a PG opened damaged).
  void Forget();

  // The reads' rules, the same for every backend.
  // The info, kNotFound if the PG has none, or the damage.
  absl::StatusOr<std::string> ReadInfo() const;
  // The slots [first, last) of `entries` that ReadEntries(from, to) returns:
  // kInvalidArgument for an empty range, kOutOfRange past the newest entry,
  // or the damage.
  absl::StatusOr<std::pair<size_t, size_t>> EntrySlots(const Version& from,
                                                       const Version& to) const;
  // The statistics every backend reports from the state (counts, versions,
  // info size, damage); the backend adds its own.
  PgStats Stats() const;
};

// Where the bytes of a PG-log change go: the ring backend encodes record
// items, the RocksDB backend key puts and deletes, the tool's scan keeps
// where each item lies. Every call comes after the state changed.
class PgLogEffects {
 public:
  virtual ~PgLogEffects() = default;
  // The locator the mapping table keeps for an item appended now.
  virtual uint32_t Locator(std::string_view payload) = 0;
  virtual void EntryAppended(const Version& v, std::string_view payload) = 0;
  virtual void DupAppended(const Version& v, std::string_view payload) = 0;
  virtual void InfoSet(std::string_view payload) = 0;
  // An item left the log (trim: from the front; rewind, reset: the back).
  virtual void EntryDropped(const MappingTable::Slot& s, bool front) = 0;
  virtual void DupDropped(const MappingTable::Slot& s, bool front) = 0;
  // A trim point moved (entries or dups).
  virtual void TrimPointMoved() = 0;
  // The last version was lowered to `v` (after the entries above it were
  // dropped).
  virtual void Rewound(const Version& v) = 0;
  // Every entry and dup was dropped and the versions start over.
  virtual void Reset() = 0;
};

// The undo journal of one PG within one transaction: enough to put its
// PgLogState back exactly as it was if the transaction is refused. A
// backend saves its own fields beside it.
class PgLogUndo {
 public:
  explicit PgLogUndo(PgLogState* pg);
  PgLogUndo(const PgLogUndo&) = delete;
  PgLogUndo& operator=(const PgLogUndo&) = delete;

  void Restore();
  PgLogState* pg() const { return pg_; }

 private:
  friend class PgLogChange;
  enum Kind : uint8_t { kEntryAppended, kDupAppended, kEntryPoppedFront, kEntryPoppedBack,
                        kDupPoppedFront, kDupPoppedBack };
  PgLogState* pg_;
  Version last_version_, last_dup_version_, entries_trimmed_to_, dups_trimmed_to_;
  uint64_t entry_bytes_, dup_bytes_;
  bool info_saved_ = false;  // the info is copied only if the transaction sets it
  bool has_info_ = false;
  std::string info_;
  std::vector<std::pair<Kind, MappingTable::Slot>> journal_;
};

// Applies one transaction op to `pg`, recording the change in `undo` and
// telling `effects`. `live_items` is the store-wide count of live entries and
// dups, kept up to date. Errors: kInvalidArgument (non-increasing version,
// payload too large), kOutOfRange (trim or rewind past the ends),
// kResourceExhausted (a bound). PG creation and removal belong to the store.
absl::Status ApplyOp(const Transaction::Op& op, const Limits& limits, uint64_t* live_items,
                     PgLogState* pg, PgLogUndo* undo, PgLogEffects* effects);

// A PG's live log as the reads return it: what RestateLog states again.
struct LiveLog {
  std::vector<LogEntry> entries;  // oldest first
  std::vector<LogEntry> dups;     // oldest first
  bool has_info = false;
  std::string info;
};

// Cleaning the log stream (docs/DESIGN.md, "Cleaning the stream"): states
// `pg`'s whole live log again through `effects` (a reset, every dup and
// entry, the info, and a rewind marker for a last version that neither an
// entry nor the trim point holds), so that one new record holds all of it
// and the PG's older records are no longer needed. What the PG holds does
// not change (versions, sizes, trim points, last versions, info), nor what
// a replay of the new record after the old ones or alone makes of it; only
// the locators move. kFailedPrecondition, with nothing changed, when
// `live` is not the PG's live log (a transaction changed it after the read).
absl::Status RestateLog(const LiveLog& live, PgLogState* pg, PgLogUndo* undo,
                        PgLogEffects* effects);

// Recovery: applies one item a backend read back, as it was applied when
// written. kDataLoss if it breaks the log's rules (a version out of order);
// the message names the item, the caller says where it lies.
absl::Status ReplayItem(const Item& item, PgLogState* pg, PgLogEffects* effects);

// After replay: drops what the trim points say is trimmed (the trim points
// are stored apart from the items, and the items they trim may still be
// read back), and raises the last versions to at least the trim points.
void FinishReplay(PgLogState* pg, PgLogEffects* effects);

// The items of `kind` in one record body as replaying the record leaves
// them: a rewind or reset later in the same body drops earlier ones. The
// body must parse (its record's CRC was checked).
std::vector<Item> LiveItems(std::string_view body, ItemKind kind);

}  // namespace pgring

#endif  // PGRING_LOG_PG_LOG_STATE_H_
