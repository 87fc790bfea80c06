// ring_reader.h — the one reader of a PG's ring: reads its records in order
// from a logical position up to a limit (the committed tail) with large
// aligned reads, and verifies each one as docs/FORMAT.md ("Reading a PG's
// log") specifies: length within the limit, CRC, type, PG stamp, lap and
// consecutive sequence. Recovery, reads of entries, fsck and every tool
// command read through it.
//
// What happens at a problem is the caller's choice, as with LevelDB's
// log::Reader::Reporter:
//  - no reporter (open, reads): everything between a PG's head and its
//    committed tail was written by committed transactions, so the first
//    record that fails a check is damage; Next returns kDataLoss naming the
//    PG, lpos, chunk, chunk offset and the failed check.
//  - a reporter (fsck, the tool's scan): every problem goes to it. A record
//    whose CRC matches but which breaks a rule (unknown type, another PG's
//    stamp, a stale lap, a sequence gap) is reported and skipped, because its
//    length can be trusted; a problem after which nothing can be read (a CRC
//    mismatch, a length past the limit, too few bytes for a header, a read
//    error) is reported and ends the log: Next returns its error.
// Bytes at or past the limit are never read as committed records.
#ifndef PGRING_LOG_RING_READER_H_
#define PGRING_LOG_RING_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "log/ring_layout.h"

namespace pgring {

struct RingRecord {
  uint64_t lpos = 0;
  RecordHeader header;
  std::string_view body;  // valid until the next call to Next()
  uint64_t size() const { return kRecordHeaderSize + header.length; }
  // A transaction record (the only kind a PG's ring holds); anything else
  // Next returns from a PG's ring is skippable and carries nothing this
  // version reads.
  bool is_txn() const { return (header.type & ~kSkippableBit) == kRecordTxn; }
  // A log stream's record (read with stamp kStreamStamp), its items plain
  // or compressed (StreamRecordItems reads either).
  bool is_stream() const {
    const uint8_t kind = header.type & ~kSkippableBit;
    return kind == kRecordStream || kind == kRecordStreamLz4;
  }
};

// One check a PG's log failed, and where.
struct RingDamage {
  // Short, stable name of the check (docs/TOOL.md): "record-short",
  // "record-length", "record-crc", "read-error", "record-type", "record-pg",
  // "record-lap", "record-seq", "tail-inside-record", "tail-seq"; and what
  // callers report through Damage ("record-body", "entry-order",
  // "dup-order").
  std::string_view kind;
  uint64_t lpos = 0;
  ChunkPos where;
  std::string what;  // in words, without the location
  // Nothing after it can be read (the record's length cannot be trusted, or
  // the device failed).
  bool ends_log = false;
  // About the log as a whole (the tail's sequence), not one record.
  bool whole_log = false;
};

class RingReader {
 public:
  class Reporter {
   public:
    virtual ~Reporter() = default;
    virtual void Corruption(const RingDamage& damage) = 0;
  };

  // `pg_name` is used in error messages. `first_seq` is the sequence the
  // first record must have (0: take the first record's sequence as given).
  // With `reporter`, problems are reported and reading goes on where it can
  // (see above); without, the first one is returned.
  RingReader(BlockDevice* device, const Geometry& geometry, const PgChunkList& chunks,
             std::string pg_name, uint32_t stamp, uint64_t from, uint64_t limit,
             uint64_t first_seq = 0, Reporter* reporter = nullptr);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // For a pass over a whole log that nothing writes meanwhile (the log
  // stream at open, fsck): the device window after the current one is read
  // on a thread of its own while the current one is parsed, so the pass
  // costs about the larger of its reads and its parsing, not their sum.
  void ReadAheadInBackground() { background_ = true; }

  // Reads the next readable record into *out. Returns kOutOfRange at the
  // limit, and, staying where it is (waiting()), when the next record does
  // not end by the available bytes (SetAvailable); otherwise the damage
  // that stopped it (kDataLoss) or the device's error, and the same error
  // on every later call.
  absl::Status Next(RingRecord* out);
  // After Next returned kOutOfRange: it stopped at the available bytes, not
  // at the limit.
  bool waiting() const { return waiting_; }

  // Reading a log as its bytes arrive (recovery feeds a PG its unhomed
  // bytes as the pass over the log stream reaches them): only records that
  // end by `end` (<= the limit) are read until it moves. The limit still
  // bounds a record's length. Without a call, everything up to the limit
  // is available.
  void SetAvailable(uint64_t end);
  // Moves the limit out to `limit` (>= the current one): a PG whose
  // pointer lags its records, which continue in the log stream
  // (docs/FORMAT.md, "A pointer that lags its records"). The first limit
  // stays a record's end: a record that starts before it and ends past it
  // is damage ("tail-inside-record", like a rule a record breaks).
  void ExtendLimit(uint64_t limit);
  // The sequence the next record must have (0 before the first, when the
  // reader was given none).
  uint64_t next_seq() const { return next_seq_; }

