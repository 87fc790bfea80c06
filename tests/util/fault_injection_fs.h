// fault_injection_fs.h — a rocksdb::FileSystem for crash-consistency tests.
// It wraps a real file system (FileSystem::Default()) and simulates a power
// loss: data and directory entries that were never made durable are thrown
// away, so a test can reopen the DB and check what survived.
//
// Crash model (what DropUnsyncedData() does to the real files):
//
//  * File data. Writes go straight through to the real file, so until the
//    crash readers see them, as they would in the page cache. For every file
//    opened for writing through this FS (NewWritableFile, ReopenWritableFile,
//    ReuseWritableFile) we record its written size and its synced size: the
//    written size when the last successful FSWritableFile::Sync() or Fsync()
//    started. Nothing else makes data durable: not Flush(), not Close(), not
//    RangeSync() (sync_file_range(2) writes no metadata and does not flush
//    the device cache). The crash truncates each tracked file to its synced
//    size, so a file that was never synced becomes empty.
//  * Directory entries. Creating a file (NewWritableFile or
//    ReopenWritableFile of a name that did not exist, ReuseWritableFile) and
//    RenameFile() become durable only when the directory holding the new
//    name is fsynced (FSDirectory::Fsync or FsyncWithDirOptions) after the
//    operation. The crash undoes the operations that are not durable, newest
//    first: a rename is reversed and the durable content the target had
//    before it is put back (saved at rename time, up to 1 MiB; a rename over
//    a larger file is treated as durable at once); a created file is deleted.
//  * DropRandomUnsyncedData(seed) is a partial write-back instead: each
//    tracked file keeps a random prefix of its unsynced tail, and a random
//    prefix of the pending directory operations survives (a journaling file
//    system commits metadata in order).
//  * A process crash (kill -9: the page cache survives) needs nothing: call
//    ResetState() instead of DropUnsyncedData().
//  * Crash points. SetCrashAfterWrites(n) makes the n-th Append or
//    PositionedAppend from now the crash point, SetCrashAfterSyncs(n) the
//    n-th sync (file Sync/Fsync or directory fsync). That call fails, the FS
//    becomes inactive and `on_crash` runs (so other simulated devices can lose
//    power at the same instant). A crashing append first writes the first
//    half of its data (a torn write, unsynced like the rest); a crashing sync
//    has no effect.
//  * While inactive (power lost), every operation that writes, syncs,
//    creates, renames, deletes, opens or reads fails with
//    IOError("power lost (simulated)"), including reads through files that
//    are already open. Closing files and directories, UnlockFile and the pure
//    path helpers still work, so a DB using the FS can be destroyed (its
//    writes fail; the OS descriptors are released). An operation that was
//    already running on another thread when the crash hit may still reach
//    the disk, but it reports failure and is never counted as durable.
//
// Not modelled: deletions (DeleteFile, DeleteDir, Truncate are durable at
// once: a deleted file never comes back), directory creation (durable at
// once; the DB directory itself never vanishes), renames across directories
// (made durable by fsyncing the target's directory only), garbage or zeroed
// tails, reordering or loss of data below the synced size (a lying disk),
// files written through NewRandomRWFile, NewLogger (the info LOG),
// LinkFile or mmap (untracked: durable at once), and the stale tail of a
// recycled WAL (ReuseWritableFile: cut to the synced size instead of
// surviving; keep recycle_log_file_num = 0). Paths are compared after
// lexical normalisation only, so give RocksDB absolute paths.
//
// Usage: destroy every DB (and any other user) of the FS before calling
// DropUnsyncedData(); it refuses while tracked files are still open, because
// closing a file later could extend it again.
//
//   auto fs = std::make_shared<FaultInjectionFileSystem>();
//   std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
//   options.env = env.get();               // env must outlive the DB
//   ... open, write ...
//   fs->SetActive(false);                  // or a crash point fires
//   db.reset();
//   ASSERT_OK(fs->DropUnsyncedData());
//   fs->SetActive(true);
//   ... reopen and check ...
#ifndef PGRING_TESTS_UTIL_FAULT_INJECTION_FS_H_
#define PGRING_TESTS_UTIL_FAULT_INJECTION_FS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/io_status.h"
#include "rocksdb/status.h"

