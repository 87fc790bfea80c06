#include "preallocate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pgring::fio {
namespace {

constexpr uint64_t kAlign = 4096;
constexpr size_t kZeroChunk = 1 << 20;

absl::Status IoError(const std::string& path, const char* what) {
  const int err = errno;
  const std::string msg = absl::StrCat("pgring engine: preallocating ", path, ": ", what, ": ",
                                       std::strerror(err));
  return err == ENOSPC ? absl::ResourceExhaustedError(msg) : absl::UnavailableError(msg);
}

// Writes zeros over [from, to) of `fd`.
absl::Status WriteZeros(int fd, const std::string& path, uint64_t from, uint64_t to) {
  static const std::vector<char> zeros(kZeroChunk, 0);
  while (from < to) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kZeroChunk, to - from));
    const ssize_t w = pwrite(fd, zeros.data(), n, static_cast<off_t>(from));
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError(path, "writing zeros");
    }
    from += static_cast<uint64_t>(w);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Preallocated> PreallocateZeroed(const std::string& path, uint64_t size) {
  Preallocated out;
  struct stat st {};
  const bool exists = stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return IoError(path, "stat");
  if (exists && S_ISBLK(st.st_mode)) {
    // A raw partition is as it is: nothing but the store's mkfs writes it.
    out.block_device = true;
    return out;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pgring engine: preallocating ", path, ": neither a regular file nor a block device"));
  }
  if (!exists && size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pgring engine: preallocating ", path,
        ": the file does not exist and no size is given to create it with (pgring_log_size for "
        "the log partition, size= for a data file)"));
  }
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path, "open");
  absl::Status s;
  const uint64_t have = exists ? static_cast<uint64_t>(st.st_size) : 0;
  const uint64_t want = (std::max(size, have) + kAlign - 1) / kAlign * kAlign;
  if (want > have && ftruncate(fd, static_cast<off_t>(want)) != 0) {
    s = IoError(path, "extending");
  }
  // Every hole (and, on ext4 and XFS, every unwritten extent) up to the end.
  uint64_t pos = 0;
  while (s.ok() && pos < want) {
    const off_t hole = lseek(fd, static_cast<off_t>(pos), SEEK_HOLE);
    if (hole < 0) {
      s = IoError(path, "finding holes");
      break;
    }
    if (static_cast<uint64_t>(hole) >= want) break;
    off_t data = lseek(fd, hole, SEEK_DATA);
    uint64_t end = want;
    if (data >= 0) {
      end = std::min<uint64_t>(static_cast<uint64_t>(data), want);
    } else if (errno != ENXIO) {  // ENXIO: no data after the hole
      s = IoError(path, "finding data");
      break;
    }
    s = WriteZeros(fd, path, static_cast<uint64_t>(hole), end);
    out.zeroed_bytes += end - static_cast<uint64_t>(hole);
    pos = end;
  }
  if (s.ok() && out.zeroed_bytes > 0 && fdatasync(fd) != 0) s = IoError(path, "fdatasync");
  close(fd);
  if (!s.ok()) return s;
  out.size = want;
  return out;
}

}  // namespace pgring::fio
