#include "util/fault_injection_fs.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pgring::testing {
namespace {

using rocksdb::FileOptions;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

// Renames over a file bigger than this are not revertible (durable at once).
constexpr uint64_t kMaxSavedRenameTarget = 1 << 20;

std::string NormalizePath(const std::string& p) {
  std::string n = std::filesystem::path(p).lexically_normal().string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n;
}

std::string ParentDir(const std::string& normalized) {
  size_t pos = normalized.rfind('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return normalized.substr(0, pos);
}

// The base FS may not implement path-based Truncate (Debian's RocksDB 7.8
// PosixFileSystem returns NotSupported), so cut files with truncate(2).
absl::Status TruncateFile(const std::string& path, uint64_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) {
    return absl::InternalError(
        absl::StrCat("truncate ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status ToAbsl(const IOStatus& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", s.ToString()));
}

}  // namespace

// --- File wrappers ---------------------------------------------------------

class FaultInjectionFileSystem::TrackedWritableFile
    : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  TrackedWritableFile(std::unique_ptr<rocksdb::FSWritableFile> target,
                      FaultInjectionFileSystem* fs,
                      std::shared_ptr<FileState> state)
      : FSWritableFileOwnerWrapper(std::move(target)),
        fs_(fs),
        state_(std::move(state)) {}
  ~TrackedWritableFile() override { fs_->CloseHandle(*state_); }

  IOStatus Append(const Slice& data, const IOOptions& options,
                  IODebugContext* dbg) override {
    return fs_->WriteThrough(*state_, data, std::nullopt, [&](const Slice& d) {
      return target()->Append(d, options, dbg);
    });
  }
  IOStatus Append(const Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& info,
                  IODebugContext* dbg) override {
    return fs_->WriteThrough(*state_, data, std::nullopt, [&](const Slice& d) {
      // A torn part cannot carry the checksum of the whole.
      return d.size() == data.size() ? target()->Append(d, options, info, dbg)
                                     : target()->Append(d, options, dbg);
    });
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset,
                            const IOOptions& options,
                            IODebugContext* dbg) override {
    return fs_->WriteThrough(*state_, data, offset, [&](const Slice& d) {
      return target()->PositionedAppend(d, offset, options, dbg);
    });
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset,
                            const IOOptions& options,
                            const rocksdb::DataVerificationInfo& info,
                            IODebugContext* dbg) override {
    return fs_->WriteThrough(*state_, data, offset, [&](const Slice& d) {
      return d.size() == data.size()
                 ? target()->PositionedAppend(d, offset, options, info, dbg)
                 : target()->PositionedAppend(d, offset, options, dbg);
    });
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    return fs_->TruncateThrough(
        *state_, size, [&] { return target()->Truncate(size, options, dbg); });
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    return fs_->SyncThrough(*state_,
                            [&] { return target()->Sync(options, dbg); });
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return fs_->SyncThrough(*state_,
                            [&] { return target()->Fsync(options, dbg); });
  }
  // Not durable: see the header comment.
  IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& options,
                     IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->RangeSync(offset, nbytes, options, dbg);
  }
  IOStatus Flush(const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Flush(options, dbg);
  }
  IOStatus Allocate(uint64_t offset, uint64_t len, const IOOptions& options,
                    IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Allocate(offset, len, options, dbg);
  }
  // Close never makes data durable. While inactive it reports the power loss
  // and leaves the descriptor to the target's destructor, which closes it.
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Close(options, dbg);
  }

 private:
  FaultInjectionFileSystem* const fs_;
  const std::shared_ptr<FileState> state_;
};

class FaultInjectionFileSystem::GatedSequentialFile
    : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  GatedSequentialFile(std::unique_ptr<rocksdb::FSSequentialFile> target,
                      FaultInjectionFileSystem* fs)
      : FSSequentialFileOwnerWrapper(std::move(target)), fs_(fs) {}

  IOStatus Read(size_t n, const IOOptions& options, Slice* result,
                char* scratch, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Read(n, options, result, scratch, dbg);
  }
  IOStatus PositionedRead(uint64_t offset, size_t n, const IOOptions& options,
                          Slice* result, char* scratch,
                          IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->PositionedRead(offset, n, options, result, scratch, dbg);
  }

 private:
  FaultInjectionFileSystem* const fs_;
};

