// options_check.h — every rule on the settings an embedder gives Store::Open
// (Options, with its StreamOptions and Limits) and Mkfs (MkfsOptions' RocksDB
// fields), in one place, as pgring/options.h states them. Open and Mkfs call
// these once, before they write anything; nothing else refuses a setting.
//
// MkfsOptions' geometry (backend, chunk_size, size) is the format's: it is
// checked by MakeLabel (format/label.h) against the device, by the same
// rules that judge a label read back.
#ifndef PGRING_STORE_OPTIONS_CHECK_H_
#define PGRING_STORE_OPTIONS_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "pgring/options.h"
#include "pgring/types.h"

namespace pgring {

// StreamOptions' byte sizes: from the smallest logical block pgring supports
// to 65536 blocks of 4096 bytes; the store rounds them to whole blocks.
inline constexpr uint64_t kMinStreamBytes = 512;
inline constexpr uint64_t kMaxStreamBytes = uint64_t{65536} * 4096;

// What the rules need to know beyond the options: the store's label, and
// where its metadata lives.
struct OptionsContext {
  Backend backend = Backend::kRing;  // the label's
  uint32_t chunk_size = 1 << 20;     // the label's
  // The metadata is in the embedder's RocksDB (MetadataLocation::SharedDb),
  // not one pgring opens itself.
  bool embedder_db = false;
};

// OK, or kInvalidArgument naming the first field that breaks its rule and
// the rule ("stream.home_bytes is 3; it must be 0 (never home by count) or in
// [512, 268435456]").
[[nodiscard]] absl::Status CheckOptions(const Options& options, const OptionsContext& context);

// MkfsOptions' rules that are not the format's: rocksdb_env and
// rocksdb_options with an embedder's RocksDB.
[[nodiscard]] absl::Status CheckMkfsOptions(const MkfsOptions& options, bool embedder_db);

}  // namespace pgring

#endif  // PGRING_STORE_OPTIONS_CHECK_H_
