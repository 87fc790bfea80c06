// engine_job.h — one fio job's side of the pgring engine, with fio's types
// kept out (an io_u is an opaque token here), so fio_pgring.cc stays a thin
// set of wrappers and this logic can be driven without fio.
//
// A write is asynchronous: QueueWrite() submits the OSD transaction (the ring
// or RocksDB writes start), starts the data write in parallel, and returns;
// the commit callback — which fires once the data write (and its flush) is
// done and the transaction is committed — queues the token, and Reap() hands
// completed tokens to fio. Reads, syncs and trims complete synchronously.
//
// Thread safety: one fio job thread calls everything except that commit
// callbacks arrive on pgring's threads.
#ifndef PGRING_TOOLS_FIO_ENGINE_ENGINE_JOB_H_
#define PGRING_TOOLS_FIO_ENGINE_ENGINE_JOB_H_

#include <time.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data_file.h"
#include "engine_config.h"
#include "shared_store.h"

namespace pgring::fio {

// The errno fio should see for a status (io_u->error).
int ErrnoOf(const absl::Status& s);

class EngineJob {
 public:
  struct Completion {
    void* token = nullptr;
    int error = 0;  // errno; 0 = OK
  };

  // Acquires the process's store for config.log_dev (see SharedStore); the
  // job's writes go to pool index `pool` of the modelled OSD. `iodepth`
  // sizes the data file's I/O queue.
  static absl::StatusOr<std::unique_ptr<EngineJob>> Create(const EngineConfig& config,
                                                           uint32_t iodepth, uint32_t pool = 0);
  // Waits for the job's writes in flight and releases the store if Close()
  // was not called.
  ~EngineJob();
  EngineJob(const EngineJob&) = delete;
  EngineJob& operator=(const EngineJob&) = delete;

  // Waits for the job's writes in flight, then releases the store; if this
  // was the last job, returns what closing, checking and reporting said.
  absl::Status Close();

  // fio's open_file/close_file: the job's handle on one data file.
  absl::StatusOr<DataFile*> OpenFile(const std::string& path);
  void CloseFile(DataFile* file);

  // Queues one OSD write of `len` bytes at `offset`. OK: `token` comes back
  // from Reap(). An error: nothing was queued and nothing written.
  absl::Status QueueWrite(void* token, DataFile* file, uint64_t offset, const char* data, size_t len);
  absl::Status Read(DataFile* file, uint64_t offset, char* buf, size_t len);
  // Makes everything acknowledged so far durable: the store and the file.
  absl::Status Sync(DataFile* file);
  void NoteTrim();

  // fio's commit: sends the writes QueueWrite() queued since the last
  // Commit() to the devices in one batch (the data file's and the log
  // partition's io_uring, one system call each). QueueWrite() plugs both
  // devices at the first write after a Commit(); fio calls Commit() after
  // iodepth_batch_submit writes and always before it waits for completions.
  void Commit();

  // Waits until at least `min` writes have completed (or `timeout` passed,
  // if not null), then takes up to `max` of them; event(i) returns them.
  // Commits first (nothing waits on a plugged write).
  int Reap(unsigned min, unsigned max, const struct timespec* timeout);
  const Completion& event(int i) const { return events_[static_cast<size_t>(i)]; }

 private:
  // Where commit callbacks put finished writes. Shared with the callbacks so
  // that it outlives any of them.
  struct CompletionQueue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Completion> done;
    uint64_t in_flight = 0;
  };

  EngineJob(std::shared_ptr<SharedStore> store, uint32_t iodepth, uint32_t pool);
  void WaitIdle();

  std::shared_ptr<SharedStore> store_;  // null once released
  const uint32_t iodepth_;
  const uint32_t pool_;
  std::shared_ptr<CompletionQueue> cq_ = std::make_shared<CompletionQueue>();
  std::vector<Completion> events_;
  std::vector<std::unique_ptr<DataFile>> files_;
  // The data files plugged since the last Commit() (the store too, if any).
  std::vector<DataFile*> plugged_files_;
  bool store_plugged_ = false;
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_ENGINE_JOB_H_
