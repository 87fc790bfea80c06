// pgring/options.h — settings for making (mkfs) and opening a store.
#ifndef PGRING_OPTIONS_H_
#define PGRING_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "pgring/log_sink.h"
#include "pgring/types.h"  // Backend

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace pgring {

// The RocksDB options of a RocksDB pgring opens itself: Ceph's default
// bluestore_rocksdb_options (Reef), then the option bluestore_rocksdb_cfs
// gives the column family that holds BlueStore's PG log ("P"), so pgring's
// keys, of either backend, live as BlueStore's PG log does. Why each:
// docs/ROCKSDB_BACKEND.md.
inline constexpr char kBlueStoreRocksDbOptions[] =
    "compression=kNoCompression,max_write_buffer_number=64,"
    "min_write_buffer_number_to_merge=6,compaction_style=kCompactionStyleLevel,"
    "write_buffer_size=16777216,max_background_jobs=4,"
    "level0_file_num_compaction_trigger=8,max_bytes_for_level_base=1073741824,"
    "max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,"
    "max_total_wal_size=1073741824,writable_file_max_buffer_size=0,"
    "min_write_buffer_number_to_merge=32";

// When a transaction's commit callback fires, and what a crash can take.
// Every mode keeps the store consistent after any crash: a transaction is
// either there in full or not at all. See docs/DESIGN.md, "Durability modes".
enum class DurabilityMode : uint8_t {
  // Each transaction gets its own partition flush and its own synced RocksDB
  // write. The callback fires when it is durable. A crash takes nothing that
  // was acknowledged. Slowest.
  kSyncEach = 0,
  // Group commit (default): concurrent transactions share one partition flush
  // and one synced RocksDB write. The callback fires when the transaction is
  // durable. A crash takes nothing that was acknowledged.
  kGroupCommit = 1,
  // The callback fires as soon as the transaction's ring writes (and its
  // gates) are done, and those of every transaction submitted before it
  // (callbacks keep submission order);
  // the commit itself (flush + synced RocksDB write) happens in the
  // background at most `unsynced_max_delay` later, or on Store::Sync().
  // A crash (process or power) takes the acknowledged transactions not yet
  // committed: at most `unsynced_max_delay` worth, and never part of one.
  kUnsynced = 2,
};

// How the block that holds a ring's tail is treated. See docs/DESIGN.md.
enum class TailBlockPolicy : uint8_t {
  // Records are packed back to back; the block holding the tail is written
  // again (old committed records + new ones). Safe on devices that write a
  // single logical block whole or not at all (what every SSD and HDD with
  // a power-loss-safe sector guarantees).
  kRewriteTailBlock = 0,
  // Never rewrite a block that holds committed data: each PG's record in a
  // transaction is padded to the end of its block. For devices that do not
  // guarantee an atomic logical-block write. Costs space (see the docs).
  kNeverRewrite = 1,
};

// Where a transaction's records go first (ring backend). See docs/DESIGN.md,
// "The log stream". Not recorded on disk: a store opens in either layout.
enum class LogLayout : uint8_t {
  // Each PG's records are written straight to its ring: one write per PG a
  // transaction touches, the PG's tail block rewritten each time.
  kPerPgRings = 0,
  // The records of every PG a transaction touches go to one shared log
  // stream, written sequentially (one write for all the transactions staged
  // while the previous stream write was in flight); each PG's ring gets its
  // records later in whole blocks, written in the same transactions' I/O.
  // Opening a store with a stream in kPerPgRings homes what is left in it.
  kStream = 1,
};

// The log stream's settings (LogLayout::kStream).
struct StreamOptions {
  // The stream's size bound, in chunks of the partition; 0 is a quarter of
  // the partition's chunks, within [2, 4096]. The stream takes chunks as it
  // needs them and gives back those its head has passed; a transaction
  // whose records do not fit writes them to the PGs' rings instead, so a
  // full stream slows commits and never fails one. Once it holds more
  // chunks than the partition has free, homing drains it
  // (force_home_percent), so the PG rings can have them. 0, or 2..4096.
  uint32_t max_chunks = 16;
  // home_bytes, resident_bytes and forced_home_bytes are in bytes, so that
  // a partition of 512-byte logical blocks makes as few and as large home
  // writes as one of 4096-byte blocks. The store rounds each down to whole
  // blocks of the partition, and never below one block (a home_bytes of 0
  // stays 0). Each is in [512, 268435456] (256 MiB: 65536 blocks of 4096),
  // or 0 for home_bytes.
  //
  // A PG's records go to its ring once whole blocks of them holding this
  // many bytes are not there yet: more bytes, fewer and larger ring writes,
  // and records trimmed before they are homed are never written twice. 0:
  // never by count; a PG's records go home only when the stream needs the
  // room (force_home_percent, or a partition whose free chunks are fewer
  // than the stream's). With max_chunks 0 that writes most records once while
  // the stream holds about twice the PG logs' live span (dups included),
  // and homes them by force, reading them back, once it does not
  // (docs/BENCHMARKS.md, "A stream homed only for room").
  uint64_t home_bytes = 8192;
  // Of a PG's records not homed yet, the newest this many bytes (whole
  // blocks) are kept in memory; older ones (their stream write done) are
  // read back from the stream when they are needed: a read of old entries,
  // a home that takes them. So memory is bounded per PG, whatever
  // home_bytes and the stream's size are. Below home_bytes + one block,
  // whole-block homes read from the stream too.
  uint64_t resident_bytes = 65536;
  // Once the stream is this full (percent of max_chunks x chunk size), or
  // holds more chunks than the partition has free, each transaction also
  // homes up to max_forced_homes of the PGs that pin the stream's head (a
  // PG that stopped writing), with a partial block. 1..100.
  uint32_t force_home_percent = 50;
  uint32_t max_forced_homes = 4;  // 1..1024
  // The most bytes (whole blocks) one forced home writes: a PG with more
  // not homed goes home over several of them, its oldest blocks first
  // (whole blocks; its partial block once the rest fits, and under
  // kNeverRewrite the pad record's block that may follow it). So a
  // transaction's forced homes write, and read back from the stream, at
  // most max_forced_homes x this many bytes (+1 block each for a pad),
  // however long the PG's records stayed in the stream; it is also the most
  // a transaction drains the stream by under partition pressure.
  uint64_t forced_home_bytes = 32768;
  // A transaction that finds no other transaction in flight (staged and
  // not yet committed) writes to its PGs' rings instead of the stream: its
  // stream record would go out alone, one write like a ring write, and the
  // home write after it. So a queue depth of 1 costs what per-PG rings
  // cost, and the stream batches as soon as transactions overlap
  // (docs/BENCHMARKS.md, "The log stream").
  bool bypass_when_idle = true;
};

// What open does when a PG's committed log is damaged.
enum class RecoveryPolicy : uint8_t {
  // Refuse to open: the error (kDataLoss) names the PG, the offset and the
  // damage. Nothing is changed on disk.
  kRefuse = 0,
  // Open; damaged PGs are marked (PgStats::damaged) and every operation on
  // them returns kDataLoss; the other PGs are fully usable. The damaged PG
  // can only be removed.
  kMarkDamaged = 1,
};

// How the real block device does I/O.
enum class IoEngine : uint8_t {
  kIoUring = 0,  // liburing; the default
  kPsync = 1,    // pread/pwrite from a small thread pool
};

// Hard bounds, checked when a transaction is submitted. Reaching a count
// bound (entries, dups, chunks, PGs) returns kResourceExhausted; the store
// keeps working once the caller trims (or removes a PG). A payload larger
// than max_payload_bytes is a bad argument: kInvalidArgument. Either way the
// transaction changes nothing, and the message names the limit
// ("limits.max_pgs", ...). The RocksDB backend has no chunks and ignores
// max_chunks_per_pg; both backends apply the others alike.
struct Limits {
  uint64_t max_entries_per_pg = 1 << 20;
  uint64_t max_dups_per_pg = 1 << 20;
  // Chunks one PG's ring may own (ring backend); with the chunk size, at
  // most 4 GiB, or open returns kInvalidArgument. An append that needs one
  // more while no chunk of the ring can be reused is refused.
  uint32_t max_chunks_per_pg = 4096;
  uint64_t max_total_entries = 1ull << 28;  // entries + dups, whole store
  uint32_t max_payload_bytes = 1 << 20;     // one entry, dup or info
  uint64_t max_pgs = 1 << 16;
};

// Settings fixed when a store is made.
struct MkfsOptions {
  Backend backend = Backend::kRing;
  // Chunk size; a multiple of the device's logical block size and a power
  // of two between 64 KiB and 256 MiB.
  uint32_t chunk_size = 1 << 20;
  // Bytes of the partition to use; 0 = the whole device or file.
  uint64_t size = 0;
  // Replace an existing pgring label instead of refusing.
  bool force = false;
  // As Options::rocksdb_options, for the RocksDB mkfs creates.
  std::string rocksdb_options = kBlueStoreRocksDbOptions;
  // The Env (and through it the FileSystem) of pgring's own RocksDB, as for
  // Options::rocksdb_env.
  std::shared_ptr<rocksdb::Env> rocksdb_env;
};

// Settings for an open store. None of them are recorded on disk.
struct Options {
  DurabilityMode durability = DurabilityMode::kGroupCommit;
  TailBlockPolicy tail_block_policy = TailBlockPolicy::kRewriteTailBlock;
  LogLayout log_layout = LogLayout::kStream;
  StreamOptions stream;
  RecoveryPolicy recovery_policy = RecoveryPolicy::kRefuse;
  IoEngine io_engine = IoEngine::kIoUring;
  // Chunks a PG keeps after trimming instead of returning them.
  uint32_t reserve_chunks_per_pg = 2;
  // kUnsynced: how long an acknowledged transaction may wait for its commit.
  std::chrono::milliseconds unsynced_max_delay{50};
  // Maximum transactions in one commit group.
  uint32_t max_group_size = 1024;
  // io_uring queue depth / psync threads.
  uint32_t io_queue_depth = 128;
  // One cache flush for the embedder's writes and the log records (ring
  // backend only). Set it when the writes a transaction waits for
  // (CommitGate) go to the same disk as the log partition, behind the same
  // volatile write cache, and the embedder opens each gate as soon as its
  // write has completed instead of after flushing it. The store then starts
  // the partition flush only once a transaction's gates are open, so that
  // one flush makes the embedder's writes and the records durable together
  // before the pointers are written: one cache flush per commit group
  // instead of two (BlueStore's kv_sync_thread flushes its block device once
  // per batch the same way). Only true when a flush of the partition really
  // covers the embedder's writes: two partitions of one drive, or two files
  // of one file system whose blocks are all allocated, written and not
  // reflinked, written with O_DIRECT that reaches the disk (so the writes
  // change no file-system metadata). Otherwise a crash can keep a commit
  // whose data is gone. The RocksDB backend refuses it.
  bool gated_writes_share_flush = false;
  // A synced RocksDB write flushes the disk cache the partition is behind
  // (ring backend, durable modes). Set it when RocksDB's WAL is on the same
  // disk as the partition, the partition's writes need no file-system
  // metadata (a raw partition, or a file whose blocks are all allocated,
  // written and not reflinked), and a synced WAL write ends with a cache
  // flush of that disk (fdatasync on ext4 or XFS with write barriers, their
  // default; a disk without a volatile cache needs none). The store then
  // counts each commit group's synced RocksDB write as a flush of the
  // partition too: the records of the transactions whose writes had all
  // completed when that write started are durable once it returns, and the
  // next group commits them without a partition flush of its own. One cache
  // flush per commit group on the critical path instead of two (the
  // partition flush, then the WAL's). With gated_writes_share_flush it covers
  // the gated writes the same way. Otherwise a crash can keep pointers whose
  // records are gone. The RocksDB backend refuses it.
  bool metadata_sync_flushes_partition = false;
  Limits limits;
  // Open without writing anything (the debug tool's read commands).
  bool read_only = false;
  std::shared_ptr<LogSink> log_sink;  // null: warnings and errors to stderr
  // The Env (and through it the FileSystem) pgring's own RocksDB
  // (MetadataLocation::OwnDb) does its file I/O through: one that counts
  // what RocksDB writes (rocksdb::NewCompositeEnv over a FileSystemWrapper),
  // or rocksdb::NewMemEnv for metadata in memory (then give Mkfs and every
  // Open the same Env: the files live in it). The store holds it until it is
  // destroyed. Null: rocksdb::Env::Default(). An embedder's RocksDB has the
  // Env of its own options; Mkfs and Open refuse this one with it.
  std::shared_ptr<rocksdb::Env> rocksdb_env;
  // The RocksDB options of pgring's own RocksDB (MetadataLocation::OwnDb):
  // RocksDB's "name=value" pairs, separated by ',' (as Ceph writes
  // bluestore_rocksdb_options) or ';', applied over RocksDB's defaults; a
  // later pair wins. Not recorded: each open applies its own. Options
  // RocksDB does not know are refused (kInvalidArgument, naming them). An
  // embedder's RocksDB has the options it was opened with; Mkfs and Open
  // refuse anything but the default with it.
  //   options.rocksdb_options = std::string(pgring::kBlueStoreRocksDbOptions) +
  //                             ",compression=kLZ4Compression";   // as Squid
  std::string rocksdb_options = kBlueStoreRocksDbOptions;
};

}  // namespace pgring

#endif  // PGRING_OPTIONS_H_
