// Mkfs and Store::Open: check the options (store/options_check.h) and that
// the partition and the RocksDB belong together, check the store when
// Options::verify_on_open asks (VerifyAtOpen, store/open_store.h), then hand
// over to the backend the label names.
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
#include "store/options_check.h"
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
// embedder's option, else null (RocksDB's default). (The option with an
// embedder's RocksDB was refused by CheckOptions or CheckMkfsOptions.)
rocksdb::Env* MetadataEnv(const std::shared_ptr<rocksdb::Env>& option, const OpenHooks& hooks) {
  return hooks.env != nullptr ? hooks.env : option.get();
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
  RETURN_IF_ERROR(CheckMkfsOptions(options, /*embedder_db=*/meta.db != nullptr));
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
  ASSIGN_OR_RETURN(auto db, MetadataDb::Open(meta, /*create=*/true, false,
                                             MetadataEnv(options.rocksdb_env, hooks),
                                             options.rocksdb_options));
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
  // Every rule on the options, once, before anything is written (the
  // metadata of an interrupted expand below is).
  RETURN_IF_ERROR(CheckOptions(options, OptionsContext{.backend = label.backend,
                                                       .chunk_size = label.chunk_size,
                                                       .embedder_db = meta.db != nullptr}));
  // The store's copy of `options` holds the Env while the DB is open.
  ASSIGN_OR_RETURN(auto db, MetadataDb::Open(meta, false, options.read_only,
                                             MetadataEnv(options.rocksdb_env, hooks),
                                             options.rocksdb_options));
  ASSIGN_OR_RETURN(auto value, db->Get(kMetaKey));
  if (!value) {
    return absl::FailedPreconditionError(absl::StrCat(
        db->description(), " holds no pgring store (no pgring.meta key)"));
  }
  auto m = StoreMeta::Decode(*value);
  if (!m.ok()) return absl::DataLossError(absl::StrCat(db->description(), ": ", m.status().message()));
  // A growth the crash cut between its label write and its metadata write
  // is read as grown (the new chunks were never used), and finished below.
  const bool finish_expand = IsInterruptedExpand(label, *m);
  if (finish_expand) *m = GrownMeta(label, *std::move(m));
  RETURN_IF_ERROR(CheckMetaMatchesLabel(label, *m, name, db->description()));
  // The embedder's fsck at open, if asked: the store as it is on disk,
  // before anything is written.
  if (options.verify_on_open != VerifyOnOpen::kOff) {
    RETURN_IF_ERROR(
        VerifyAtOpen(dev, name, db.get(), options.verify_on_open == VerifyOnOpen::kDeep));
  }
  if (finish_expand && !options.read_only) {
    rocksdb::WriteBatch batch;
    batch.Put(db->cf(), std::string(kMetaKey), m->Encode());
    RETURN_IF_ERROR(db->WriteSync(&batch));
  }
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
