// pgring/options.h — settings for making (mkfs) and opening a store.
//
// Each field says its default, its range and when an embedder should change
// it; most embedders should leave most of them alone. Store::Open checks
// every Options field before it writes anything, and Mkfs its MkfsOptions:
// a value outside its range is refused with kInvalidArgument and a message
// that names the field, e.g. "stream.home_bytes is 3; it must be 0 (never
// home by count) or in [512, 268435456]". What each setting does is in
// docs/DESIGN.md; the measurements behind the defaults are in
// docs/decisions/ (listed in docs/BENCHMARKS.md, "Decisions").
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
  // while the previous stream write was in flight). Each record stays in the
  // stream until its PG trims it (StreamOptions::home_bytes 0, the default);
  // it goes to its PG's ring, in whole blocks written in the same
  // transactions' I/O, only when the stream needs the room or a home_bytes
  // asks. Opening a store with a stream in kPerPgRings homes what is left
  // in it.
  kStream = 1,
};

// How the log stream stores a transaction's record bytes
// (StreamOptions::compression).
enum class StreamCompression : uint8_t {
  // As they are.
  kNone = 0,
  // Each transaction's stream record compressed with lz4, where that makes
  // it smaller (docs/FORMAT.md, "Compressed stream records"). A store that
  // opens with it becomes format version 5, which older pgring refuses.
  kLz4 = 1,
};

// The log stream's settings (LogLayout::kStream; docs/DESIGN.md §10, "The
// log stream"). Only the ring backend in the stream layout uses them, but
// their ranges are checked whatever the backend and layout.
struct StreamOptions {
  // The most chunks of the partition the stream may hold. It takes chunks
  // as its tail needs them and gives back those its head has passed. A
  // transaction whose records do not fit writes them to its PGs' rings
  // instead, so a full stream slows commits and never fails one; a stream
  // that holds more chunks than the partition has free is drained by forced
  // homes, so that the rings can have them.
  //
  // Default: 0, three quarters of the partition's chunks (within
  // [2, 4096]); with home_bytes 0 the cleaner keeps the stream under
  // about half of that (force_home_percent), so the rings keep the rest.
  // Range: 0 or [2, 4096]. A stream much smaller than the PG logs' live
  // span (dups included) with home_bytes 0 cleans and force-homes all the
  // time; set a small bound (16) only together with a home_bytes that homes
  // every record.
  uint32_t max_chunks = 0;

  // home_bytes, resident_bytes and forced_home_bytes are bytes, so that
  // they mean the same on partitions of 512- and 4096-byte logical blocks.
  // The store rounds each down to whole blocks of the partition, and never
  // below one block (a home_bytes of 0 stays 0).

  // A PG's records are written to its ring ("homed") once whole blocks of
  // them holding this many bytes are not there yet: larger means fewer and
  // larger ring writes, and more records trimmed before they are homed. 0:
  // never by count: each record is written once, to the stream, and stays
  // there until it is trimmed; a PG's records go home only when the stream
  // needs the room (force_home_percent, or a partition with fewer free
  // chunks than the stream holds).
  //
  // With 0 the store runs a cleaner thread (pgring-clean): once the stream
  // is three quarters of the way to force_home_percent, it states the live
  // log of the PG pinning the stream's head again at the tail (one record),
  // where that writes under half of what homing the PG would, so the head
  // moves without homing (docs/DESIGN.md, "Cleaning the stream").
  //
  // Default: 0. Range: 0 or [512, 268435456] (256 MiB). A value homes every
  // record a second time, to its ring: for a partition too small to hold
  // the PG logs' live span in the stream (with max_chunks 16, say).
  uint64_t home_bytes = 0;