namespace pgring::testing {

// The message of every error returned while the FS is inactive.
inline constexpr char kPowerLostMessage[] = "power lost (simulated)";

class FaultInjectionFileSystem : public rocksdb::FileSystemWrapper {
 public:
  // What the FS knows about one tracked file.
  struct FileInfo {
    uint64_t size = 0;         // Bytes written (end of the last write).
    uint64_t synced_size = 0;  // Bytes that survive a power loss.
    int open_handles = 0;      // Writable handles open on it.
  };

  static const char* kClassName() { return "PgringFaultInjectionFileSystem"; }

  explicit FaultInjectionFileSystem(std::shared_ptr<rocksdb::FileSystem> base =
                                        rocksdb::FileSystem::Default());
  ~FaultInjectionFileSystem() override;
  FaultInjectionFileSystem(const FaultInjectionFileSystem&) = delete;
  FaultInjectionFileSystem& operator=(const FaultInjectionFileSystem&) = delete;

  const char* Name() const override { return kClassName(); }

  // --- Power and crash points ---------------------------------------------

  // false = power lost: see the header comment. true = power back; it does
  // not drop anything by itself.
  void SetActive(bool active);
  bool IsActive() const;

  // The n-th Append/PositionedAppend (SetCrashAfterWrites) or sync
  // (SetCrashAfterSyncs) from now fails and deactivates the FS, then
  // `on_crash` runs once, on the thread of that call, without FS locks held.
  // n = 0 disarms. Arming one disarms the other.
  void SetCrashAfterWrites(uint64_t n, std::function<void()> on_crash = {});
  void SetCrashAfterSyncs(uint64_t n, std::function<void()> on_crash = {});
  void DisarmCrash();
  // Whether a crash point fired since it was armed or since ResetState().
  bool crashed() const;

  // true: file syncs and directory fsyncs are tracked (and counted, and can
  // be crash points) as usual but not passed to the real file system. The
  // simulation does not need them, since the host never loses power; it
  // makes fsync-heavy tests much faster. Default false. Kept by ResetState().
  void set_skip_real_syncs(bool skip);

  // Runs `flush` at the start of every successful file Sync/Fsync, before
  // the sync itself: the files and another device (a FaultInjectionDevice
  // holding a store's partition) share one disk cache, and the cache flush
  // a sync ends with covers the device's writes that completed before the
  // sync began. Modelled at the start, the strictest point: a write that
  // completes while the sync runs is not covered. Kept by ResetState().
  void SetSyncFlushesAlso(std::function<void()> flush);

  // Calls that reached the FS while it was active, crash points included:
  // syncs = file Sync/Fsync + directory fsyncs; writes = Append and
  // PositionedAppend. Not reset by DropUnsyncedData().
  uint64_t sync_count() const;
  uint64_t write_count() const;

  // --- Simulated crash ----------------------------------------------------

  // Power loss: truncates every tracked file to its synced size and undoes
  // the directory operations not yet made durable, working on the real file
  // system directly (works while inactive). Then forgets all tracking: what
  // is left on disk is durable. FailedPrecondition if a tracked file is
  // still open for writing (destroy the DB first).
  absl::Status DropUnsyncedData();
  // Same, but keeps a random part of what was not durable (see the header
  // comment). Deterministic for a given seed and history.
  absl::Status DropRandomUnsyncedData(uint64_t seed);
  // Treats everything on disk now as durable (files still open stay tracked
  // with synced size = size), disarms crash points, zeroes the counters and
  // makes the FS active. Use it to model a process crash, or to start over.
  void ResetState();

  // --- Out of space (ENOSPC) --------------------------------------------

  // Limits how many more bytes Append/PositionedAppend may write through
  // this FS: a write that does not fit in what is left writes nothing and
  // fails with IOStatus::NoSpace ("No space left on device", as ENOSPC), and
  // so does every later write until the budget is raised or cleared. Each
  // successful write takes its length from the budget. GetFreeSpace()
  // reports the budget. nullopt (the default) = unlimited. Independent of
  // power: kept by ResetState() and DropUnsyncedData(). With
  // `fail_syncs`, syncs fail with NoSpace too while the budget is exhausted
  // (some file systems report ENOSPC at fsync, on delayed allocation).
  void SetSpaceBudget(std::optional<uint64_t> bytes, bool fail_syncs = false);
  // Writes (and syncs) refused with NoSpace since construction.
  uint64_t no_space_errors() const;

