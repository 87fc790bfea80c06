// flush_domain.h — whether one flush of the log partition also makes the
// OSD's data writes durable, so the engine can let the store's partition
// flush cover them (pgring::Options::gated_writes_share_flush) instead of
// flushing the data partition separately.
//
// It does when both sit behind the same volatile write cache, i.e. on the
// same whole disk, and the data writes need no file-system metadata to be
// found again. A flush of a block device, or fdatasync of a file, ends with a
// cache flush of the disk under it (REQ_PREFLUSH), which makes every write
// completed before it durable, whichever partition or file it went to. For a
// regular file that is only the whole story when the write overwrote
// allocated, written blocks: a write into a hole or an unwritten
// (fallocated) extent, or over a shared (reflinked) one, also changes the
// file's extent map, which only that file's own fdatasync commits. So two
// regular files qualify only when FIEMAP shows every byte of both allocated,
// written and unshared, and when their O_DIRECT writes really go to the disk
// (not ext4's data=journal, which journals them through the page cache).
//
// The same reasoning lets a synced RocksDB write stand in for the partition
// flush (CheckSyncCoversPartition): RocksDB's WAL fdatasync ends with a cache
// flush of its disk, which makes every write completed before it durable,
// the partition's included, when the WAL is on that disk.
//
// The engine checks once, at job init, after fio has laid out its files; a
// file that gains holes or reflinks later is not noticed.
#ifndef PGRING_TOOLS_FIO_ENGINE_FLUSH_DOMAIN_H_
#define PGRING_TOOLS_FIO_ENGINE_FLUSH_DOMAIN_H_

#include <string>

#include "absl/status/statusor.h"

namespace pgring::fio {

struct FlushDomainCheck {
  bool shared = false;
  std::string why;  // one sentence: the disk they share, or what differs
};

// "MAJ:MIN" of the whole disk under `path`: the disk of a block device (its
// parent if it is a partition), or of the file system holding a file.
// kNotFound when sysfs has no such disk (tmpfs, overlay, btrfs subvolumes:
// anonymous devices).
absl::StatusOr<std::string> WholeDiskOf(const std::string& path);

// OK when every byte of the regular file `path` is in an allocated, written,
// unshared extent; kFailedPrecondition naming the first hole, unwritten or
// shared extent.
absl::Status CheckFullyWritten(const std::string& path);

// OK unless `path` is a regular file on a file system that turns O_DIRECT
// writes into buffered ones (ext4 with data=journal).
absl::Status CheckDirectIoReachesTheDisk(const std::string& path);

// Whether a flush of `log_path` also makes completed writes to `data_path`
// durable (see above). Never an error: what cannot be proven is "not shared",
// with the reason.
FlushDomainCheck CheckSharedFlush(const std::string& data_path, const std::string& log_path);

// OK when fdatasync of a file on the file system holding `path` ends with a
// cache flush of its disk: ext4 or XFS, mounted without "nobarrier" /
// "barrier=0" (write barriers are their default). kFailedPrecondition naming
// the file system type or the mount option otherwise.
absl::Status CheckSyncFlushesTheCache(const std::string& path);

// Whether a synced RocksDB write in `db_dir` (or, while it does not exist
// yet, in its nearest existing parent) also makes completed writes to
// `log_path` durable (pgring::Options::metadata_sync_flushes_partition): the
// same disk, a log partition whose writes need no file-system metadata (as
// for CheckSharedFlush), and a file system whose fdatasync flushes the
// disk's cache. Never an error: what cannot be proven is "not shared".
FlushDomainCheck CheckSyncCoversPartition(const std::string& db_dir, const std::string& log_path);

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_FLUSH_DOMAIN_H_