class FaultInjectionFileSystem::GatedRandomAccessFile
    : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  GatedRandomAccessFile(std::unique_ptr<rocksdb::FSRandomAccessFile> target,
                        FaultInjectionFileSystem* fs)
      : FSRandomAccessFileOwnerWrapper(std::move(target)), fs_(fs) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options,
                Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    if (!fs_->Active()) return PowerLost();
    return target()->Read(offset, n, options, result, scratch, dbg);
  }
  IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                     const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) {
      for (size_t i = 0; i < num_reqs; ++i) reqs[i].status = PowerLost();
      return PowerLost();
    }
    return target()->MultiRead(reqs, num_reqs, options, dbg);
  }
  IOStatus Prefetch(uint64_t offset, size_t n, const IOOptions& options,
                    IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Prefetch(offset, n, options, dbg);
  }
  IOStatus ReadAsync(
      rocksdb::FSReadRequest& req, const IOOptions& opts,
      std::function<void(const rocksdb::FSReadRequest&, void*)> cb,
      void* cb_arg, void** io_handle, rocksdb::IOHandleDeleter* del_fn,
      IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->ReadAsync(req, opts, std::move(cb), cb_arg, io_handle,
                               del_fn, dbg);
  }

 private:
  FaultInjectionFileSystem* const fs_;
};

// Untracked (see the header comment) but powered like everything else.
class FaultInjectionFileSystem::GatedRandomRWFile
    : public rocksdb::FSRandomRWFileOwnerWrapper {
 public:
  GatedRandomRWFile(std::unique_ptr<rocksdb::FSRandomRWFile> target,
                    FaultInjectionFileSystem* fs)
      : FSRandomRWFileOwnerWrapper(std::move(target)), fs_(fs) {}

  IOStatus Write(uint64_t offset, const Slice& data, const IOOptions& options,
                 IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Write(offset, data, options, dbg);
  }
  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options,
                Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    if (!fs_->Active()) return PowerLost();
    return target()->Read(offset, n, options, result, scratch, dbg);
  }
  IOStatus Flush(const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Flush(options, dbg);
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Sync(options, dbg);
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();
    return target()->Fsync(options, dbg);
  }
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    if (!fs_->Active()) return PowerLost();  // The destructor closes it.
    return target()->Close(options, dbg);
  }

 private:
  FaultInjectionFileSystem* const fs_;
};

class FaultInjectionFileSystem::TrackedDirectory
    : public rocksdb::FSDirectoryWrapper {
 public:
  TrackedDirectory(std::unique_ptr<rocksdb::FSDirectory> target,
                   FaultInjectionFileSystem* fs, std::string dir)
      : FSDirectoryWrapper(std::move(target)), fs_(fs), dir_(std::move(dir)) {}

  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return fs_->DirSyncThrough(
        dir_, [&] { return FSDirectoryWrapper::Fsync(options, dbg); });
  }
  // RocksDB calls this one; the base wrapper would bypass Fsync() above.
  IOStatus FsyncWithDirOptions(
      const IOOptions& options, IODebugContext* dbg,
      const rocksdb::DirFsyncOptions& dir_fsync_options) override {
    return fs_->DirSyncThrough(dir_, [&] {
      return FSDirectoryWrapper::FsyncWithDirOptions(options, dbg,
                                                     dir_fsync_options);
    });
  }
  // Close is inherited and always works.

 private:
  FaultInjectionFileSystem* const fs_;
  const std::string dir_;
};

// --- Control ---------------------------------------------------------------

FaultInjectionFileSystem::FaultInjectionFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base)
    : FileSystemWrapper(base) {}

FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

IOStatus FaultInjectionFileSystem::PowerLost() {
  return IOStatus::IOError(kPowerLostMessage);
}

void FaultInjectionFileSystem::SetActive(bool active) {
  std::lock_guard<std::mutex> l(mu_);
  active_ = active;
}

bool FaultInjectionFileSystem::IsActive() const { return Active(); }

bool FaultInjectionFileSystem::Active() const {
  std::lock_guard<std::mutex> l(mu_);
  return active_;
}

