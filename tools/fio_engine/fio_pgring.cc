// fio_pgring.cc — the fio-facing side of the pgring engine: the option table
// and the ioengine_ops hooks, each a thin wrapper over EngineJob
// (engine_job.h). Built as libfio_pgring.so against the headers of the Debian
// fio source package that matches the installed fio (cmake/FioSource.cmake),
// and loaded with
//
//   ioengine=external:/path/to/libfio_pgring.so
//
// The pgring_* and osd_* options must come after that line in a job file (fio
// learns them when it loads the engine); `fio --enghelp=external:/path/...`
// lists them. Sample jobs: fio-jobs/ring-randwrite.fio and friends.
//
// Each fio write is one OSD write: the data goes to fio's file at the io_u's
// offset, the metadata (onode, PG log entry, info, trims) to the pgring store
// on pgring_log_dev, committed together; fio sees the write complete when it
// is committed (durable unless pgring_durability=unsynced). See osd_model.h
// for what goes into each transaction and shared_store.h for how jobs share
// the store (thread=1 is required when several jobs use one store).
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "engine_config.h"
#include "engine_job.h"
#include "preallocate.h"

// fio's headers (C, usable from C++; file.h declares the generic_* helpers
// extern "C"). Functions declared without extern "C" in fio's headers — most
// of them, td_verror and log_err included — must not be called from here: the
// names would be C++-mangled and not found in the fio binary.
#include "fio.h"
#include "optgroup.h"

