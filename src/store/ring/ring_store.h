// ring_store.h — the ring backend: each PG's log in a ring of chunks on the
// partition, RocksDB holding only pointers and chunk lists.
//
// Submit() stages a transaction under one lock (validation, positions, record
// encoding, chunk reservation — microseconds), queues its writes and hands it
// to the CommitPipeline, which commits groups of ready transactions with one
// flush and one synced RocksDB write. Its writes: in LogLayout::kPerPgRings
// one per PG it touches (one at a time per PG, so a rewritten tail block is
// never written twice at once); in kStream one stream record for all its PGs
// (LogStream) plus the whole blocks of the PGs that have enough unhomed
// (docs/DESIGN.md, "The log stream").
#ifndef PGRING_STORE_RING_RING_STORE_H_
#define PGRING_STORE_RING_RING_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alloc/chunk_allocator.h"
#include "device/block_device.h"
#include "format/compressed_stream_record.h"
#include "format/label.h"
#include "log/ring_layout.h"
#include "log/stream_reader.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "store/commit_pipeline.h"
#include "store/metadata_db.h"
#include "store/pg_map.h"
#include "store/ring/commit_writer.h"
#include "store/ring/log_stream.h"
#include "store/ring/ring_pg.h"
#include "store/ring/stream_cleaner.h"
#include "store/pg_store.h"
#include "util/sync.h"

namespace pgring {

class RingStore final : public PgStore<RingPg> {
 public:
  // Opens the ring store on an opened device and metadata DB; recovers.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
      const Label& label, const StoreMeta& meta, const Options& options);
  ~RingStore() override;

  absl::Status Submit(Transaction txn, CommitCallback done) override;
  // For tests: what the cleaner thread does, on the caller's thread and
  // whatever the stream's fill, until the PG pinning the stream's head is
  // not one to restate (or the store stops taking transactions).
  // kFailedPrecondition without a cleaner (home_bytes 0).
  absl::Status CleanStreamNowForTest();
  // The partition device's Plug()/Unplug() (block_device.h).
  void PlugWrites() override { device_->Plug(); }
  void UnplugWrites() override { device_->Unplug(); }
  Backend backend() const override { return Backend::kRing; }