void FaultInjectionFileSystem::SetCrashAfterWrites(
    uint64_t n, std::function<void()> on_crash) {
  std::lock_guard<std::mutex> l(mu_);
  writes_until_crash_ = n;
  syncs_until_crash_ = 0;
  on_crash_ = n > 0 ? std::move(on_crash) : nullptr;
  crashed_ = false;
}

void FaultInjectionFileSystem::SetCrashAfterSyncs(
    uint64_t n, std::function<void()> on_crash) {
  std::lock_guard<std::mutex> l(mu_);
  syncs_until_crash_ = n;
  writes_until_crash_ = 0;
  on_crash_ = n > 0 ? std::move(on_crash) : nullptr;
  crashed_ = false;
}

void FaultInjectionFileSystem::DisarmCrash() {
  std::lock_guard<std::mutex> l(mu_);
  writes_until_crash_ = 0;
  syncs_until_crash_ = 0;
  on_crash_ = nullptr;
}

void FaultInjectionFileSystem::set_skip_real_syncs(bool skip) {
  std::lock_guard<std::mutex> l(mu_);
  skip_real_syncs_ = skip;
}

bool FaultInjectionFileSystem::crashed() const {
  std::lock_guard<std::mutex> l(mu_);
  return crashed_;
}

uint64_t FaultInjectionFileSystem::sync_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return sync_count_;
}

uint64_t FaultInjectionFileSystem::write_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return write_count_;
}

std::optional<FaultInjectionFileSystem::FileInfo>
FaultInjectionFileSystem::GetFileInfo(const std::string& path) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(NormalizePath(path));
  if (it == files_.end()) return std::nullopt;
  return FileInfo{it->second->size, it->second->synced,
                  it->second->open_handles};
}

size_t FaultInjectionFileSystem::pending_dir_op_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return pending_.size();
}

FaultInjectionFileSystem::Gate FaultInjectionFileSystem::Enter(OpClass op) {
  std::lock_guard<std::mutex> l(mu_);
  if (!active_) return Gate::kInactive;
  uint64_t* countdown = nullptr;
  if (op == OpClass::kWrite) {
    ++write_count_;
    countdown = &writes_until_crash_;
  } else if (op == OpClass::kSync) {
    ++sync_count_;
    countdown = &syncs_until_crash_;
  }
  if (countdown != nullptr && *countdown > 0 && --*countdown == 0) {
    active_ = false;
    crashed_ = true;
    writes_until_crash_ = 0;
    syncs_until_crash_ = 0;
    return Gate::kCrash;
  }
  return Gate::kGo;
}

void FaultInjectionFileSystem::RunCrashCallback() {
  std::function<void()> cb;
  {
    std::lock_guard<std::mutex> l(mu_);
    cb = std::move(on_crash_);
    on_crash_ = nullptr;
  }
  if (cb) cb();
}

// --- Write / sync paths ----------------------------------------------------

IOStatus FaultInjectionFileSystem::WriteThrough(
    FileState& st, const Slice& data, std::optional<uint64_t> offset,
    const std::function<IOStatus(const Slice&)>& write) {
  auto note = [&](size_t n) {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t start = offset.has_value() ? *offset : st.size;
    st.size = std::max(st.size, start + n);
    return active_;
  };
  switch (Enter(OpClass::kWrite)) {
    case Gate::kInactive:
      return PowerLost();
    case Gate::kCrash: {
      // Torn write: the first half reaches the (volatile) file.
      size_t torn = data.size() / 2;
      if (torn > 0 && write(Slice(data.data(), torn)).ok()) note(torn);
      RunCrashCallback();
      return PowerLost();
    }
    case Gate::kGo:
      break;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    IOStatus injected = InjectedLocked(fail_appends_, st.path, "append");
    if (!injected.ok()) return injected;
    if (space_budget_.has_value()) {
      if (data.size() > *space_budget_) {
        space_exhausted_ = true;
        ++no_space_errors_;
        return IOStatus::NoSpace("No space left on device (simulated ENOSPC)");
      }
      *space_budget_ -= data.size();
    }
  }
  IOStatus s = write(data);
  if (!s.ok()) return s;
  if (!note(data.size())) return PowerLost();
  return s;
}

