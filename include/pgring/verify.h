// pgring/verify.h — checks a closed store and reports every problem it finds:
// the fsck an OSD runs at mount (as BlueStore does with
// bluestore_fsck_on_mount), and the one pgring-tool's fsck runs
// (docs/TOOL.md). Damage is never an error of the call: it is a problem in
// the report, with the PG, the chunk and the byte offset where it lies.
//
//   pgring::VerifyOptions vo;
//   vo.deep = deep_fsck_on_mount;                // shallow reads the keys only
//   absl::StatusOr<pgring::VerifyReport> r = pgring::Verify(dev, meta, vo);
//   if (!r.ok()) return r.status();              // cannot be read at all
//   for (const auto& p : r->problems) Log(p.ToString());
//   if (!r->clean()) return absl::DataLossError("fsck found errors");
//   auto store = pgring::Store::Open(dev, meta, options);
//
// What each check covers (shallow: the label, pgring.meta and their binding,
// the partition's size, every RocksDB key pgring keeps, chunk ownership;
// deep: also every committed record, and the log stream's) is in
// docs/TOOL.md ("fsck"), with every problem kind.
#ifndef PGRING_VERIFY_H_
#define PGRING_VERIFY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pgring/store.h"
#include "pgring/types.h"

namespace pgring {

struct VerifyOptions {
  // Shallow (false) checks the metadata: the label, pgring.meta, every
  // pointer and chunk list, chunk ownership; it reads no records, so it
  // takes about as long as listing the store's RocksDB keys. Deep (true)
  // also reads and verifies every committed record of every PG (length,
  // CRC, PG stamp, lap, sequence, item versions) and of the log stream: it
  // reads every live byte of the partition once.
  bool deep = false;
  // Deep, ring backend: called on the calling thread after each PG's
  // records are read, with the PGs read so far and how many will be (a
  // mount that logs how far its fsck is). May be empty.
  std::function<void(uint64_t pgs_done, uint64_t pgs_total)> progress;
};

// One thing found wrong (an error) or worth knowing (a note).
struct VerifyProblem {
  enum class Severity {
    kError,  // the store is inconsistent or damaged
    kNote,   // worth knowing, not wrong (e.g. uncommitted bytes past a tail)
  };
  Severity severity = Severity::kError;
  // Short, stable, machine-readable name ("record-crc",
  // "chunk-owned-twice"); docs/TOOL.md lists them all.
  std::string kind;
  // The PG the problem is in; none for a store-wide problem.
  std::optional<PgId> pg;
  // About the log stream (its keys, chunks or records), not a PG: `chunk`
  // and `offset` are then in the stream's chunks and `lpos` is a stream
  // position.
  bool stream = false;
  std::optional<uint64_t> chunk;   // chunk number
  std::optional<uint64_t> offset;  // byte offset in the chunk (with no chunk:
                                   // in the partition)
  std::optional<uint64_t> lpos;    // position in the PG's ring (or stream's)
  // A PG's bytes in the log stream: the stream position they were looked for.
  std::optional<uint64_t> stream_lpos;
  std::string message;  // what is wrong, in words
  // `pgring-tool repair` can fix it without losing data.
  bool fixable = false;

  // One line, as pgring-tool fsck prints it:
  // "PG 1.2a: chunk 7, offset 8192 (lpos 8192): record-crc: CRC mismatch ..."
  std::string ToString() const;
};

// The log stream's extent (stores in the stream layout).
struct VerifyStreamSummary {
  uint64_t head = 0, tail = 0;  // stream positions: committed [head, tail)
  uint64_t chunks = 0;
  // Deep: PGs whose newest bytes were read from the stream, and how many.
  uint64_t unhomed_pgs = 0;
  uint64_t unhomed_bytes = 0;
};

struct VerifyReport {
  // The backend the label (or pgring.meta) names; none when neither decodes.
  std::optional<Backend> backend;
  std::string uuid;  // the store's UUID; empty when neither decodes
  bool deep = false;
  // Problems with severity kError, and of those, the ones `pgring-tool
  // repair` fixes without losing data. errors == 0: the store is clean.
  uint64_t errors = 0;
  uint64_t fixable = 0;
  // Errors and notes: store-wide ones first, then by PG.
  std::vector<VerifyProblem> problems;
  // What was not checked, and why (e.g. the records of a PG whose keys are
  // damaged, which a deep check does not read as garbage).
  std::vector<std::string> not_checked;
  uint64_t pgs = 0;
  // Ring backend: the partition's chunks, owned by a PG (or the log stream)
  // and free; owned + free = chunk_count.
  uint64_t chunk_count = 0;
  uint64_t owned_chunks = 0;
  uint64_t free_chunks = 0;
  // Records verified (deep, ring backend), and the live entries and dups
  // found (deep for the ring backend; always for the RocksDB backend).
  uint64_t records = 0;
  uint64_t entries = 0;
  uint64_t dups = 0;
  std::optional<VerifyStreamSummary> stream;

  bool clean() const { return errors == 0; }
};

// Checks the store on the partition at `device_path` whose metadata is at
// `meta`: an own RocksDB, opened here read-only, or the embedder's open
// RocksDB and column family (MetadataLocation::SharedDb), read through the
// handle given, never opened a second time. The store must be closed: the
// partition is opened read-only with a shared flock, so no Store can open it
// while Verify runs. Every backend and layout (ring, ring with the log
// stream, the RocksDB backend) is checked.
//
// Errors, only when the store cannot be read at all: kNotFound (a missing
// partition), kFailedPrecondition (the partition is in use: a Store has it
// open, in this process or another; it has no pgring label; the RocksDB
// holds no pgring store), kInvalidArgument (not a file or block device, an
// empty path), or the error opening the RocksDB. A damaged label or
// metadata value is a problem in the report, like any other damage.
absl::StatusOr<VerifyReport> Verify(const std::string& device_path, const MetadataLocation& meta,
                                    const VerifyOptions& options);

}  // namespace pgring

#endif  // PGRING_VERIFY_H_
