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

  // Checks every PG of the store against the model; returns a description of
  // the first difference, or empty.
  std::string Diff(const Store& store) const;

 private:
  Limits limits_;
  std::map<PgId, ModelPg> pgs_;
  std::map<std::string, std::string> kv_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_LOG_MODEL_H_
