// preallocate.h — pgring_preallocate: lays out a partition file the way a
// raw partition is, so that a job file runs with plain fio and no wrapper
// script (fio-jobs/run.sh zero-fills its files itself).
//
// A partition file must be fully written, not sparse and not fallocated:
// ext4 converts an unwritten extent on its first write, a metadata change
// that makes every later fdatasync commit the journal (a cost a raw
// partition does not have), and only a fully written file lets one flush
// cover data and log (pgring/flush_domain.h). Zeros are written into the
// file's holes only (SEEK_HOLE: on ext4 and XFS an unwritten extent is a
// hole too), never over data, so a file that already holds a store keeps
// it and a fully written file is left as it is.
#ifndef PGRING_TOOLS_FIO_ENGINE_PREALLOCATE_H_
#define PGRING_TOOLS_FIO_ENGINE_PREALLOCATE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pgring::fio {

struct Preallocated {
  bool block_device = false;   // left alone
  uint64_t size = 0;           // the file's size afterwards
  uint64_t zeroed_bytes = 0;   // written with zeros (holes filled, growth)
};

// Makes `path` a regular file of at least `size` bytes (rounded up to 4 KiB;
// 0: its present size) with every byte written: creates it if missing (its
// directory must exist), extends it, never shrinks it, writes zeros into
// every hole and syncs. A block device is left untouched (block_device).
// kInvalidArgument for anything else (a directory, a character device) and
// for a missing file with `size` 0; the errno's code if the I/O fails.
absl::StatusOr<Preallocated> PreallocateZeroed(const std::string& path, uint64_t size);

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_PREALLOCATE_H_