  // Of a PG's records not homed yet, the newest this many bytes (whole
  // blocks) stay in memory; older ones are read back from the stream when
  // they are needed (a read of old entries, a home that takes them). So
  // memory is bounded by PGs x resident_bytes, whatever home_bytes and
  // max_chunks are.
  //
  // Default: 65536. Range: [512, 268435456]. Lower it to save memory with
  // many PGs. Below home_bytes + one block, whole-block homes read from the
  // stream too.
  uint64_t resident_bytes = 65536;

  // Once the stream is this full (percent of max_chunks x chunk size), or
  // holds more chunks than the partition has free, each transaction also
  // homes up to max_forced_homes of the PGs that pin the stream's head (PGs
  // that stopped writing), with a partial block.
  //
  // Default: 50. Range: [1, 100]. Most embedders should leave it alone.
  uint32_t force_home_percent = 50;

  // The most PGs one transaction force-homes.
  //
  // Default: 4. Range: [1, 1024]. Most embedders should leave it alone.
  uint32_t max_forced_homes = 4;

  // The most bytes (whole blocks) one forced home writes: a PG with more
  // not homed goes home over several transactions, its oldest blocks first.
  // So a transaction's forced homes write, and read back from the stream,
  // at most max_forced_homes x forced_home_bytes (+1 block each for a pad
  // under kNeverRewrite), however long a PG's records stayed in the stream;
  // that is also the most a transaction drains the stream by when the
  // partition needs its chunks.
  //
  // Default: 32768. Range: [512, 268435456]. Lower it to bound the extra
  // work of a commit more tightly; raise it to drain a stream faster.
  uint64_t forced_home_bytes = 32768;

  // A transaction that finds no other in flight (staged and not yet
  // committed) writes to its PGs' rings instead of the stream: alone, its
  // stream record would cost a write like a ring write, plus the home write
  // after it. So a queue depth of 1 costs what per-PG rings cost, and the
  // stream batches as soon as transactions overlap.
  //
  // Default: true. Most embedders should leave it alone (tests clear it to
  // send every transaction through the stream).
  bool bypass_when_idle = true;

