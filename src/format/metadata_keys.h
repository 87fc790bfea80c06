// metadata_keys.h — the store metadata (pgring.meta, both backends) and what
// the ring backend keeps per PG in RocksDB (pointer, chunk list): keys,
// encodings, and the checks a value must pass beyond decoding. Keys, values
// and their byte layouts: docs/FORMAT.md, "RocksDB keys and values".
#ifndef PGRING_FORMAT_METADATA_KEYS_H_
#define PGRING_FORMAT_METADATA_KEYS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "format/label.h"
#include "pgring/types.h"

namespace pgring {

inline constexpr std::string_view kMetaKey = "pgring.meta";
inline constexpr std::string_view kPgPointerPrefix = "pgring.ptr.";
inline constexpr std::string_view kPgChunksPrefix = "pgring.chunks.";
inline constexpr std::string_view kKeyPrefix = "pgring.";
// The log stream's pointer and chunk list (stream mode, format version 2).
inline constexpr std::string_view kStreamPointerKey = "pgring.stream.ptr";
inline constexpr std::string_view kStreamChunksKey = "pgring.stream.chunks";
inline constexpr size_t kPgKeySize = 13;

// Every value pgring frames is format:u8 fields crc:u32 (docs/FORMAT.md,
// "RocksDB keys and values"). SealValue appends the CRC of what `v` holds; UnsealValue checks
// the size, the CRC and that the format byte is `format`, and returns the
// fields (kDataLoss naming `what` otherwise).
void SealValue(std::string* v);
absl::StatusOr<std::string_view> UnsealValue(std::string_view v, std::string_view what,
                                             uint8_t format);

std::string EncodePgKey(const PgId& pg);
bool DecodePgKey(std::string_view key, PgId* pg);
std::string PgPointerKey(const PgId& pg);
std::string PgChunksKey(const PgId& pg);

struct StoreMeta {
  uint32_t format_version = kFormatVersion;
  Uuid uuid;
  uint32_t block_size = 0;
  uint32_t chunk_size = 0;
  uint64_t partition_size = 0;
  uint64_t chunk_count = 0;
  Backend backend = Backend::kRing;
  uint32_t next_pg_stamp = 1;  // stamps are never reused

  // The label's fields, with a first PG stamp.
  static StoreMeta ForLabel(const Label& label);
  // The label these fields describe (what mkfs wrote).
  Label ToLabel() const;

  std::string Encode() const;
  // Checks the CRC and the length, not the geometry: see CheckMetaGeometry.
  static absl::StatusOr<StoreMeta> Decode(std::string_view value);
};

// The label's geometry rules (CheckGeometry, CheckBackend) applied to the
// metadata's copy of the label's fields; kInvalidArgument naming the rule.
absl::Status CheckMetaGeometry(const StoreMeta& meta);

// Whether `meta` is the metadata of the store whose label is `label`:
// kFailedPrecondition when the UUIDs differ (the RocksDB is another store's),
// kDataLoss when one store's label and metadata disagree about its geometry
// (naming each field that differs). `partition` and `db` are how the message
// names the two, e.g. a path and "RocksDB at PATH".
absl::Status CheckMetaMatchesLabel(const Label& label, const StoreMeta& meta,
                                   std::string_view partition, std::string_view db);

struct PgPointer {
  uint32_t stamp = 0;      // the PG's record stamp
  uint64_t head = 0;       // lpos of the first record that still matters
  uint64_t tail = 0;       // lpos just past the last committed record
  uint64_t tail_seq = 1;   // sequence of the next record
  Version entries_trimmed_to;  // entries <= this are trimmed
  Version dups_trimmed_to;     // dups <= this are trimmed
  // Stream mode: the ring bytes [homed(), tail) are not on the ring yet but
  // in the log stream, the first of them in the stream record at stream lpos
  // `stream_pos`. Held as a count so that a pointer that never set it means
  // "all on the ring" (0), whatever its tail: unhomed <= tail, and
  // stream_pos is 0 when unhomed is.
  uint64_t unhomed = 0;
  uint64_t stream_pos = 0;

  uint64_t homed() const { return tail - unhomed; }

