// Mkfs and Store::Open: check that the partition and the RocksDB belong
// together, then hand over to the backend the label names.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/interrupted_expand.h"
#include "format/label.h"
#include "format/metadata_keys.h"
#include "pgring/device.h"
#include "store/metadata_db.h"
#include "store/open_store.h"
#include "store/ring/ring_store.h"
#include "store/rocksdb/rocksdb_log_store.h"
#include "util/status_macros.h"
#include "util/sync.h"

namespace pgring {
namespace {

absl::StatusOr<std::shared_ptr<BlockDevice>> OpenDevice(const std::string& path,
                                                        const OpenHooks& hooks,
                                                        bool read_only, IoEngine engine,
                                                        uint32_t queue_depth) {
  if (hooks.device) return hooks.device;
  FileBlockDeviceOptions o;
  o.read_only = read_only;
  o.use_io_uring = engine == IoEngine::kIoUring;
  o.queue_depth = queue_depth;
  ASSIGN_OR_RETURN(auto dev, OpenFileBlockDevice(path, o));
  return std::shared_ptr<BlockDevice>(std::move(dev));
}

std::string DeviceName(const std::string& path, const OpenHooks& hooks) {
  return hooks.device ? std::string("the partition") : path;
}

// The Env pgring's own RocksDB is opened with: the tests' hook, else the
// embedder's option, else null (RocksDB's default).
absl::StatusOr<rocksdb::Env*> MetadataEnv(const MetadataLocation& meta,
                                          const std::shared_ptr<rocksdb::Env>& option,
                                          const OpenHooks& hooks) {
  if (option != nullptr && meta.db != nullptr) {
    return absl::InvalidArgumentError(
        "rocksdb_env is for the RocksDB pgring opens itself; the embedder's RocksDB does its "
        "I/O through the Env of its own options");
  }
  return hooks.env != nullptr ? hooks.env : option.get();
}

// The embedder's RocksDB was opened with its own options: only the default
// (nothing asked for) goes with it.
absl::Status CheckRocksDbOptions(const MetadataLocation& meta, const std::string& options) {
  if (meta.db != nullptr && options != kBlueStoreRocksDbOptions) {
    return absl::InvalidArgumentError(
        "rocksdb_options are for the RocksDB pgring opens itself; the embedder's RocksDB has "
        "the options it was opened with");
  }
  return absl::OkStatus();
}

// Hooks that put the caller's device under the store, claimed for it.
absl::StatusOr<OpenHooks> DeviceHooks(const std::shared_ptr<Device>& device, bool for_writing) {
  OpenHooks h;
  ASSIGN_OR_RETURN(h.device, ClaimForStore(device, for_writing));
  return h;
}

absl::StatusOr<Label> ReadLabel(BlockDevice* dev, const std::string& name) {
  ASSIGN_OR_RETURN(std::string region, ReadLabelRegion(dev, name));
  auto label = DecodeLabelRegion(region, name);
  if (label.status().code() == absl::StatusCode::kDataLoss) {
    return absl::DataLossError(absl::StrCat(name, ": ", label.status().message()));
  }
  return label;
}

}  // namespace

absl::StatusOr<std::string> ReadLabelRegion(BlockDevice* dev, std::string_view name) {
  if (dev->size() < kLabelRegionSize) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is %u bytes, too small to hold a pgring label", name, dev->size()));
  }
  AlignedBuffer buf(kLabelRegionSize);
  if (absl::Status s = dev->Read(0, buf.span()); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("%s: reading the label: %s", name, s.message()));
  }
  return std::string(buf.data(), kLabelRegionSize);
}

absl::Status MkfsWithHooks(const std::string& device_path, const MetadataLocation& meta,
                           const MkfsOptions& options, const OpenHooks& hooks) {
  ASSIGN_OR_RETURN(auto dev, OpenDevice(device_path, hooks, false, IoEngine::kPsync, 4));
  const std::string name = DeviceName(device_path, hooks);
  if (!options.force) {
    auto existing = ReadLabel(dev.get(), name);
    if (existing.ok()) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "%s already holds pgring store %s; mkfs refuses to overwrite it without force",
          name, existing->uuid.ToString()));
    }
    if (absl::IsDataLoss(existing.status())) {
      return absl::AlreadyExistsError(absl::StrCat(
          name, " holds a damaged pgring label; mkfs refuses to overwrite it without force"));
    }
  }
  ASSIGN_OR_RETURN(Label label, MakeLabel(dev->size(), dev->logical_block_size(), options.size,
                                          options.chunk_size, options.backend));
  ASSIGN_OR_RETURN(rocksdb::Env* env, MetadataEnv(meta, options.rocksdb_env, hooks));
  RETURN_IF_ERROR(CheckRocksDbOptions(meta, options.rocksdb_options));
  ASSIGN_OR_RETURN(auto db,
                   MetadataDb::Open(meta, /*create=*/true, false, env, options.rocksdb_options));
  rocksdb::WriteBatch batch;
  // Drop whatever an earlier store left in this DB (only with force).
  std::vector<std::string> old_keys;
  RETURN_IF_ERROR(db->Scan(kKeyPrefix, [&](std::string_view k, std::string_view) {
    old_keys.emplace_back(k);
    return absl::OkStatus();
  }));
  if (!old_keys.empty() && !options.force) {
    return absl::AlreadyExistsError(absl::StrCat(
        db->description(), " already holds a pgring store; mkfs refuses to overwrite it without force"));
  }
  for (const auto& k : old_keys) batch.Delete(db->cf(), k);
  batch.Put(db->cf(), std::string(kMetaKey), StoreMeta::ForLabel(label).Encode());
  RETURN_IF_ERROR(db->WriteSync(&batch));
  // The label last: a partition with a label always has its metadata.
  return WriteLabelRegion(dev.get(), label);
}

