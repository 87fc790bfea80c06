// fsck.h — the checks: a store, offline, checked and every problem it has
// reported, each with the PG, the chunk, the offset and what is wrong; they
// never stop at the first one. The one checker behind the public Verify
// (pgring/verify.h) and pgring-tool's fsck and repair.
//
// Shallow (always): the label; the UUID and geometry binding between the
// label and pgring.meta; the partition's size; every RocksDB key pgring
// keeps (pointers and chunk lists, or the RocksDB backend's log keys); chunk
// ownership: every chunk number in range and in at most one list, once.
//
// Stream mode adds the log stream's keys and chunks to the shallow checks
// (its chunks claimed before any PG's), and each PG's stream position
// against the stream's committed range; deep reads every stream record
// between the stream's head and tail and each PG's bytes past its homed
// position, which its scan then reads as recovery does.
//
// Deep (FsckOptions::deep, fsck --deep; ring backend): additionally every record between each PG's
// head and tail: length, CRC, type, PG stamp, lap, consecutive sequence,
// the last sequence against the pointer, the items (versions of entries and
// of dups strictly increasing), and what lies past the tail. A PG whose keys
// are unusable (damaged, outside its chunks, a chunk out of range, on the
// missing end of a truncated partition, or claimed by another PG) is not
// scanned, so one piece of damage is reported once, not again as the
// garbage it makes a scan read.
//
// "Leaked" chunks cannot exist on disk: the free map is not stored, it is
// whatever no chunk list names, so a chunk is either owned or free. The
// checks report owned + free = chunk_count, and flags what could make the count
// wrong: chunk numbers past chunk_count, a chunk in two lists (or twice in
// one), and chunks a list holds past what its ring needs (the tail's chunk).
#ifndef PGRING_CHECK_FSCK_H_
#define PGRING_CHECK_FSCK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "check/offline_store.h"
#include "check/pg_scan.h"
#include "check/problem.h"
#include "pgring/verify.h"

namespace pgring {

// What to check, and the progress of a deep check: the public options
// (pgring/verify.h) are the checks' own.
using FsckOptions = VerifyOptions;

// What fsck learned about one ring PG (repair acts on it).
struct FsckPg {
  RingPgKeys keys;
  // The keys are usable to read the log: both decode, the pointer lies in the
  // chunks, every chunk is in range, on the device, and owned by no other PG.
  bool usable = false;
  // Chunks the ring needs: up to and including the one holding tail - 1.
  uint64_t needed_chunks = 0;
  // Deep, usable PGs only: what the scan found (problems, the records read,
  // what lies past the tail); its entries and dups are counted in the
  // report and not kept.
  std::optional<PgScan> scan;
};

// What the checks found: the public report (pgring/verify.h: every problem,
// the counts, the stream's summary; the public Verify returns it as it is),
// and what only the tool needs on top of it.
struct FsckResult {
  VerifyReport report;
  // Ring backend: what the checks learned about each PG (repair acts on it).
  std::map<PgId, FsckPg> ring_pgs;
  // Stream mode, the stream's pointer and chunk list decode (report.stream
  // set): the sequence number its next record gets.
  std::optional<uint64_t> stream_tail_seq;
  // The stream's keys are usable and its chunks are its own: its records can
  // be read.
  bool stream_usable = false;
};

// Runs the checks on an opened store; report.errors and report.fixable
// count report.problems. Errors: none today (a RocksDB that cannot be read
// is a problem, "rocksdb-read-error"); damage is always a problem.
absl::StatusOr<FsckResult> RunFsck(const OfflineStore& store, const FsckOptions& options);

}  // namespace pgring

#endif  // PGRING_CHECK_FSCK_H_
