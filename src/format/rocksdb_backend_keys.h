// rocksdb_backend_keys.h — the keys and values of the RocksDB backend
// (Backend::kRocksDb), which keeps the PG log the way BlueStore keeps it in
// its pgmeta omap. Specified in docs/FORMAT.md ("RocksDB backend keys") and
// docs/ROCKSDB_BACKEND.md; held to byte for byte by the format tests.
//
//   prefix(pg) = "pgring.log." + pgkey + "."     pgkey: EncodePgKey
//   prefix + "%010u.%020llu" (epoch.version)      an entry; value = payload
//   prefix + "dup_%010u.%020llu"                  a dup;    value = payload
//   prefix + "_info"                              the info; value = the blob
//   prefix + "_state"                             PgStateValue (below)
#ifndef PGRING_FORMAT_ROCKSDB_BACKEND_KEYS_H_
#define PGRING_FORMAT_ROCKSDB_BACKEND_KEYS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pgring/types.h"

namespace pgring {

inline constexpr std::string_view kLogKeyPrefix = "pgring.log.";
inline constexpr std::string_view kInfoKeyName = "_info";
inline constexpr std::string_view kStateKeyName = "_state";
inline constexpr std::string_view kDupKeyNamePrefix = "dup_";
inline constexpr size_t kLogKeyNameSize = 31;  // "%010u.%020llu"

// "pgring.log." + pgkey + "."
std::string PgLogKeyPrefix(const PgId& pg);
// The end of a PG's keys for DeleteRange: its prefix with the final '.'
// made '/'.
std::string PgLogKeyPrefixEnd(const PgId& pg);
// "%010u.%020llu", as Ceph's eversion_t::get_key_name().
std::string LogKeyName(const Version& v);
// Parses exactly what LogKeyName prints (31 bytes, values in range).
bool ParseLogKeyName(std::string_view name, Version* v);

// The value of "_state". Encoded as format:u8 (1), eight LEB128 varints
// (entries_trimmed_to epoch, version; dups_trimmed_to epoch, version;
// last_version epoch, version; last_dup_version epoch, version), masked
// crc32c:u32 (little-endian) of the bytes before it. 13 to 65 bytes; about 25
// for a busy PG.
struct PgStateValue {
  Version entries_trimmed_to;  // entries <= this were trimmed
  Version dups_trimmed_to;     // dups <= this were trimmed
  // Appends must be greater than last_version (last_dup_version). The key
  // records a floor: the value is the greater of it and the newest key.
  Version last_version;
  Version last_dup_version;

  friend bool operator==(const PgStateValue&, const PgStateValue&) = default;
  std::string Encode() const;
  static absl::StatusOr<PgStateValue> Decode(std::string_view value);
};

}  // namespace pgring

#endif  // PGRING_FORMAT_ROCKSDB_BACKEND_KEYS_H_
