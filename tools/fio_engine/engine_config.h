// engine_config.h — the settings of the pgring fio engine, as plain C++
// values. fio_pgring.cc fills one from fio's option parser (the pgring_* and
// osd_* job options); everything else in tools/fio_engine/ only sees this.
#ifndef PGRING_TOOLS_FIO_ENGINE_ENGINE_CONFIG_H_
#define PGRING_TOOLS_FIO_ENGINE_ENGINE_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pgring/options.h"

namespace pgring::fio {

struct EngineConfig {
  // --- the store -----------------------------------------------------------
  Backend backend = Backend::kRing;      // pgring_backend (used at mkfs)
  std::string log_dev;                   // pgring_log_dev: the log partition
  std::string db_path;                   // pgring_db; empty: "<log_dev>.db"
  // pgring_preallocate: before the store opens, create the log partition
  // file if missing, extend it to log_size and write zeros into its holes
  // (fio_pgring.cc does the same to the data files); see preallocate.h.
  bool preallocate = false;
  uint64_t log_size = 0;                 // pgring_log_size; 0: keep its size
  bool mkfs = false;                     // pgring_mkfs: new RocksDB + mkfs (force) first
  uint32_t chunk_size = 1 << 20;         // pgring_chunk_size (mkfs only)
  DurabilityMode durability = DurabilityMode::kGroupCommit;           // pgring_durability
  TailBlockPolicy tail_policy = TailBlockPolicy::kRewriteTailBlock;   // pgring_tail_policy
  LogLayout layout = LogLayout::kStream;      // pgring_layout
  // The library's defaults (fio_pgring.cc's option defaults say the same,
  // checked at compile time there).
  uint32_t stream_chunks = StreamOptions{}.max_chunks;               // pgring_stream_chunks
  uint64_t home_bytes = StreamOptions{}.home_bytes;                  // pgring_home_bytes
  uint64_t resident_bytes = StreamOptions{}.resident_bytes;          // pgring_resident_bytes
  uint32_t force_home_percent = StreamOptions{}.force_home_percent;  // pgring_force_home_percent
  bool stream_bypass = StreamOptions{}.bypass_when_idle;             // pgring_stream_bypass
  StreamCompression compression = StreamOptions{}.compression;       // pgring_compression
  IoEngine io_engine = IoEngine::kIoUring;  // pgring_io_engine (log partition and data file)
  // pgring_shared_flush: let the store's partition flush make the data
  // writes durable too (pgring::Options::gated_writes_share_flush) instead
  // of flushing the data file separately. kAuto: when pgring/flush_domain.h proves
  // it safe for every data file; kOn: refuse to start unless it does.
  enum class SharedFlush : uint8_t { kAuto = 0, kOn = 1, kOff = 2 };
  SharedFlush shared_flush = SharedFlush::kAuto;
  // What ResolveSharedFlush() decided, and why.
  bool share_flush = false;
  std::string share_flush_why;
  // pgring_sync_covers: count each commit group's synced RocksDB write as a
  // flush of the log partition too (pgring::Options::
  // metadata_sync_flushes_partition), so the next group needs no partition
  // flush. kAuto: when pgring/flush_domain.h proves it (RocksDB and the partition on
  // one disk, written files, a file system whose fdatasync flushes the
  // cache); kOn: refuse to start unless it does. Ring backend only.
  enum class SyncCovers : uint8_t { kAuto = 0, kOn = 1, kOff = 2 };
  SyncCovers sync_covers = SyncCovers::kAuto;
  // What ResolveSharedFlush() decided for it, and why.
  bool sync_covers_partition = false;
  std::string sync_covers_why;

