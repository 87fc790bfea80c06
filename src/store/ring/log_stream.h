// log_stream.h — the log stream (LogLayout::kStream; docs/DESIGN.md, "The
// log stream"): one ring of chunks shared by every PG. Each transaction
// whose PGs keep records unhomed appends one stream record (kRecordStream,
// stamp kStreamStamp) of kPgBytes items: each PG's new record bytes at their
// ring lpos. The records staged while a stream write is in flight go out
// together in the next one, a single sequential write: per client write a
// fraction of a device write, where per-PG rings make one per PG.
//
// Staged state (chunks, head, tail, pins) belongs to the store's staging
// lock, as a PG's does; the staged bytes have their own lock, taken by
// Submit's staging (Place, Queue) and by the commit thread when it takes
// them for a write (StartWrite) and when the write is done. The writer is
// the commit thread's CommitWriter (commit_writer.h): it starts the stream
// write on its own CallerWrites, with the home writes staged by then, and
// reaps it. One stream write at a time, so the block holding the stream's
// tail is never written by two I/Os at once.
#ifndef PGRING_STORE_RING_LOG_STREAM_H_
#define PGRING_STORE_RING_LOG_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/status/status.h"
#include "alloc/chunk_allocator.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "log/ring_layout.h"
#include "store/commit_pipeline.h"
#include "store/ring/extent_write.h"
#include "util/sync.h"

namespace pgring {

struct RingPg;

class LogStream {
 public:
  // Called once per completed stream write with the transactions whose
  // records it finished (in order) and its status; on the thread that
  // reaps it (the commit thread).
  using WrittenFn =
      std::function<void(std::vector<std::shared_ptr<CommitPipeline::Txn>>, absl::Status)>;

  // `max_chunks` as StreamOptions::max_chunks gives it (0: MaxChunksFor).
  LogStream(const Geometry& geo, ChunkAllocator* alloc, uint32_t max_chunks,
            SeekCounter* seeks, WrittenFn written);

  // The size bound StreamOptions::max_chunks sets on a partition of
  // `chunk_count` chunks: itself, or for 0 three quarters of the
  // partition within [2, 4096].
  static uint32_t MaxChunksFor(uint32_t option, uint64_t chunk_count);

  // Open: the stream as its keys describe it (`chunks` claimed by the
  // caller), and the bytes of the block holding its tail (kRewriteTailBlock
  // rewrites them with the next records).
  void Load(const StreamPointer& p, PgChunkList chunks, std::string tail_block_prefix);

  // --- Staged state (the store's staging lock) ---
  bool exists() const { return exists_; }
  uint64_t head() const { return head_; }
  uint64_t tail() const { return tail_; }
  uint64_t tail_seq() const { return tail_seq_; }
  const PgChunkList& chunks() const { return chunks_; }
  // Changes each time chunks() does: whether the list changed since an
  // earlier call, without a copy of it (the list can hold thousands).
  uint64_t chunks_version() const { return chunks_version_; }
  uint32_t max_chunks() const { return max_chunks_; }
  StreamPointer Pointer() const { return StreamPointer{head_, tail_, tail_seq_}; }
  uint64_t bytes_used() const { return tail_ - head_; }
  uint64_t capacity() const;

  // Room for [tail, end): reuses the first chunk once it lies wholly behind
  // the durable head and the head, else takes a free chunk (appended to
  // `allocated`) while the stream has fewer than max_chunks. False when
  // neither can be had; what was taken stays in the stream.
  bool Reserve(uint64_t end, std::vector<uint32_t>* allocated);
  // Gives back (appended to `freed`, for the caller to free once the
  // pointer with this head is durable) the chunks wholly behind the head
  // and the bytes not yet written, but never the last chunk, which holds
  // the tail (Reserve reuses it as the next lap's once the head has passed
  // it).
  void GiveBackPassed(std::vector<uint32_t>* freed);
  // The stream holds more chunks than the partition has free: the PG rings
  // may soon need them, so homing should move its head (ForceHomes).
  bool PressesPartition() const;
  // Where the next record goes and its sequence number: the tail, or past
  // the pad record the last stream write ended with (see Kick).
  struct Slot {
    uint64_t pos;
    uint64_t seq;
  };
  Slot NextSlot();
  // Places a record of `size` bytes, encoded for NextSlot(), which no
  // stream write has changed since; then Queue hands its bytes over, to be
  // written for `txn` (whose pending_writes counts it). Records are queued
  // in the order they were placed, before the next is placed.
  void Place(const Slot& slot, uint64_t size);
  void Queue(const std::string& record, std::shared_ptr<CommitPipeline::Txn> txn);

