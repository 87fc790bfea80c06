// pg_map.h — the PGs of a store by id, as both backends keep them, and the
// staging of one transaction's ops against them: PG creation and removal
// (with their codes and messages; the valid PG id and limits.max_pgs are
// checked here alone), the damaged-PG rule, one PgChange per PG the
// transaction changes, and the undo of all of it when the transaction is
// refused. A backend supplies its PG and PgChange types and three steps: make a
// PG, apply an op to a touched PG, and note a removal.
//
// Everything here runs under the store's staging lock.
#ifndef PGRING_STORE_PG_MAP_H_
#define PGRING_STORE_PG_MAP_H_

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pgring/options.h"
#include "pgring/transaction.h"
#include "pgring/types.h"

namespace pgring {

// `Pg` derives from PgLogState (id, name, damage, live_items()).
template <typename Pg>
class PgMap {
 public:
  absl::StatusOr<std::shared_ptr<Pg>> Find(const PgId& id) const {
    auto it = pgs_.find(id);
    if (it == pgs_.end()) {
      return absl::NotFoundError(absl::StrCat("PG ", id.ToString(), " does not exist"));
    }
    return it->second;
  }
  std::vector<PgId> List() const {
    std::vector<PgId> out;
    out.reserve(pgs_.size());
    for (const auto& [id, pg] : pgs_) out.push_back(id);
    std::sort(out.begin(), out.end());
    return out;
  }
  size_t size() const { return pgs_.size(); }
  // Adds the PG count, live entries and dups and index memory to `s`.
  void AddTotals(StoreStats* s) const {
    s->pgs += pgs_.size();
    for (const auto& [id, pg] : pgs_) {
      s->live_entries += pg->entries.size();
      s->live_dups += pg->dups.size();
      s->mapping_table_bytes += pg->entries.MemoryBytes() + pg->dups.MemoryBytes();
    }
  }
  auto begin() const { return pgs_.begin(); }
  auto end() const { return pgs_.end(); }
  // At open.
  void Insert(std::shared_ptr<Pg> pg) {
    const PgId id = pg->id;
    pgs_.emplace(id, std::move(pg));
  }

 private:
  template <typename, typename>
  friend class TransactionStaging;
  absl::flat_hash_map<PgId, std::shared_ptr<Pg>> pgs_;
};

// One transaction's ops staged against a PgMap. `PgChange` is constructed from
// a std::shared_ptr<Pg>, has a Restore() that puts its PG back as it was,
// and the fields `pg`, `created`, `removed` and `payload`.
template <typename Pg, typename PgChange>
class TransactionStaging {
 public:
  TransactionStaging(PgMap<Pg>* pgs, const Limits& limits, uint64_t live_items)
      : pgs_(pgs), limits_(limits), live_(live_items) {}
  TransactionStaging(const TransactionStaging&) = delete;
  TransactionStaging& operator=(const TransactionStaging&) = delete;

  // Applies every op of `txn` in order, stopping at the first refusal.
  //   new_pg(id) -> absl::StatusOr<std::shared_ptr<Pg>>   a PG to create
  //   apply(op, PgChange*, uint64_t* live) -> absl::Status    an op on a PG
  //   removed(PgChange*)                                      a PG removed
  template <typename NewPg, typename Apply, typename Removed>
  absl::Status StageOps(const Transaction& txn, NewPg&& new_pg, Apply&& apply,
                        Removed&& removed) {
    for (const Transaction::Op& op : txn.ops()) {
      auto it = pgs_->pgs_.find(op.pg);
      if (op.type == Transaction::OpType::kCreatePg) {
        // The shard is -1 (none) or 0..127, as Ceph's shard_id_t and
        // PgId::Parse have it: a lower one would print as the PG without a
        // shard (PgId::ToString) and sort out of order in RocksDB keys.
        if (op.pg.shard < -1) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "PG id pool %d seed %#x shard %d: a shard is -1 (none) or 0..127", op.pg.pool,
              op.pg.seed, static_cast<int>(op.pg.shard)));
        }
        if (it != pgs_->pgs_.end()) {
          return absl::AlreadyExistsError(absl::StrCat("PG ", op.pg.ToString(), " already exists"));
        }
        if (pgs_->pgs_.size() >= limits_.max_pgs) {
          return absl::ResourceExhaustedError(absl::StrFormat(
              "store holds %u PGs, the limit (limits.max_pgs); remove a PG first",
              pgs_->pgs_.size()));
        }
        absl::StatusOr<std::shared_ptr<Pg>> pg = new_pg(op.pg);
        if (!pg.ok()) return pg.status();
        pgs_->pgs_.emplace(op.pg, *pg);
        map_journal_.emplace_back(true, op.pg, *pg);
        ChangeOf(*pg)->created = true;
        continue;
      }
      if (it == pgs_->pgs_.end()) {
        return absl::NotFoundError(absl::StrCat("PG ", op.pg.ToString(), " does not exist"));
      }
      std::shared_ptr<Pg> pg = it->second;
      PgChange* t = ChangeOf(pg);
      if (op.type == Transaction::OpType::kRemovePg) {
        live_ -= pg->live_items();
        t->removed = true;
        removed(t);
        map_journal_.emplace_back(false, op.pg, pg);
        pgs_->pgs_.erase(it);
        continue;
      }
      if (!pg->damage.ok()) {
        return absl::DataLossError(absl::StrCat(pg->damage.message(),
                                                " (the PG is damaged; it can only be removed)"));
      }
      absl::Status s = apply(op, t, &live_);
      if (!s.ok()) return s;
      t->payload += op.payload.size();
    }
    return absl::OkStatus();
  }

  // The PgChange of `pg`, made the first time: for a change the store makes
  // to a PG of its own accord (cleaning), not through an op.
  PgChange* Touch(const std::shared_ptr<Pg>& pg) { return ChangeOf(pg); }

  // Puts every touched PG and the map back as they were before StageOps.
  void Rollback() {
    for (auto it = changes_.rbegin(); it != changes_.rend(); ++it) (*it)->Restore();
    for (auto it = map_journal_.rbegin(); it != map_journal_.rend(); ++it) {
      auto& [added, id, pg] = *it;
      if (added) {
        pgs_->pgs_.erase(id);
      } else {
        pgs_->pgs_[id] = pg;
      }
    }
  }

  // The PGs the transaction touched, in the order it first touched them.
  const std::vector<std::unique_ptr<PgChange>>& changes() const { return changes_; }
  // The store-wide count of live entries and dups with the ops applied.
  uint64_t live_items() const { return live_; }

 private:
  PgChange* ChangeOf(const std::shared_ptr<Pg>& pg) {
    auto it = change_of_.find(pg.get());
    if (it != change_of_.end()) return it->second;
    changes_.push_back(std::make_unique<PgChange>(pg));
    change_of_[pg.get()] = changes_.back().get();
    return changes_.back().get();
  }

  PgMap<Pg>* pgs_;
  const Limits& limits_;
  uint64_t live_;
  std::vector<std::unique_ptr<PgChange>> changes_;
  absl::flat_hash_map<Pg*, PgChange*> change_of_;
  // (added?, id, pg) in the order the map changed, to undo in reverse.
  std::vector<std::tuple<bool, PgId, std::shared_ptr<Pg>>> map_journal_;
};

}  // namespace pgring

#endif  // PGRING_STORE_PG_MAP_H_
