// metadata_keys.h — what pgring keeps in RocksDB for the ring backend, and how it
// is encoded. Specified in docs/FORMAT.md ("RocksDB keys").
//
//   "pgring.meta"              StoreMeta: UUID, geometry, next PG stamp
//   "pgring.ptr."  + pgkey     PgPointer: head/tail, sequence, trim points
//                              (rewritten by every transaction on the PG)
//   "pgring.chunks." + pgkey   PgChunkList: the ring's chunks, in ring order
//                              (rewritten only when the chunk list changes)
//
// pgkey (13 bytes, sorts like PgId): pool as u64 big-endian with the sign bit
// flipped, seed u32 big-endian, shard+1 as u8.
//
// Every value is: format:u8, fields, masked crc32c:u32 of the bytes before
// it. StoreMeta and PgChunkList are format 1 (fixed-width little-endian
// fields). PgPointer is written as format 2 (LEB128 varints, 13 to 70 bytes,
// about 30 for a busy PG); format 1 pointers (fixed width, 57 bytes) are
// still read. Nothing per entry, nothing per trim.
#ifndef PGRING_FORMAT_METADATA_KEYS_H_
#define PGRING_FORMAT_METADATA_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "format/label.h"
#include "pgring/types.h"

namespace pgring {

inline constexpr std::string_view kMetaKey = "pgring.meta";
inline constexpr std::string_view kPgPointerPrefix = "pgring.ptr.";
inline constexpr std::string_view kPgChunksPrefix = "pgring.chunks.";
inline constexpr std::string_view kKeyPrefix = "pgring.";
inline constexpr size_t kPgKeySize = 13;

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

  std::string Encode() const;
  static absl::StatusOr<StoreMeta> Decode(std::string_view value);
};

struct PgPointer {
  uint32_t stamp = 0;      // the PG's record stamp
  uint64_t head = 0;       // lpos of the first record that still matters
  uint64_t tail = 0;       // lpos just past the last committed record
  uint64_t tail_seq = 1;   // sequence of the next record
  Version entries_trimmed_to;  // entries <= this are trimmed
  Version dups_trimmed_to;     // dups <= this are trimmed

  friend bool operator==(const PgPointer&, const PgPointer&) = default;
  std::string Encode() const;  // always format 2
  // Format 2, or the older fixed-width format 1; kDataLoss on any damage.
  static absl::StatusOr<PgPointer> Decode(std::string_view value);
};

struct PgChunkList {
  uint64_t base = 0;              // lpos of the first byte of chunks[0]
  std::vector<uint32_t> chunks;   // chunk numbers, in ring order

  friend bool operator==(const PgChunkList&, const PgChunkList&) = default;
  std::string Encode() const;
  static absl::StatusOr<PgChunkList> Decode(std::string_view value);
};

}  // namespace pgring

#endif  // PGRING_FORMAT_METADATA_KEYS_H_
