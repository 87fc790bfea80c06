// crash_rig.h — the power-loss campaigns' rig (docs/RELIABILITY.md, "2.
// Power loss"): on power_loss_rig.h's disk and RocksDB (with the shared
// flush, an OSD data partition on the same disk), a random workload that
// records the model after every submitted transaction, and the strict
// oracle that checks the reopened store against those models. crash_test
// gives every crash point a fresh rig; crash_generations_test takes one
// store through many crashes, each workload going on from the state the
// previous recovery matched.
#ifndef PGRING_TESTS_UTIL_CRASH_RIG_H_
#define PGRING_TESTS_UTIL_CRASH_RIG_H_

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device/fault_injection_device.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "pgring/transaction.h"
#include "util/fault_injection_fs.h"
#include "util/log_model.h"
#include "util/power_loss_rig.h"
#include "util/random_workload.h"

namespace pgring::testing {

// Operation kinds for the campaigns' tallies: the transaction op types, then
// chunk grow and shrink (a touched PG's chunk count rose or fell at staging).
enum CrashTallyKind {
  kTCreate, kTRemove, kTAppend, kTInfo, kTDup, kTTrimDups, kTTrim, kTRewind, kTReset,
  kTChunkGrow, kTChunkShrink, kCrashTallyKinds
};
extern const char* const kCrashTallyNames[kCrashTallyKinds];
// The op-type bits of `t` (no chunk bits).
uint32_t CrashOpMask(const Transaction& t);
// "name=count,..." of `counts`.
std::string CrashTallyKinds(const std::array<uint64_t, kCrashTallyKinds>& counts);

// What a rig's store is: backend, layout, modes, and the disk around it.
struct CrashConfig {
  Backend backend = Backend::kRing;
  DurabilityMode mode = DurabilityMode::kGroupCommit;
  TailBlockPolicy policy = TailBlockPolicy::kRewriteTailBlock;
  LogLayout layout = LogLayout::kPerPgRings;
  bool shared_flush = false;  // gated data writes sharing the log's flush
  // Options::metadata_sync_flushes_partition, and the RocksDB files on the
  // same simulated disk as the partition: each RocksDB sync flushes it.
  bool sync_covers = false;
  uint64_t device_size = 32ull << 20;
  // The disk's logical block size (512: what BLKSSZGET reports on 512e and
  // 512n drives), and the fault device's model of it: timed (writes
  // complete out of order after delays, flushes cover what completed before
  // they began; FaultInjectionDevice::Options) and the unit a power loss
  // tears at (0: the logical block; 512 inside a 4096-byte block: the
  // sub-block model).
  uint32_t block_size = 4096;
  bool timed = false;
  uint32_t tear_unit = 0;
  uint64_t device_seed = 1;  // the timed device's delays
  // The stream written once (home_bytes 0) and cleaned by restating the PGs
  // that pin it (docs/DESIGN.md, "Cleaning the stream").
  bool write_once = false;
};

// The store options the campaigns open with (the stream small, homing two
// blocks at a time and force-homing early, a block per forced home).
Options CrashStoreOptions(const CrashConfig& c);

// The workload shape of the campaigns.
WorkloadParams CrashWorkloadParams();

// Models after submitted transactions: (global index of the next
// transaction, model), oldest first.
using CrashSnapshots = std::deque<std::pair<size_t, LogModel>>;

struct CrashWorkResult {
  // Transactions [0, durable) are acknowledged durable: the recovered state
  // must hold them.
  size_t durable = 0;
  size_t submitted = 0;  // global index after the last submitted transaction
  // A Submit refused or a callback reported an error (expected only once
  // the power is gone); the first such status.
  absl::Status error;
  // A lower bound on the chunks allocated during the workload: the sum of
  // the rises of the owned count (total - free) seen around each
  // submission. Only with `masks`.
  uint64_t chunk_allocs = 0;
};

class CrashRig {
 public:
  explicit CrashRig(const CrashConfig& c);

  const CrashConfig& config() const { return config_; }
  // The options the next Open (Fresh, Verify) uses.
  Options& options() { return options_; }

  // Mkfs on the rig's new disk and RocksDB, and opens the store (once per
  // rig). Fatal failures through gtest.
  void Fresh();

  // Submits `txns` valid transactions of `work` from `start` (the model of
  // the store's state, whose global index is `first`), in waves of 1-4,
  // until done or the power goes. Appends to `snapshots` the model after
  // each submitted transaction, dropping those below the durable watermark
  // (keeps the last one). `masks` (if given) gets each submitted
  // transaction's CrashTallyKind mask; `before_submit` (if given) runs
  // before the submission of transaction i (global). `data_seed` names the
  // shared flush's data blocks.
  CrashWorkResult Work(RandomWorkload* work, const LogModel& start, size_t first, size_t txns,
                       CrashSnapshots* snapshots, std::vector<uint32_t>* masks = nullptr,
                       const std::function<void(size_t)>& before_submit = {},
                       uint64_t data_seed = 0);

  // Power is lost (now, if no crash point fired): the store is closed
  // without a flush, the partition keeps what `image` says, RocksDB loses
  // its unsynced data (whole, or a random part of each file).
  void PowerLoss(FaultInjectionDevice::CrashImage image, uint64_t seed, bool random_fs_drop);

  // Reopens with options() and checks the state against the snapshots at or
  // after `durable`: the first (by index) that matches the store and whose
  // embedder keys match RocksDB's. Also: chunks owned once and none leaked;
  // with the shared flush, every transaction of the matched prefix finds
  // its data block. On success sets *match (if given) to the matched
  // snapshot; the store stays open if `keep_open`. `pgring_keys` (if given)
  // gets pgring's own RocksDB keys as the crash left them (before the store
  // opened). Fatal failures through gtest.
  void Verify(size_t durable, const CrashSnapshots& snapshots, const std::string& what,
              uint64_t data_seed, bool keep_open = false,
              std::pair<size_t, LogModel>* match = nullptr,
              std::map<std::string, std::string>* pgring_keys = nullptr);

  // Shared flush: transaction i's data block (its own block, so a later
  // write cannot hide a lost one).
  static constexpr uint64_t kDataBlock = 4096;
  uint64_t DataOffset(size_t i) const {
    return (i % (config_.device_size / kDataBlock)) * kDataBlock;
  }
  static std::string DataBlock(uint64_t seed, size_t i);

  FaultInjectionDevice* dev() const { return rig_.crash_device(); }
  FaultInjectionFileSystem* fs() const { return rig_.fs(); }
  Store* store() const { return rig_.store(); }

 private:
  CrashConfig config_;
  Options options_;
  PowerLossRig rig_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_CRASH_RIG_H_
