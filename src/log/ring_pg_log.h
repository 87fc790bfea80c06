// ring_pg_log.h — one PG's log as the ring backend keeps it: the
// backend-neutral PgLogState (pg_log_state.h: the rules) plus where its
// records lie in its ring (chunks, head, tail, where the info is, the block
// holding the tail), the effects that turn PG-log changes into record items,
// and the recovery of one PG from its ring.
#ifndef PGRING_LOG_RING_PG_LOG_H_
#define PGRING_LOG_RING_PG_LOG_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "format/record.h"
#include "log/pg_log_state.h"
#include "log/ring_image.h"
#include "log/ring_layout.h"
#include "log/unhomed_runs.h"
#include "format/metadata_keys.h"
#include "pgring/types.h"

namespace pgring {

// Where a PG's committed records lie in its ring, and the sequence the next
// record takes. The pointer RocksDB stores adds the stamp and the trim
// points, which PgLogState keeps.
struct RingBounds {
  uint64_t head = 0;      // lpos of the first record that still matters
  uint64_t tail = 0;      // lpos just past the last record
  uint64_t tail_seq = 1;  // sequence of the next record
  // The ring holds every byte before it (head <= homed <= tail); the bytes
  // [homed, tail) are in the log stream (docs/DESIGN.md, "The log stream").
  // Per-PG rings alone keep homed == tail.
  uint64_t homed = 0;
};

struct RingPgLog : PgLogState {
  RingPgLog(const PgId& id, uint32_t stamp, uint32_t block_size);

  const uint32_t stamp;  // the PG's record stamp

  PgChunkList chunks;
  RingBounds bounds;  // as staged
  uint64_t info_pos = 0;  // the record holding the latest info
  // The last rewind marker since the last entry append or reset: its
  // record and version. A rewind to a version that neither a live entry nor
  // the entries' trim point holds (every entry dropped and the trim point
  // lower, or a version between two entries) leaves that version only in
  // its marker, so the marker's record must stay at or after the head or a
  // reopen would forget the rewind's floor on versions. Whether it must is
  // decided from the state at the time (RewindPinned), not when the marker
  // was written, so the store that wrote it and the one that replays it at
  // open (whose trim point may already be the later one) agree on the head.
  bool has_rewind_marker = false;
  uint64_t rewind_marker_pos = 0;
  Version rewind_marker_version;
  bool RewindPinned() const;
  // The bytes [homed, tail), not all in memory (RingImage). Reads of
  // records past homed come from here and, for its cold bytes, from the
  // stream records the runs name.
  RingImage image;
  // The ring's bytes [ImageStart(), homed): a home write rewrites homed's
  // block with them first (a reader reads them from the ring).
  std::string ring_prefix;
  // Which stream records hold the unhomed bytes, oldest first; the first
  // run ends past homed.
  UnhomedRuns unhomed_runs;
  // Where EvictUnhomed left off (a run at or before the first that ends
  // past ColdEnd()), so that it walks only the runs since (a PG written once
  // holds thousands, and recovery evicts after each one).
  UnhomedRuns::Mark evict_mark;
  uint64_t record_bytes_written = 0;
  uint64_t payload_bytes_written = 0;

  uint64_t ImageStart() const { return RingImageStart(bounds.homed, block_size); }
  // Where the image's resident bytes start: [homed, ColdEnd()) are only in
  // the stream.
  uint64_t ColdEnd() const { return bounds.homed + image.cold(); }
  // The stream lpos of the record holding the byte at homed (0 when all is
  // homed).
  uint64_t StreamPos() const;
  // Moves homed to `to` (homed <= to <= tail): drops the image's bytes and
  // the runs before it, and keeps what ring_prefix must hold of to's block.
  // A home write has taken the bytes it homes already; a trim's bytes
  // before the head that are cold become zeros there: no ring holds them
  // and no pointer reads them (a pointer's head is at or before its homed,
  // and older pointers read them from the stream).
  void MoveHomed(uint64_t to);

  // Where the unhomed bytes kept in memory start when they end at `end`:
  // the newest `keep` bytes or more, from a block boundary (a read of the
  // newest records finds them from there on in memory and reads nothing),
  // never before homed.
  uint64_t ResidentFrom(uint64_t end, uint64_t keep) const;
  // Moves the oldest unhomed bytes out of memory, in whole blocks, until
  // `keep` bytes or fewer are resident; only bytes whose stream records end
  // by `written` (the stream lpos its completed writes reach) may go.
  void EvictUnhomed(uint64_t keep, uint64_t written);

  // The pointer as RocksDB stores it, and back. A loaded pointer's
  // stream_pos is kept in loaded_stream_pos until recovery has the runs.
  PgPointer Pointer() const;
  void LoadPointer(const PgPointer& p);
  uint64_t loaded_stream_pos = 0;
  const uint32_t block_size;
  // Position of the first record that still matters: the oldest live entry,
  // dup or info; the tail if there is none.
  uint64_t ComputeHead(uint64_t tail) const;
};

// The ring-specific fields a transaction may change, saved beside the
// PgLogUndo so a refused transaction leaves the PG as it was.
class RingPgLogUndo {
 public:
  explicit RingPgLogUndo(RingPgLog* pg);
  void Restore();
  const PgChunkList& old_chunks() const { return chunks_; }
  PgLogUndo& log() { return log_; }

 private:
  RingPgLog* pg_;
  PgLogUndo log_;
  PgChunkList chunks_;
  RingBounds bounds_;
  uint64_t info_pos_;
  bool has_rewind_marker_;
  uint64_t rewind_marker_pos_;
  Version rewind_marker_version_;
};

// PG-log changes as the ring stores them: the items of the record that
// starts at `record_pos` (`body` may be null when replaying), the positions
// the mapping tables keep, where the info and a rewind's pin lie.
class RingPgLogEffects final : public PgLogEffects {
 public:
  RingPgLogEffects(RingPgLog* pg, uint64_t record_pos, RecordBodyBuilder* body)
      : pg_(pg), record_pos_(record_pos), body_(body) {}

  uint32_t Locator(std::string_view) override { return static_cast<uint32_t>(record_pos_); }
  void EntryAppended(const Version& v, std::string_view payload) override;
  void DupAppended(const Version& v, std::string_view payload) override;
  void InfoSet(std::string_view payload) override;
  void EntryDropped(const MappingTable::Slot&, bool) override {}
  void DupDropped(const MappingTable::Slot&, bool) override {}
  void TrimPointMoved() override {}  // the pointer carries the trim points
  void Rewound(const Version& v) override;
  void Reset() override;

 private:
  RingPgLog* pg_;
  const uint64_t record_pos_;
  RecordBodyBuilder* body_;
};

// Recovery: applies the items of one committed record at `lpos`. kDataLoss
// if the record breaks the log's rules (a version out of order).
absl::Status ReplayRecord(std::string_view body, uint64_t lpos, RingPgLog* pg);


}  // namespace pgring

#endif  // PGRING_LOG_RING_PG_LOG_H_