  // --- Injected I/O errors (EIO) ----------------------------------------

  // After `skip` more Append/PositionedAppend calls (FailAppends) or file
  // Sync/Fsync calls (FailSyncs) on files whose name ends with
  // `name_suffix` (".log": RocksDB's WAL; empty: every file) go through,
  // the next `count` fail with IOError("Input/output error (injected ...)"),
  // without a power loss: the FS stays active and every other call works.
  // A failed append writes nothing; a failed sync makes nothing durable
  // (what was written stays in the file, unsynced, as in a page cache
  // after a failed fsync). count == 0 clears the schedule. Independent of
  // power: kept by ResetState() and DropUnsyncedData().
  void FailAppends(uint64_t skip, uint64_t count, std::string name_suffix = "");
  void FailSyncs(uint64_t skip, uint64_t count, std::string name_suffix = "");
  // Calls failed by FailAppends/FailSyncs since construction.
  uint64_t injected_errors() const;

  // Tracking state of `path`, if it is tracked.
  std::optional<FileInfo> GetFileInfo(const std::string& path) const;
  // Directory operations (creates, renames) not yet made durable.
  size_t pending_dir_op_count() const;

  // --- rocksdb::FileSystem ------------------------------------------------
  rocksdb::IOStatus NewSequentialFile(
      const std::string& fname, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSSequentialFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& fname, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& fname, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomRWFile(
      const std::string& fname, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSRandomRWFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewMemoryMappedFileBuffer(
      const std::string& fname,
      std::unique_ptr<rocksdb::MemoryMappedFileBuffer>* result) override;
  rocksdb::IOStatus NewDirectory(const std::string& name,
                                 const rocksdb::IOOptions& io_opts,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus FileExists(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetChildren(const std::string& dir,
                                const rocksdb::IOOptions& options,
                                std::vector<std::string>* result,
                                rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetChildrenFileAttributes(
      const std::string& dir, const rocksdb::IOOptions& options,
      std::vector<rocksdb::FileAttributes>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(const std::string& fname, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDirIfMissing(const std::string& dirname,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFileSize(const std::string& fname,
                                const rocksdb::IOOptions& options,
                                uint64_t* file_size,
                                rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFileModificationTime(
      const std::string& fname, const rocksdb::IOOptions& options,
      uint64_t* file_mtime, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src,
                               const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LinkFile(const std::string& src, const std::string& target,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NumFileLinks(const std::string& fname,
                                 const rocksdb::IOOptions& options,
                                 uint64_t* count,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus AreFilesSame(const std::string& first,
                                 const std::string& second,
                                 const rocksdb::IOOptions& options, bool* res,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LockFile(const std::string& fname,
                             const rocksdb::IOOptions& options,
                             rocksdb::FileLock** lock,
                             rocksdb::IODebugContext* dbg) override;
  // UnlockFile is inherited: it always works, so a DB can be destroyed and
  // reopened in the same process after a simulated power loss.
  rocksdb::IOStatus NewLogger(const std::string& fname,
                              const rocksdb::IOOptions& io_opts,
                              std::shared_ptr<rocksdb::Logger>* result,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFreeSpace(const std::string& path,
                                 const rocksdb::IOOptions& options,
                                 uint64_t* diskfree,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus IsDirectory(const std::string& path,
                                const rocksdb::IOOptions& options, bool* is_dir,
                                rocksdb::IODebugContext* dbg) override;

 private:
  class TrackedWritableFile;
  class GatedSequentialFile;
  class GatedRandomAccessFile;
  class GatedRandomRWFile;
  class TrackedDirectory;

  struct FileState {
    std::string path;  // Current name (normalised); follows renames.
    uint64_t size = 0;
    uint64_t synced = 0;
    int open_handles = 0;
  };

  // A directory operation not yet made durable by fsyncing `dir`.
  struct DirOp {
    enum class Kind { kCreate, kRename };
    Kind kind = Kind::kCreate;
    uint64_t seq = 0;
    std::string dir;   // Directory whose fsync makes it durable.
    std::string path;  // kCreate: the file; kRename: the new name.
    std::string src;   // kRename: the old name.
    // kRename: the durable content `path` had before, if it existed.
    std::optional<std::string> old_content;
  };

  enum class Gate { kGo, kInactive, kCrash };
  enum class OpClass { kOther, kWrite, kSync };

  static rocksdb::IOStatus PowerLost();

  // Checks power and counts the call; kCrash means this call is the crash
  // point and the FS was just deactivated (call RunCrashCallback()).
  Gate Enter(OpClass op);
  void RunCrashCallback();
  bool Active() const;

  // The write/sync paths shared by all file wrappers.
  rocksdb::IOStatus WriteThrough(
      FileState& st, const rocksdb::Slice& data, std::optional<uint64_t> offset,
      const std::function<rocksdb::IOStatus(const rocksdb::Slice&)>& write);
  rocksdb::IOStatus SyncThrough(FileState& st,
                                const std::function<rocksdb::IOStatus()>& sync);
  rocksdb::IOStatus TruncateThrough(
      FileState& st, uint64_t size,
      const std::function<rocksdb::IOStatus()>& truncate);
  rocksdb::IOStatus DirSyncThrough(
      const std::string& dir, const std::function<rocksdb::IOStatus()>& sync);
  void CloseHandle(FileState& st);

  // Shared by NewWritableFile / ReopenWritableFile.
  rocksdb::IOStatus OpenTracked(
      const std::string& fname, bool reopen,
      const std::function<
          rocksdb::IOStatus(std::unique_ptr<rocksdb::FSWritableFile>*)>& open,
      std::unique_ptr<rocksdb::FSWritableFile>* result);

  // `keep_size(state)` decides each file's size after the crash and
  // `durable_ops` how many of the oldest pending directory ops survive.
  absl::Status Crash(const std::function<uint64_t(const FileState&)>& keep_size,
                     const std::function<size_t(size_t)>& durable_ops);

  // Reads up to `limit` bytes of `path` through the base FS.
  rocksdb::IOStatus ReadPrefix(const std::string& path, uint64_t limit,
                               std::string* out);
  rocksdb::IOStatus WriteWhole(const std::string& path,
                               const std::string& data);

  mutable std::mutex mu_;
  bool active_ = true;
  bool crashed_ = false;
  bool skip_real_syncs_ = false;
  uint64_t writes_until_crash_ = 0;  // 0 = not armed.
  uint64_t syncs_until_crash_ = 0;   // 0 = not armed.
  std::function<void()> on_crash_;
  std::function<void()> sync_flushes_also_;  // guarded by mu_
  uint64_t sync_count_ = 0;
  uint64_t write_count_ = 0;
  std::optional<uint64_t> space_budget_;  // nullopt: unlimited
  bool space_fail_syncs_ = false;
  bool space_exhausted_ = false;          // a write was refused since set
  uint64_t no_space_errors_ = 0;
  struct FailSchedule {
    uint64_t skip = 0;
    uint64_t count = 0;
    std::string suffix;
  };
  // The injected error for a call on `path` under `f`, or OK. Needs mu_.
  rocksdb::IOStatus InjectedLocked(FailSchedule& f, const std::string& path, const char* what);
  FailSchedule fail_appends_;
  FailSchedule fail_syncs_;
  uint64_t injected_errors_ = 0;
  int open_writable_files_ = 0;
  uint64_t next_op_seq_ = 1;
  std::map<std::string, std::shared_ptr<FileState>> files_;
  std::vector<DirOp> pending_;
};

// Converts a RocksDB status (or IOStatus) to an absl::Status, keeping the
// message: Corruption -> kDataLoss, IOError -> kInternal, NotFound ->
// kNotFound, ... Lets the ASSERT_OK / EXPECT_CODE macros of test_util.h take
// RocksDB statuses.
absl::Status FromRocksDbStatus(const rocksdb::Status& s);
inline absl::Status ToStatus(const rocksdb::Status& s) {
  return FromRocksDbStatus(s);
}

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_FAULT_INJECTION_FS_H_