 private:
  struct PgChange;
  struct StreamPlan;
  // A PG's live log read for cleaning, to be stated again if the PG has
  // not changed since (its tail_seq).
  struct Restatement {
    std::shared_ptr<RingPg> pg;
    uint64_t tail_seq = 0;
    LiveLog live;
  };
  using Staging = TransactionStaging<RingPg, PgChange>;
  RingStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
            const Label& label, const StoreMeta& meta, const Options& options);

  // Open.
  absl::Status Recover();
  // Before the stream's first record: the label and pgring.meta say format
  // version 4 (kStreamFormatVersion), or 5 for compressed records
  // (kFormatVersionCompressed), so an older pgring refuses the store
  // instead of misreading its pointers or records.
  absl::Status MarkStreamFormat(uint32_t version) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stream's keys (both or neither), claimed; false when there is none.
  absl::StatusOr<bool> LoadStreamKeys(RingClaims* claims, StreamPointer* p, PgChunkList* c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Submit's work for a transaction, or, with `restate`, for a PG's live
  // log stated again (kFailedPrecondition if the PG changed since it was
  // read).
  absl::Status Stage(Transaction txn, CommitCallback done, const Restatement* restate);
  // Stages the restatement into `staging`.
  absl::Status StageRestatement(Staging* staging, const Restatement& r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Cleaning the stream (docs/DESIGN.md, "Cleaning the stream"), on the
  // cleaner's thread: when the stream is full enough and the PG pinning its
  // head has fewer live bytes than bytes it would home, reads its live log
  // and states it again, then waits for that to commit. StreamCleaner::
  // CleanOne's contract.
  // `any_fill`: whatever the stream's fill (CleanStreamNowForTest).
  bool CleanOne(uint64_t* stuck_head, bool any_fill = false) ABSL_LOCKS_EXCLUDED(mu_);
  // The stream is full enough for the cleaner (home_bytes 0 only).
  bool WantsCleaning() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void StopBackgroundWork() override;

  // Submit, step by step (all but StartWrites under the staging lock).
  // A new PG with the next stamp.
  absl::StatusOr<std::shared_ptr<RingPg>> NewPg(const PgId& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each touched PG's record, placed at its tail with room reserved.
  absl::Status PlaceRecords(Staging* staging, std::vector<std::string>* records)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PlaceRecord(PgChange* t, std::string* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps PlanStream's buffers (its body, and the stream record the
  // transaction has queued) for the next transaction.
  void KeepStreamBuffers(std::string* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where each PG's new bytes go: how far each PG is homed, and the stream
  // record with the rest (or, the stream being full, every PG homed to its
  // tail), with the ring chunks each home needs. kResourceExhausted only
  // when neither the stream nor the rings have room for the records.
  absl::Status PlanStream(const Staging& staging, const std::vector<std::string>& records,
                          StreamPlan* plan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the PGs' pointers past their records, gives back chunks behind
  // the heads, fills the batch, plans the writes and enqueues the
  // transaction. Nothing fails.
  void CommitPointers(const Staging& staging, const std::vector<std::string>& records,
                      StreamPlan* plan, const StoreMeta& old_meta, Transaction* txn,
                      const std::shared_ptr<CommitPipeline::Txn>& ctxn,
                      std::vector<std::shared_ptr<RingWrite>>* writes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Homes the PGs pinning the stream's head, max_forced_homes of them and
  // each at most forced_home_bytes (the rest of a PG at a later home; its
  // partial block with its last), once the stream is full enough (in
  // kPerPgRings, whenever a stream is left); drops a stream nothing pins in
  // kPerPgRings.
  void ForceHomes(StoreKeyWriter* wb, std::vector<std::shared_ptr<RingWrite>>* writes,
                  std::vector<uint32_t>* to_free)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // kNeverRewrite: ends pg's partial block with a pad record, so that a home
  // to its tail leaves no block to be written again. False (nothing
  // changed) when the ring has no room for it, which only a tail closer
  // than kMinPadRecord to its block's end can need: PlaceRecord leaves no
  // such tail.
  bool PadPartialBlock(RingPg* pg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Chunks in pg's ring for lpos [start, end), reusing those wholly behind
  // the durable head first. A ring takes chunks only for what is written
  // to it: behind the stream, the blocks a home writes (from ImageStart()).
  absl::Status ReserveRing(RingPg* pg, uint64_t start, uint64_t end,
                           std::vector<uint32_t>* allocated) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // kResourceExhausted naming pg and limits.max_chunks_per_pg.
  absl::Status RingFull(const RingPg& pg) const;
  // Behind the stream: whether pg's log, from its head's chunk (or its
  // ring's first) to `end`, fits the ring it is homed to.
  absl::Status RingSpanFits(const RingPg& pg, uint64_t end) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ReserveRing for a home write of pg to `end`; its error, with nothing
  // allocated, when the ring or the partition has no room.
  absl::Status ReserveHome(RingPg* pg, uint64_t end, std::vector<uint32_t>* allocated)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The write of pg's image [ImageStart(), end) (zeros past its tail), and
  // homed moved to `homed` (<= end, <= tail).
  std::shared_ptr<RingWrite> HomeWrite(const std::shared_ptr<RingPg>& pg, uint64_t end,
                                       uint64_t homed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends pg's unhomed bytes [from, to), resident or read back from the
  // stream, to `out`.
  absl::Status UnhomedBytes(const RingPg& pg, uint64_t from, uint64_t to, std::string* out) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // UnhomedBytes for several ranges (sorted, apart), appended one after
  // the other, the cold ones read together.
  absl::Status UnhomedRanges(const RingPg& pg, const std::vector<RingRange>& ranges,
                             std::string* out) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The cleaner's read of pg's live log: items in records before homed
  // through the ring (ReadSlots); records past it each read alone, all
  // together, so that a PG whose live items lie far apart (its dups among
  // trimmed entries) reads those records, not its whole unhomed span.
  absl::Status ReadLiveLog(RingPg* pg, LiveLog* live) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Lets pg's oldest unhomed bytes leave memory, whole blocks whose stream
  // write has completed, until resident_bytes are left.
  void EvictOldUnhomed(RingPg* pg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps the stream's pins in step with pg's first unhomed byte.
  void Repin(RingPg* pg, bool was_pinned, uint64_t old_pos) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Ring writes: each PG's in staging order, one at a time.
  void StartWrites(const std::vector<std::shared_ptr<RingWrite>>& writes);
  // The stream write that finished these transactions' records.
  void StreamWritten(std::vector<std::shared_ptr<CommitPipeline::Txn>> txns,
                     const absl::Status& s);
  // Starts w: on the device (kPerPgRings; it completes on the device's
  // thread), or queued for the commit thread (the stream layout).
  void StartWrite(const std::shared_ptr<RingWrite>& w);
  // The commit thread's round (CommitWriter): starts every queued ring write
  // through `io`; true if there was any.
  bool StartCommitThreadWrites(CallerWrites* io) ABSL_LOCKS_EXCLUDED(commit_thread_writes_mu_);
  void WriteDone(const std::shared_ptr<RingWrite>& w, const absl::Status& s);
  void WaitForWrites() override { writes_in_flight_.WaitNone(); }
  absl::Status WaitWritten(RingPg* pg, uint64_t lpos) const;

  // Reads the items of the records from `first` through the one at `last`.
  absl::Status ReadRecords(RingPg* pg, uint64_t first, uint64_t last,
                           const std::function<void(uint64_t, std::string_view)>& fn) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<LogEntry>> ReadSlots(RingPg* pg, ItemKind kind, size_t i,
                                                  size_t j) const override
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // chunks and ring_bytes_used; bytes written per PG and for the store; the
  // partition's chunk counts.
  void AddPgStats(const RingPg& pg, PgStats* s) const override;
  void AddStoreStats(StoreStats* s) const override ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Label label_;
  const Geometry geo_;
  ChunkAllocator alloc_;

  StoreMeta meta_ ABSL_GUARDED_BY(mu_);
  // PlanStream's buffers, kept from one transaction to the next: a stream
  // record is a block or more, past what malloc keeps at hand for reuse,
  // and allocating it anew each transaction costs more than building it.
  RecordBodyBuilder stream_body_ ABSL_GUARDED_BY(mu_);
  std::string stream_record_ ABSL_GUARDED_BY(mu_);
  // StreamCompression::kLz4: each stream record's items compressed (the
  // staging thread's, under the staging lock) into compressed_body_.
  StreamRecordCompressor compressor_ ABSL_GUARDED_BY(mu_);
  std::string compressed_body_ ABSL_GUARDED_BY(mu_);
  const bool stream_layout_;
  // StreamOptions' home_bytes, resident_bytes and forced_home_bytes in
  // whole blocks of the partition (rounded down, at least one block; a
  // home_bytes of 0 stays 0).
  const uint64_t stream_home_bytes_;
  const uint64_t stream_resident_bytes_;
  const uint64_t stream_forced_home_bytes_;
  // Mutable: a reader issues a ring write it waits for (WaitWritten).
  mutable SeekCounter seeks_;
  // Every ring write issued on the device's thread, until its completion
  // has returned.
  mutable WritesInFlight writes_in_flight_;
  // The log stream: used in LogLayout::kStream; in kPerPgRings only what a
  // store opened with one still has in it, until it is homed.
  LogStream stream_;
  // The stream layout's writes, issued and reaped by the commit thread.
  CommitWriter commit_writer_;
  // Ring writes at the front of their PG's queue, for the commit thread's
  // next round (the stream layout). Taken alone.
  Mutex commit_thread_writes_mu_;
  std::vector<std::shared_ptr<RingWrite>> commit_thread_writes_
      ABSL_GUARDED_BY(commit_thread_writes_mu_);

  std::atomic<uint64_t> record_bytes_{0};
  std::atomic<uint64_t> payload_bytes_{0};
  // Transactions staged and not yet committed (StreamOptions::
  // bypass_when_idle). A failed store never commits them: it never
  // bypasses again, which costs nothing it still does.
  std::atomic<int64_t> txns_in_flight_{0};
  std::atomic<uint64_t> home_writes_{0};
  std::atomic<uint64_t> home_bytes_{0};
  std::atomic<uint64_t> forced_homes_{0};
  std::atomic<uint64_t> restates_{0};
  std::atomic<uint64_t> restated_bytes_{0};
  std::atomic<uint64_t> compressed_records_{0};
  std::atomic<uint64_t> compression_saved_bytes_{0};
  std::atomic<uint64_t> stream_full_fallbacks_{0};
  mutable std::atomic<uint64_t> stream_reads_{0};
  mutable std::atomic<uint64_t> stream_bytes_read_{0};
  // The stream's cleaner: a writable store whose stream homes nothing by
  // count (home_bytes 0). Made last at open and stopped first at Close.
  std::unique_ptr<StreamCleaner> cleaner_;
  // CleanOne's restatements refused in a row because their PG had changed
  // (the cleaner's thread, or a test's, one at a time).
  std::atomic<int> restate_retries_{0};
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_RING_STORE_H_