  // After Next returned kOutOfRange: whether the last record's sequence is
  // the one before `tail_seq` (the pointer's), as a committed tail requires.
  // Nothing to check when no record was read.
  absl::Status CheckTailSeq(uint64_t tail_seq);

  // A problem the caller found at `lpos` in a record Next returned (a
  // malformed body, items out of order; `kind` names it as RingDamage::kind
  // does), in the reader's words: kDataLoss naming the place; with a
  // reporter, also reported (the caller decides whether to go on).
  absl::Status Damage(uint64_t lpos, std::string_view what,
                      std::string_view kind = "record-body");

  // Serves [start, start + bytes.size()) from `bytes` instead of the
  // device: the PG's bytes not on its ring yet (docs/DESIGN.md, "The log
  // stream"), and the partial block before them. `bytes` must outlive the
  // reader (or the next call) and reach the available bytes. A read that
  // lies wholly inside it is served from it without a copy.
  void SetOverlay(uint64_t start, std::string_view bytes);

  // Frees the read-ahead window: a reader kept while it waits for bytes
  // (SetAvailable) holds no more than its position. The next read from the
  // device allocates it again.
  void ReleaseWindow();

  // [lpos, lpos + n) of the PG's ring, read through the same window
  // (anywhere in its chunks, the limit not applying): what lies past a tail.
  absl::StatusOr<std::string_view> Bytes(uint64_t lpos, uint64_t n);

  uint64_t position() const { return pos_; }
  // Records whose length could be trusted, skipped ones included.
  uint64_t records() const { return records_; }

 private:
  // Next's work, without remembering where the log ended.
  absl::Status NextRecord(RingRecord* out);
  // kOutOfRange, waiting: the record at lpos does not end by available_.
  absl::Status NotYet(uint64_t lpos);
  // Reports a problem (if there is a reporter) and returns it as the error
  // that names it.
  absl::Status Report(std::string_view kind, uint64_t lpos, std::string what, bool ends_log,
                      bool whole_log = false);
  // Makes [lpos, lpos + n) available in the window, reading ahead up to
  // `ahead_limit`; returns a pointer to it.
  absl::StatusOr<const char*> Fetch(uint64_t lpos, uint64_t n, uint64_t ahead_limit);

  BlockDevice* device_;
  const Geometry geometry_;
  const PgChunkList& chunks_;
  const std::string pg_name_;
  const uint32_t stamp_;
  Reporter* const reporter_;
  // Reads start on this boundary (relative to the ring's base): the store's
  // block, or the device's logical block if larger (O_DIRECT).
  const uint64_t align_;
  uint64_t pos_;
  uint64_t limit_;
  // The limit before ExtendLimit first moved it (none: UINT64_MAX).
  uint64_t pointer_tail_ = UINT64_MAX;
  uint64_t available_;
  bool waiting_ = false;
  uint64_t next_seq_;
  uint64_t records_ = 0;
  // The problem that ended the log: Next returns it again, unreported.
  absl::Status ended_;
  uint64_t last_record_lpos_ = 0;
  uint64_t overlay_start_ = UINT64_MAX;
  std::string_view overlay_;
  // The window: [window_start_, window_start_ + window_len_) of the ring at
  // window_->data() + window_off_.
  std::unique_ptr<AlignedBuffer> window_;
  uint64_t window_off_ = 0;
  uint64_t window_start_ = 0;
  uint64_t window_len_ = 0;

  // Reading ahead in the background: the device's bytes [ahead_start_,
  // ahead_start_ + ahead_len_) are read by ahead_thread_ into ahead_buf_
  // at kAheadCarry (the room before them takes the end of the current
  // window that a record straddling the two needs).
  static constexpr uint64_t kAheadCarry = 64 << 10;
  // Starts reading the window after the current one, if the device holds it.
  void StartAhead();
  // Waits for the read ahead; true when it serves [lpos, lpos + n) from
  // `start` (the current window's end joined to it), which becomes the window.
  bool TakeAhead(uint64_t start, uint64_t lpos, uint64_t n);
  // Waits for the read ahead, if any, and forgets it.
  void DropAhead();
  bool background_ = false;
  std::thread ahead_thread_;
  std::unique_ptr<AlignedBuffer> ahead_buf_;
  uint64_t ahead_start_ = 0;
  uint64_t ahead_len_ = 0;
  absl::Status ahead_status_;  // written by ahead_thread_ until joined
};

}  // namespace pgring

#endif  // PGRING_LOG_RING_READER_H_
