// log_model.h — a plain in-memory model of what a store must hold: the
// specification the model-based and crash tests check the store against.
#ifndef PGRING_TESTS_UTIL_LOG_MODEL_H_
#define PGRING_TESTS_UTIL_LOG_MODEL_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "pgring/transaction.h"

namespace pgring::testing {

struct ModelPg {
  std::map<Version, std::string> entries;
  std::map<Version, std::string> dups;
  std::optional<std::string> info;
  Version last, last_dup, trimmed, dups_trimmed;
};

class LogModel {
 public:
  explicit LogModel(const Limits& limits) : limits_(limits) {}

  // Applies `txn` as the store must: all or nothing. Returns the error code
  // the store must return (OK if it must accept). On error, unchanged.
  absl::StatusCode Apply(const Transaction& txn);

  const std::map<PgId, ModelPg>& pgs() const { return pgs_; }
  // The embedder's keys put through Transaction::batch() (default CF).
  const std::map<std::string, std::string>& kv() const { return kv_; }
  std::map<PgId, ModelPg>& mutable_pgs() { return pgs_; }
  uint64_t live_items() const;

  // Checks every PG of the store against the model: the PG list, every
  // entry and dup by version and payload, the info, the per-PG stats a
  // reader sees (entries, dups and their payload bytes, the info's presence
  // and size, first and last version), and ranged reads of the entries at
  // bounds drawn from `seed` (versions present and absent, before the first
  // and past the last, empty and inverted ranges). Returns a description of
  // the first difference, or empty.
  std::string Diff(const Store& store, uint64_t seed = 0) const;
  // The same checks for one PG (ListPgs aside); for a PG the model lacks,
  // that the store reports it missing (kNotFound). For readers that hold
  // the PG still while writers change others.
  std::string DiffPg(const Store& store, const PgId& id, uint64_t seed = 0) const;

  // The state no read shows: each PG's floor on versions (its last version,
  // which a rewind can leave above every entry) and its trim points. Probes
  // them with transactions the store must refuse with the model's code: an
  // append at the last version and a dup at the last dup version, a trim
  // and a dup trim just past the last ones, a rewind just below the trim
  // point. Each probe's transaction ends with an append to a PG neither
  // holds, so the store refuses it either way, with the probe's code when
  // the floor holds and kNotFound when the floor let it through: no probe
  // changes the store, and several models can be probed against one store
  // (the crash rig's candidate prefixes, alike in every read but their
  // floors). Returns the first difference, or empty.
  std::string ProbeFloors(Store& store) const;

 private:
  static std::string DiffStats(const Store& store, const PgId& id, const ModelPg& pg);

  Limits limits_;
  std::map<PgId, ModelPg> pgs_;
  std::map<std::string, std::string> kv_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_LOG_MODEL_H_
