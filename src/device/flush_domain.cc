#include "device/flush_domain.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

absl::StatusOr<std::string> WholeDiskOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path sys = fs::canonical(fs::path("/sys/dev/block") / DevName(dev), ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat(path, " is on device ", DevName(dev),
                                            ", which is no disk (no /sys/dev/block entry)"));
  }
  // A partition's sysfs directory sits inside its disk's and has a
  // "partition" attribute; the disk's "dev" attribute names it.
  if (fs::exists(sys / "partition", ec)) sys = sys.parent_path();
  std::ifstream in(sys / "dev");
  std::string disk;
  if (!(in >> disk)) {
    return absl::NotFoundError(absl::StrCat("cannot read ", (sys / "dev").string()));
  }
  return disk;
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
  auto data_disk = WholeDiskOf(data_path);
  if (!data_disk.ok()) return {false, std::string(data_disk.status().message())};
  auto log_disk = WholeDiskOf(log_path);
  if (!log_disk.ok()) return {false, std::string(log_disk.status().message())};
  if (*data_disk != *log_disk) {
    return {false, absl::StrCat(data_path, " is on disk ", *data_disk, " and ", log_path,
                                " on disk ", *log_disk, ": separate caches")};
  }
  bool files = false;
  for (const std::string* p : {&data_path, &log_path}) {
    bool is_file = false;
    absl::Status s = CheckWritesNeedNoMetadata(*p, &is_file);
    if (!s.ok()) return {false, std::string(s.message())};
    files |= is_file;
  }
  return {true, absl::StrCat(data_path, " and ", log_path, " are on disk ", *data_disk,
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
  auto db_disk = WholeDiskOf(where);
  if (!db_disk.ok()) return {false, std::string(db_disk.status().message())};
  auto log_disk = WholeDiskOf(log_path);
  if (!log_disk.ok()) return {false, std::string(log_disk.status().message())};
  if (*db_disk != *log_disk) {
    return {false, absl::StrCat("RocksDB (", where, ") is on disk ", *db_disk, " and ", log_path,
                                " on disk ", *log_disk, ": separate caches")};
  }
  bool is_file = false;
  absl::Status s = CheckWritesNeedNoMetadata(log_path, &is_file);
  if (s.ok()) s = CheckSyncFlushesTheCache(where);
  if (!s.ok()) return {false, std::string(s.message())};
  return {true, absl::StrCat("RocksDB (", where, ") and ", log_path, " are on disk ", *db_disk,
                             ", and a RocksDB sync there flushes that disk's cache")};
}

}  // namespace pgring