void FaultInjectionFileSystem::SetSpaceBudget(std::optional<uint64_t> bytes, bool fail_syncs) {
  std::lock_guard<std::mutex> l(mu_);
  space_budget_ = bytes;
  space_fail_syncs_ = fail_syncs;
  space_exhausted_ = false;
}

void FaultInjectionFileSystem::FailAppends(uint64_t skip, uint64_t count,
                                           std::string name_suffix) {
  std::lock_guard<std::mutex> l(mu_);
  fail_appends_ = FailSchedule{skip, count, std::move(name_suffix)};
}

void FaultInjectionFileSystem::FailSyncs(uint64_t skip, uint64_t count,
                                         std::string name_suffix) {
  std::lock_guard<std::mutex> l(mu_);
  fail_syncs_ = FailSchedule{skip, count, std::move(name_suffix)};
}

uint64_t FaultInjectionFileSystem::injected_errors() const {
  std::lock_guard<std::mutex> l(mu_);
  return injected_errors_;
}

IOStatus FaultInjectionFileSystem::InjectedLocked(FailSchedule& f,
                                                  const std::string& path,
                                                  const char* what) {
  if (f.count == 0) return IOStatus::OK();
  if (path.size() < f.suffix.size() ||
      path.compare(path.size() - f.suffix.size(), f.suffix.size(), f.suffix) != 0) {
    return IOStatus::OK();
  }
  if (f.skip > 0) {
    --f.skip;
    return IOStatus::OK();
  }
  --f.count;
  ++injected_errors_;
  return IOStatus::IOError(absl::StrCat("Input/output error (injected at ", what, " of ", path, ")"));
}

uint64_t FaultInjectionFileSystem::no_space_errors() const {
  std::lock_guard<std::mutex> l(mu_);
  return no_space_errors_;
}

IOStatus FaultInjectionFileSystem::SyncThrough(
    FileState& st, const std::function<IOStatus()>& sync) {
  switch (Enter(OpClass::kSync)) {
    case Gate::kInactive:
      return PowerLost();
    case Gate::kCrash:
      RunCrashCallback();
      return PowerLost();
    case Gate::kGo:
      break;
  }
  uint64_t covered;
  bool skip;
  std::function<void()> flush_also;
  {
    // Everything written before the sync starts is covered by it.
    std::lock_guard<std::mutex> l(mu_);
    IOStatus injected = InjectedLocked(fail_syncs_, st.path, "sync");
    if (!injected.ok()) return injected;
    if (space_fail_syncs_ && space_exhausted_) {
      ++no_space_errors_;
      return IOStatus::NoSpace("No space left on device (simulated ENOSPC at sync)");
    }
    covered = st.size;
    skip = skip_real_syncs_;
    flush_also = sync_flushes_also_;
  }
  if (flush_also) flush_also();
  IOStatus s = skip ? IOStatus::OK() : sync();
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  if (!active_) return PowerLost();
  st.synced = std::max(st.synced, std::min(covered, st.size));
  return s;
}

void FaultInjectionFileSystem::SetSyncFlushesAlso(std::function<void()> flush) {
  std::lock_guard<std::mutex> l(mu_);
  sync_flushes_also_ = std::move(flush);
}

IOStatus FaultInjectionFileSystem::TruncateThrough(
    FileState& st, uint64_t size, const std::function<IOStatus()>& truncate) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  IOStatus s = truncate();
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  st.size = size;
  st.synced = std::min(st.synced, size);
  return active_ ? s : PowerLost();
}

IOStatus FaultInjectionFileSystem::DirSyncThrough(
    const std::string& dir, const std::function<IOStatus()>& sync) {
  switch (Enter(OpClass::kSync)) {
    case Gate::kInactive:
      return PowerLost();
    case Gate::kCrash:
      RunCrashCallback();
      return PowerLost();
    case Gate::kGo:
      break;
  }
  uint64_t covered_seq;
  bool skip;
  {
    std::lock_guard<std::mutex> l(mu_);
    covered_seq = next_op_seq_;
    skip = skip_real_syncs_;
  }
  IOStatus s = skip ? IOStatus::OK() : sync();
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  if (!active_) return PowerLost();
  std::erase_if(pending_, [&](const DirOp& op) {
    return op.dir == dir && op.seq < covered_seq;
  });
  return s;
}

