// bench_util.h — what the google-benchmark programs share: scratch
// directories, a zero-filled partition file, a store on the in-memory device
// or on a real O_DIRECT file, RocksDB's write counters, and a bound on the
// transactions in flight.
#ifndef PGRING_BENCH_BENCH_UTIL_H_
#define PGRING_BENCH_BENCH_UTIL_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/options.h"
#include "pgring/store.h"

namespace pgring::bench {

// The process's scratch directory: $PGRING_BENCH_DIR (or the system temp
// directory) + "/pgring-bench-<pid>". Created on first use; removed by
// RemoveScratch() (the programs call it before exiting).
const std::string& ScratchDir();
void RemoveScratch();

// Makes `path` a file of at least `size` bytes whose blocks are all written
// (zeros, with O_DIRECT), growing it if it is shorter. Not fallocate: ext4
// keeps fallocated blocks "unwritten", and the first write to each then
// costs an extent conversion a raw partition never pays (fio-jobs/run.sh
// does the same for the main job).
absl::Status EnsureZeroFile(const std::string& path, uint64_t size);

enum class DeviceKind {
  // An in-memory partition (Device::InMemory) and RocksDB's in-memory Env
  // for the metadata: no I/O at all, so this measures CPU cost.
  kMemory,
  // A real file opened O_DIRECT (io_uring) under ScratchDir() and a RocksDB
  // directory next to it: fdatasync and WAL fsync included.
  kFile,
};
const char* DeviceName(DeviceKind d);
const char* BackendName(Backend b);

struct BenchStoreConfig {
  Backend backend = Backend::kRing;
  DeviceKind device = DeviceKind::kMemory;
  uint32_t chunk_size = 128 << 10;
  uint64_t device_size = 64ull << 20;  // the partition the store uses
  Options options;
};

// RocksDB's cumulative write tickers (rocksdb::Statistics), or zeros when
// the store does not expose them.
struct RocksDbCounters {
  uint64_t wal_bytes = 0;      // WAL_FILE_BYTES
  uint64_t flush_bytes = 0;    // FLUSH_WRITE_BYTES (memtable -> L0 SST)
  uint64_t compact_bytes = 0;  // COMPACT_WRITE_BYTES
  uint64_t keys_written = 0;   // NUMBER_KEYS_WRITTEN (puts, deletes, ...)
  uint64_t wal_syncs = 0;      // WAL_FILE_SYNCED
  bool available = false;
  uint64_t total_bytes() const { return wal_bytes + flush_bytes + compact_bytes; }
  RocksDbCounters operator-(const RocksDbCounters& o) const;
};

// A freshly made store (mkfs + open) that deletes its files when destroyed.
class BenchStore {
 public:
  static absl::StatusOr<std::unique_ptr<BenchStore>> Create(const BenchStoreConfig& config);
  ~BenchStore();
  BenchStore(const BenchStore&) = delete;
  BenchStore& operator=(const BenchStore&) = delete;

  Store* store() const { return store_.get(); }
  RocksDbCounters rocksdb_counters() const;
  const BenchStoreConfig& config() const { return config_; }

 private:
  explicit BenchStore(const BenchStoreConfig& config);
  BenchStoreConfig config_;
  std::string db_path_;
  std::unique_ptr<Store> store_;  // kMemory: holds its device and RocksDB Env
};

// Bounds the transactions in flight, as an OSD's queue depth does:
// Acquire() blocks while `depth` are outstanding and returns the commit
// callback that releases the slot. Remembers the first failure. One thread
// submits (calls Acquire/Drain); the callbacks may run on any thread.
class InFlight {
 public:
  explicit InFlight(int depth) : depth_(depth) {}
  ~InFlight() { Drain(); }
  CommitCallback Acquire();
  // Gives back a slot Acquire() took whose Submit failed (no callback).
  void Cancel();
  // Waits until nothing is outstanding.
  void Drain();
  absl::Status status();

 private:
  void Release(const absl::Status& s);
  const int depth_;
  std::mutex mu_;
  std::condition_variable cv_;
  int outstanding_ = 0;
  absl::Status status_;
};

// A small fast PRNG (xorshift64*) so picking a PG costs nothing measurable.
class FastRng {
 public:
  explicit FastRng(uint64_t seed = 0x9e3779b97f4a7c15ull) : s_(seed | 1) {}
  uint64_t Next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545f4914f6cdd1dull;
  }
  // Uniform enough in [0, n) for n << 2^32.
  uint64_t Uniform(uint64_t n) { return (Next() >> 32) % n; }

 private:
  uint64_t s_;
};

}  // namespace pgring::bench

#endif  // PGRING_BENCH_BENCH_UTIL_H_
