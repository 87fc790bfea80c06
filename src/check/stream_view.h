// stream_view.h — the log stream as the checks and the tool read it
// (docs/DESIGN.md, "The log stream"): each PG's bytes past its homed
// position, collected from the stream in one sequential read
// (log/stream_reader.h, as recovery does), and the stream's own damage as
// problems. The PG scan reads a PG through these bytes (pg_scan.h), so every
// check and command sees the log the store would read.
#ifndef PGRING_CHECK_STREAM_VIEW_H_
#define PGRING_CHECK_STREAM_VIEW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/block_device.h"
#include "log/ring_layout.h"
#include "pgring/options.h"
#include "check/offline_store.h"
#include "check/problem.h"

namespace pgring {

// One PG's bytes from homed on in the stream: [homed, tail) of its pointer
// and the records that continue it past that tail (docs/FORMAT.md, "A
// pointer that lags its records"), or why they are not there.
struct UnhomedBytes {
  std::string bytes;
  // kDataLoss naming the PG: bytes missing from the stream (or no usable
  // stream), or its newest records possibly in damaged stream records.
  absl::Status error;
  uint64_t stream_lpos = 0;  // with error: the stream lpos it names
  bool lost_newest = false;  // with error: the second case
};

// The PG's pointer as its log stands: `stored` (RocksDB's) with its tail
// moved past the records that continue it in the stream (u.bytes, from
// stored.homed()), and its next sequence the last of them plus one, read
// from their headers. What the tool's read commands show and read by;
// fsck scans the stored pointer with the bytes instead (ScanRingPg moves
// the tail itself, checking every record on the way).
PgPointer LogPointer(const PgPointer& stored, const UnhomedBytes& u);

struct StreamRead {
  // Every PG given whose pointer has unhomed bytes.
  std::map<PgId, UnhomedBytes> unhomed;
  // With report: each problem of the stream's records (kind "stream-" and
  // the reader's check, e.g. "stream-record-crc"), located in the stream.
  std::vector<VerifyProblem> problems;
};

// Collects the unhomed bytes of every PG in `pgs` whose pointer has any
// (pgs: keys usable to read; CheckRingPgKeys), and those of its records
// that continue past its pointer's tail. With a usable stream
// (CheckStreamKeys) it reads the stream from its head to its tail once,
// even when no PG needs it, so that `report` checks every stream record;
// without one, each such PG gets an error naming why. Errors: device errors
// only.
absl::StatusOr<StreamRead> ReadStreamForPgs(BlockDevice* device, const Geometry& g,
                                            const StreamKeys& stream,
                                            const std::map<PgId, const RingPgKeys*>& pgs,
                                            bool report);

// The options a command that writes through Store::Open uses to keep the
// store's layout: kStream (with room for every chunk the stream has, when
// max_chunks is set rather than left to the partition's size) when
// the store has a log stream, so the command does not home every PG and
// drop the stream as an open in per-PG mode would; and no stream cleaner,
// so the command changes only the PGs it names.
void KeepLogLayout(const StreamKeys& stream, Options* options);

}  // namespace pgring

#endif  // PGRING_CHECK_STREAM_VIEW_H_