  // --- the OSD being modelled --------------------------------------------
  uint32_t pgs = 128;                    // pgring_pgs: PGs per pool
  // pgring_single_pool_mode (Ceph's single_pool_mode): every job writes to
  // pool 1's PGs. Otherwise, as in Ceph's fio engine, each of a job
  // section's numjobs jobs is a pool of its own (job i: pool i + 1), each
  // with pgring_pgs PGs.
  bool single_pool_mode = false;
  // The modelled OSD's pools: 1 in single-pool mode, else the jobs'
  // numjobs (fio_pgring.cc sets it). Its PGs: pgs * pools.
  uint32_t pools = 1;
  uint64_t object_size = 4 << 20;        // pgring_object_size
  uint32_t onode_size = 400;             // pgring_onode_size; 0 = no onode key (but see oi_attr_len)
  uint32_t entry_min = 170;              // pgring_entry_min
  uint32_t entry_max = 260;              // pgring_entry_max
  uint32_t fastinfo_size = 190;          // pgring_fastinfo_size
  uint32_t info_size = 920;              // pgring_info_size
  // pgring_dup_size: bytes of each dup (Ceph's pg_log_dup_t encodes to
  // about 57 bytes; Ceph's fio engine calls it pglog_dup_omap_len).
  uint32_t dup_size = 57;
  // pgring_oi_attr_len: bytes of the object-info ('_') attr written with
  // every write. BlueStore keeps an object's attrs in its onode, so they go
  // into the same onode value: the onode key holds onode_size + oi_attr_len
  // bytes. 0: pgring_onode_size is the whole onode, attrs included.
  uint32_t oi_attr_len = 0;
  // The full info on every Nth write of a PG, besides every write that trims
  // (which always carries it); 0 = only the trimming writes.
  uint32_t full_info_every = 0;          // pgring_full_info_every
  bool prefill = true;                   // pgring_prefill: new PGs start full
  // pgring_payload: what the entries, dups and infos hold. kRandom:
  // pseudo-random bytes of the sizes above; kCeph: Ceph's own encodings
  // (ceph_payload.h), whose sizes are the encodings' (entry_min..info_size
  // then unused), so compression and the tool see what an OSD stores.
  enum class Payload : uint8_t { kRandom = 0, kCeph = 1 };
  Payload payload = Payload::kRandom;
  // pgring_no_pg_log: each write commits only its onode, no PG log: the
  // floor any log backend adds to (the same data write, flushes, WAL sync).
  bool no_pg_log = false;

  // Ceph's PG log settings, with Ceph's names and defaults.
  uint32_t osd_min_pg_log_entries = 250;
  uint32_t osd_max_pg_log_entries = 10000;
  uint32_t osd_target_pg_log_entries_per_osd = 300000;
  uint32_t osd_pg_log_dups_tracked = 3000;
  uint32_t osd_pg_log_trim_min = 100;
  uint32_t osd_pg_log_trim_max = 10000;

  // --- reporting -----------------------------------------------------------
  std::string stats_file;                // pgring_stats: JSON report at the end
  bool verify_log = false;               // pgring_verify_log: reopen and check
  std::string ack_file;                  // pgring_ack_file: record acks (ack_record.h)
  std::string ack_check;                 // pgring_ack_check: check a record at open

  // The RocksDB directory actually used.
  std::string EffectiveDbPath() const {
    return db_path.empty() ? log_dev + ".db" : db_path;
  }
  // Bytes of the onode value each write puts in the batch (0: no onode key).
  uint32_t OnodeValueSize() const { return onode_size + oi_attr_len; }

  // Every PG of the modelled OSD, all pools together.
  uint64_t TotalPgs() const { return static_cast<uint64_t>(pgs) * pools; }

  // Entries a PG's log keeps after a trim: Ceph's
  // OSDService::get_target_pg_log_entries(), the per-OSD budget spread over
  // the OSD's PGs (every pool's) and clamped to [osd_min_pg_log_entries,
  // osd_max_pg_log_entries].
  uint64_t TargetLogEntries() const;

  // kInvalidArgument naming the option for an impossible setting, or for a
  // RocksDB directory that would default to somewhere under /dev (a block
  // device as pgring_log_dev, no pgring_db): devtmpfs is RAM, and RocksDB
  // there would make every measurement meaningless.
  absl::Status Validate() const;

  // Sets share_flush and share_flush_why from shared_flush, the backend and
  // the job's data files, and sync_covers_partition and sync_covers_why from
  // sync_covers, the backend, the RocksDB directory and the log partition;
  // kInvalidArgument if pgring_shared_flush=on or pgring_sync_covers=on
  // cannot be honoured, naming why.
  absl::Status ResolveSharedFlush(const std::vector<std::string>& data_files);

  // Every setting that must be equal for jobs sharing one store, as text;
  // a job whose StoreSignature() differs from the opener's is refused.
  std::string StoreSignature() const;
};

const char* BackendName(Backend b);
const char* DurabilityName(DurabilityMode m);
const char* TailPolicyName(TailBlockPolicy p);
const char* LayoutName(LogLayout l);
const char* CompressionName(StreamCompression c);
const char* IoEngineName(IoEngine e);
const char* SharedFlushName(EngineConfig::SharedFlush f);
const char* SyncCoversName(EngineConfig::SyncCovers c);
const char* PayloadName(EngineConfig::Payload p);

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_ENGINE_CONFIG_H_