void FaultInjectionFileSystem::CloseHandle(FileState& st) {
  std::lock_guard<std::mutex> l(mu_);
  --st.open_handles;
  --open_writable_files_;
}

// --- Opening files ---------------------------------------------------------

IOStatus FaultInjectionFileSystem::OpenTracked(
    const std::string& fname, bool reopen,
    const std::function<IOStatus(std::unique_ptr<rocksdb::FSWritableFile>*)>&
        open,
    std::unique_ptr<rocksdb::FSWritableFile>* result) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  const std::string path = NormalizePath(fname);
  uint64_t disk_size = 0;
  const bool existed =
      target()->GetFileSize(fname, IOOptions(), &disk_size, nullptr).ok();
  std::unique_ptr<rocksdb::FSWritableFile> file;
  IOStatus s = open(&file);
  if (!s.ok()) return s;

  std::shared_ptr<FileState> st;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(path);
    if (reopen && it != files_.end()) {
      st = it->second;  // Keep what we know about its unsynced tail.
    } else {
      st = std::make_shared<FileState>();
      st->path = path;
      if (reopen) {
        // An untracked file's existing content is durable.
        st->size = st->synced = disk_size;
      }
      files_[path] = st;
    }
    if (!existed) {
      pending_.push_back(DirOp{DirOp::Kind::kCreate, next_op_seq_++,
                               ParentDir(path), path, "", std::nullopt});
    }
    ++st->open_handles;
    ++open_writable_files_;
    if (!active_) {
      // Lost power while opening: the file may exist, the caller gets none.
      --st->open_handles;
      --open_writable_files_;
      return PowerLost();
    }
  }
  *result = std::make_unique<TrackedWritableFile>(std::move(file), this, st);
  return IOStatus::OK();
}

IOStatus FaultInjectionFileSystem::NewWritableFile(
    const std::string& fname, const FileOptions& file_opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  return OpenTracked(
      fname, /*reopen=*/false,
      [&](std::unique_ptr<rocksdb::FSWritableFile>* f) {
        return target()->NewWritableFile(fname, file_opts, f, dbg);
      },
      result);
}

IOStatus FaultInjectionFileSystem::ReopenWritableFile(
    const std::string& fname, const FileOptions& file_opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  return OpenTracked(
      fname, /*reopen=*/true,
      [&](std::unique_ptr<rocksdb::FSWritableFile>* f) {
        return target()->ReopenWritableFile(fname, file_opts, f, dbg);
      },
      result);
}

IOStatus FaultInjectionFileSystem::ReuseWritableFile(
    const std::string& fname, const std::string& old_fname,
    const FileOptions& file_opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  const std::string path = NormalizePath(fname);
  const std::string old_path = NormalizePath(old_fname);
  std::unique_ptr<rocksdb::FSWritableFile> file;
  IOStatus s =
      target()->ReuseWritableFile(fname, old_fname, file_opts, &file, dbg);
  if (!s.ok()) return s;
  auto st = std::make_shared<FileState>();
  st->path = path;
  {
    std::lock_guard<std::mutex> l(mu_);
    files_.erase(old_path);
    files_[path] = st;
    pending_.push_back(DirOp{DirOp::Kind::kRename, next_op_seq_++,
                             ParentDir(path), path, old_path, std::nullopt});
    if (!active_) return PowerLost();
    ++st->open_handles;
    ++open_writable_files_;
  }
  *result = std::make_unique<TrackedWritableFile>(std::move(file), this, st);
  return IOStatus::OK();
}

