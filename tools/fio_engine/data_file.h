// data_file.h — the data partition of the modelled OSD: fio's own file (the
// job's filename=), written through a pgring::Device (O_DIRECT, io_uring or
// psync: the log partition's engine) so the 4 KiB data write runs in
// parallel with the log write.
//
// Each write opens a CommitGate when it is done; the pgring transaction of
// the same fio write waits for that gate, so the data and the metadata commit
// together, as in an OSD. With `flush_before_commit` (the durable modes) the
// gate opens only after a Flush() that covers the write: like BlueStore's
// kv_sync_thread, which flushes the block device before it commits the
// RocksDB batch, one flush serves every write completed since the last one.
// Before flushing, the flusher waits for the writes that were already in
// flight when the first write of the batch completed (for at most
// kFlushCoalesce): writes issued together — one commit group's — then share
// one flush instead of each starting its own.
#ifndef PGRING_TOOLS_FIO_ENGINE_DATA_FILE_H_
#define PGRING_TOOLS_FIO_ENGINE_DATA_FILE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/device.h"
#include "pgring/transaction.h"
#include "write_requests.h"

namespace pgring::fio {

class DataFile {
 public:
  static constexpr std::chrono::microseconds kFlushCoalesce{200};

  // Opens `path` (which fio has created and sized) without the exclusive
  // lock: several jobs may share one data file.
  static absl::StatusOr<std::unique_ptr<DataFile>> Open(const std::string& path, bool use_io_uring,
                                                        uint32_t queue_depth,
                                                        bool flush_before_commit);
  // Waits for every write in flight (and its gate), then closes.
  ~DataFile();
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  // Copies `len` bytes of `data` and starts writing them at `offset`; opens
  // `gate` with the outcome (after the covering flush, if so configured).
  void Write(uint64_t offset, const char* data, size_t len, std::shared_ptr<CommitGate> gate);
  // Synchronous read into `buf` (bounced through an aligned buffer if `buf`
  // is not block-aligned).
  absl::Status Read(uint64_t offset, char* buf, size_t len);
  absl::Status Flush() { return dev_->Flush(); }
  // Batch the writes this thread starts until Unplug() (Device::Plug).
  void Plug() { dev_->Plug(); }
  void Unplug() { dev_->Unplug(); }

  uint64_t bytes_written() const { return dev_->bytes_written(); }
  uint64_t flushes() const { return dev_->flushes(); }
  // Its write requests, and those not contiguous with the one before.
  const WriteRequests& requests() const { return requests_; }
  const std::string& path() const { return path_; }

 private:
  DataFile(std::string path, std::shared_ptr<Device> dev, bool flush_before_commit);
  void FlusherLoop();
  void Finished();  // one write (and its gate) is done

  const std::string path_;
  std::shared_ptr<Device> dev_;  // this file's only owner
  const bool flush_before_commit_;
  WriteRequests requests_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<CommitGate>> to_flush_;  // written, waiting for a flush
  uint64_t in_flight_ = 0;   // writes whose gate is not open yet
  uint64_t started_ = 0;     // writes started, ever
  uint64_t completed_ = 0;   // writes completed, ever
  // When to_flush_ last became non-empty, and started_ then: the flush waits
  // for those writes (or kFlushCoalesce), not for writes started later.
  std::chrono::steady_clock::time_point oldest_;
  uint64_t started_at_oldest_ = 0;
  bool stop_ = false;
  std::thread flusher_;
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_DATA_FILE_H_