absl::Status WriteLabelRegion(BlockDevice* dev, const Label& label) {
  std::string enc = label.Encode();
  AlignedBuffer buf(kLabelRegionSize);
  std::memcpy(buf.data(), enc.data(), enc.size());
  RETURN_IF_ERROR(dev->Write(0, buf.span()));
  return dev->Flush();
}

absl::StatusOr<std::unique_ptr<Store>> OpenWithHooks(const std::string& device_path,
                                                     const MetadataLocation& meta,
                                                     const Options& options,
                                                     const OpenHooks& hooks) {
  ASSIGN_OR_RETURN(auto dev, OpenDevice(device_path, hooks, options.read_only,
                                        options.io_engine, options.io_queue_depth));
  const std::string name = DeviceName(device_path, hooks);
  ASSIGN_OR_RETURN(Label label, ReadLabel(dev.get(), name));
  RETURN_IF_ERROR(CheckDeviceSize(label, dev->size(), name));
  if (dev->logical_block_size() > label.block_size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has %u-byte logical blocks but the store was made with %u-byte blocks", name,
        dev->logical_block_size(), label.block_size));
  }
  // The store's copy of `options` holds the Env while the DB is open.
  ASSIGN_OR_RETURN(rocksdb::Env* env, MetadataEnv(meta, options.rocksdb_env, hooks));
  RETURN_IF_ERROR(CheckRocksDbOptions(meta, options.rocksdb_options));
  ASSIGN_OR_RETURN(auto db, MetadataDb::Open(meta, false, options.read_only, env,
                                             options.rocksdb_options));
  ASSIGN_OR_RETURN(auto value, db->Get(kMetaKey));
  if (!value) {
    return absl::FailedPreconditionError(absl::StrCat(
        db->description(), " holds no pgring store (no pgring.meta key)"));
  }
  auto m = StoreMeta::Decode(*value);
  if (!m.ok()) return absl::DataLossError(absl::StrCat(db->description(), ": ", m.status().message()));
  if (IsInterruptedExpand(label, *m)) {
    // A growth the crash cut between its label write and its metadata
    // write: finish it (the new chunks were never used).
    *m = GrownMeta(label, *std::move(m));
    if (!options.read_only) {
      rocksdb::WriteBatch batch;
      batch.Put(db->cf(), std::string(kMetaKey), m->Encode());
      RETURN_IF_ERROR(db->WriteSync(&batch));
    }
  }
  RETURN_IF_ERROR(CheckMetaMatchesLabel(label, *m, name, db->description()));
  if (label.backend == Backend::kRocksDb) {
    return RocksDbLogStore::Open(std::move(dev), std::move(db), label, *m, options);
  }
  return RingStore::Open(std::move(dev), std::move(db), label, *m, options);
}

absl::Status Mkfs(const std::string& device_path, const MetadataLocation& meta,
                  const MkfsOptions& options) {
  return MkfsWithHooks(device_path, meta, options, OpenHooks{});
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& device_path,
                                                   const MetadataLocation& meta,
                                                   const Options& options) {
  return OpenWithHooks(device_path, meta, options, OpenHooks{});
}

absl::Status Mkfs(std::shared_ptr<Device> device, const MetadataLocation& meta,
                  const MkfsOptions& options) {
  ASSIGN_OR_RETURN(OpenHooks hooks, DeviceHooks(device, /*for_writing=*/true));
  return MkfsWithHooks("", meta, options, hooks);
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(std::shared_ptr<Device> device,
                                                   const MetadataLocation& meta,
                                                   const Options& options) {
  ASSIGN_OR_RETURN(OpenHooks hooks, DeviceHooks(device, !options.read_only));
  return OpenWithHooks("", meta, options, hooks);
}

absl::Status Store::Commit(Transaction txn) {
  Notification done;
  absl::Status result;
  absl::Status s = Submit(std::move(txn), [&](absl::Status st) {
    result = st;
    done.Notify();
  });
  if (!s.ok()) return s;
  done.WaitForNotification();
  return result;
}

}  // namespace pgring
