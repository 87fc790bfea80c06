#include "device/flush_domain.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pgring {
namespace {

std::string DevName(dev_t d) { return absl::StrFormat("%u:%u", major(d), minor(d)); }

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

namespace {

// Stacks deeper than this are refused: sysfs cannot make a cycle, but a
// test's tree (or a broken one) could.
constexpr int kMaxStackDepth = 16;

// Adds to *disks the whole disks under the block device whose sysfs
// directory is `sys` (canonical). A stacked device (its `slaves/` lists the
// devices it is built on) is the union of theirs: a flush of a
// device-mapper or md device is passed down to every device under it. A
// partition's directory sits inside its disk's and has a "partition"
// attribute; a disk's "dev" attribute names it.
absl::Status AddDisksUnder(const std::filesystem::path& sys, int depth,
                           std::set<std::string>* disks) {
  namespace fs = std::filesystem;
  if (depth > kMaxStackDepth) {
    return absl::FailedPreconditionError(absl::StrCat(
        sys.string(), ": block devices stacked more than ", kMaxStackDepth, " deep"));
  }
  std::error_code ec;
  std::vector<fs::path> slaves;
  for (fs::directory_iterator it(sys / "slaves", ec), end; !ec && it != end; it.increment(ec)) {
    slaves.push_back(it->path());
  }
  if (!slaves.empty()) {
    for (const fs::path& slave : slaves) {
      fs::path target = fs::canonical(slave, ec);
      if (ec) {
        return absl::NotFoundError(
            absl::StrCat("cannot follow ", slave.string(), ": ", ec.message()));
      }
      if (absl::Status s = AddDisksUnder(target, depth + 1, disks); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (fs::exists(sys / "partition", ec)) return AddDisksUnder(sys.parent_path(), depth + 1, disks);
  std::ifstream in(sys / "dev");
  std::string disk;
  if (!(in >> disk)) {
    return absl::NotFoundError(absl::StrCat("cannot read ", (sys / "dev").string()));
  }
  disks->insert(disk);
  return absl::OkStatus();
}

std::string DiskList(const std::vector<std::string>& disks) {
  return disks.size() == 1 ? absl::StrCat("disk ", disks[0])
                           : absl::StrCat("disks ", absl::StrJoin(disks, ", "));
}

// Whether every disk in `inner` is in `outer` (both sorted).
bool Covers(const std::vector<std::string>& outer, const std::vector<std::string>& inner) {
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

}  // namespace

absl::StatusOr<std::vector<std::string>> DisksUnderDevice(const std::string& sysfs_root,
                                                          const std::string& majmin) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path sys = fs::canonical(fs::path(sysfs_root) / "dev" / "block" / majmin, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat(
        "device ", majmin, " is no disk (no ", sysfs_root, "/dev/block entry)"));
  }
  std::set<std::string> disks;
  if (absl::Status s = AddDisksUnder(sys, 0, &disks); !s.ok()) return s;
  return std::vector<std::string>(disks.begin(), disks.end());
}

absl::StatusOr<std::vector<std::string>> DisksUnder(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  auto disks = DisksUnderDevice("/sys", DevName(dev));
  if (!disks.ok()) {
    return absl::Status(disks.status().code(),
                        absl::StrCat(path, " is on ", disks.status().message()));
  }
  return disks;
}

absl::Status CheckFullyWritten(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return absl::InternalError(absl::StrCat(path, ": fstat failed"));
  constexpr uint32_t kBatch = 256;
  std::vector<char> mem(sizeof(fiemap) + kBatch * sizeof(fiemap_extent));
  auto* fm = reinterpret_cast<fiemap*>(mem.data());
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t covered = 0;  // every byte below this is in a written extent
  bool last = false;
  while (covered < size && !last) {
    const uint64_t covered_before = covered;
    std::memset(mem.data(), 0, mem.size());
    fm->fm_start = covered;
    fm->fm_length = size - covered;
    fm->fm_flags = FIEMAP_FLAG_SYNC;  // delayed allocations settled first
    fm->fm_extent_count = kBatch;
    if (::ioctl(f.fd, FS_IOC_FIEMAP, fm) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, ": cannot map its extents (FIEMAP: ", std::strerror(errno), ")"));
    }
    if (fm->fm_mapped_extents == 0) break;
    for (uint32_t i = 0; i < fm->fm_mapped_extents; ++i) {
      const fiemap_extent& e = fm->fm_extents[i];
      if (e.fe_logical > covered) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s has a hole at byte %u (a write there allocates blocks)", path, covered));
      }
      // Shared (reflinked) extents: an overwrite is copy-on-write, a remap
      // that only the file's own fdatasync commits.
      constexpr uint32_t kNotPlainData = FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC |
                                         FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_ENCODED |
                                         FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL |
                                         FIEMAP_EXTENT_SHARED;
      if (e.fe_flags & kNotPlainData) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s has %s at byte %u (a write there changes file-system metadata)", path,
            (e.fe_flags & FIEMAP_EXTENT_UNWRITTEN) ? "an unwritten (fallocated) extent"
            : (e.fe_flags & FIEMAP_EXTENT_SHARED)  ? "a shared (reflinked) extent"
                                                   : "an extent that is not plain data",
            e.fe_logical));
      }
      covered = std::max<uint64_t>(covered, e.fe_logical + e.fe_length);
      if (e.fe_flags & FIEMAP_EXTENT_LAST) last = true;
    }
    if (covered == covered_before && !last) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: FIEMAP returned no extent past byte %u", path, covered));
    }
  }
  if (covered < size) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has a hole at byte %u (a write there allocates blocks)", path, covered));
  }
  return absl::OkStatus();
}

