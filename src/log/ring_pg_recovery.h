// ring_pg_recovery.h — the recovery of one PG at open (docs/DESIGN.md §10,
// "Open"): its records on its ring up to homed, then its unhomed bytes as
// the one pass over the log stream reaches them, each record replayed as
// soon as its last byte arrives. The pointer's tail is where the PG's log
// ends at least: its records may continue in the stream past it (the store
// writes a pointer only when something only the pointer says changes;
// docs/FORMAT.md, "A pointer that lags its records"). Only the bytes of a
// record still being read and the newest unhomed bytes (the resident bound)
// are kept, so an open holds about as much of a PG as the running store
// does, not every unhomed byte at once.
#ifndef PGRING_LOG_RING_PG_RECOVERY_H_
#define PGRING_LOG_RING_PG_RECOVERY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "device/block_device.h"
#include "format/metadata_keys.h"
#include "log/ring_layout.h"
#include "log/ring_pg_log.h"
#include "log/ring_reader.h"

namespace pgring {

class RingPgRecovery {
 public:
  // `pg` holds its pointer (LoadPointer) and chunk list; the recovery fills
  // in the rest. `resident` is how many unhomed bytes stay in memory
  // (RingPgLog::ResidentFrom's `keep`).
  RingPgRecovery(BlockDevice* device, const Geometry& geo, RingPgLog* pg, uint64_t resident);

  // Checks the pointer against the chunk list, then reads and replays the
  // ring's records that end by homed, and keeps the ring's bytes of the
  // record that straddles homed and of homed's block (ring_prefix).
  absl::Status Start();

  // Where the PG's bytes read so far end: its next bytes from the stream
  // start here. Up to the pointer's tail they must be there; past it the
  // stream may hold more.
  uint64_t covered() const { return pg_->bounds.homed + pg_->image.size(); }
  const RingPgLog& pg() const { return *pg_; }

  // The PG's next unhomed bytes, [covered(), covered() + bytes.size()),
  // held by the stream record `run` names (it ends at run.ring_end, which
  // moves the tail when past it). Replays every record they complete; only
  // the newest `resident` bytes (RingPgLog::ResidentFrom its tail so far)
  // stay in memory.
  absl::Status Feed(std::string_view bytes, const UnhomedRun& run);

  // Once the stream's pass is over: the records must reach the tail. Its
  // sequence is checked against the pointer's, or, for a tail the stream
  // moved, taken from the last record; then the replay's trim points.
  absl::Status Finish();

 private:
  // Replays every record the available bytes complete.
  absl::Status ReplayAvailable();

  BlockDevice* const device_;
  const Geometry geo_;
  RingPgLog* const pg_;
  const uint64_t resident_;
  std::optional<RingReader> reader_;
  // The bytes [reader_->position(), covered()) when they are not where
  // Feed's caller holds them: the start of the record the reader waits for.
  std::string pending_;
  // The stream moved the tail past the pointer's.
  bool extended_ = false;
};

// Runs fn(0), ..., fn(n - 1), in any order, several at once or not.
using ForEachPg = std::function<void(size_t n, const std::function<void(size_t)>& fn)>;

// The log stream as recovery reads it: its committed range and its chunks.
struct StreamSource {
  const StreamPointer* pointer = nullptr;
  const PgChunkList* chunks = nullptr;
};

// The recovery of `pgs` at open (each holds its pointer and chunk list):
// each PG's ring up to homed (Start, through `for_each`); then, with a
// stream, one sequential pass over it feeding each PG its bytes as the pass
// reaches them, those up to its pointer's tail and those that continue it;
// then the checks that end each replay (Finish, through `for_each`).
// `outcome[i]`: OK, or pgs[i]'s error (kDataLoss naming it; a device error
// reading its ring). Returns a device error of the stream's pass; its
// damage, which costs only the PGs whose bytes lay or may have lain in it
// (ReadUnhomed says which; they fail with it), goes to `stream_damage`.
absl::Status RecoverRingPgs(BlockDevice* device, const Geometry& geo,
                            const std::vector<RingPgLog*>& pgs, const StreamSource& stream,
                            uint64_t resident, const ForEachPg& for_each,
                            std::vector<absl::Status>* outcome, absl::Status* stream_damage);

}  // namespace pgring

#endif  // PGRING_LOG_RING_PG_RECOVERY_H_
