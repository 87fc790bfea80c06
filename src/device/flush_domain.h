// flush_domain.h — the facts the flush-domain verdicts of
// pgring/flush_domain.h are built from, each a check of its own: which disk
// a path is on, whether a file is fully written, whether O_DIRECT reaches
// the disk, whether fdatasync flushes the disk's cache. The reasoning is in
// the public header.
#ifndef PGRING_DEVICE_FLUSH_DOMAIN_H_
#define PGRING_DEVICE_FLUSH_DOMAIN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/flush_domain.h"

namespace pgring {

// The whole disks ("MAJ:MIN", sorted, no repeats) whose caches the writes
// to `path` pass through: the disk of a block device (its parent if it is a
// partition), or of the file system holding a file; for a stacked device
// (device-mapper: LVM's logical volumes, dm-crypt; md RAID) the disks under
// every device it is built on, found through sysfs `slaves/` (two LVs of one
// volume group on one disk are that one disk, as ceph-volume lays out an
// OSD's block and DB). kNotFound when sysfs has no such device (tmpfs,
// overlay, btrfs subvolumes: anonymous devices).
absl::StatusOr<std::vector<std::string>> DisksUnder(const std::string& path);

// The same for the block device "MAJ:MIN", looked up in the sysfs tree at
// `sysfs_root`: "/sys" for the running system, a tree of a test's making
// otherwise (sysfs's links: dev/block/MAJ:MIN -> the device's directory,
// its slaves/NAME -> each device it is stacked on).
absl::StatusOr<std::vector<std::string>> DisksUnderDevice(const std::string& sysfs_root,
                                                          const std::string& majmin);

// OK when every byte of the regular file `path` is in an allocated, written,
// unshared extent; kFailedPrecondition naming the first hole, unwritten or
// shared extent.
absl::Status CheckFullyWritten(const std::string& path);

// OK unless `path` is a regular file on a file system that turns O_DIRECT
// writes into buffered ones (ext4 with data=journal).
absl::Status CheckDirectIoReachesTheDisk(const std::string& path);

// OK when fdatasync of a file on the file system holding `path` ends with a
// cache flush of its disk: ext4 or XFS, mounted without "nobarrier" /
// "barrier=0" (write barriers are their default). kFailedPrecondition naming
// the file system type or the mount option otherwise.
absl::Status CheckSyncFlushesTheCache(const std::string& path);

}  // namespace pgring

#endif  // PGRING_DEVICE_FLUSH_DOMAIN_H_