IOStatus FaultInjectionFileSystem::NewSequentialFile(
    const std::string& fname, const FileOptions& file_opts,
    std::unique_ptr<rocksdb::FSSequentialFile>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  std::unique_ptr<rocksdb::FSSequentialFile> file;
  IOStatus s = target()->NewSequentialFile(fname, file_opts, &file, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<GatedSequentialFile>(std::move(file), this);
  return s;
}

IOStatus FaultInjectionFileSystem::NewRandomAccessFile(
    const std::string& fname, const FileOptions& file_opts,
    std::unique_ptr<rocksdb::FSRandomAccessFile>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  std::unique_ptr<rocksdb::FSRandomAccessFile> file;
  IOStatus s = target()->NewRandomAccessFile(fname, file_opts, &file, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<GatedRandomAccessFile>(std::move(file), this);
  return s;
}

IOStatus FaultInjectionFileSystem::NewRandomRWFile(
    const std::string& fname, const FileOptions& file_opts,
    std::unique_ptr<rocksdb::FSRandomRWFile>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  std::unique_ptr<rocksdb::FSRandomRWFile> file;
  IOStatus s = target()->NewRandomRWFile(fname, file_opts, &file, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<GatedRandomRWFile>(std::move(file), this);
  return s;
}

IOStatus FaultInjectionFileSystem::NewMemoryMappedFileBuffer(
    const std::string& fname,
    std::unique_ptr<rocksdb::MemoryMappedFileBuffer>* result) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->NewMemoryMappedFileBuffer(fname, result);
}

IOStatus FaultInjectionFileSystem::NewDirectory(
    const std::string& name, const IOOptions& io_opts,
    std::unique_ptr<rocksdb::FSDirectory>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  std::unique_ptr<rocksdb::FSDirectory> dir;
  IOStatus s = target()->NewDirectory(name, io_opts, &dir, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<TrackedDirectory>(std::move(dir), this,
                                               NormalizePath(name));
  return s;
}

// --- Metadata ----------------------------------------------------------------

IOStatus FaultInjectionFileSystem::FileExists(const std::string& fname,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->FileExists(fname, options, dbg);
}

IOStatus FaultInjectionFileSystem::GetChildren(const std::string& dir,
                                               const IOOptions& options,
                                               std::vector<std::string>* r,
                                               IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->GetChildren(dir, options, r, dbg);
}

IOStatus FaultInjectionFileSystem::GetChildrenFileAttributes(
    const std::string& dir, const IOOptions& options,
    std::vector<rocksdb::FileAttributes>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->GetChildrenFileAttributes(dir, options, result, dbg);
}

IOStatus FaultInjectionFileSystem::DeleteFile(const std::string& fname,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  IOStatus s = target()->DeleteFile(fname, options, dbg);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  files_.erase(NormalizePath(fname));  // Deletion is durable at once.
  return active_ ? s : PowerLost();
}

IOStatus FaultInjectionFileSystem::Truncate(const std::string& fname,
                                            size_t size,
                                            const IOOptions& options,
                                            IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  IOStatus s = target()->Truncate(fname, size, options, dbg);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(NormalizePath(fname));
  if (it != files_.end()) {
    it->second->size = size;
    it->second->synced = std::min<uint64_t>(it->second->synced, size);
  }
  return active_ ? s : PowerLost();
}

IOStatus FaultInjectionFileSystem::CreateDir(const std::string& dirname,
                                             const IOOptions& options,
                                             IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->CreateDir(dirname, options, dbg);
}

IOStatus FaultInjectionFileSystem::CreateDirIfMissing(
    const std::string& dirname, const IOOptions& options, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->CreateDirIfMissing(dirname, options, dbg);
}

IOStatus FaultInjectionFileSystem::DeleteDir(const std::string& dirname,
                                             const IOOptions& options,
                                             IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->DeleteDir(dirname, options, dbg);
}

IOStatus FaultInjectionFileSystem::GetFileSize(const std::string& fname,
                                               const IOOptions& options,
                                               uint64_t* file_size,
                                               IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->GetFileSize(fname, options, file_size, dbg);
}

IOStatus FaultInjectionFileSystem::GetFileModificationTime(
    const std::string& fname, const IOOptions& options, uint64_t* file_mtime,
    IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->GetFileModificationTime(fname, options, file_mtime, dbg);
}

IOStatus FaultInjectionFileSystem::RenameFile(const std::string& src,
                                              const std::string& dst,
                                              const IOOptions& options,
                                              IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  const std::string src_path = NormalizePath(src);
  const std::string dst_path = NormalizePath(dst);

  // Save the durable content the target has now, to put it back if the
  // rename does not survive the crash.
  std::optional<std::string> old_content;
  bool revertible = true;
  uint64_t disk_size = 0;
  if (target()->GetFileSize(dst, IOOptions(), &disk_size, nullptr).ok()) {
    uint64_t durable = disk_size;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = files_.find(dst_path);
      if (it != files_.end()) durable = std::min(durable, it->second->synced);
    }
    std::string content;
    if (durable <= kMaxSavedRenameTarget &&
        ReadPrefix(dst, durable, &content).ok()) {
      old_content = std::move(content);
    } else {
      revertible = false;
    }
  }

  IOStatus s = target()->RenameFile(src, dst, options, dbg);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  files_.erase(dst_path);
  auto it = files_.find(src_path);
  if (it != files_.end()) {
    std::shared_ptr<FileState> st = it->second;
    files_.erase(it);
    st->path = dst_path;
    files_[dst_path] = std::move(st);
  }
  if (revertible) {
    pending_.push_back(DirOp{DirOp::Kind::kRename, next_op_seq_++,
                             ParentDir(dst_path), dst_path, src_path,
                             std::move(old_content)});
  }
  return active_ ? s : PowerLost();
}

IOStatus FaultInjectionFileSystem::LinkFile(const std::string& src,
                                            const std::string& dst,
                                            const IOOptions& options,
                                            IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->LinkFile(src, dst, options, dbg);
}

IOStatus FaultInjectionFileSystem::NumFileLinks(const std::string& fname,
                                                const IOOptions& options,
                                                uint64_t* count,
                                                IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->NumFileLinks(fname, options, count, dbg);
}

IOStatus FaultInjectionFileSystem::AreFilesSame(const std::string& first,
                                                const std::string& second,
                                                const IOOptions& options,
                                                bool* res,
                                                IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->AreFilesSame(first, second, options, res, dbg);
}

IOStatus FaultInjectionFileSystem::LockFile(const std::string& fname,
                                            const IOOptions& options,
                                            rocksdb::FileLock** lock,
                                            IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->LockFile(fname, options, lock, dbg);
}

IOStatus FaultInjectionFileSystem::NewLogger(
    const std::string& fname, const IOOptions& io_opts,
    std::shared_ptr<rocksdb::Logger>* result, IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->NewLogger(fname, io_opts, result, dbg);
}

IOStatus FaultInjectionFileSystem::GetFreeSpace(const std::string& path,
                                                const IOOptions& options,
                                                uint64_t* diskfree,
                                                IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (space_budget_.has_value()) {
      *diskfree = *space_budget_;
      return IOStatus::OK();
    }
  }
  return target()->GetFreeSpace(path, options, diskfree, dbg);
}

IOStatus FaultInjectionFileSystem::IsDirectory(const std::string& path,
                                               const IOOptions& options,
                                               bool* is_dir,
                                               IODebugContext* dbg) {
  if (Enter(OpClass::kOther) != Gate::kGo) return PowerLost();
  return target()->IsDirectory(path, options, is_dir, dbg);
}

// --- Crash -------------------------------------------------------------------

IOStatus FaultInjectionFileSystem::ReadPrefix(const std::string& path,
                                              uint64_t limit,
                                              std::string* out) {
  out->clear();
  std::unique_ptr<rocksdb::FSSequentialFile> file;
  IOStatus s = target()->NewSequentialFile(path, FileOptions(), &file, nullptr);
  if (!s.ok()) return s;
  std::string buf(64 << 10, '\0');
  while (out->size() < limit) {
    size_t want = std::min<uint64_t>(buf.size(), limit - out->size());
    Slice got;
    s = file->Read(want, IOOptions(), &got, buf.data(), nullptr);
    if (!s.ok()) return s;
    if (got.empty()) break;
    out->append(got.data(), got.size());
  }
  return IOStatus::OK();
}

IOStatus FaultInjectionFileSystem::WriteWhole(const std::string& path,
                                              const std::string& data) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  IOStatus s = target()->NewWritableFile(path, FileOptions(), &file, nullptr);
  if (!s.ok()) return s;
  s = file->Append(data, IOOptions(), nullptr);
  if (s.ok()) s = file->Fsync(IOOptions(), nullptr);
  IOStatus c = file->Close(IOOptions(), nullptr);
  return s.ok() ? c : s;
}

