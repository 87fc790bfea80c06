#include "store/options_check.h"

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/status_macros.h"

namespace pgring {
namespace {

// No bound above but the field's type.
constexpr uint64_t kNoMax = UINT64_MAX;

// A ring may span at most 4 GiB: the mapping tables keep the low 32 bits of
// a record's position (log/mapping_table.h).
constexpr uint64_t kMaxRingSpan = uint64_t{1} << 32;

// A setting that must lie in [lo, hi], or be 0 where `zero` says what 0
// means.
struct Range {
  const char* name;
  uint64_t value;
  uint64_t lo, hi;
  const char* zero = nullptr;   // what 0 means, where it is allowed below lo
  const char* hi_is = nullptr;  // the field hi comes from, where it is one
};

absl::Status Check(const Range& r) {
  if (r.zero != nullptr && r.value == 0) return absl::OkStatus();
  if (r.value >= r.lo && r.value <= r.hi) return absl::OkStatus();
  const std::string zero = r.zero != nullptr ? absl::StrCat("0 (", r.zero, ") or ") : "";
  const std::string range = r.hi == kNoMax ? absl::StrCat("at least ", r.lo)
                                           : absl::StrFormat("in [%u, %u]", r.lo, r.hi);
  const std::string hi_is = r.hi_is != nullptr ? absl::StrCat(" (", r.hi_is, ")") : "";
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is %u; it must be %s%s%s", r.name, r.value, zero, range, hi_is));
}

// An enum setting: its values are 0, 1, ... in the order of `names`.
struct Choice {
  const char* name;
  unsigned value;
  std::initializer_list<const char*> names;
};

absl::Status Check(const Choice& c) {
  if (c.value < c.names.size()) return absl::OkStatus();
  std::string allowed;
  unsigned i = 0;
  for (const char* n : c.names) {
    const char* sep = i == 0 ? "" : i + 1 == c.names.size() ? " or " : ", ";
    absl::StrAppend(&allowed, sep, i, " (", n, ")");
    ++i;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is %u; it must be %s", c.name, c.value, allowed));
}

template <typename E>
unsigned U(E e) {
  return static_cast<unsigned>(e);
}

// The two RocksDB settings are for the RocksDB pgring opens itself; an
// embedder's RocksDB was opened with its own Env and options. Mkfs and Open
// alike.
absl::Status CheckMetadataSettings(bool embedder_db, bool env_given,
                                   const std::string& rocksdb_options) {
  if (!embedder_db) return absl::OkStatus();
  if (env_given) {
    return absl::InvalidArgumentError(
        "rocksdb_env is for the RocksDB pgring opens itself; the embedder's RocksDB does its "
        "I/O through the Env of its own options");
  }
  if (rocksdb_options != kBlueStoreRocksDbOptions) {
    return absl::InvalidArgumentError(
        "rocksdb_options are for the RocksDB pgring opens itself; the embedder's RocksDB has "
        "the options it was opened with");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckOptions(const Options& o, const OptionsContext& context) {
  const StreamOptions& so = o.stream;
  const Limits& l = o.limits;

  // The enums: a value out of range is a caller's cast gone wrong.
  for (const Choice& c : {
           Choice{"durability", U(o.durability), {"kSyncEach", "kGroupCommit", "kUnsynced"}},
           Choice{"tail_block_policy", U(o.tail_block_policy),
                  {"kRewriteTailBlock", "kNeverRewrite"}},
           Choice{"log_layout", U(o.log_layout), {"kPerPgRings", "kStream"}},
           Choice{"stream.compression", U(o.stream.compression), {"kNone", "kLz4"}},
           Choice{"recovery_policy", U(o.recovery_policy), {"kRefuse", "kMarkDamaged"}},
           Choice{"io_engine", U(o.io_engine), {"kIoUring", "kPsync"}},
           Choice{"verify_on_open", U(o.verify_on_open), {"kOff", "kShallow", "kDeep"}},
       }) {
    RETURN_IF_ERROR(Check(c));
  }

  // Each number's range. Whatever the backend and layout: a setting one of
  // them ignores is checked all the same, so that the same Options open
  // either.
  for (const Range& r : {
           Range{"stream.max_chunks", so.max_chunks, 2, 4096, "three quarters of the partition"},
           Range{"stream.home_bytes", so.home_bytes, kMinStreamBytes, kMaxStreamBytes,
                 "never home by count"},
           Range{"stream.resident_bytes", so.resident_bytes, kMinStreamBytes, kMaxStreamBytes},
           Range{"stream.force_home_percent", so.force_home_percent, 1, 100},
           Range{"stream.max_forced_homes", so.max_forced_homes, 1, 1024},
           Range{"stream.forced_home_bytes", so.forced_home_bytes, kMinStreamBytes,
                 kMaxStreamBytes},
           Range{"max_group_size", o.max_group_size, 1, kNoMax},
           Range{"io_queue_depth", o.io_queue_depth, 1, 4096},
           Range{"limits.max_entries_per_pg", l.max_entries_per_pg, 1, kNoMax},
           Range{"limits.max_dups_per_pg", l.max_dups_per_pg, 1, kNoMax},
           Range{"limits.max_chunks_per_pg", l.max_chunks_per_pg, 1, kNoMax},
           Range{"limits.max_total_entries", l.max_total_entries, 1, kNoMax},
           Range{"limits.max_payload_bytes", l.max_payload_bytes, 1, kNoMax},
           Range{"limits.max_pgs", l.max_pgs, 1, kNoMax},
           Range{"limits.max_transactions_in_flight", l.max_transactions_in_flight, 1,
                 UINT32_MAX},
           Range{"limits.max_stream_records_per_pg", l.max_stream_records_per_pg, 1,
                 UINT32_MAX},
           // After limits.max_chunks_per_pg, which bounds it.
           Range{"reserve_chunks_per_pg", o.reserve_chunks_per_pg, 0, l.max_chunks_per_pg,
                 nullptr, "limits.max_chunks_per_pg"},
       }) {
    RETURN_IF_ERROR(Check(r));
  }
  // The check at open refuses a damaged store; kMarkDamaged opens one and
  // marks its damaged PGs. Together they would say both.
  if (o.verify_on_open != VerifyOnOpen::kOff && o.recovery_policy == RecoveryPolicy::kMarkDamaged) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "verify_on_open is %s, which refuses a damaged store, and recovery_policy is "
        "kMarkDamaged, which opens one and marks its damaged PGs: choose one (verify_on_open "
        "kOff, or recovery_policy kRefuse)",
        o.verify_on_open == VerifyOnOpen::kDeep ? "kDeep" : "kShallow"));
  }
  if (o.unsynced_max_delay.count() < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unsynced_max_delay is %d ms; it must be at least 0 ms", o.unsynced_max_delay.count()));
  }

  // What depends on the backend.
  if (context.backend == Backend::kRing) {
    const uint64_t max_span = uint64_t{l.max_chunks_per_pg} * context.chunk_size;
    if (max_span > kMaxRingSpan) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "limits.max_chunks_per_pg (%u) x chunk size (%u) exceeds the 4 GiB a ring may span",
          l.max_chunks_per_pg, context.chunk_size));
    }
  } else if (!o.read_only) {
    // The RocksDB backend's commit is the synced RocksDB write alone: the
    // embedder's writes must be durable before the write that points at
    // them, so there is no earlier flush for them to share; and nothing of
    // its log is on the partition, so there is no partition flush for its
    // sync to stand in for. A read-only open commits nothing.
    if (o.gated_writes_share_flush) {
      return absl::InvalidArgumentError(
          "Options::gated_writes_share_flush needs the ring backend: the RocksDB backend has no "
          "partition flush before its commit to share with the embedder's writes");
    }
    if (o.metadata_sync_flushes_partition) {
      return absl::InvalidArgumentError(
          "Options::metadata_sync_flushes_partition needs the ring backend: the RocksDB "
          "backend writes no records to the partition, so it has no partition flush to leave "
          "out");
    }
  }

  // What depends on where the metadata lives.
  return CheckMetadataSettings(context.embedder_db, o.rocksdb_env != nullptr,
                               o.rocksdb_options);
}

absl::Status CheckMkfsOptions(const MkfsOptions& options, bool embedder_db) {
  return CheckMetadataSettings(embedder_db, options.rocksdb_env != nullptr,
                               options.rocksdb_options);
}

}  // namespace pgring