  friend bool operator==(const PgPointer&, const PgPointer&) = default;
  // Format 2 when nothing is unhomed, byte for byte what per-PG rings
  // write; format 3 otherwise.
  std::string Encode() const;
  // Format 3, 2, or the older fixed-width format 1; kDataLoss on any damage.
  static absl::StatusOr<PgPointer> Decode(std::string_view value);
};

// The log stream's pointer (kStreamPointerKey): its records lie in
// [head, tail) of the stream's ring, the next one to be written gets
// sequence tail_seq.
struct StreamPointer {
  uint64_t head = 0;
  uint64_t tail = 0;
  uint64_t tail_seq = 1;

  friend bool operator==(const StreamPointer&, const StreamPointer&) = default;
  std::string Encode() const;
  // kDataLoss on any damage, head > tail, or tail_seq 0.
  static absl::StatusOr<StreamPointer> Decode(std::string_view value);
};

struct PgChunkList {
  uint64_t base = 0;              // lpos of the first byte of chunks[0]
  std::vector<uint32_t> chunks;   // chunk numbers, in ring order

  friend bool operator==(const PgChunkList&, const PgChunkList&) = default;
  // lpos just past the last chunk.
  uint64_t End(uint32_t chunk_size) const {
    return base + static_cast<uint64_t>(chunks.size()) * chunk_size;
  }
  std::string Encode() const;
  static absl::StatusOr<PgChunkList> Decode(std::string_view value);
};

// What a PG's pointer and chunk list must satisfy before its ring is read
// (docs/FORMAT.md, "Reading a PG's log"). kDataLoss, without the PG's name.
//
// The chunk list's base is a multiple of the chunk size.
absl::Status CheckChunkListBase(const PgChunkList& chunks, uint32_t chunk_size);
// The log stream's pointer: its [head, tail) lies within the chunks'
// [base, End).
absl::Status CheckPointerInChunks(uint64_t head, uint64_t tail, const PgChunkList& chunks,
                                  uint32_t chunk_size);
// A PG's pointer: head <= homed <= tail, base <= head, and the bytes its
// ring holds, [head, homed), lie within the chunks' [base, End). The
// unhomed bytes [homed, tail) are in the log stream and take no chunk, so a
// PG whose whole log is unhomed (homed == head) may have no chunk, or only
// chunks wholly behind its head.
absl::Status CheckPgPointerInChunks(uint64_t head, uint64_t homed, uint64_t tail,
                                    const PgChunkList& chunks, uint32_t chunk_size);

// The store-wide rules over every PG's pointer and chunk list
// (docs/FORMAT.md, "Reading a PG's log", the store-level checks): each stamp
// was issued and belongs to one PG, each chunk number is in range and in one
// list, once. Claims are made PG by PG; the store refuses at the first
// broken rule, fsck reports every one. Messages name the claim's PG only
// where they name two.
class RingClaims {
 public:
  // `next_pg_stamp` nullopt: pgring.meta is unreadable (fsck), so only stamp
  // 0 is known never to have been issued.
  RingClaims(uint64_t chunk_count, std::optional<uint32_t> next_pg_stamp)
      : chunk_count_(chunk_count), next_pg_stamp_(next_pg_stamp) {}

  enum class Broken { kNone, kStampNeverIssued, kStampShared, kChunkOutOfRange,
                      kChunkTwiceInList, kChunkShared };
  struct Verdict {
    Broken broken = Broken::kNone;
    PgId other;  // kStampShared, kChunkShared: the PG that claimed it first
    std::string message;
    bool ok() const { return broken == Broken::kNone; }
  };

  Verdict ClaimStamp(const PgId& pg, uint32_t stamp);
  // Chunk `chunk` at position `index` of `pg`'s chunk list.
  Verdict ClaimChunk(const PgId& pg, size_t index, uint32_t chunk);
  // The same for the log stream's chunk list (claimed before any PG's).
  Verdict ClaimStreamChunk(size_t index, uint32_t chunk);
  // Distinct chunk numbers in range claimed so far.
  uint64_t chunks_claimed() const { return chunk_owner_.size(); }

 private:
  struct ChunkClaim {
    PgId pg;
    size_t index;
    bool stream = false;  // the log stream's, not pg's
  };
  Verdict Claim(const ChunkClaim& claim, uint32_t chunk);
  const uint64_t chunk_count_;
  const std::optional<uint32_t> next_pg_stamp_;
  absl::flat_hash_map<uint32_t, PgId> stamp_owner_;
  absl::flat_hash_map<uint32_t, ChunkClaim> chunk_owner_;
};

}  // namespace pgring

#endif  // PGRING_FORMAT_METADATA_KEYS_H_
