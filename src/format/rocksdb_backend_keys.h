// rocksdb_backend_keys.h — the keys and values of the RocksDB backend
// (Backend::kRocksDb), which keeps the PG log the way BlueStore keeps it in
// its pgmeta omap, and what each key under a PG's prefix is. Keys, values and
// their byte layouts: docs/FORMAT.md, "RocksDB backend keys" (and
// docs/ROCKSDB_BACKEND.md); held to byte for byte by the format tests.
#ifndef PGRING_FORMAT_ROCKSDB_BACKEND_KEYS_H_
#define PGRING_FORMAT_ROCKSDB_BACKEND_KEYS_H_

#include <cstddef>
#include <cstdint>
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

// Which of a store's keys `key` is, by its prefix alone (the rest is not
// parsed): fsck and the tool tell a key of the other backend from one pgring
// never writes.
enum class StoreKeyKind : uint8_t {
  kMeta,       // "pgring.meta"
  kPgPointer,  // "pgring.ptr." ...    (ring backend)
  kPgChunks,   // "pgring.chunks." ... (ring backend)
  kPgLog,      // "pgring.log." ...    (RocksDB backend)
  kStreamPointer,  // "pgring.stream.ptr"    (ring backend, stream mode)
  kStreamChunks,   // "pgring.stream.chunks" (ring backend, stream mode)
  kUnknown,
};
StoreKeyKind ClassifyStoreKey(std::string_view key);

// Splits a key of this backend into its PG and the name after the PG's
// prefix. False when `key` is not "pgring.log." + a 13-byte pgkey + "." +
// name.
bool SplitPgLogKey(std::string_view key, PgId* pg, std::string_view* name);

// What a name under a PG's prefix holds. Entry names begin with a digit and
// dup names with "dup_"; a name that begins so but does not parse is
// malformed rather than unknown.
enum class PgLogKeyKind : uint8_t {
  kEntry,           // LogKeyName(version)
  kDup,             // "dup_" + LogKeyName(version)
  kInfo,            // "_info"
  kState,           // "_state"
  kMalformedEntry,  // a digit first, but not a LogKeyName
  kMalformedDup,    // "dup_" first, but not followed by a LogKeyName
  kUnknown,         // anything else
};
struct PgLogKeyClass {
  PgLogKeyKind kind = PgLogKeyKind::kUnknown;
  Version version;  // kEntry and kDup
};
PgLogKeyClass ClassifyPgLogKeyName(std::string_view name);

// The value of "_state" (PgStateValue in docs/FORMAT.md, "RocksDB backend keys").
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