absl::Status FaultInjectionFileSystem::Crash(
    const std::function<uint64_t(const FileState&)>& keep_size,
    const std::function<size_t(size_t)>& durable_ops) {
  std::lock_guard<std::mutex> l(mu_);
  if (open_writable_files_ > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        open_writable_files_,
        " tracked file(s) still open for writing; destroy the DB first"));
  }
  // 1. File data: cut every file to what survives.
  for (const auto& [path, st] : files_) {
    uint64_t disk_size = 0;
    IOStatus s = target()->GetFileSize(path, IOOptions(), &disk_size, nullptr);
    if (s.IsNotFound() || s.IsPathNotFound()) continue;
    if (!s.ok()) return ToAbsl(s, "stat " + path);
    uint64_t keep = std::min(keep_size(*st), disk_size);
    if (keep < disk_size) {
      absl::Status t = TruncateFile(path, keep);
      if (!t.ok()) return t;
    }
  }
  // 2. Directory entries: undo what was not durable, newest first.
  const size_t durable =
      std::min(durable_ops(pending_.size()), pending_.size());
  for (size_t i = pending_.size(); i > durable; --i) {
    const DirOp& op = pending_[i - 1];
    const bool exists =
        target()->FileExists(op.path, IOOptions(), nullptr).ok();
    if (!exists) continue;
    if (op.kind == DirOp::Kind::kCreate) {
      IOStatus s = target()->DeleteFile(op.path, IOOptions(), nullptr);
      if (!s.ok()) return ToAbsl(s, "delete " + op.path);
      continue;
    }
    // kRename. If the old name was taken again since, leave both alone.
    if (target()->FileExists(op.src, IOOptions(), nullptr).ok()) continue;
    IOStatus s = target()->RenameFile(op.path, op.src, IOOptions(), nullptr);
    if (!s.ok()) return ToAbsl(s, "rename back " + op.path);
    if (op.old_content.has_value()) {
      s = WriteWhole(op.path, *op.old_content);
      if (!s.ok()) return ToAbsl(s, "restore " + op.path);
    }
  }
  files_.clear();
  pending_.clear();
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::DropUnsyncedData() {
  return Crash([](const FileState& st) { return st.synced; },
               [](size_t) { return size_t{0}; });
}

