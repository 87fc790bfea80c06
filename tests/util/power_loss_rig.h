// power_loss_rig.h — a store on a fault-injecting memory device, with its own
// RocksDB on a fault-injecting FileSystem, and power loss. Every power-loss
// test builds its disk and RocksDB here (crash_rig.h adds the campaigns'
// workload and oracle), so the crash model is set up and applied one way.
#ifndef PGRING_TESTS_UTIL_POWER_LOSS_RIG_H_
#define PGRING_TESTS_UTIL_POWER_LOSS_RIG_H_

#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/fault_injection_device.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "util/fault_injection_fs.h"
#include "util/test_util.h"

namespace pgring::testing {

// The disk a PowerLossRig makes. The defaults are the targeted tests'.
struct PowerLossDisk {
  uint64_t partition_bytes = 16 << 20;  // what the store opens
  uint32_t block_size = 4096;           // the disk's logical block size
  FaultInjectionDevice::Options fault;  // timed, seed, tear_unit
  // A data partition of partition_bytes after the store's, on the same disk
  // (the shared flush: the OSD's data writes and the log share its cache).
  bool data_partition = false;
  // RocksDB's files on the same disk: each RocksDB sync flushes it first.
  bool sync_flushes_disk = false;
};

class PowerLossRig {
 public:
  using Wrap = std::function<std::shared_ptr<BlockDevice>(std::shared_ptr<BlockDevice>)>;
  // `wrap`, if given, puts another device between the store and its
  // partition (power loss still acts on the fault injector).
  explicit PowerLossRig(const PowerLossDisk& disk, const Wrap& wrap = nullptr);
  explicit PowerLossRig(uint64_t device_bytes = 16 << 20, const Wrap& wrap = nullptr);

  absl::Status Mkfs(const MkfsOptions& m);
  // Closes the open store, if any, and opens it again with `o`.
  absl::Status Open(const Options& o);
  // Power is lost now (if no crash point fired yet): the store is closed
  // without a flush, the disk keeps what `image` says (`seed`: which of the
  // versions), RocksDB loses its unsynced data (whole, or with
  // `random_fs_drop` a random part of each file, from `seed`), and the FS
  // has power again.
  absl::Status PowerLoss(FaultInjectionDevice::CrashImage image, uint64_t seed = 1,
                         bool random_fs_drop = false);

  // Closes the open store, if any, and destroys it (which releases its
  // RocksDB): Close()'s status.
  absl::Status Close();

  // The store's RocksDB read-only (the store closed, or it holds the lock).
  absl::StatusOr<std::unique_ptr<rocksdb::DB>> OpenDbReadOnly() const;

  Store* store() const { return store_.get(); }
  FaultInjectionDevice* crash_device() const { return crash_dev_.get(); }
  // PowerLossDisk::data_partition: the data partition; else null.
  BlockDevice* data_partition() const { return data_.get(); }
  FaultInjectionFileSystem* fs() const { return fs_.get(); }
  // The store's own RocksDB: its directory and the Env over fs().
  std::string db_path() const { return dir_.Join("db"); }
  rocksdb::Env* env() const { return env_.get(); }

 private:
  MetadataLocation meta() const { return MetadataLocation::OwnDb(db_path()); }

  TempDir dir_;
  std::shared_ptr<FaultInjectionDevice> crash_dev_;  // the whole disk
  std::shared_ptr<BlockDevice> dev_;                 // what the store sees
  std::shared_ptr<BlockDevice> data_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<Store> store_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_POWER_LOSS_RIG_H_
