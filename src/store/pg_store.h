// pg_store.h — the reads and statistics both backends answer the same way
// from their PgMap: under the staging lock (shared), refuse once Close() has
// begun, find the PG, refuse a damaged one, choose the slots a version range covers (PgLogState), and sum
// the totals. A backend supplies only how it reads the payloads of slots and
// what it adds to the statistics.
#ifndef PGRING_STORE_PG_STORE_H_
#define PGRING_STORE_PG_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "format/record.h"
#include "store/pg_map.h"
#include "store/store_core.h"
#include "util/status_macros.h"

namespace pgring {

template <typename Pg>
class PgStore : public StoreCore {
 public:
  absl::StatusOr<std::vector<PgId>> ListPgs() const final {
    ReaderMutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    return pgs_.List();
  }

  absl::StatusOr<std::vector<LogEntry>> ReadEntries(const PgId& id, const Version& from,
                                                    const Version& to) const final {
    ReaderMutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    ASSIGN_OR_RETURN(auto pg, pgs_.Find(id));
    ASSIGN_OR_RETURN(auto slots, pg->EntrySlots(from, to));
    return ReadSlots(pg.get(), ItemKind::kEntry, slots.first, slots.second);
  }

  absl::StatusOr<std::vector<LogEntry>> ReadDups(const PgId& id) const final {
    ReaderMutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    ASSIGN_OR_RETURN(auto pg, pgs_.Find(id));
    if (!pg->damage.ok()) return pg->damage;
    return ReadSlots(pg.get(), ItemKind::kDup, 0, pg->dups.size());
  }

  absl::StatusOr<std::string> ReadInfo(const PgId& id) const final {
    ReaderMutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    ASSIGN_OR_RETURN(auto pg, pgs_.Find(id));
    return pg->ReadInfo();
  }

  absl::StatusOr<PgStats> GetPgStats(const PgId& id) const final {
    ReaderMutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    ASSIGN_OR_RETURN(auto pg, pgs_.Find(id));
    PgStats s = pg->Stats();
    AddPgStats(*pg, &s);
    return s;
  }

  StoreStats GetStoreStats() const final {
    ReaderMutexLock l(&mu_);
    StoreStats s;
    pgs_.AddTotals(&s);
    AddCommitStats(&s);
    AddStoreStats(&s);
    return s;
  }

 protected:
  using StoreCore::StoreCore;

  // The payloads of slots [i, j) of the PG's entries or dups (`kind`), in
  // order. Called with the staging lock held shared.
  virtual absl::StatusOr<std::vector<LogEntry>> ReadSlots(Pg* pg, ItemKind kind, size_t i,
                                                          size_t j) const = 0;
  // What the backend knows of a PG, or of the store, beyond PgLogState's and
  // the commit pipeline's counts. Called with the staging lock held shared.
  virtual void AddPgStats(const Pg& pg, PgStats* s) const = 0;
  virtual void AddStoreStats(StoreStats* s) const ABSL_SHARED_LOCKS_REQUIRED(mu_) = 0;

  PgMap<Pg> pgs_ ABSL_GUARDED_BY(mu_);
  uint64_t live_items_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pgring

#endif  // PGRING_STORE_PG_STORE_H_
