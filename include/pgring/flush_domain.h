// pgring/flush_domain.h — whether one cache flush covers two places, so an
// embedder can prove what it promises when it sets
// Options::gated_writes_share_flush (a flush of the log partition also makes
// the data writes durable) or Options::metadata_sync_flushes_partition (a
// synced RocksDB write also makes the partition's writes durable).
//
// Two places share a flush when both sit behind the same volatile write
// cache, i.e. on the same whole disk, and the writes need no file-system
// metadata to be found again. Logical volumes and other stacked devices
// (device-mapper, md) are the disks under them, found through sysfs
// `slaves/`: the block and DB LVs that ceph-volume makes on one disk share
// its cache, and a flush of a device spanning several disks reaches each. A flush of a block device, or fdatasync of a
// file, ends with a cache flush of the disk under it (REQ_PREFLUSH), which
// makes every write completed before it durable, whichever partition or file
// it went to. For a regular file that is only the whole story when the write
// overwrote allocated, written blocks: a write into a hole or an unwritten
// (fallocated) extent, or over a shared (reflinked) one, also changes the
// file's extent map, which only that file's own fdatasync commits. So a
// regular file qualifies only when FIEMAP shows every byte of it allocated,
// written and unshared, and when its O_DIRECT writes really go to the disk
// (not ext4's data=journal, which journals them through the page cache).
// A synced RocksDB write ends with fdatasync of its WAL, which flushes the
// disk's cache on ext4 and XFS with write barriers (their default).
//
// Check once, after the files are laid out (written with zeros, as a raw
// partition would be): a file that later gains holes or reflinks is not
// noticed.
//
//   pgring::FlushDomainCheck c = pgring::CheckSharedFlush(data_path, partition_path);
//   options.gated_writes_share_flush = c.shared;
//   log(c.why);
#ifndef PGRING_FLUSH_DOMAIN_H_
#define PGRING_FLUSH_DOMAIN_H_

#include <string>

namespace pgring {

struct FlushDomainCheck {
  bool shared = false;
  std::string why;  // one sentence: the disk they share, or what differs
};

// Whether a flush of `log_path` (the partition: a block device or a file)
// also makes completed O_DIRECT writes to `data_path` durable: the same
// disk, and writes to each that need no file-system metadata. Never an
// error: what cannot be proven is "not shared", with the reason.
FlushDomainCheck CheckSharedFlush(const std::string& data_path, const std::string& log_path);

// Whether a synced RocksDB write in `db_dir` (or, while it does not exist
// yet, in its nearest existing parent) also makes completed writes to
// `log_path` durable: the same disk, a partition whose writes need no
// file-system metadata (as for CheckSharedFlush), and a file system whose
// fdatasync flushes the disk's cache (ext4 or XFS, without "nobarrier" or
// "barrier=0"). Never an error: what cannot be proven is "not shared".
FlushDomainCheck CheckSyncCoversPartition(const std::string& db_dir, const std::string& log_path);

}  // namespace pgring

#endif  // PGRING_FLUSH_DOMAIN_H_