absl::Status FaultInjectionFileSystem::DropRandomUnsyncedData(uint64_t seed) {
  std::mt19937_64 rng(seed);
  return Crash(
      [&rng](const FileState& st) {
        if (st.size <= st.synced) return st.synced;
        return st.synced + rng() % (st.size - st.synced + 1);
      },
      [&rng](size_t n) { return static_cast<size_t>(rng() % (n + 1)); });
}

void FaultInjectionFileSystem::ResetState() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->second->open_handles > 0) {
      it->second->synced = it->second->size;
      ++it;
    } else {
      it = files_.erase(it);
    }
  }
  pending_.clear();
  active_ = true;
  crashed_ = false;
  writes_until_crash_ = 0;
  syncs_until_crash_ = 0;
  on_crash_ = nullptr;
  sync_count_ = 0;
  write_count_ = 0;
}

// --- Status conversion -------------------------------------------------------

absl::Status FromRocksDbStatus(const rocksdb::Status& s) {
  using C = rocksdb::Status::Code;
  if (s.ok()) return absl::OkStatus();
  const std::string msg = s.ToString();
  switch (s.code()) {
    case C::kNotFound:
      return absl::NotFoundError(msg);
    case C::kCorruption:
      return absl::DataLossError(msg);
    case C::kNotSupported:
      return absl::UnimplementedError(msg);
    case C::kInvalidArgument:
      return absl::InvalidArgumentError(msg);
    case C::kBusy:
    case C::kTryAgain:
      return absl::UnavailableError(msg);
    case C::kTimedOut:
      return absl::DeadlineExceededError(msg);
    case C::kAborted:
      return absl::AbortedError(msg);
    case C::kShutdownInProgress:
    case C::kColumnFamilyDropped:
      return absl::CancelledError(msg);
    case C::kIncomplete:
      return absl::FailedPreconditionError(msg);
    case C::kIOError:
    case C::kMergeInProgress:
    case C::kExpired:
    case C::kCompactionTooLarge:
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace pgring::testing
