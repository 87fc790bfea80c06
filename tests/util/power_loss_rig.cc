#include "util/power_loss_rig.h"

#include "device/memory_block_device.h"
#include "store/open_store.h"

namespace pgring::testing {

PowerLossRig::PowerLossRig(uint64_t device_bytes, const Wrap& wrap)
    : crash_dev_(std::make_shared<FaultInjectionDevice>(
          std::make_shared<MemoryBlockDevice>(device_bytes))),
      dev_(wrap ? wrap(crash_dev_) : crash_dev_),
      fs_(std::make_shared<FaultInjectionFileSystem>()) {
  fs_->set_skip_real_syncs(true);
  env_ = rocksdb::NewCompositeEnv(fs_);
}

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

absl::Status PowerLossRig::PowerLoss(FaultInjectionDevice::CrashImage image) {
  crash_dev_->CrashNow();
  fs_->SetActive(false);
  if (store_) store_->Close().IgnoreError();
  store_.reset();
  absl::Status s = crash_dev_->MakeCrashImage(image, 1);
  if (!s.ok()) return s;
  s = fs_->DropUnsyncedData();
  fs_->ResetState();
  return s;
}

}  // namespace pgring::testing
