// block_stats.h — what the block devices under the engine's files saw
// during the run, from /sys/class/block/<dev>/stat: write requests, bytes
// and flushes, for the report's per-client-write device counts (issue 32,
// "counted where the device sees it"), beside the engine's own counts of
// what it asked for.
//
// Each path the engine writes (the log partition, RocksDB's directory, each
// data file) is mapped to the block device it is (a block device node) or
// lives on (a file's or directory's file system), and a partition also to
// its whole disk, which is where Linux counts flush requests. A device's
// counts are every writer's: on a disk the engine shares with other work
// (files on the machine's root disk) they include that work.
#ifndef PGRING_FIO_ENGINE_BLOCK_STATS_H_
#define PGRING_FIO_ENGINE_BLOCK_STATS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace pgring::fio {

// The write side of one stat file.
struct BlockStat {
  uint64_t write_requests = 0;  // field 5: writes completed (merged requests count once)
  uint64_t write_sectors = 0;   // field 7: 512-byte sectors written, whatever the device's sector size
  uint64_t flushes = 0;         // field 16: flush requests completed (Linux 5.5 on)
  bool has_flushes = false;     // the file has field 16
};

// Parses the content of /sys/class/block/<dev>/stat (Documentation/block/
// stat.rst: 11, 15 or 17 whitespace-separated decimal fields). nullopt if it
// has fewer than 11 fields or a field is not a number.
std::optional<BlockStat> ParseBlockStat(std::string_view text);

// The block device a path is or lives on.
struct BlockDeviceOf {
  std::string name;  // as in /sys/class/block: loop3, loop4p1, vda
  std::string disk;  // its whole disk if `name` is a partition (loop4), else empty
};

// `sys_dev_block` is /sys/dev/block (a test may point it elsewhere).
// kNotFound when the path's file system is not on a block device (tmpfs,
// overlayfs: its device number has no /sys/dev/block entry).
absl::StatusOr<BlockDeviceOf> FindBlockDevice(const std::string& path,
                                              const std::string& sys_dev_block = "/sys/dev/block");

// The devices under a set of paths, each with the stat it had when first
// added and the roles ("data", "log", "db"; "disk" for a partition's whole
// disk) of the paths on it. Thread-safe.
class BlockStats {
 public:
  explicit BlockStats(std::string sys_class_block = "/sys/class/block")
      : sys_class_block_(std::move(sys_class_block)) {}

  // Maps `path` to its device(s) and, for a device not seen before, reads
  // its stat now: its counts start here. A path on no block device, or a
  // stat that cannot be read, is noted in unavailable() under `role`.
  void Add(const std::string& role, const std::string& path);

  struct Device {
    std::set<std::string> roles;
    std::string disk;  // the whole disk, if this is a partition
    BlockStat start;
  };
  struct Delta {
    std::set<std::string> roles;
    std::string disk;
    BlockStat counts;  // now minus start
  };
  // Every device's counts since it was added; a device whose stat cannot be
  // read now is noted in `unavailable` and left out.
  std::map<std::string, Delta> Read(std::map<std::string, std::string>* unavailable) const;

  std::map<std::string, std::string> unavailable() const;

 private:
  std::optional<BlockStat> ReadStat(const std::string& name) const;
  void AddDeviceLocked(const std::string& name, const std::string& role, const std::string& disk);

  const std::string sys_class_block_;
  mutable std::mutex mu_;
  std::map<std::string, Device> devices_;              // guarded by mu_
  std::map<std::string, std::string> unavailable_;     // guarded by mu_; role -> why
};

}  // namespace pgring::fio

#endif  // PGRING_FIO_ENGINE_BLOCK_STATS_H_