  // The PGs whose unhomed bytes start in the stream record at a position,
  // ordered by it: the first pins the head.
  using PinKey = std::pair<uint64_t, RingPg*>;
  void Pin(uint64_t stream_pos, RingPg* pg) { pins_.insert({stream_pos, pg}); }
  void Unpin(uint64_t stream_pos, RingPg* pg) { pins_.erase({stream_pos, pg}); }
  const absl::btree_set<PinKey>& pins() const { return pins_; }
  // Moves the head to the first pin (the tail when nothing is pinned).
  void UpdateHead() { head_ = pins_.empty() ? tail_ : pins_.begin()->first; }
  // Gives every chunk back (appended to `freed`) and forgets the stream:
  // nothing is pinned and the store no longer uses one.
  void Drop(std::vector<uint32_t>* freed);

  // Raised by the committer once a pointer with this head is durable.
  void HeadDurable(uint64_t head);

  // --- I/O (the commit thread alone) ---
  // Starts, through `io`, one write of every record queued so far, unless a
  // stream write is in flight or nothing is queued; true if it started one
  // (or, the stream having failed, failed what was queued). The caller
  // reaps it (CallerWrites::Wait), which reports the transactions whose
  // records it finished (WrittenFn). A write that ends inside a block with
  // every placed record in it ends the block with a pad record (the next
  // sequence number): if the next record is placed after it, it goes past
  // the pad, and the next write starts on a fresh block instead of writing
  // this one again; if a record was placed first, it lies over the pad and
  // the next write rewrites the block as kRewriteTailBlock does.
  bool StartWrite(CallerWrites* io) ABSL_LOCKS_EXCLUDED(io_mu_);

  // Every stream byte before it is on the device: written by a write that
  // succeeded (a PG's bytes there may leave memory; RingImage).
  uint64_t written() const { return written_ok_.load(); }

  uint64_t records() const { return records_.load(); }
  uint64_t writes() const { return writes_.load(); }
  uint64_t bytes_written() const { return bytes_written_.load(); }


 private:
  struct Waiting {
    uint64_t end;  // lpos just past the transaction's record
    std::shared_ptr<CommitPipeline::Txn> txn;
  };
  // Takes the written bytes off the staged ones; returns the transactions
  // whose records ended at or before `end`.
  std::vector<std::shared_ptr<CommitPipeline::Txn>> WriteDone(uint64_t end, const absl::Status& s)
      ABSL_LOCKS_EXCLUDED(io_mu_);

  const Geometry geo_;
  ChunkAllocator* const alloc_;
  const uint32_t max_chunks_;
  SeekCounter* const seeks_;
  const WrittenFn on_written_;

  // The commit thread's alone: a stream write is in flight.
  bool in_flight_ = false;

  // Staged (the store's staging lock).
  bool exists_ = false;
  PgChunkList chunks_;
  uint64_t chunks_version_ = 0;
  uint64_t head_ = 0;
  uint64_t tail_ = 0;
  uint64_t tail_seq_ = 1;
  absl::btree_set<PinKey> pins_;
  std::atomic<uint64_t> durable_head_{0};

  // I/O.
  Mutex io_mu_;
  // Staged bytes [pending_start_, pending_start_ + pending_.size()), from the
  // start of the block holding the written tail.
  std::string pending_ ABSL_GUARDED_BY(io_mu_);
  uint64_t pending_start_ ABSL_GUARDED_BY(io_mu_) = 0;
  uint64_t written_ ABSL_GUARDED_BY(io_mu_) = 0;  // every byte before it written
  PgChunkList io_chunks_ ABSL_GUARDED_BY(io_mu_);  // chunks_ as of the last Queue
  uint64_t io_chunks_version_ ABSL_GUARDED_BY(io_mu_) = 0;
  std::deque<Waiting> waiting_ ABSL_GUARDED_BY(io_mu_);
  // The end and next sequence number of the records placed so far (tail_,
  // tail_seq_ as Place left them, for Kick).
  uint64_t placed_end_ ABSL_GUARDED_BY(io_mu_) = 0;
  uint64_t placed_seq_ ABSL_GUARDED_BY(io_mu_) = 1;
  // The pad record the last write ended with, [pad_at_, pad_end_), while
  // no record has been placed since; pad_at_ == kNoPad otherwise.
  static constexpr uint64_t kNoPad = ~uint64_t{0};
  uint64_t pad_at_ ABSL_GUARDED_BY(io_mu_) = kNoPad;
  uint64_t pad_end_ ABSL_GUARDED_BY(io_mu_) = 0;
  absl::Status failure_ ABSL_GUARDED_BY(io_mu_);

  std::atomic<uint64_t> written_ok_{0};  // written_, while no stream write has failed
  std::atomic<uint64_t> records_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> bytes_written_{0};
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_LOG_STREAM_H_