namespace {

// The file system holding a file: its type and its super-block options.
struct MountOf {
  std::string fstype;
  std::string superopts;  // ",opt1,opt2,...," (comma-framed for searching)
  bool HasOption(const std::string& opt) const {
    return superopts.find("," + opt + ",") != std::string::npos;
  }
};

// From /proc/self/mountinfo: "id parent MAJ:MIN root mountpoint opts ... -
// fstype source superopts". NotFound when no mount has the file's device.
absl::StatusOr<MountOf> FindMount(const struct stat& st) {
  std::ifstream in("/proc/self/mountinfo");
  const std::string dev = DevName(st.st_dev);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, majmin;
    if (!(f >> id >> parent >> majmin) || majmin != dev) continue;
    const size_t sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream tail(line.substr(sep + 3));
    MountOf m;
    std::string source;
    tail >> m.fstype >> source >> m.superopts;
    m.superopts = "," + m.superopts + ",";
    return m;
  }
  return absl::NotFoundError(absl::StrCat("no mount of device ", dev));
}

}  // namespace

absl::Status CheckDirectIoReachesTheDisk(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return absl::OkStatus();  // a block device: O_DIRECT is direct
  auto m = FindMount(st);
  if (!m.ok()) return absl::OkStatus();  // no mount entry: nothing known against it
  if (m->fstype == "ext4" && m->HasOption("data=journal")) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is on ext4 mounted with data=journal, which turns O_DIRECT writes into "
              "journalled buffered ones"));
  }
  return absl::OkStatus();
}

absl::Status CheckSyncFlushesTheCache(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  auto m = FindMount(st);
  if (!m.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot tell its file system (", m.status().message(), ")"));
  }
  if (m->fstype != "ext4" && m->fstype != "xfs") {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is on ", m->fstype, ", not ext4 or XFS, whose fdatasync is known to end with a "
              "cache flush of the disk"));
  }
  for (const char* off : {"nobarrier", "barrier=0"}) {
    if (m->HasOption(off)) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, " is on ", m->fstype, " mounted with ", off,
          ": its fdatasync does not flush the disk's cache"));
    }
  }
  return absl::OkStatus();
}

namespace {

// OK when an O_DIRECT write to `path` changes nothing but the written
// blocks: a block device, or a regular file (then *is_file) that is fully
// written and whose O_DIRECT writes reach the disk.
absl::Status CheckWritesNeedNoMetadata(const std::string& path, bool* is_file) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  *is_file = S_ISREG(st.st_mode);
  if (S_ISBLK(st.st_mode)) return absl::OkStatus();
  if (!*is_file) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is neither a regular file nor a block device"));
  }
  absl::Status s = CheckFullyWritten(path);
  if (s.ok()) s = CheckDirectIoReachesTheDisk(path);
  return s;
}

}  // namespace

FlushDomainCheck CheckSharedFlush(const std::string& data_path, const std::string& log_path) {
  auto data_disks = DisksUnder(data_path);
  if (!data_disks.ok()) return {false, std::string(data_disks.status().message())};
  auto log_disks = DisksUnder(log_path);
  if (!log_disks.ok()) return {false, std::string(log_disks.status().message())};
  // A flush of the partition reaches every disk under it; the data's writes
  // are durable after it only if each of their disks is one of those.
  if (!Covers(*log_disks, *data_disks)) {
    return {false, absl::StrCat(data_path, " is on ", DiskList(*data_disks), " and ", log_path,
                                " on ", DiskList(*log_disks), ": separate caches")};
  }
  bool files = false;
  for (const std::string* p : {&data_path, &log_path}) {
    bool is_file = false;
    absl::Status s = CheckWritesNeedNoMetadata(*p, &is_file);
    if (!s.ok()) return {false, std::string(s.message())};
    files |= is_file;
  }
  return {true, absl::StrCat(data_path, " and ", log_path, " are on ", DiskList(*data_disks),
                             files ? ", behind one cache, and every file is fully written"
                                   : ", behind one cache")};
}

FlushDomainCheck CheckSyncCoversPartition(const std::string& db_dir, const std::string& log_path) {
  // mkfs makes the RocksDB directory later: judge by where it will be.
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(db_dir), ec);
  if (ec) return {false, absl::StrCat(db_dir, ": ", ec.message())};
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) {
    dir = dir.parent_path();
  }
  const std::string where = dir.string();
  auto db_disks = DisksUnder(where);
  if (!db_disks.ok()) return {false, std::string(db_disks.status().message())};
  auto log_disks = DisksUnder(log_path);
  if (!log_disks.ok()) return {false, std::string(log_disks.status().message())};
  // RocksDB's sync flushes the disks under its file system; the partition's
  // writes are durable after it only if each of their disks is one of those.
  if (!Covers(*db_disks, *log_disks)) {
    return {false, absl::StrCat("RocksDB (", where, ") is on ", DiskList(*db_disks), " and ",
                                log_path, " on ", DiskList(*log_disks), ": separate caches")};
  }
  bool is_file = false;
  absl::Status s = CheckWritesNeedNoMetadata(log_path, &is_file);
  if (s.ok()) s = CheckSyncFlushesTheCache(where);
  if (!s.ok()) return {false, std::string(s.message())};
  return {true, absl::StrCat("RocksDB (", where, ") and ", log_path, " are on ", DiskList(*log_disks),
                             ", and a RocksDB sync there flushes that disk's cache")};
}

}  // namespace pgring