namespace {

using pgring::fio::DataFile;
using pgring::fio::EngineConfig;
using pgring::fio::EngineJob;

// The option values, as fio's parser stores them (td->eo). fio requires that
// no option live at offset 0, hence the padding pointer.
struct PgringOptions {
  void* pad;
  unsigned int backend;            // FIO_OPT_STR stores an int
  char* log_dev;                   // FIO_OPT_STR_STORE: strdup'ed by fio
  char* db;
  int mkfs;                        // FIO_OPT_BOOL
  unsigned long long chunk_size;   // FIO_OPT_STR_VAL: a long long
  unsigned int pgs;                // FIO_OPT_INT
  int single_pool_mode;
  unsigned long long object_size;
  unsigned int onode_size;
  unsigned int entry_min;
  unsigned int entry_max;
  unsigned int fastinfo_size;
  unsigned int info_size;
  unsigned int dup_size;
  unsigned int oi_attr_len;
  int preallocate;
  unsigned long long log_size;
  unsigned int full_info_every;
  int prefill;
  unsigned int payload;
  int no_pg_log;
  unsigned int osd_min_pg_log_entries;
  unsigned int osd_max_pg_log_entries;
  unsigned int osd_target_pg_log_entries_per_osd;
  unsigned int osd_pg_log_dups_tracked;
  unsigned int osd_pg_log_trim_min;
  unsigned int osd_pg_log_trim_max;
  unsigned int durability;
  unsigned int tail_policy;
  unsigned int layout;
  unsigned int compression;
  unsigned int stream_chunks;
  unsigned long long home_bytes;   // FIO_OPT_STR_VAL
  unsigned long long resident_bytes;
  unsigned int force_home_percent;
  int stream_bypass;
  unsigned int io_engine;
  unsigned int shared_flush;
  unsigned int sync_covers;
  char* stats;
  int verify_log;
  char* ack_file;
  char* ack_check;
};

// fio has no option group for external engines; skeleton_external.c uses
// FIO_OPT_G_INVALID, which only matters to fio's GUI.
constexpr uint64_t kCategory = FIO_OPT_C_ENGINE;
constexpr uint64_t kGroup = FIO_OPT_G_INVALID;

#define PGRING_OFF(field) static_cast<unsigned int>(offsetof(PgringOptions, field))

// An integer option with a minimum, and optionally a second name (fio's
// .alias: `fio --enghelp=ENGINE,NAME` shows it; the full listing does not,
// so the help text names it too).
constexpr fio_option IntOption(const char* name, const char* lname, unsigned int off, int minval,
                               const char* help, const char* def, const char* alias = nullptr) {
  return fio_option{.name = name, .lname = lname, .alias = alias, .type = FIO_OPT_INT,
                    .off1 = off, .minval = minval, .help = help, .def = def,
                    .category = kCategory, .group = kGroup};
}

// The stream options' defaults as fio reads them, checked against the
// library's so that a job without them runs what an embedder gets.
constexpr uint64_t FioValue(const char* s) {
  uint64_t v = 0;
  for (; *s >= '0' && *s <= '9'; ++s) v = v * 10 + static_cast<uint64_t>(*s - '0');
  if (*s == 'k') return v << 10;
  if (*s == 'm') return v << 20;
  return v;
}
constexpr char kDefStreamChunks[] = "0";
constexpr char kDefHomeBytes[] = "0";
constexpr char kDefResidentBytes[] = "64k";
constexpr char kDefForceHomePercent[] = "50";
constexpr char kDefStreamBypass[] = "1";
static_assert(FioValue(kDefStreamChunks) == pgring::StreamOptions{}.max_chunks);
static_assert(FioValue(kDefHomeBytes) == pgring::StreamOptions{}.home_bytes);
static_assert(FioValue(kDefResidentBytes) == pgring::StreamOptions{}.resident_bytes);
static_assert(FioValue(kDefForceHomePercent) == pgring::StreamOptions{}.force_home_percent);
static_assert(FioValue(kDefStreamBypass) == (pgring::StreamOptions{}.bypass_when_idle ? 1 : 0));
constexpr char kDefCompression[] = "lz4";
static_assert(pgring::StreamOptions{}.compression == pgring::StreamCompression::kLz4,
              "kDefCompression names the library's default");

fio_option g_options[] = {
    {.name = "pgring_backend",
     .lname = "pgring backend",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(backend),
     .help = "Backend made by pgring_mkfs=1 (an existing store keeps its own)",
     .def = "ring",
     .posval = {{.ival = "ring", .oval = static_cast<unsigned long long>(pgring::Backend::kRing),
                 .help = "per-PG ring logs on the log partition, pointers in RocksDB"},
                {.ival = "rocksdb",
                 .oval = static_cast<unsigned long long>(pgring::Backend::kRocksDb),
                 .help = "the PG log in RocksDB, a key per entry, as BlueStore keeps it"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_log_dev",
     .lname = "pgring log partition",
     .type = FIO_OPT_STR_STORE,
     .off1 = PGRING_OFF(log_dev),
     .help = "The log partition (a preallocated file or a block device); required",
     .def = "",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_db",
     .lname = "pgring RocksDB directory",
     .type = FIO_OPT_STR_STORE,
     .off1 = PGRING_OFF(db),
     .help = "The store's RocksDB directory (empty: <pgring_log_dev>.db)",
     .def = "",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_preallocate",
     .lname = "pgring preallocate",
     .alias = "preallocate_files",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(preallocate),
     .help = "Lay the files out as raw partitions before the run: create the log partition file "
             "(pgring_log_size) and the data files (size=) if missing, extend them and write zeros "
             "into their holes; block devices are left alone (alias: preallocate_files)",
     .def = "0",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_log_size",
     .lname = "pgring log partition size",
     .type = FIO_OPT_STR_VAL,
     .off1 = PGRING_OFF(log_size),
     .help = "Size of the log partition file pgring_preallocate=1 makes (0: the file's own)",
     .def = "0",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_mkfs",
     .lname = "pgring mkfs",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(mkfs),
     .help = "Make a new store before the run, once per process (force: erases the old store and its RocksDB)",
     .def = "0",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_chunk_size",
     .lname = "pgring chunk size",
     .type = FIO_OPT_STR_VAL,
     .off1 = PGRING_OFF(chunk_size),
     .help = "Chunk size of the partition, at mkfs (power of two, 64k..256m)",
     .def = "1M",
     .category = kCategory,
     .group = kGroup},
    IntOption("pgring_pgs", "pgring PGs", PGRING_OFF(pgs), 1,
              "Placement groups per pool of the modelled OSD (pool 1: PGs 1.0 ..; with numjobs>1 "
              "each job its own pool, 1 .. numjobs, unless pgring_single_pool_mode)", "128"),
    {.name = "pgring_single_pool_mode",
     .lname = "pgring single pool mode",
     .alias = "single_pool_mode",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(single_pool_mode),
     .help = "All jobs of a store write to one pool's PGs (pool 1) instead of each job to a pool "
             "of its own, as in Ceph's fio engine (alias: single_pool_mode)",
     .def = "0",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_object_size",
     .lname = "pgring object size",
     .type = FIO_OPT_STR_VAL,
     .off1 = PGRING_OFF(object_size),
     .help = "Object size: a write at offset o touches object o / object_size",
     .def = "4M",
     .category = kCategory,
     .group = kGroup},
    IntOption("pgring_onode_size", "pgring onode size", PGRING_OFF(onode_size), 0,
              "Bytes of the onode key (onode.<object>) put in the same RocksDB batch per write "
              "(0: none)",
              "400"),
    IntOption("pgring_entry_min", "pgring entry min", PGRING_OFF(entry_min), 16,
              "Smallest PG log entry (Ceph's pg_log_entry_t encodes to 170..260 bytes)", "170"),
    IntOption("pgring_entry_max", "pgring entry max", PGRING_OFF(entry_max), 16,
              "Largest PG log entry; each entry's size is drawn from [entry_min, entry_max]", "260"),
    IntOption("pgring_fastinfo_size", "pgring fastinfo size", PGRING_OFF(fastinfo_size), 16,
              "Bytes of the PG info written by a write that does not trim (Ceph's _fastinfo; "
              "alias: _fastinfo_omap_len)",
              "190", "_fastinfo_omap_len"),
    IntOption("pgring_dup_size", "pgring dup size", PGRING_OFF(dup_size), 16,
              "Bytes of each dup a trim makes with pgring_payload=random (Ceph's pg_log_dup_t; "
              "Ceph-encoded dups keep their encoded size; alias: pglog_dup_omap_len)",
              "57", "pglog_dup_omap_len"),
    IntOption("pgring_oi_attr_len", "pgring object-info attr length", PGRING_OFF(oi_attr_len), 0,
              "Bytes of the object-info ('_') attr each write adds to its onode value, where "
              "BlueStore keeps attrs (alias: oi_attr_len)",
              "0", "oi_attr_len"),
    // Ceph's fio engine's pglog_omap_len: one length for every entry, or
    // "min-max". Two offsets, which fio's parser fills both from one value
    // (and in turn from "a-b" or "a,b"); no default of its own, so that it
    // does not override pgring_entry_min/max's.
    {.name = "pglog_omap_len",
     .lname = "Ceph pglog omap entry length",
     .type = FIO_OPT_INT,
     .off1 = PGRING_OFF(entry_min),
     .off2 = PGRING_OFF(entry_max),
     .minval = 16,
     .help = "Ceph's fio engine's name: sets pgring_entry_min and pgring_entry_max (N, or N-M)",
     .category = kCategory,
     .group = kGroup},
    IntOption("pgring_info_size", "pgring info size", PGRING_OFF(info_size), 16,
              "Bytes of the full PG info (pg_info_t), written by every write that trims the log",
              "920"),
    IntOption("pgring_full_info_every", "pgring full info every", PGRING_OFF(full_info_every), 0,
              "Also write the full info on every Nth write of a PG (0: only with trims, as Ceph)",
              "0"),
    {.name = "pgring_payload",
     .lname = "pgring payload",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(payload),
     .help = "What entries, dups and infos hold",
     .def = "random",
     .posval = {{.ival = "random",
                 .oval = static_cast<unsigned long long>(EngineConfig::Payload::kRandom),
                 .help = "pseudo-random bytes of pgring_entry_min..max, the dup and info sizes"},
                {.ival = "ceph",
                 .oval = static_cast<unsigned long long>(EngineConfig::Payload::kCeph),
                 .help = "Ceph's encodings (pg_log_entry_t, pg_log_dup_t, pg_info_t)"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_prefill",
     .lname = "pgring prefill",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(prefill),
     .help = "Fill each newly created PG with a steady-state log (target entries + dups) first",
     .def = "1",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_no_pg_log",
     .lname = "pgring no PG log",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(no_pg_log),
     .help = "Benchmark floor: each write commits only its onode, with no PG log (the same data "
             "write, flushes and synced RocksDB write as a real OSD write; pglog_simulation=0)",
     .def = "0",
     .category = kCategory,
     .group = kGroup},
    // Ceph's fio engine's switch, the other way round: fio stores its
    // negation (.neg) in pgring_no_pg_log's field.
    {.name = "pglog_simulation",
     .lname = "Ceph pglog simulation",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(no_pg_log),
     .neg = 1,
     .help = "Ceph's fio engine's name for the opposite of pgring_no_pg_log: 0 writes no PG log "
             "(unlike Ceph's, on by default)",
     .def = "1",
     .category = kCategory,
     .group = kGroup},
    IntOption("osd_min_pg_log_entries", "Ceph osd_min_pg_log_entries",
              PGRING_OFF(osd_min_pg_log_entries), 0,
              "Ceph: lower bound of the per-PG log length kept after a trim", "250"),
    IntOption("osd_max_pg_log_entries", "Ceph osd_max_pg_log_entries",
              PGRING_OFF(osd_max_pg_log_entries), 0,
              "Ceph: upper bound of the per-PG log length kept after a trim", "10000"),
    IntOption("osd_target_pg_log_entries_per_osd", "Ceph osd_target_pg_log_entries_per_osd",
              PGRING_OFF(osd_target_pg_log_entries_per_osd), 0,
              "Ceph: log entries per OSD, spread over its PGs (target = this / pgs, clamped)",
              "300000"),
    IntOption("osd_pg_log_dups_tracked", "Ceph osd_pg_log_dups_tracked",
              PGRING_OFF(osd_pg_log_dups_tracked), 0,
              "Ceph: trimmed entries within this many versions of the head are kept as dups",
              "3000"),
    IntOption("osd_pg_log_trim_min", "Ceph osd_pg_log_trim_min", PGRING_OFF(osd_pg_log_trim_min),
              0, "Ceph: trim only when at least this many entries can go", "100"),
    IntOption("osd_pg_log_trim_max", "Ceph osd_pg_log_trim_max", PGRING_OFF(osd_pg_log_trim_max),
              1, "Ceph: trim at most this many entries at once", "10000"),
    {.name = "pgring_durability",
     .lname = "pgring durability",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(durability),
     .help = "When a write completes",
     .def = "group",
     .posval = {{.ival = "sync",
                 .oval = static_cast<unsigned long long>(pgring::DurabilityMode::kSyncEach),
                 .help = "durable; one flush + synced RocksDB write per transaction"},
                {.ival = "group",
                 .oval = static_cast<unsigned long long>(pgring::DurabilityMode::kGroupCommit),
                 .help = "durable; concurrent transactions share flushes (group commit)"},
                {.ival = "unsynced",
                 .oval = static_cast<unsigned long long>(pgring::DurabilityMode::kUnsynced),
                 .help = "when written; committed in the background (data file not flushed)"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_tail_policy",
     .lname = "pgring tail block policy",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(tail_policy),
     .help = "How the ring treats the block holding a PG's tail",
     .def = "rewrite",
     .posval = {{.ival = "rewrite",
                 .oval = static_cast<unsigned long long>(pgring::TailBlockPolicy::kRewriteTailBlock),
                 .help = "pack records; rewrite the tail block (atomic block writes)"},
                {.ival = "never",
                 .oval = static_cast<unsigned long long>(pgring::TailBlockPolicy::kNeverRewrite),
                 .help = "never rewrite a block holding committed records (pads)"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_layout",
     .lname = "pgring log layout",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(layout),
     .help = "Where a transaction's records go first (ring backend)",
     .def = "stream",
     .posval = {{.ival = "perpg",
                 .oval = static_cast<unsigned long long>(pgring::LogLayout::kPerPgRings),
                 .help = "straight to each PG's ring: one write per PG per transaction"},
                {.ival = "stream",
                 .oval = static_cast<unsigned long long>(pgring::LogLayout::kStream),
                 .help = "one log stream write for all PGs; rings get whole blocks"}},
     .category = kCategory,
     .group = kGroup},
    IntOption("pgring_stream_chunks", "pgring stream chunks", PGRING_OFF(stream_chunks), 0,
              "The log stream's size bound in chunks (pgring_layout=stream); 0: three quarters "
              "of the partition", kDefStreamChunks),
    {.name = "pgring_home_bytes",
     .lname = "pgring home bytes",
     .type = FIO_OPT_STR_VAL,
     .off1 = PGRING_OFF(home_bytes),
     .help = "Unhomed bytes a PG gathers before they go to its ring in one write, rounded down "
             "to whole blocks of the partition (pgring_layout=stream; 512..256m); 0: only when "
             "the stream needs the room (records written once)",
     .def = kDefHomeBytes,
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_resident_bytes",
     .lname = "pgring resident bytes",
     .type = FIO_OPT_STR_VAL,
     .off1 = PGRING_OFF(resident_bytes),
     .help = "Newest unhomed bytes a PG keeps in memory, rounded down to whole blocks; older "
             "ones are read back from the stream (pgring_layout=stream; 512..256m)",
     .def = kDefResidentBytes,
     .category = kCategory,
     .group = kGroup},
    IntOption("pgring_force_home_percent", "pgring force home percent",
              PGRING_OFF(force_home_percent), 1,
              "How full the log stream is (percent of its bound) when transactions start homing "
              "the PGs that pin its head (pgring_layout=stream)",
              kDefForceHomePercent),
    {.name = "pgring_compression",
     .lname = "pgring stream compression",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(compression),
     .help = "How the log stream stores records (pgring_layout=stream)",
     .def = kDefCompression,
     .posval = {{.ival = "none",
                 .oval = static_cast<unsigned long long>(pgring::StreamCompression::kNone),
                 .help = "as they are"},
                {.ival = "lz4",
                 .oval = static_cast<unsigned long long>(pgring::StreamCompression::kLz4),
                 .help = "each transaction's stream record compressed with lz4"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_stream_bypass",
     .lname = "pgring stream bypass",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(stream_bypass),
     .help = "A transaction that finds no write in flight goes to the rings, not the stream",
     .def = kDefStreamBypass,
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_io_engine",
     .lname = "pgring I/O engine",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(io_engine),
     .help = "How the log partition and the data file are written",
     .def = "io_uring",
     .posval = {{.ival = "io_uring",
                 .oval = static_cast<unsigned long long>(pgring::IoEngine::kIoUring),
                 .help = "liburing (falls back to psync where io_uring is refused)"},
                {.ival = "psync",
                 .oval = static_cast<unsigned long long>(pgring::IoEngine::kPsync),
                 .help = "pwrite on a small thread pool"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_shared_flush",
     .lname = "pgring shared flush",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(shared_flush),
     .help = "Ring backend: one flush makes the data writes and the log records durable "
             "(data file and log partition on one disk)",
     .def = "auto",
     .posval = {{.ival = "auto",
                 .oval = static_cast<unsigned long long>(EngineConfig::SharedFlush::kAuto),
                 .help = "when both are on one disk and files are fully written (FIEMAP)"},
                {.ival = "on",
                 .oval = static_cast<unsigned long long>(EngineConfig::SharedFlush::kOn),
                 .help = "always; refuse to start when that cannot be proven"},
                {.ival = "off",
                 .oval = static_cast<unsigned long long>(EngineConfig::SharedFlush::kOff),
                 .help = "flush the data file separately, before the commit"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_sync_covers",
     .lname = "pgring sync covers",
     .type = FIO_OPT_STR,
     .off1 = PGRING_OFF(sync_covers),
     .help = "Ring backend: a commit group's synced RocksDB write also makes the log records "
             "(and shared-flush data writes) ready before it durable, so the next group needs "
             "no partition flush (RocksDB and the log partition on one disk)",
     .def = "auto",
     .posval = {{.ival = "auto",
                 .oval = static_cast<unsigned long long>(EngineConfig::SyncCovers::kAuto),
                 .help = "when both are on one disk, files are fully written and the file "
                         "system's fdatasync flushes the disk cache (ext4/XFS with barriers)"},
                {.ival = "on",
                 .oval = static_cast<unsigned long long>(EngineConfig::SyncCovers::kOn),
                 .help = "always; refuse to start when that cannot be proven"},
                {.ival = "off",
                 .oval = static_cast<unsigned long long>(EngineConfig::SyncCovers::kOff),
                 .help = "flush the partition before every group's RocksDB write"}},
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_stats",
     .lname = "pgring stats file",
     .type = FIO_OPT_STR_STORE,
     .off1 = PGRING_OFF(stats),
     .help = "Write a JSON report (latency, RocksDB and device bytes, per-PG sizes) here at the end",
     .def = "",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_verify_log",
     .lname = "pgring verify log",
     .type = FIO_OPT_BOOL,
     .off1 = PGRING_OFF(verify_log),
     .help = "At the end, reopen the store and check every PG's log, dups and info byte for byte",
     .def = "0",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_ack_file",
     .lname = "pgring ack record",
     .type = FIO_OPT_STR_STORE,
     .off1 = PGRING_OFF(ack_file),
     .help = "After setup, record per PG the newest submitted and acknowledged versions in this "
             "file (mapped, so a SIGKILL cannot take it; created when setup is done)",
     .def = "",
     .category = kCategory,
     .group = kGroup},
    {.name = "pgring_ack_check",
     .lname = "pgring ack check",
     .type = FIO_OPT_STR_STORE,
     .off1 = PGRING_OFF(ack_check),
     .help = "At open, check the store against the pgring_ack_file record of an earlier (killed) "
             "run: no acknowledged write missing, nothing past the newest submitted one",
     .def = "",
     .category = kCategory,
     .group = kGroup},
    {.name = nullptr},
};

#undef PGRING_OFF

EngineConfig ConfigFrom(const PgringOptions& o) {
  EngineConfig c;
  c.backend = static_cast<pgring::Backend>(o.backend);
  c.log_dev = o.log_dev != nullptr ? o.log_dev : "";
  c.db_path = o.db != nullptr ? o.db : "";
  c.mkfs = o.mkfs != 0;
  c.chunk_size = static_cast<uint32_t>(o.chunk_size);
  c.pgs = o.pgs;
  c.single_pool_mode = o.single_pool_mode != 0;
  c.object_size = o.object_size;
  c.onode_size = o.onode_size;
  c.entry_min = o.entry_min;
  c.entry_max = o.entry_max;
  c.fastinfo_size = o.fastinfo_size;
  c.info_size = o.info_size;
  c.dup_size = o.dup_size;
  c.oi_attr_len = o.oi_attr_len;
  c.preallocate = o.preallocate != 0;
  c.log_size = o.log_size;
  c.full_info_every = o.full_info_every;
  c.prefill = o.prefill != 0;
  c.payload = static_cast<EngineConfig::Payload>(o.payload);
  c.no_pg_log = o.no_pg_log != 0;
  c.osd_min_pg_log_entries = o.osd_min_pg_log_entries;
  c.osd_max_pg_log_entries = o.osd_max_pg_log_entries;
  c.osd_target_pg_log_entries_per_osd = o.osd_target_pg_log_entries_per_osd;
  c.osd_pg_log_dups_tracked = o.osd_pg_log_dups_tracked;
  c.osd_pg_log_trim_min = o.osd_pg_log_trim_min;
  c.osd_pg_log_trim_max = o.osd_pg_log_trim_max;
  c.durability = static_cast<pgring::DurabilityMode>(o.durability);
  c.tail_policy = static_cast<pgring::TailBlockPolicy>(o.tail_policy);
  c.layout = static_cast<pgring::LogLayout>(o.layout);
  c.compression = static_cast<pgring::StreamCompression>(o.compression);
  c.stream_chunks = o.stream_chunks;
  c.home_bytes = o.home_bytes;
  c.resident_bytes = o.resident_bytes;
  c.force_home_percent = o.force_home_percent;
  c.stream_bypass = o.stream_bypass != 0;
  c.io_engine = static_cast<pgring::IoEngine>(o.io_engine);
  c.shared_flush = static_cast<EngineConfig::SharedFlush>(o.shared_flush);
  c.sync_covers = static_cast<EngineConfig::SyncCovers>(o.sync_covers);
  c.stats_file = o.stats != nullptr ? o.stats : "";
  c.verify_log = o.verify_log != 0;
  c.ack_file = o.ack_file != nullptr ? o.ack_file : "";
  c.ack_check = o.ack_check != nullptr ? o.ack_check : "";
  return c;
}

EngineJob* JobOf(thread_data* td) { return static_cast<EngineJob*>(td->io_ops_data); }
DataFile* FileOf(fio_file* f) { return static_cast<DataFile*>(FILE_ENG_DATA(f)); }

// Reports an error the way td_verror() would (which we cannot call: see the
// include comment): fio prints td->verror and exits non-zero.
void SetJobError(thread_data* td, int err, const std::string& msg) {
  std::fprintf(stderr, "fio: pgring: %s: %s\n", td->o.name != nullptr ? td->o.name : "job", msg.c_str());
  if (td->error == 0) {
    td->error = err;
    std::snprintf(td->verror, sizeof(td->verror), "pgring: %s", msg.c_str());
  }
}

// fio's setup hook, which runs before fio lays out or sizes the job's files
// (filesetup.c: setup_files) and replaces its get_file_sizes(): with
// pgring_preallocate=1, first lays out each data file as a raw partition
// (preallocate.h; the log partition is laid out when the store opens), so
// fio finds them full-sized and written and lays out nothing itself.
int fio_pgring_setup(thread_data* td) {
  const auto& o = *static_cast<const PgringOptions*>(td->eo);
  const unsigned nr_files = td->o.nr_files > 0 ? td->o.nr_files : 1;
  const uint64_t file_size = td->o.file_size_high != 0 ? td->o.file_size_high : td->o.size / nr_files;
  fio_file* f;
  unsigned i;
  for_each_file(td, f, i) {
    if (o.preallocate != 0) {
      auto p = pgring::fio::PreallocateZeroed(f->file_name, file_size);
      if (!p.ok()) {
        SetJobError(td, pgring::fio::ErrnoOf(p.status()), std::string(p.status().message()));
        return 1;
      }
      if (p->zeroed_bytes > 0) {
        std::fprintf(stderr, "fio: pgring: %s: wrote %llu bytes of zeros (pgring_preallocate)\n",
                     f->file_name, static_cast<unsigned long long>(p->zeroed_bytes));
      }
    }
    // What fio's get_file_sizes() does: a missing file is laid out later.
    if (generic_get_file_size(td, f) != 0) {
      if (td->error != ENOENT) {
        std::fprintf(stderr, "fio: pgring: %s\n", td->verror);
        return 1;
      }
      td->error = 0;
      td->verror[0] = '\0';
    }
    if (f->real_file_size == -1ULL && td->o.size != 0) f->real_file_size = td->o.size / nr_files;
  }
  return 0;
}

// The numjobs of a job's section. fio keeps it in the section's first job
// (subjob 0) only: its clones get numjobs=1 and come right after it in fio's
// table of jobs, numbered numjobs-1 .. 1 (init.c, add_job), so the nearest
// subjob 0 before a clone is its section's first job.
unsigned SectionJobs(thread_data* td) {
  if (td->subjob_number == 0) return td->o.numjobs > 0 ? td->o.numjobs : 1;
  for (unsigned i = td->thread_number - 1; i-- > 0;) {  // thread_number is 1-based
    const thread_data* t = tnumber_to_td(i);
    if (t->subjob_number == 0) return t->o.numjobs > 0 ? t->o.numjobs : 1;
  }
  return td->subjob_number + 1;  // not reached: a clone always has its first job
}

int fio_pgring_init(thread_data* td) {
  try {
    if (td->o.numjobs > 1 && !td->o.use_thread) {
      SetJobError(td, EINVAL,
                  "numjobs>1 needs thread=1: the jobs share one pgring store, which one process "
                  "opens (a partition is locked by its opener)");
      return 1;
    }
    EngineConfig config = ConfigFrom(*static_cast<const PgringOptions*>(td->eo));
    // As Ceph's fio engine: each job a pool of its own with pgring_pgs PGs
    // (Ceph numbers them by fio's thread_number; here by the job's place
    // among its section's numjobs, so that the OSD's pools, and Ceph's
    // per-OSD log budget over all their PGs, are known when the first job
    // opens the store), or all in one.
    uint32_t pool = 0;
    if (!config.single_pool_mode) {
      config.pools = SectionJobs(td);
      pool = td->subjob_number;
    }
    std::vector<std::string> data_files;
    for (unsigned i = 0; i < td->files_index; ++i) {
      if (td->files[i] != nullptr && td->files[i]->file_name != nullptr) {
        data_files.emplace_back(td->files[i]->file_name);
      }
    }
    if (absl::Status s = config.ResolveSharedFlush(data_files); !s.ok()) {
      SetJobError(td, EINVAL, std::string(s.message()));
      return 1;
    }
    auto job = EngineJob::Create(config, td->o.iodepth, pool);
    if (!job.ok()) {
      SetJobError(td, pgring::fio::ErrnoOf(job.status()), std::string(job.status().message()));
      return 1;
    }
    td->io_ops_data = job->release();
    return 0;
  } catch (const std::exception& e) {
    SetJobError(td, ENOMEM, e.what());
    return 1;
  }
}

void fio_pgring_cleanup(thread_data* td) {
  EngineJob* job = JobOf(td);
  if (job == nullptr) return;
  td->io_ops_data = nullptr;
  absl::Status s = job->Close();
  delete job;
  if (!s.ok()) SetJobError(td, pgring::fio::ErrnoOf(s), std::string(s.message()));
}

int fio_pgring_open_file(thread_data* td, fio_file* f) {
  // fio keeps its own descriptor (for its generic file handling); the I/O
  // goes through pgring's BlockDevice.
  int ret = generic_open_file(td, f);
  if (ret != 0) return ret;
  // Before init() there is no job: fio's setup_files() sizes a block device
  // by opening it (get_file_size -> bdev_size -> td_io_open_file) and closes
  // it again; fio's descriptor is all that needs.
  if (JobOf(td) == nullptr) return 0;
  auto file = JobOf(td)->OpenFile(f->file_name);
  if (!file.ok()) {
    SetJobError(td, pgring::fio::ErrnoOf(file.status()), std::string(file.status().message()));
    int closed = generic_close_file(td, f);
    (void)closed;
    return pgring::fio::ErrnoOf(file.status());
  }
  FILE_SET_ENG_DATA(f, *file);
  return 0;
}

int fio_pgring_close_file(thread_data* td, fio_file* f) {
  if (DataFile* df = FileOf(f); df != nullptr && JobOf(td) != nullptr) {
    JobOf(td)->CloseFile(df);
  }
  FILE_SET_ENG_DATA(f, nullptr);
  return generic_close_file(td, f);
}

fio_q_status fio_pgring_queue(thread_data* td, io_u* u) {
  fio_ro_check(td, u);
  EngineJob* job = JobOf(td);
  DataFile* file = FileOf(u->file);
  absl::Status s;
  try {
    switch (u->ddir) {
      case DDIR_WRITE:
        s = job->QueueWrite(u, file, u->offset, static_cast<const char*>(u->xfer_buf), u->xfer_buflen);
        if (s.ok()) return FIO_Q_QUEUED;
        break;
      case DDIR_READ:
        s = job->Read(file, u->offset, static_cast<char*>(u->xfer_buf), u->xfer_buflen);
        break;
      case DDIR_SYNC:
      case DDIR_DATASYNC:
      case DDIR_SYNC_FILE_RANGE:
        s = job->Sync(file);
        break;
      case DDIR_TRIM:
        job->NoteTrim();  // the modelled OSD has nothing to trim
        break;
      default:
        s = absl::InvalidArgumentError("unsupported I/O direction");
        break;
    }
  } catch (const std::exception& e) {
    s = absl::ResourceExhaustedError(e.what());
  }
  if (!s.ok()) {
    u->error = pgring::fio::ErrnoOf(s);
    std::fprintf(stderr, "fio: pgring: %s at offset %llu: %s\n",
                 u->ddir == DDIR_WRITE ? "write" : u->ddir == DDIR_READ ? "read" : "sync",
                 static_cast<unsigned long long>(u->offset), std::string(s.message()).c_str());
  }
  return FIO_Q_COMPLETED;
}

// Sends the writes queued since the last commit (fio calls it after
// iodepth_batch_submit queued writes, and before it waits for completions).
int fio_pgring_commit(thread_data* td) {
  JobOf(td)->Commit();
  return 0;
}

int fio_pgring_getevents(thread_data* td, unsigned int min, unsigned int max, const timespec* t) {
  return JobOf(td)->Reap(min, max, t);
}

io_u* fio_pgring_event(thread_data* td, int event) {
  const EngineJob::Completion& c = JobOf(td)->event(event);
  io_u* u = static_cast<io_u*>(c.token);
  u->error = static_cast<unsigned int>(c.error);
  return u;
}

ioengine_ops g_ioengine = {
    .name = "pgring",
    .version = FIO_IOOPS_VERSION,
    // FIO_MEMALIGN: page-aligned I/O buffers, which O_DIRECT reads need.
    .flags = FIO_MEMALIGN,
    .setup = fio_pgring_setup,
    .init = fio_pgring_init,
    .queue = fio_pgring_queue,
    .commit = fio_pgring_commit,
    .getevents = fio_pgring_getevents,
    .event = fio_pgring_event,
    .cleanup = fio_pgring_cleanup,
    .open_file = fio_pgring_open_file,
    .close_file = fio_pgring_close_file,
    // Without it fio assumes size 0 and lays every existing file out anew.
    .get_file_size = generic_get_file_size,
    .option_struct_size = sizeof(PgringOptions),
    .options = g_options,
};

}  // namespace

// The entry point fio looks up (dlsym) in an external engine.
extern "C" __attribute__((visibility("default"))) void get_ioengine(ioengine_ops** ops) {
  *ops = &g_ioengine;
}