  // Whether the stream's records are compressed: with Ceph's encodings
  // 0.7x the log bytes written and held in the stream, for the lz4 CPU on
  // the submitting thread (less than the stream's own work saves), and for
  // reading a whole record to read a PG's bytes in it
  // (docs/decisions/2026-11-29-compressing-stream-records.md). Records
  // written either way are read either way; kNone for a store an older
  // pgring (format version 4) must still open.
  //
  // Default: kLz4.
  StreamCompression compression = StreamCompression::kLz4;
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

// Whether Store::Open checks the store before it opens it, as BlueStore's
// bluestore_fsck_on_mount (and bluestore_fsck_on_mount_deep) do: the checks
// pgring::Verify runs on a closed store (pgring/verify.h; every check and
// problem kind: docs/TOOL.md, "fsck"), on the partition and the RocksDB Open
// has just opened. See Options::verify_on_open.
enum class VerifyOnOpen : uint8_t {
  // No check beyond what open reads anyway (default).
  kOff = 0,
  // The metadata: the label, pgring.meta and their binding, the partition's
  // size, every RocksDB key pgring keeps (pointers and chunk lists, or the
  // RocksDB backend's log keys), chunk ownership. Reads no record.
  kShallow = 1,
  // Also every committed record of every PG and of the log stream (length,
  // CRC, PG stamp, lap, sequence, item versions): every live byte of the
  // partition is read once more before recovery reads it. The RocksDB
  // backend has no records: there it checks what kShallow checks.
  kDeep = 2,
};

// How the real block device does I/O.
enum class IoEngine : uint8_t {
  kIoUring = 0,  // liburing; the default (psync when io_uring is unavailable)
  kPsync = 1,    // pread/pwrite from a small thread pool
};

// Hard bounds, checked when a transaction is submitted. Reaching a count
// bound (entries, dups, chunks, PGs) returns kResourceExhausted; the store
// keeps working once the caller trims (or removes a PG). A payload larger
// than max_payload_bytes is a bad argument: kInvalidArgument. Either way the
// transaction changes nothing, and the message names the limit
// ("limits.max_pgs", ...). The RocksDB backend has no chunks and ignores
// max_chunks_per_pg; both backends apply the others alike.
//
// Every bound is at least 1. Set each above the most the embedder ever
// keeps (Ceph: osd_max_pg_log_entries, osd_pg_log_dups_tracked, its PG
// count), so that reaching one means a runaway log, not load.
struct Limits {
  // Entries in one PG's log. Default: 2^20. Range: [1, 2^64 - 1].
  uint64_t max_entries_per_pg = 1 << 20;
  // Dups in one PG's log. Default: 2^20. Range: [1, 2^64 - 1].
  uint64_t max_dups_per_pg = 1 << 20;
  // Chunks one PG's ring may own (ring backend). An append that needs one
  // more while no chunk of the ring can be reused is refused.
  // Default: 4096. Range: [1, 2^32 - 1]; on the ring backend, times the
  // chunk size, at most 4 GiB (the span of a ring's positions), so a store
  // made with chunks larger than 1 MiB needs a lower value.
  uint32_t max_chunks_per_pg = 4096;
  // Entries + dups in the whole store. Default: 2^28. Range: [1, 2^64 - 1].
  uint64_t max_total_entries = 1ull << 28;
  // Bytes of one entry, dup or info. Default: 2^20. Range: [1, 2^32 - 1].
  // (The ring backend also refuses a transaction that writes more than
  // 16,777,215 body bytes to one PG: docs/FORMAT.md.)
  uint32_t max_payload_bytes = 1 << 20;
  // PGs in the store. Default: 2^16. Range: [1, 2^64 - 1].
  uint64_t max_pgs = 1 << 16;
  // Transactions submitted whose callback has not fired yet. It bounds
  // every queue of transactions the store keeps (the commit queue, the log
  // stream's and each PG's writes waiting to be issued). Submit refuses one
  // more with kResourceExhausted. Default: 2^16. Range: [1, 2^32 - 1].
  // Lower it to bound the store's memory under an embedder that submits
  // without waiting.
  uint64_t max_transactions_in_flight = 1 << 16;
  // Stream records one PG's records lie in while they are not in its ring
  // (the log stream layout: StoreStats::stream_index_bytes counts the list,
  // about 7 bytes a record). A PG's records stay in the stream until it
  // trims them, so the list grows with the records between its oldest live
  // item and its newest, infos included. A transaction that would add one
  // more is refused with kResourceExhausted; trimming the log shortens it.
  // Default: 2^21 (about 14 MiB of list a PG). Range: [1, 2^32 - 1].
  uint64_t max_stream_records_per_pg = 1 << 21;
};

// Settings fixed when a store is made. Mkfs checks the geometry against the
// device (the chunk size, the size) and refuses the RocksDB fields with an
// embedder's RocksDB, as Open does.
struct MkfsOptions {
  // Default: kRing. kRocksDb keeps the log in RocksDB the way BlueStore does
  // (docs/ROCKSDB_BACKEND.md): for measuring against, not for production.
  Backend backend = Backend::kRing;
  // The partition is carved into chunks of this size; a PG's ring is a list
  // of them. Default: 1 MiB. Range: a power of two in [64 KiB, 256 MiB] and
  // a multiple of the device's logical block size; the partition must hold
  // at least 4 chunks (ring backend) and at most 2^32. Lower it when many
  // PGs share a small partition (each PG's ring holds whole chunks); raise
  // it for a partition of more than 2^32 chunks.
  uint32_t chunk_size = 1 << 20;
  // Bytes of the partition to use. Default: 0, the whole device or file.
  // Range: 0, or a multiple of the logical block size up to the device's.
  uint64_t size = 0;
  // Replace an existing pgring label instead of refusing. Default: false.
  bool force = false;
  // As Options::rocksdb_options, for the RocksDB mkfs creates.
  std::string rocksdb_options = kBlueStoreRocksDbOptions;
  // The Env (and through it the FileSystem) of pgring's own RocksDB, as for
  // Options::rocksdb_env.
  std::shared_ptr<rocksdb::Env> rocksdb_env;
};

// Settings for an open store. None of them are recorded on disk: each open
// may choose its own.
struct Options {
  // When a transaction's callback fires, and what a crash can take (see
  // DurabilityMode). Default: kGroupCommit. Set kUnsynced when losing the
  // newest acknowledged transactions (at most unsynced_max_delay of them)
  // on a crash is acceptable; kSyncEach only to measure what group commit
  // saves.
  DurabilityMode durability = DurabilityMode::kGroupCommit;
  // Default: kRewriteTailBlock. Set kNeverRewrite for a device that does
  // not write a logical block whole or not at all (it costs space).
  TailBlockPolicy tail_block_policy = TailBlockPolicy::kRewriteTailBlock;
  // Default: kStream. kPerPgRings is there to compare against: with
  // stream.bypass_when_idle, the stream already writes as per-PG rings do
  // at queue depth 1.
  LogLayout log_layout = LogLayout::kStream;
  StreamOptions stream;
  // Default: kRefuse. Set kMarkDamaged when the embedder would rather serve
  // the healthy PGs and rebuild the damaged ones elsewhere (as an OSD
  // recovers a PG from its peers).
  RecoveryPolicy recovery_policy = RecoveryPolicy::kRefuse;
  // Check the store before opening it (see VerifyOnOpen): when the check
  // finds an error (a problem of severity kError; notes, such as an
  // interrupted expand, do not count), Open fails with kDataLoss whose
  // message names the first three as pgring::Verify reports them (the
  // PG, chunk, offset and lpos, the kind and what is wrong, e.g. "PG 1.2a:
  // chunk 7, offset 8192 (lpos 8192): record-crc: CRC mismatch ...") and how
  // many there are, and nothing is written: pgring::Verify or pgring-tool
  // fsck then lists them all, and pgring-tool repair fixes those it can.
  //
  // Without it, open already refuses (kRefuse) what recovery finds wrong:
  // the label, pgring.meta, every PG's keys, chunk ranges and ownership, and
  // every committed record it replays, stopping at the first problem. The
  // check adds a second, independent reader (the checker's), problems open
  // accepts (chunks a PG's list holds past its tail: "chunk-beyond-tail"),
  // and counts every problem before failing. What it costs, measured with
  // bench/restart_bench --verify-on-open:
  // docs/decisions/2026-11-28-fsck-at-open.md.
  //
  // Default: kOff. Range: kOff, kShallow, kDeep; with recovery_policy
  // kMarkDamaged only kOff (a check that refuses a damaged store cannot be
  // combined with opening one and marking its damaged PGs). Set kShallow
  // where the embedder runs BlueStore with bluestore_fsck_on_mount (it adds
  // little to an open: it reads the keys open reads anyway); kDeep where it
  // sets bluestore_fsck_on_mount_deep as well, or after a crash or a move of
  // the partition, accepting an open that reads the log twice, the check's
  // reading one PG at a time.
  VerifyOnOpen verify_on_open = VerifyOnOpen::kOff;
  // Default: kIoUring, which falls back to kPsync where io_uring is
  // unavailable. Set kPsync to compare, or to keep io_uring out. Only for a
  // device the store opens from a path: a Device the caller opened keeps
  // its own.
  IoEngine io_engine = IoEngine::kIoUring;
  // Chunks a PG's ring keeps after trimming instead of giving them back to
  // the partition: a PG whose log shrinks and grows again reuses them.
  // Default: 2. Range: [0, limits.max_chunks_per_pg]. Lower it (0 or 1)
  // when many PGs share a small partition. The RocksDB backend ignores it.
  uint32_t reserve_chunks_per_pg = 2;
  // kUnsynced only: how long an acknowledged transaction may wait for its
  // commit, and so what a crash can take. Default: 50 ms. Range: 0 or more
  // (0: a group commits as soon as it is ready). Set it to the loss the
  // embedder can accept.
  std::chrono::milliseconds unsynced_max_delay{50};
  // The most transactions in one commit group (kSyncEach: always 1). A
  // group takes every transaction ready when the committer gets to it, so
  // this matters only when more are ready at once; under kUnsynced a group
  // also commits once this many are waiting. Default: 1024. Range:
  // [1, 2^32 - 1]. Most embedders should leave it alone.
  uint32_t max_group_size = 1024;
  // io_uring: writes in flight at once; psync: writes queued at once, served
  // by min(io_queue_depth, 16) threads. Like io_engine, only for a device
  // the store opens from a path. Default: 128. Range: [1, 4096]. Most
  // embedders should leave it alone.
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
  // change no file-system metadata); pgring/flush_domain.h checks it.
  // Otherwise a crash can keep a commit whose data is gone.
  // Default: false. The RocksDB backend refuses true (unless read_only).
  bool gated_writes_share_flush = false;
  // A synced RocksDB write flushes the disk cache the partition is behind
  // (ring backend, durable modes). Set it when RocksDB's WAL is on the same
  // disk as the partition, the partition's writes need no file-system
  // metadata (a raw partition, or a file whose blocks are all allocated,
  // written and not reflinked), and a synced WAL write ends with a cache
  // flush of that disk (fdatasync on ext4 or XFS with write barriers, their
  // default; a disk without a volatile cache needs none);
  // pgring/flush_domain.h checks it. The store then counts each commit
  // group's synced RocksDB write as a flush of the partition too: the
  // records of the transactions whose writes had all completed when that
  // write started are durable once it returns, and the next group commits
  // them without a partition flush of its own. One cache flush per commit
  // group on the critical path instead of two (the partition flush, then
  // the WAL's).
  // With gated_writes_share_flush it covers the gated writes the same way.
  // Otherwise a crash can keep pointers whose records are gone.
  // Default: false. The RocksDB backend refuses true (unless read_only).
  bool metadata_sync_flushes_partition = false;
  Limits limits;
  // Open without writing anything (the debug tool's read commands).
  // Default: false.
  bool read_only = false;
  // Where warnings and errors go. Default: null, stderr.
  std::shared_ptr<LogSink> log_sink;
  // The Env (and through it the FileSystem) pgring's own RocksDB
  // (MetadataLocation::OwnDb) does its file I/O through: one that counts
  // what RocksDB writes (rocksdb::NewCompositeEnv over a FileSystemWrapper),
  // or rocksdb::NewMemEnv for metadata in memory (then give Mkfs and every
  // Open the same Env: the files live in it). The store holds it until it is
  // destroyed. Default: null, rocksdb::Env::Default(). An embedder's
  // RocksDB has the Env of its own options: Mkfs and Open refuse this one
  // with it.
  std::shared_ptr<rocksdb::Env> rocksdb_env;
  // The RocksDB options of pgring's own RocksDB (MetadataLocation::OwnDb):
  // RocksDB's "name=value" pairs, separated by ',' (as Ceph writes
  // bluestore_rocksdb_options) or ';', applied over RocksDB's defaults; a
  // later pair wins. Each open applies its own. Default:
  // kBlueStoreRocksDbOptions. Options RocksDB does not know are refused
  // (kInvalidArgument, naming them). An embedder's RocksDB has the options
  // it was opened with: Mkfs and Open refuse anything but the default with
  // it. Change it as an OSD changes bluestore_rocksdb_options:
  //   options.rocksdb_options = std::string(pgring::kBlueStoreRocksDbOptions) +
  //                             ",compression=kLZ4Compression";   // as Squid
  std::string rocksdb_options = kBlueStoreRocksDbOptions;
};

}  // namespace pgring

#endif  // PGRING_OPTIONS_H_
