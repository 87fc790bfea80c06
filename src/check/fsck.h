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
  std::optional<PgScan> scan;  // deep, usable PGs only
};

// The log stream as its pointer describes it (stream mode).
struct FsckStream {
  uint64_t head = 0, tail = 0, tail_seq = 0;
  uint64_t chunks = 0;
  // deep: PGs whose newest bytes were read from the stream, and how many.
  uint64_t unhomed_pgs = 0;
  uint64_t unhomed_bytes = 0;
};

struct FsckResult {
  std::string backend;  // "ring", "rocksdb", "unknown"
  std::string uuid;     // from the label (or pgring.meta); empty if neither decodes
  bool deep = false;
  std::vector<Problem> problems;         // errors and notes, store-wide first, then by PG
  std::vector<std::string> not_checked;  // what was skipped, and why
  uint64_t pgs = 0;
  uint64_t chunk_count = 0;
  uint64_t owned_chunks = 0;
  uint64_t free_chunks = 0;
  uint64_t records = 0;  // deep: records verified
  uint64_t entries = 0;  // live entries (deep for the ring; always for RocksDB)
  uint64_t dups = 0;
  std::map<PgId, FsckPg> ring_pgs;
  // Stream mode: the stream's pointer and chunk list decode.
  std::optional<FsckStream> stream;
  // Its keys are usable and its chunks are its own: its records can be read.
  bool stream_usable = false;

  uint64_t errors() const;
  uint64_t fixable() const;
};

// Runs the checks on an opened store. Errors: none today (a RocksDB that
// cannot be read is a Problem, "rocksdb-read-error"); damage is always a
// Problem.
absl::StatusOr<FsckResult> RunFsck(const OfflineStore& store, const FsckOptions& options);

}  // namespace pgring

#endif  // PGRING_CHECK_FSCK_H_
