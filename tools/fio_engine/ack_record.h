// ack_record.h — what a fio run through the engine acknowledged, kept where a
// SIGKILL of fio cannot take it, and the check of a reopened store against
// it. Used by the process-kill campaign (tests/crash/kill/fio_kill_campaign.sh).
//
// pgring_ack_file=PATH: once setup is done (store open, PGs created and
// prefilled, synced), the engine creates PATH (written to PATH.tmp, then
// renamed, so its appearance also says "setup done, writes start now") and
// keeps it mapped MAP_SHARED. Per PG it holds three versions:
//   start      the PG's head after setup
//   submitted  the newest version handed to Store::Submit (noted before the
//              call, so a commit can never be ahead of it)
//   acked      the newest version whose commit callback reported success
//              (noted before fio hears of the completion)
// A process kill cannot take what was stored into the mapping: the pages
// belong to the kernel's page cache. The mapping is never msync'ed, so this
// is no record across a power loss.
//
// pgring_ack_check=PATH: when the store is opened, before setup writes
// anything, the engine reads the record an earlier (typically killed) run
// left in PATH and checks each of its PGs in the reopened store, where head
// is the PG's newest entry version (its newest dup if the log is empty):
//   the PG exists
//   head >= acked        no acknowledged write is missing — in the durable
//                        modes only; with pgring_durability=unsynced an
//                        acknowledged write may be lost by design (DESIGN.md,
//                        durability modes), so it is counted, not a failure
//   head <= submitted    nothing past the newest write ever submitted
// That the entries up to head are the right ones, byte for byte, is
// pgring_verify_log's check (OsdModel::CheckStore). The result goes into the
// report (ack_check) and a failure fails the job, as the log check does.
#ifndef PGRING_TOOLS_FIO_ENGINE_ACK_RECORD_H_
#define PGRING_TOOLS_FIO_ENGINE_ACK_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/store.h"

namespace pgring::fio {

class AckRecord {
 public:
  struct Slot {
    uint64_t start = 0;
    uint64_t submitted = 0;
    uint64_t acked = 0;
  };

  // Creates PATH with every PG's slot at `heads[pg]` and maps it.
  static absl::StatusOr<std::unique_ptr<AckRecord>> Create(const std::string& path, bool durable,
                                                           const std::vector<uint64_t>& heads);
  ~AckRecord();
  AckRecord(const AckRecord&) = delete;
  AckRecord& operator=(const AckRecord&) = delete;

  // Thread-safe; each keeps the maximum.
  void NoteSubmitted(uint32_t pg, uint64_t version);
  void NoteAcked(uint32_t pg, uint64_t version);

  // A record as read back from a file.
  struct Contents {
    bool durable = true;
    std::vector<Slot> slots;  // by the model's PG slot
  };
  static absl::StatusOr<Contents> Load(const std::string& path);

 private:
  AckRecord(void* map, size_t size, uint32_t pgs) : map_(map), size_(size), pgs_(pgs) {}
  uint64_t* Word(uint32_t pg, int field) const;

  void* map_;
  size_t size_;
  uint32_t pgs_;
};

// What pgring_ack_check found.
struct AckCheckResult {
  bool ran = false;
  bool durable = true;          // the recorded run's mode
  uint64_t pgs = 0;
  uint64_t acked_writes = 0;    // sum of acked - start: acknowledged writes of that run
  uint64_t lost = 0;            // sum of acked - head where head < acked
  uint64_t beyond_submitted = 0;  // sum of head - submitted where head > submitted
  uint64_t in_flight = 0;       // sum of submitted - acked: writes in flight at the end
  uint64_t committed_unacked = 0;  // sum of head - acked where acked < head <= submitted
  std::vector<std::string> errors;  // the first 20
  uint64_t error_count = 0;
  bool ok() const { return error_count == 0; }
};

// Checks `store` against the record in `path`, whose slots are the model's
// (OsdModel: slot s is PgIdOfSlot(s, pgs_per_pool)). An unreadable record is
// an error in the result, not a status.
AckCheckResult CheckAcks(const std::string& path, const Store& store, uint32_t pgs_per_pool);

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_ACK_RECORD_H_
