#include "rocksdb_io_counter.h"

#include <string_view>

namespace pgring::fio {
namespace {

// Counts every byte appended through it, and its syncs.
class CountingWritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  CountingWritableFile(std::unique_ptr<rocksdb::FSWritableFile> target,
                       std::shared_ptr<RocksDbIoCounter::Counts> counts, RocksDbIoCounter::Kind kind)
      : FSWritableFileOwnerWrapper(std::move(target)),
        counts_(std::move(counts)),
        kind_(kind),
        id_(counts_->next_file.fetch_add(1, std::memory_order_relaxed)),
        end_(this->target()->GetFileSize(rocksdb::IOOptions(), nullptr)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
    Count(end_, data.size());
    return FSWritableFileOwnerWrapper::Append(data, o, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* dbg) override {
    Count(end_, data.size());
    return FSWritableFileOwnerWrapper::Append(data, o, v, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* dbg) override {
    Count(offset, data.size());
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     const rocksdb::DataVerificationInfo& v,
                                     rocksdb::IODebugContext* dbg) override {
    Count(offset, data.size());
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, v, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    counts_->syncs.fetch_add(1, std::memory_order_relaxed);
    return FSWritableFileOwnerWrapper::Sync(o, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    counts_->syncs.fetch_add(1, std::memory_order_relaxed);
    return FSWritableFileOwnerWrapper::Fsync(o, dbg);
  }
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t n, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* dbg) override {
    counts_->syncs.fetch_add(1, std::memory_order_relaxed);
    return FSWritableFileOwnerWrapper::RangeSync(offset, n, o, dbg);
  }

 private:
  void Count(uint64_t offset, size_t n) {
    counts_->bytes[kind_].fetch_add(n, std::memory_order_relaxed);
    counts_->requests.Issued(id_, offset, n);
    end_ = offset + n;
  }
  std::shared_ptr<RocksDbIoCounter::Counts> counts_;
  RocksDbIoCounter::Kind kind_;
  const uint64_t id_;
  uint64_t end_;  // where the next Append writes (a file's writer is one thread at a time)
};

}  // namespace

const char* RocksDbIoCounter::KindName(int kind) {
  switch (kind) {
    case kWal: return "wal";
    case kSst: return "sst";
    case kManifest: return "manifest";
    default: return "other";
  }
}

RocksDbIoCounter::Kind RocksDbIoCounter::KindOf(const std::string& path) {
  std::string_view name(path);
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  auto ends_with = [&](std::string_view s) {
    return name.size() >= s.size() && name.substr(name.size() - s.size()) == s;
  };
  if (ends_with(".log") && name != "LOG" && name.find("LOG") == std::string_view::npos) return kWal;
  if (ends_with(".sst")) return kSst;
  if (name.rfind("MANIFEST-", 0) == 0) return kManifest;
  return kOther;
}

RocksDbIoCounter::RocksDbIoCounter(std::shared_ptr<rocksdb::FileSystem> base)
    : rocksdb::FileSystemWrapper(std::move(base)) {}

uint64_t RocksDbIoCounter::total_bytes() const {
  uint64_t t = 0;
  for (const auto& b : counts_->bytes) t += b.load(std::memory_order_relaxed);
  return t;
}

void RocksDbIoCounter::Wrap(const std::string& fname,
                            std::unique_ptr<rocksdb::FSWritableFile>* result) {
  const Kind kind = KindOf(fname);
  counts_->files[kind].fetch_add(1, std::memory_order_relaxed);
  *result = std::make_unique<CountingWritableFile>(std::move(*result), counts_, kind);
}

rocksdb::IOStatus RocksDbIoCounter::NewWritableFile(const std::string& fname,
                                                    const rocksdb::FileOptions& opts,
                                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                    rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus s = target()->NewWritableFile(fname, opts, result, dbg);
  if (s.ok()) Wrap(fname, result);
  return s;
}

rocksdb::IOStatus RocksDbIoCounter::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus s = target()->ReopenWritableFile(fname, opts, result, dbg);
  if (s.ok()) Wrap(fname, result);
  return s;
}

rocksdb::IOStatus RocksDbIoCounter::ReuseWritableFile(
    const std::string& fname, const std::string& old_fname, const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus s = target()->ReuseWritableFile(fname, old_fname, opts, result, dbg);
  if (s.ok()) Wrap(fname, result);
  return s;
}

}  // namespace pgring::fio
