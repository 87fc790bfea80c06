// power_loss_rig.h — a store on a fault-injecting memory device, with its own
// RocksDB on a fault-injecting FileSystem, and power loss: the setup the
// targeted crash tests share (crash_test's chunk-reuse cases,
// commit_pipeline_test).
#ifndef PGRING_TESTS_UTIL_POWER_LOSS_RIG_H_
#define PGRING_TESTS_UTIL_POWER_LOSS_RIG_H_

#include <rocksdb/env.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "device/fault_injection_device.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "util/fault_injection_fs.h"
#include "util/test_util.h"

namespace pgring::testing {

class PowerLossRig {
 public:
  using Wrap = std::function<std::shared_ptr<BlockDevice>(std::shared_ptr<BlockDevice>)>;
  // `wrap`, if given, puts another device between the store and the fault
  // injector (power loss still acts on the fault injector).
  explicit PowerLossRig(uint64_t device_bytes = 16 << 20, const Wrap& wrap = nullptr);

  absl::Status Mkfs(const MkfsOptions& m);
  // Closes the open store, if any, and opens it again with `o`.
  absl::Status Open(const Options& o);
  // Power is lost now: the store is closed without a flush, the partition
  // keeps what `image` says, and RocksDB loses what it had not synced.
  absl::Status PowerLoss(FaultInjectionDevice::CrashImage image);

  // Closes the open store, if any, and destroys it (which releases its
  // RocksDB): Close()'s status.
  absl::Status Close();

  Store* store() const { return store_.get(); }
  FaultInjectionDevice* crash_device() const { return crash_dev_.get(); }
  FaultInjectionFileSystem* fs() const { return fs_.get(); }
  // The store's own RocksDB: its directory and the Env over fs().
  std::string db_path() const { return dir_.Join("db"); }
  rocksdb::Env* env() const { return env_.get(); }

 private:
  MetadataLocation meta() const { return MetadataLocation::OwnDb(db_path()); }

  TempDir dir_;
  std::shared_ptr<FaultInjectionDevice> crash_dev_;
  std::shared_ptr<BlockDevice> dev_;  // what the store sees
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<Store> store_;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_POWER_LOSS_RIG_H_
