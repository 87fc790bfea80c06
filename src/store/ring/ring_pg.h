// ring_pg.h — one PG of the ring backend: its log (RingPgLog: the state, the
// ring placement) and the queue of its ring writes. A PG's writes are issued
// one at a time, in staging order, so a rewritten tail block is never
// written by two I/Os at once; reads of records not yet on the device wait
// for them (written_upto).
#ifndef PGRING_STORE_RING_RING_PG_H_
#define PGRING_STORE_RING_RING_PG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "log/ring_layout.h"
#include "log/ring_pg_log.h"
#include "store/commit_pipeline.h"
#include "util/sync.h"

namespace pgring {

struct RingPg;

// A ring write: one transaction's record for one PG (block-aligned).
struct RingWrite {
  std::shared_ptr<RingPg> pg;
  std::shared_ptr<CommitPipeline::Txn> txn;
  std::vector<Extent> extents;
  std::shared_ptr<AlignedBuffer> buffer;
  uint64_t end_lpos = 0;  // lpos just past the record
  // Set when the bytes could not be had (a read of the stream failed): the
  // write is not issued and fails with it.
  absl::Status failure;
  // Issued (the stream layout): by the commit thread's round, or by a
  // reader that waits for it (RingStore::WaitWritten), whichever comes
  // first.
  std::atomic<bool> issued{false};
};

struct RingPg : RingPgLog {
  using RingPgLog::RingPgLog;

  // The head in the last durable pointer. A chunk may be reused by the ring
  // only once it lies wholly behind it. Written by the committer.
  std::atomic<uint64_t> durable_head{0};
  // The last pointer put in a batch (under the store's staging lock): while
  // the PG's new records all go to the stream and nothing else changes, its
  // pointer stays as it is (RingStore::CommitPointers).
  PgPointer written_pointer;
  // The tail its last restatement left (0: none since open; the staging
  // lock): a PG still there was not written since, and is homed rather
  // than restated again (RingStore::CleanOne).
  uint64_t restated_tail = 0;

  Mutex io_mu;
  CondVar written_cv;  // signalled when written_upto moves or a write fails
  uint64_t written_upto ABSL_GUARDED_BY(io_mu) = 0;  // all lpos below written
  std::deque<std::shared_ptr<RingWrite>> write_queue ABSL_GUARDED_BY(io_mu);
  bool write_in_flight ABSL_GUARDED_BY(io_mu) = false;
  absl::Status io_failure ABSL_GUARDED_BY(io_mu);  // a ring write failed
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_RING_PG_H_
