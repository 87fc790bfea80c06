// rocksdb_io_counter.h — a RocksDB FileSystem wrapper that counts the bytes
// RocksDB writes, by kind of file, and its syncs. The engine opens the store
// with it (through pgring::Options::rocksdb_env) to report what the metadata
// costs in RocksDB I/O: WAL bytes, SST bytes (flushes plus compactions),
// MANIFEST and the rest. It counts what RocksDB hands to the file system, so
// it needs no rocksdb::Statistics. It also counts the write requests RocksDB
// makes of the file system (each Append or PositionedAppend of a file's
// writer, which RocksDB buffers, so one per WAL write or per SST buffer) and
// how many do not continue the request before (another file, or another
// place in it): the seeks a disk would make for RocksDB (docs/DESIGN.md §10).
#ifndef PGRING_TOOLS_FIO_ENGINE_ROCKSDB_IO_COUNTER_H_
#define PGRING_TOOLS_FIO_ENGINE_ROCKSDB_IO_COUNTER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "write_requests.h"

namespace pgring::fio {

class RocksDbIoCounter : public rocksdb::FileSystemWrapper {
 public:
  enum Kind { kWal = 0, kSst = 1, kManifest = 2, kOther = 3, kKinds = 4 };

  struct Counts {
    std::atomic<uint64_t> bytes[kKinds] = {};
    std::atomic<uint64_t> files[kKinds] = {};  // files created for writing
    std::atomic<uint64_t> syncs{0};            // Sync/Fsync/RangeSync calls
    WriteRequests requests;                    // every file's, in one order
    std::atomic<uint64_t> next_file{0};        // names the files for `requests`
  };

  static const char* kClassName() { return "PgringRocksDbIoCounter"; }
  static const char* KindName(int kind);
  // The kind of a RocksDB file from its name (000012.log, 000013.sst, ...).
  static Kind KindOf(const std::string& path);

  explicit RocksDbIoCounter(std::shared_ptr<rocksdb::FileSystem> base = rocksdb::FileSystem::Default());
  const char* Name() const override { return kClassName(); }

  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& opts,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname, const rocksdb::FileOptions& opts,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                                      const rocksdb::FileOptions& opts,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override;

  const Counts& counts() const { return *counts_; }
  uint64_t total_bytes() const;

  // An Env over this file system, for pgring::Options::rocksdb_env (the Env
  // holds the counter; the store holds the Env while its RocksDB is open).
  static std::shared_ptr<rocksdb::Env> NewEnv(const std::shared_ptr<RocksDbIoCounter>& fs) {
    return rocksdb::NewCompositeEnv(fs);
  }

 private:
  void Wrap(const std::string& fname, std::unique_ptr<rocksdb::FSWritableFile>* result);
  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_ROCKSDB_IO_COUNTER_H_
