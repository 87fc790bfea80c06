// pg_scan.h — reads one ring-backend PG's log from its head to its committed
// tail as docs/FORMAT.md ("Reading a PG's log") specifies, independently of
// the store's own recovery, and keeps where every record and item lies. In
// stream mode the bytes past the PG's homed position come from the log
// stream (given by the caller), as recovery reads them.
// Used by the deep checks (fsck.h, the public Verify), and by the tool's read
// commands (info, log, dups, stats), export and repair.
//
// Unlike recovery, the scan does not stop at the first problem: a record
// whose CRC matches but which breaks a rule (another PG's stamp, a stale lap,
// a sequence gap, a malformed body, versions out of order) is reported and
// the scan goes on with the next record, because its length can be trusted.
// Only a record whose length cannot be trusted (a CRC mismatch, a length
// past the tail, too few bytes for a header) or a read error ends the scan.
#ifndef PGRING_CHECK_PG_SCAN_H_
#define PGRING_CHECK_PG_SCAN_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/block_device.h"
#include "log/ring_layout.h"
#include "format/metadata_keys.h"
#include "pgring/types.h"
#include "check/problem.h"

namespace pgring {

// A live entry, dup or the info, and where it is.
struct ScannedItem {
  Version version;           // entries and dups
  uint64_t record_lpos = 0;  // the record holding the item
  uint32_t record_size = 0;  // header + body bytes
  uint32_t record_crc = 0;   // the record's CRC field as stored (masked)
  uint64_t record_seq = 0;
  uint64_t item_lpos = 0;  // the item's first byte (its kind byte)
  uint32_t payload_size = 0;
  std::string payload;  // empty unless the scan keeps payloads
};

struct PgScanOptions {
  // Keep the payloads of entries with versions in [from, to], and of every
  // dup (keep_dup_payloads). The info's payload is always kept.
  bool keep_entry_payloads = false;
  Version from = Version::Min();
  Version to = Version::Max();
  bool keep_dup_payloads = false;
  // Also look past the tail for uncommitted data (notes "past-tail").
  bool inspect_past_tail = false;
  // Called with the bytes scanned so far, now and then.
  std::function<void(uint64_t)> progress;
};

struct PgScan {
  std::deque<ScannedItem> entries;  // live, oldest first
  std::deque<ScannedItem> dups;
  std::optional<ScannedItem> info;  // the latest info
  // The PG's last entry version as the store keeps it (PgLogState): the
  // newest entry, a trim point or a rewind above them.
  Version last_version;
  // Where the log ends and the next record's sequence: the pointer's, or
  // past it where its records continue in the log stream.
  uint64_t tail = 0;
  uint64_t tail_seq = 0;
  uint64_t records = 0;             // records read and verified
  uint64_t scanned_to = 0;          // lpos the scan reached
  bool complete = false;            // reached the tail, no problem on the way
  // Errors and notes, in ring order.
  std::vector<VerifyProblem> problems;
  // Past the tail (inspect_past_tail): [tail, stale_end) holds uncommitted
  // data (stale_end == tail: nothing to clean).
  uint64_t stale_end = 0;

  uint64_t live_payload_bytes() const;
  bool has_errors() const;
  // lpos of the oldest record holding a live item, or `tail` if none.
  uint64_t OldestLive(uint64_t tail) const;
};

// `unhomed`: the PG's bytes from homed on from the log stream (stream_view.h;
// empty when there are none): [homed, tail) of the pointer, and past its
// tail the records that continue the log there. The ring is read up to homed
// and these bytes after it, through the image recovery builds
// (log/ring_image.h), so the scan reads exactly the log the store reads.
PgScan ScanRingPg(BlockDevice* device, const Geometry& geometry, const PgId& pg,
                  const PgPointer& pointer, const PgChunkList& chunks, std::string_view unhomed,
                  const PgScanOptions& options);

}  // namespace pgring

#endif  // PGRING_CHECK_PG_SCAN_H_
