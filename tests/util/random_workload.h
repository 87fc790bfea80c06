// random_workload.h — random transactions over many PGs, shaped like an
// OSD's (appends with info, periodic trims that turn entries into dups) plus
// every other operation (rewind, reset, create, remove) and some invalid
// ones. Used by the model-based and crash-consistency tests.
#ifndef PGRING_TESTS_UTIL_RANDOM_WORKLOAD_H_
#define PGRING_TESTS_UTIL_RANDOM_WORKLOAD_H_

#include <random>
#include <string>
#include <vector>

#include "pgring/transaction.h"
#include "util/log_model.h"

namespace pgring::testing {

struct WorkloadParams {
  int max_pgs = 8;
  size_t keep_entries = 60;   // trim back to about this many
  size_t keep_dups = 40;
  double invalid_rate = 0.03; // share of transactions with a bad op
  size_t max_payload = 700;
  double large_payload_rate = 0.02;  // payloads of 4-40 KiB
  double remove_rate = 0.01;         // share of transactions removing a PG
  // Pool of the PGs it creates. Workloads with different pools touch
  // disjoint PGs (and, for pool != 1, disjoint embedder keys
  // "osd.key.<pool>.N"), so several can run against one store at once.
  // Do not use pool 2: the invalid transactions name PG 2.3e7.
  int64_t pool = 1;
  // Prefix of the embedder keys it puts (empty: as the pool says above),
  // for workloads that share a pool but not their keys.
  std::string key_prefix;
};

class RandomWorkload {
 public:
  RandomWorkload(uint64_t seed, WorkloadParams p) : rng_(seed), p_(p) {}
  // A transaction to apply given the model's current state.
  Transaction Next(const LogModel& model) { return Next(model, nullptr); }
  // The same for writers that share PGs: `model` holds only the PGs the
  // caller has locked, and a PG it creates is one of `creatable` (locked PGs
  // that do not exist; none if empty). `model` must hold a PG or
  // `creatable` one.
  Transaction Next(const LogModel& model, const std::vector<PgId>* creatable);
  std::mt19937_64& rng() { return rng_; }

 private:
  std::string Payload(uint64_t tag);
  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  void OsdWrite(const PgId& id, const ModelPg& pg, Transaction* t);

  std::mt19937_64 rng_;
  WorkloadParams p_;
  uint32_t epoch_ = 1;
  uint64_t counter_ = 0;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_RANDOM_WORKLOAD_H_
