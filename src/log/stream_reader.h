// stream_reader.h — reading the log stream (docs/FORMAT.md, "The log
// stream"): its records in order through RingReader (stamp kStreamStamp),
// and the bytes each PG has in it past its homed position. Recovery and the
// tool read it through here.
#ifndef PGRING_LOG_STREAM_READER_H_
#define PGRING_LOG_STREAM_READER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "log/ring_layout.h"
#include "log/ring_pg_log.h"
#include "log/ring_reader.h"

namespace pgring {

// Whether `s` (from ReadStream, or what passed it on) says the stream's
// last record does not carry the sequence before its pointer's tail_seq:
// the next record a store appended would then break the stream's chain.
bool IsStreamTailSeqDamage(const absl::Status& s);

// Reads the committed stream [p.head, p.tail) and hands each kPgBytes item
// to `fn` with where its bytes are (the run a PG's index keeps for them:
// its record's lpos, and the stream lpos its bytes end at, or for a
// compressed record where the record ends).
// Past damage (RingReader's checks, an item other than kPgBytes) it goes on
// from the next of the record starts `resync` (sorted: the PGs' stream_pos)
// and returns the first damage, kDataLoss naming its stream lpos; a device
// error ends it. `*skipped_to` (if given): where the last stretch it could
// not read ends, the record it resumed at (p.tail when it did not resume;
// 0 when it skipped nothing). With `reporter`, every problem is reported as
// RingReader reports them. When the last record before the tail is not the
// one the pointer's tail_seq names, the damage it returns (that check's, or
// an earlier one) says so: IsStreamTailSeqDamage.
absl::Status ReadStream(BlockDevice* device, const Geometry& geo, const PgChunkList& chunks,
                        const StreamPointer& p, const std::vector<uint64_t>& resync,
                        const std::function<absl::Status(const UnhomedRun&, const Item&)>& fn,
                        RingReader::Reporter* reporter = nullptr,
                        uint64_t* skipped_to = nullptr);

// What one PG needs from the stream: its bytes from homed on, the first of
// them in the stream record at stream_pos. Those before its pointer's
// `tail` must be there; items of its stamp that continue them past it are
// the PG's newer records, which its pointer does not count yet
// (docs/FORMAT.md, "A pointer that lags its records"). A pointer with
// nothing unhomed counts every record: it needs nothing from the stream.
struct UnhomedWant {
  std::string name;  // the PG's, for messages
  uint32_t stamp = 0;
  uint64_t homed = 0;
  uint64_t tail = 0;
  uint64_t stream_pos = 0;
};
// How the pass went for one want: `error` (kDataLoss naming the PG) when
// its bytes are not all there, or what took them failed; else `tail`,
// where its bytes end (the pointer's tail or past it).
struct UnhomedOutcome {
  absl::Status error;
  uint64_t tail = 0;
  // With `error`, for callers that report it field by field (the tool's
  // fsck): the stream lpos it names (the record holding the gap; the
  // want's stream_pos when the stream ended first; where reading resumed
  // past damage that may hold its newest records), and whether the error
  // is that last case (else bytes its pointer counts are missing).
  uint64_t error_stream_lpos = 0;
  bool lost_newest = false;
};

// Takes a want's next bytes: [covered, covered + bytes.size()), where
// covered starts at its homed and grows by each call, held by the stream
// record `run` names. An error fails the want (its outcome), and it is
// given nothing more.
using UnhomedSink =
    std::function<absl::Status(size_t want, std::string_view bytes, const UnhomedRun& run)>;

// Reads the stream once and gives each want its bytes, in stream order: the
// items of its stamp at or after its stream_pos cover [homed, tail) without
// a gap, and those that go on without a gap past tail are given too; older
// items (before homed) and items of stamps no want names (removed PGs) are
// skipped. Damage the pass had to skip costs the wants whose bytes lay in
// it: a gap after it shows those, and a want none of whose items lies past
// the damage, and whose records may start before its end (stream_pos), may
// have had its newest records there (its pointer cannot say), so it fails
// too. Returns the stream's first damage (which costs only those wants) or
// a device error.
absl::Status ReadUnhomed(BlockDevice* device, const Geometry& geo, const PgChunkList& chunks,
                         const StreamPointer& p, const std::vector<UnhomedWant>& wants,
                         const UnhomedSink& sink, std::vector<UnhomedOutcome>* outcomes,
                         RingReader::Reporter* reporter = nullptr);

// ReadUnhomed, keeping each want's bytes whole in memory (the tool, which
// reads each PG through its ring and them).
struct UnhomedFound : UnhomedOutcome {
  std::string bytes;
  UnhomedRuns runs;
};
absl::Status CollectUnhomed(BlockDevice* device, const Geometry& geo, const PgChunkList& chunks,
                            const StreamPointer& p, const std::vector<UnhomedWant>& wants,
                            std::vector<UnhomedFound>* found,
                            RingReader::Reporter* reporter = nullptr);

// Appends the unhomed bytes [from, to) of the PG whose stamp is `stamp`
// to `out`, read from the stream records `runs` name (which must cover
// them): one device read per stretch of the stream holding them (runs a
// block apart read together), all in flight together
// (BlockDevice::ReadMany), at most 16 MiB at a time. Bytes read from a
// plain record are not checked here; the records those bytes make up are,
// by whoever reads them (RingReader). A compressed record is read whole,
// checked (CRC, kind, stamp, lap) and decompressed, and must hold the
// PG's bytes. The caller holds the stream's chunks in place (they are
// reused only behind the PG's pin) and knows the bytes were written.
// kDataLoss when the runs do not cover the range or a compressed record
// fails a check; device errors pass through.
absl::Status ReadUnhomedBytes(BlockDevice* device, const Geometry& geo,
                              const PgChunkList& stream_chunks, uint32_t stamp,
                              const UnhomedRuns& runs, uint64_t from, uint64_t to,
                              std::string* out);

// A stretch [from, to) of a PG's ring positions.
struct RingRange {
  uint64_t from = 0;
  uint64_t to = 0;
};
// ReadUnhomedBytes for several ranges, sorted and apart (a record each, say,
// of a PG whose live items are few and far between): their bytes appended
// to `out` one range after the other, every read in flight together.
absl::Status ReadUnhomedRanges(BlockDevice* device, const Geometry& geo,
                               const PgChunkList& stream_chunks, uint32_t stamp,
                               const UnhomedRuns& runs,
                               const std::vector<RingRange>& ranges, std::string* out);

}  // namespace pgring

#endif  // PGRING_LOG_STREAM_READER_H_
