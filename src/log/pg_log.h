// pg_log.h — one PG's log in memory: its ring (chunks, head, tail), the
// mapping tables of entries and dups, the latest info, and the block that
// holds the tail. The operations here are shared by the commit path
// (applying a transaction's ops, with an undo journal so a transaction that
// fails validation changes nothing) and recovery (replaying records).
#ifndef PGRING_LOG_PG_LOG_H_
#define PGRING_LOG_PG_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "util/sync.h"
#include "device/aligned_buffer.h"
#include "format/record.h"
#include "log/mapping_table.h"
#include "log/ring_layout.h"
#include "meta/meta_keys.h"
#include "pgring/options.h"
#include "pgring/transaction.h"
#include "pgring/types.h"

namespace pgring {

struct RingWrite;

struct PgLog {
  PgLog(const PgId& id, uint32_t stamp, uint32_t block_size);

  const PgId id;
  const std::string name;  // "1.2a", for messages
  const uint32_t stamp;

  // --- Staged state: every submitted transaction applied. Guarded by the
  // store's staging lock.
  PgChunkList chunks;
  PgPointer ptr;                 // head/tail/seq/trim points as staged
  Version last_version;          // appends must be greater
  Version last_dup_version;      // dup appends must be greater
  MappingTable entries;
  MappingTable dups;
  bool has_info = false;
  std::string info;
  uint64_t info_pos = 0;
  // A rewind that dropped every live entry leaves its version only in its
  // marker: until an entry is appended after it, the marker's record must
  // stay at or after the head, or a reopen would forget the rewind's floor
  // on versions. Set while that is so.
  bool has_rewind_pin = false;
  uint64_t rewind_pin_pos = 0;
  // The block holding ptr.tail; bytes before ptr.tail % block_size are the
  // committed (or staged) records a rewrite of the block must keep.
  std::unique_ptr<AlignedBuffer> tail_block;
  absl::Status damage;           // non-OK: opened damaged (kMarkDamaged)
  uint64_t record_bytes_written = 0;
  uint64_t payload_bytes_written = 0;

  // The head in the last durable pointer. A chunk may be reused by the ring
  // only once it lies wholly behind it. Written by the committer.
  std::atomic<uint64_t> durable_head{0};

  // --- Ring writes, one at a time per PG so a rewritten tail block is never
  // written by two I/Os at once. Guarded by io_mu.
  Mutex io_mu;
  CondVar written_cv;  // signalled when written_upto moves or a write fails
  uint64_t written_upto ABSL_GUARDED_BY(io_mu) = 0;  // all lpos below written
  std::deque<std::shared_ptr<RingWrite>> write_queue ABSL_GUARDED_BY(io_mu);
  bool write_in_flight ABSL_GUARDED_BY(io_mu) = false;
  absl::Status io_failure ABSL_GUARDED_BY(io_mu);  // a ring write failed

  // Position of the first record that still matters: the oldest live entry,
  // dup or info; the tail if there is none.
  uint64_t ComputeHead(uint64_t tail) const;
};

// The undo journal of one PG within one transaction: enough to put the PG
// back exactly as it was if the transaction is refused.
class PgUndo {
 public:
  explicit PgUndo(PgLog* pg);
  void EntryAppended() { journal_.push_back({kEntryAppended, {}}); }
  void DupAppended() { journal_.push_back({kDupAppended, {}}); }
  void EntryPopped(bool front, const MappingTable::Slot& s) {
    journal_.push_back({front ? kEntryPoppedFront : kEntryPoppedBack, s});
  }
  void DupPopped(bool front, const MappingTable::Slot& s) {
    journal_.push_back({front ? kDupPoppedFront : kDupPoppedBack, s});
  }
  void Restore();
  PgLog* pg() const { return pg_; }
  const PgChunkList& old_chunks() const { return chunks_; }

 private:
  enum Kind { kEntryAppended, kDupAppended, kEntryPoppedFront, kEntryPoppedBack,
              kDupPoppedFront, kDupPoppedBack };
  PgLog* pg_;
  PgChunkList chunks_;
  PgPointer ptr_;
  Version last_version_, last_dup_version_;
  bool has_info_;
  std::string info_;
  uint64_t info_pos_;
  bool has_rewind_pin_;
  uint64_t rewind_pin_pos_;
  std::vector<std::pair<Kind, MappingTable::Slot>> journal_;
};

// Applies one transaction op to `pg`, recording the change in `undo` and the
// items to write in `body`. `record_pos` is where this transaction's record
// for the PG will start. Errors: kInvalidArgument (non-increasing version,
// payload too large), kOutOfRange (trim/rewind past the ends),
// kResourceExhausted (a bound), kDataLoss (the PG is damaged).
absl::Status ApplyOp(const Transaction::Op& op, const Limits& limits,
                     uint64_t record_pos, uint64_t* store_live_items,
                     PgLog* pg, PgUndo* undo, RecordBodyBuilder* body);

// Recovery: applies the items of one committed record at `lpos`. kDataLoss
// if the record breaks the log's rules (a version out of order).
absl::Status ReplayRecord(std::string_view body, uint64_t lpos, PgLog* pg);

// After replay: drops what the pointer's trim points say is trimmed.
void FinishReplay(PgLog* pg);

class BlockDevice;

// Recovery of one PG at open: checks its pointer against its chunk list,
// reads every record between head and tail from `device` (RingReader),
// replays them (ReplayRecord, FinishReplay) and loads the partial tail block.
// `pg` holds its pointer and chunk list on entry. kDataLoss names the PG and
// the position of the damage; I/O errors pass through.
absl::Status RecoverPgLog(BlockDevice* device, const Geometry& geo, PgLog* pg);

}  // namespace pgring

#endif  // PGRING_LOG_PG_LOG_H_
