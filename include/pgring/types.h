// pgring/types.h — the small value types of the public API: the backend,
// PG ids, log versions, log entries and per-PG statistics.
#ifndef PGRING_TYPES_H_
#define PGRING_TYPES_H_

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace pgring {

// Which backend keeps the PG logs. Chosen at mkfs and recorded in the store.
enum class Backend : uint8_t {
  // Per-PG ring logs on a raw partition; RocksDB keeps only pointers.
  kRing = 1,
  // The PG log kept in RocksDB the way BlueStore keeps it (a key per entry).
  kRocksDb = 2,
};

// Identifies a placement group, as Ceph's spg_t does: pool, placement seed and
// (for erasure-coded pools) the shard. `shard == -1` means "no shard". Every
// pool and seed is valid; a shard is -1 or 0..127: creating a PG whose shard
// is below -1 returns kInvalidArgument (ToString could not tell it from the
// unsharded PG, and Parse refuses it).
struct PgId {
  int64_t pool = 0;
  uint32_t seed = 0;
  int8_t shard = -1;

  friend auto operator<=>(const PgId&, const PgId&) = default;
  friend bool operator==(const PgId&, const PgId&) = default;

  // "1.2a" or "1.2as0", the way Ceph prints PG ids.
  std::string ToString() const;
  // Parses what ToString() prints. Returns false on malformed text.
  static bool Parse(const std::string& text, PgId* out);

  template <typename H>
  friend H AbslHashValue(H h, const PgId& p) {
    return H::combine(std::move(h), p.pool, p.seed, p.shard);
  }
};

// A log version, as Ceph's eversion_t: (epoch, version), ordered
// lexicographically. Entries of a PG's log have strictly increasing versions.
struct Version {
  uint32_t epoch = 0;
  uint64_t version = 0;

  friend auto operator<=>(const Version&, const Version&) = default;
  friend bool operator==(const Version&, const Version&) = default;

  static constexpr Version Min() { return Version{0, 0}; }
  static constexpr Version Max() { return Version{UINT32_MAX, UINT64_MAX}; }

  // "12'345", as Ceph prints an eversion_t.
  std::string ToString() const;
  static bool Parse(const std::string& text, Version* out);
};

// One log entry or dup entry as returned by reads: its version and the opaque
// bytes the caller appended.
struct LogEntry {
  Version version;
  std::string payload;

  friend bool operator==(const LogEntry&, const LogEntry&) = default;
};

// Per-PG statistics (Store::GetPgStats).
struct PgStats {
  PgId pg;
  uint64_t entries = 0;         // live log entries
  uint64_t entry_bytes = 0;     // payload bytes of the live entries
  uint64_t dups = 0;            // live dup entries
  uint64_t dup_bytes = 0;       // payload bytes of the live dups
  bool has_info = false;
  uint64_t info_bytes = 0;
  Version first_version;        // oldest live entry (if entries > 0)
  Version last_version;         // newest live entry (if entries > 0)
  uint32_t chunks = 0;          // chunks the PG's ring owns
  uint64_t ring_bytes_used = 0; // bytes between the ring's head and tail
  // Bytes of the log before its tail not yet written to the PG's ring
  // (LogLayout::kStream: they are in the log stream and in memory).
  uint64_t unhomed_bytes = 0;
  // Of those, the ones in memory: the newest (StreamOptions::
  // resident_bytes); the others are read back from the stream.
  uint64_t unhomed_resident_bytes = 0;
  // The stream records those bytes lie in: the PG's list that
  // Limits::max_stream_records_per_pg bounds.
  uint64_t stream_records = 0;
  uint64_t bytes_written = 0;   // record bytes appended since open
  uint64_t payload_bytes_written = 0;  // caller payload bytes appended since open
  bool damaged = false;         // opened under RecoveryPolicy::kMarkDamaged
};

// Store-wide statistics (Store::GetStoreStats).
struct StoreStats {
  uint64_t pgs = 0;
  uint64_t total_chunks = 0;
  uint64_t free_chunks = 0;
  uint64_t chunk_size = 0;
  uint64_t live_entries = 0;
  uint64_t live_dups = 0;
  uint64_t transactions_committed = 0;   // since open: the caller's (Submit)
  // Synced RocksDB writes that committed them, and the store's own
  // transactions (the stream cleaner's restatements) with them or alone.
  uint64_t commit_groups = 0;
  // Writes of a PG's own keys (ring: pointer, chunk list; RocksDB backend:
  // info, state) left out of a commit group because a later transaction in
  // the same group wrote the key again.
  uint64_t superseded_key_writes = 0;
  uint64_t record_bytes_appended = 0;    // ring space consumed by records
  uint64_t payload_bytes_appended = 0;   // caller payload inside them
  uint64_t device_bytes_written = 0;     // bytes written to the partition
  uint64_t device_flushes = 0;
  uint64_t mapping_table_bytes = 0;      // memory held by the mapping tables
  // Write requests made to the partition, each completed one counted once
  // whatever its size (a short write resumed by the kernel included), since
  // the partition's device was opened, as device_bytes_written and
  // device_flushes are (a store opened on a Device also counts the Mkfs
  // label written through it). Per client write, a cost that a busy machine
  // cannot move, unlike IOPS. The RocksDB backend writes no partition after
  // mkfs: 0 for a store it opens by path.
  uint64_t device_writes = 0;
  // Of the store's partition writes since open, those that did not start
  // where the one issued before ended: each a seek on a disk.
  uint64_t device_seeks = 0;
  // The log stream (ring backend; zero without one): chunks it holds, its
  // bound (StreamOptions::max_chunks, 0 in kPerPgRings), bytes between its
  // head and tail, stream records appended since open and the writes that
  // carried them and their bytes; home writes (whole blocks to a PG's ring)
  // and their bytes, forced homes
  // (a partial block for a PG pinning the stream) and transactions that
  // found the stream full and wrote to the rings instead.
  uint64_t stream_chunks = 0;
  uint64_t stream_max_chunks = 0;
  uint64_t stream_bytes_used = 0;
  uint64_t stream_records = 0;
  uint64_t stream_writes = 0;
  uint64_t stream_bytes_written = 0;
  uint64_t home_writes = 0;
  uint64_t home_bytes_written = 0;
  uint64_t forced_homes = 0;
  uint64_t stream_full_fallbacks = 0;
  // Cleaning (StreamOptions::home_bytes 0): PGs whose live log was stated
  // again at the stream's tail so that its head could pass their older
  // records, and the bytes of those records. Each is a transaction of the
  // store's own, counted when staged and not in transactions_committed.
  uint64_t stream_restates = 0;
  uint64_t stream_restated_bytes = 0;
  // StreamCompression::kLz4: stream records written compressed, and the
  // bytes compressing them saved (their items' bytes less their bodies').
  uint64_t stream_compressed_records = 0;
  uint64_t stream_compression_saved_bytes = 0;
  // Unhomed bytes read back from the stream (StreamOptions::
  // resident_bytes): the reads and their bytes. A cold PG's forced home or
  // a read of its old entries makes them.
  uint64_t stream_reads = 0;
  uint64_t stream_bytes_read = 0;
  // Unhomed bytes kept in memory, every PG's (PgStats::unhomed_resident_bytes).
  uint64_t unhomed_resident_bytes = 0;
  // Memory held by the PGs' lists of where their unhomed bytes lie in the
  // stream: about 7 bytes per stream record holding a PG's bytes (about one
  // per entry appended, with one entry a transaction), beside the mapping
  // tables' mapping_table_bytes (about 5 bytes an item).
  uint64_t stream_index_bytes = 0;
};

}  // namespace pgring

#endif  // PGRING_TYPES_H_
