// osd_model.h — what a Ceph OSD puts in its metadata transaction for one
// client write, expressed as a pgring Transaction. The fio engine calls
// SubmitWrite() once per fio write; the data write itself is the engine's.
//
// Per write to byte `offset` of the data partition:
//   object  = offset / object_size
//   PG      = ceph_stable_mod(jenkins(object), pgs)      (Ceph's placement)
//   batch   : onode.<object> = onode_size + oi_attr_len bytes (the OSD's
//             onode with its object-info attr; none when both are 0, to see
//             pgring's own RocksDB traffic)
//   log     : AppendEntry(PG, epoch'version, entry_min..entry_max bytes)
//   info    : SetInfo(PG, the full info (info_size bytes) when the write
//             trims or every full_info_every-th write, else the fastinfo)
//   trim    : Ceph's calc_trim_to_aggressive() (the pglog_hardlimit path, the
//             default since Nautilus): once the log holds more than the target
//             (osd_target_pg_log_entries_per_osd / PGs, clamped to
//             [osd_min_pg_log_entries, osd_max_pg_log_entries]) by at least
//             osd_pg_log_trim_min, trim the oldest entries (at most
//             osd_pg_log_trim_max, never past the last committed version) and,
//             as PGLog::IndexedLog::trim() does, turn each trimmed entry within
//             osd_pg_log_dups_tracked versions of the head into a dup_size-byte dup (57)
//             and drop the dups older than that — all in the same transaction.
// A trim moves the info's log_tail, which pg_fast_info_t does not carry, so
// Ceph writes the full pg_info_t with every trimming write; that is why the
// full info goes with every trim here.
//
// Payloads are deterministic functions of (PG, version) — of (object, version)
// for onodes — so CheckStore() can recompute every byte the store must hold.
//
// Thread safety: SubmitWrite() and OnCommitted() may be called from any
// thread. Writes to one PG are serialised by the PG's lock, which is held
// across Store::Submit so that versions reach the store in increasing order.
#ifndef PGRING_TOOLS_FIO_ENGINE_OSD_MODEL_H_
#define PGRING_TOOLS_FIO_ENGINE_OSD_MODEL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ack_record.h"
#include "engine_config.h"
#include "pgring/store.h"
#include "pgring/transaction.h"
#include "pgring/types.h"

namespace pgring::fio {

// The first pool's id; pool i (0-based, one per fio job unless
// pgring_single_pool_mode) is kFirstPool + i.
inline constexpr int64_t kFirstPool = 1;

// The model keeps its PGs, every pool's, in one array: PG `seed` of pool
// index p is slot p * pgs_per_pool + seed. These map a slot to its PgId and
// back (SlotOf: nullopt for a PG outside the model's pools).
PgId PgIdOfSlot(uint32_t slot, uint32_t pgs_per_pool);
std::optional<uint32_t> SlotOf(const PgId& id, uint32_t pgs_per_pool, uint32_t pools);

// Ceph's ceph_stable_mod(): maps a hash onto [0, b) so that growing b splits
// PGs instead of reshuffling them.
uint32_t CephStableMod(uint32_t x, uint32_t b);
// 64 pseudo-random bits drawn from (tag, a, b): what the payloads are made of.
uint64_t PayloadMix(char tag, uint64_t a, uint64_t b);
// Bob Jenkins' one-at-a-time hash of the object number's 8 little-endian bytes.
uint32_t ObjectHash(uint64_t object);

// The deterministic payloads. `tag` distinguishes the kinds.
std::string EntryPayload(const EngineConfig& c, uint32_t pg, uint64_t version);
std::string DupPayload(const EngineConfig& c, uint32_t pg, uint64_t version);
std::string InfoPayload(const EngineConfig& c, uint32_t pg, uint64_t version, bool full);
std::string OnodeKey(uint64_t object);
std::string OnodePayload(const EngineConfig& c, uint64_t object, uint64_t version);

// Counters of what the model has put into transactions (submitted ones).
struct ModelCounters {
  std::atomic<uint64_t> entries{0};
  std::atomic<uint64_t> entry_bytes{0};
  std::atomic<uint64_t> dups{0};
  std::atomic<uint64_t> trims{0};            // transactions that trimmed the log
  std::atomic<uint64_t> entries_trimmed{0};
  std::atomic<uint64_t> dups_trimmed{0};
  std::atomic<uint64_t> full_infos{0};
  std::atomic<uint64_t> fast_infos{0};
  std::atomic<uint64_t> onode_bytes{0};
  std::atomic<uint64_t> prefill_entries{0};  // written by Setup(), not by fio
  std::atomic<uint64_t> prefill_dups{0};
};

// One PG's expected log: what the store must hold once every submitted
// transaction has committed.
struct PgExpectation {
  uint32_t epoch = 1;
  uint64_t head = 0;         // newest entry version (0: none ever)
  uint64_t first_entry = 1;  // oldest live entry; > head when the log is empty
  uint64_t first_dup = 1;    // live dups are [first_dup, last_dup]
  uint64_t last_dup = 0;
  uint64_t info_version = 0; // the info written with this version...
  bool info_full = true;     // ...full or fast
  std::optional<std::string> loaded_info;  // info found at open, if not rewritten since
  uint64_t writes = 0;       // fio writes to this PG in this run

