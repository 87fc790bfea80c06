#include "util/power_loss_rig.h"

#include "device/memory_block_device.h"
#include "store/open_store.h"
#include "util/partition_view.h"

namespace pgring::testing {

PowerLossRig::PowerLossRig(const PowerLossDisk& disk, const Wrap& wrap)
    : crash_dev_(std::make_shared<FaultInjectionDevice>(
          std::make_shared<MemoryBlockDevice>(
              disk.data_partition ? 2 * disk.partition_bytes : disk.partition_bytes,
              disk.block_size),
          disk.fault)),
      fs_(std::make_shared<FaultInjectionFileSystem>()) {
  std::shared_ptr<BlockDevice> partition = crash_dev_;
  if (disk.data_partition) {
    partition = std::make_shared<PartitionView>(crash_dev_, 0, disk.partition_bytes);
    data_ = std::make_shared<PartitionView>(crash_dev_, disk.partition_bytes,
                                            disk.partition_bytes);
  }
  dev_ = wrap ? wrap(partition) : partition;
  fs_->set_skip_real_syncs(true);
  if (disk.sync_flushes_disk) {
    // One disk cache. A flush after the power loss fails, and changes
    // nothing.
    fs_->SetSyncFlushesAlso([dev = crash_dev_.get()] { dev->Flush().IgnoreError(); });
  }
  env_ = rocksdb::NewCompositeEnv(fs_);
}

namespace {

PowerLossDisk Partition(uint64_t bytes) {
  PowerLossDisk d;
  d.partition_bytes = bytes;
  return d;
}

}  // namespace

PowerLossRig::PowerLossRig(uint64_t device_bytes, const Wrap& wrap)
    : PowerLossRig(Partition(device_bytes), wrap) {}

absl::Status PowerLossRig::Mkfs(const MkfsOptions& m) {
  return MkfsWithHooks("mem", meta(), m, OpenHooks{dev_, env_.get()});
}

absl::Status PowerLossRig::Open(const Options& o) {
  store_.reset();
  auto s = OpenWithHooks("mem", meta(), o, OpenHooks{dev_, env_.get()});
  if (!s.ok()) return s.status();
  store_ = std::move(s).value();
  return absl::OkStatus();
}

absl::Status PowerLossRig::Close() {
  absl::Status s;
  if (store_) s = store_->Close();
  store_.reset();
  return s;
}

absl::StatusOr<std::unique_ptr<rocksdb::DB>> PowerLossRig::OpenDbReadOnly() const {
  rocksdb::Options o;
  o.env = env_.get();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(o, db_path(), &raw);
  if (!s.ok()) return FromRocksDbStatus(s);
  return std::unique_ptr<rocksdb::DB>(raw);
}

absl::Status PowerLossRig::PowerLoss(FaultInjectionDevice::CrashImage image, uint64_t seed,
                                     bool random_fs_drop) {
  crash_dev_->CrashNow();  // no-op if a crash point already fired
  fs_->SetActive(false);
  if (store_) store_->Close().IgnoreError();
  store_.reset();
  absl::Status s = crash_dev_->MakeCrashImage(image, seed);
  if (!s.ok()) return s;
  s = random_fs_drop ? fs_->DropRandomUnsyncedData(seed) : fs_->DropUnsyncedData();
  fs_->ResetState();  // power back on (SetActive(true)), crash points cleared
  return s;
}

}  // namespace pgring::testing
