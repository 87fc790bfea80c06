// open_store.h — the internal entry points behind pgring::Mkfs and
// pgring::Store::Open, with hooks tests use to put a memory or fault-injecting
// device under the store and a fault-injecting Env under its RocksDB.
#ifndef PGRING_STORE_OPEN_STORE_H_
#define PGRING_STORE_OPEN_STORE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "format/label.h"
#include "pgring/store.h"

namespace rocksdb {
class Env;
}

namespace pgring {

struct OpenHooks {
  // Use this device instead of opening the path.
  std::shared_ptr<BlockDevice> device;
  // Env for pgring's own RocksDB.
  rocksdb::Env* env = nullptr;
};

// The first kLabelRegionSize bytes of the partition `name`;
// kFailedPrecondition when the device is too small to hold them.
absl::StatusOr<std::string> ReadLabelRegion(BlockDevice* dev, std::string_view name);
// Writes `label`'s region (the label, zeros after it) and flushes.
absl::Status WriteLabelRegion(BlockDevice* dev, const Label& label);

absl::Status MkfsWithHooks(const std::string& device_path, const MetadataLocation& meta,
                           const MkfsOptions& options, const OpenHooks& hooks);

absl::StatusOr<std::unique_ptr<Store>> OpenWithHooks(const std::string& device_path,
                                                     const MetadataLocation& meta,
                                                     const Options& options,
                                                     const OpenHooks& hooks);

class MetadataDb;

// Options::verify_on_open's check, which OpenWithHooks runs once it has read
// the label and pgring.meta and before it writes anything: the checks
// pgring::Verify runs (check/fsck.h; `deep` as VerifyOptions::deep), on the
// partition `dev` (named `dev_name` in messages) and the RocksDB `db` that
// Open has open. OK when they find no error (notes pass); otherwise
// kDataLoss naming the first three errors and how many there are. Errors
// reading the label or pgring.meta are the device's or RocksDB's.
//
// Defined in check/verify.cc: the checker is the check layer's, above this
// one (docs/DESIGN.md §1). Open calls up into it through this declaration
// alone, so that the store layer includes nothing of check/ and there is
// still one checker, whoever runs it.
absl::Status VerifyAtOpen(const std::shared_ptr<BlockDevice>& dev, const std::string& dev_name,
                          MetadataDb* db, bool deep);

}  // namespace pgring

#endif  // PGRING_STORE_OPEN_STORE_H_