  uint64_t entries() const { return head >= first_entry ? head - first_entry + 1 : 0; }
  uint64_t dups() const { return last_dup >= first_dup ? last_dup - first_dup + 1 : 0; }
};

// What the log check found.
struct CheckResult {
  uint64_t pgs = 0;
  uint64_t entries = 0;
  uint64_t dups = 0;
  std::vector<std::string> errors;  // at most the first `max_errors`
  uint64_t error_count = 0;
};

class OsdModel {
 public:
  explicit OsdModel(const EngineConfig& config);
  OsdModel(const OsdModel&) = delete;
  OsdModel& operator=(const OsdModel&) = delete;

  const EngineConfig& config() const { return config_; }
  uint64_t target_log_entries() const { return target_; }

  // The PG (seed, within its pool) of an object.
  uint32_t PgOf(uint64_t object) const { return CephStableMod(ObjectHash(object), config_.pgs); }
  // The model's PGs are slots 0 .. slots() - 1 (see PgIdOfSlot); a
  // WriteOp's `pg`, Expectation() and the payloads take a slot.
  uint32_t slots() const { return static_cast<uint32_t>(pgs_.size()); }
  PgId PgIdOf(uint32_t slot) const { return PgIdOfSlot(slot, config_.pgs); }

  // Loads the state of the PGs the store already holds and creates the
  // missing ones in one transaction; with `prefill`, fills each new PG with
  // the entries and dups of a PG in steady state (see Prefill in the .cc).
  absl::Status Setup(Store* store);

  struct WriteOp {
    uint32_t pg = 0;  // the slot
    uint64_t version = 0;
  };
  using WriteDone = std::function<void(WriteOp, absl::Status)>;

  // Builds the transaction of an OSD write to `object` of pool index
  // `pool` (< config().pools; kInvalidArgument otherwise), makes it wait for
  // `gate` (the data write), and submits it. On a Submit error nothing is
  // changed and the error is returned; otherwise `done` is called once, when
  // the transaction commits or fails. With pgring_no_pg_log the transaction
  // holds only the onode (WriteOp::version 0): see SubmitWriteWithoutLog.
  absl::StatusOr<WriteOp> SubmitWrite(Store* store, uint64_t object,
                                      std::shared_ptr<CommitGate> gate, WriteDone done,
                                      uint32_t pool = 0);

  // Checks that `store` holds exactly the expected log, dups and info of
  // every PG: counts, versions and every payload byte.
  CheckResult CheckStore(const Store& store, size_t max_errors = 20) const;

  PgExpectation Expectation(uint32_t pg) const;

  // From now on, note every write's version in `record` as it is submitted
  // and as it is acknowledged (pgring_ack_file). Call before any SubmitWrite.
  void SetAckRecord(AckRecord* record) { ack_record_ = record; }
  const ModelCounters& counters() const { return counters_; }

 private:
  struct PgState {
    mutable std::mutex mu;
    PgExpectation x;                    // guarded by mu
    std::atomic<uint64_t> committed{0}; // newest committed version
  };

  absl::Status Prefill(Store* store, const std::vector<uint32_t>& pgs);
  // pgring_no_pg_log: the OSD write without its PG log (no entry, info, trim
  // or dup), only the onode and the data write's gate. The floor of the
  // comparison: what any PG log backend adds its cost to.
  absl::StatusOr<WriteOp> SubmitWriteWithoutLog(Store* store, uint32_t slot, uint64_t object,
                                                std::shared_ptr<CommitGate> gate, WriteDone done);

  const EngineConfig config_;
  const uint64_t target_;
  std::vector<std::unique_ptr<PgState>> pgs_;
  ModelCounters counters_;
  std::atomic<uint64_t> no_log_writes_{0};
  AckRecord* ack_record_ = nullptr;
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_OSD_MODEL_H_
