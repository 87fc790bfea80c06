#include "engine_config.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pgring/flush_domain.h"

namespace pgring::fio {

const char* BackendName(Backend b) {
  return b == Backend::kRing ? "ring" : "rocksdb";
}

const char* DurabilityName(DurabilityMode m) {
  switch (m) {
    case DurabilityMode::kSyncEach: return "sync";
    case DurabilityMode::kGroupCommit: return "group";
    case DurabilityMode::kUnsynced: return "unsynced";
  }
  return "?";
}

const char* LayoutName(LogLayout l) { return l == LogLayout::kStream ? "stream" : "perpg"; }
const char* CompressionName(StreamCompression c) {
  return c == StreamCompression::kLz4 ? "lz4" : "none";
}

const char* TailPolicyName(TailBlockPolicy p) {
  return p == TailBlockPolicy::kRewriteTailBlock ? "rewrite" : "never";
}

const char* IoEngineName(IoEngine e) {
  return e == IoEngine::kIoUring ? "io_uring" : "psync";
}

const char* SharedFlushName(EngineConfig::SharedFlush f) {
  switch (f) {
    case EngineConfig::SharedFlush::kAuto: return "auto";
    case EngineConfig::SharedFlush::kOn: return "on";
    case EngineConfig::SharedFlush::kOff: return "off";
  }
  return "?";
}

const char* PayloadName(EngineConfig::Payload p) {
  return p == EngineConfig::Payload::kCeph ? "ceph" : "random";
}

const char* SyncCoversName(EngineConfig::SyncCovers c) {
  switch (c) {
    case EngineConfig::SyncCovers::kAuto: return "auto";
    case EngineConfig::SyncCovers::kOn: return "on";
    case EngineConfig::SyncCovers::kOff: return "off";
  }
  return "?";
}

absl::Status EngineConfig::ResolveSharedFlush(const std::vector<std::string>& data_files) {
  sync_covers_partition = false;
  if (sync_covers == SyncCovers::kOff) {
    sync_covers_why = "pgring_sync_covers=off";
  } else if (backend != Backend::kRing) {
    sync_covers_why = "the RocksDB backend has no partition flush for a RocksDB sync to replace";
  } else {
    FlushDomainCheck c = CheckSyncCoversPartition(EffectiveDbPath(), log_dev);
    sync_covers_partition = c.shared;
    sync_covers_why = c.why;
  }
  if (!sync_covers_partition && sync_covers == SyncCovers::kOn) {
    return absl::InvalidArgumentError(
        absl::StrCat("pgring engine: pgring_sync_covers=on, but a RocksDB sync cannot cover the "
                     "log partition: ", sync_covers_why));
  }
  share_flush = false;
  if (shared_flush == SharedFlush::kOff) {
    share_flush_why = "pgring_shared_flush=off";
    return absl::OkStatus();
  }
  std::string why;
  if (backend != Backend::kRing) {
    why = "the RocksDB backend has no partition flush before its commit to share";
  } else if (data_files.empty()) {
    why = "the job has no data file";
  } else {
    share_flush = true;
    for (const std::string& f : data_files) {
      FlushDomainCheck c = CheckSharedFlush(f, log_dev);
      if (!c.shared) {
        share_flush = false;
        why = c.why;
        break;
      }
      why = c.why;
    }
  }
  if (!share_flush && shared_flush == SharedFlush::kOn) {
    return absl::InvalidArgumentError(
        absl::StrCat("pgring engine: pgring_shared_flush=on, but one flush cannot cover the "
                     "data and the log: ", why));
  }
  share_flush_why = why;
  return absl::OkStatus();
}

uint64_t EngineConfig::TargetLogEntries() const {
  if (TotalPgs() == 0 || osd_target_pg_log_entries_per_osd == 0) return osd_min_pg_log_entries;
  return std::clamp<uint64_t>(osd_target_pg_log_entries_per_osd / TotalPgs(), osd_min_pg_log_entries,
                              osd_max_pg_log_entries);
}

absl::Status EngineConfig::Validate() const {
  auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("pgring engine: ", what));
  };
  if (log_dev.empty()) return bad("pgring_log_dev is required (the log partition: a file or block device)");
  if (db_path.empty()) {
    // Lexically, from the current directory: the directory does not exist
    // yet, and a symlink to a block device (/dev/disk/by-id/...) is under
    // /dev itself.
    std::error_code ec;
    const std::filesystem::path db =
        std::filesystem::absolute(EffectiveDbPath(), ec).lexically_normal();
    if (!ec && db.string().starts_with("/dev/")) {
      return bad(absl::StrCat("pgring_db is not set, and its default, <pgring_log_dev>.db = ",
                              db.string(), ", is under /dev: RocksDB would live in devtmpfs, in "
                              "RAM, and the run would measure nothing real; set pgring_db to a "
                              "directory on a disk"));
    }
  }
  if (pgs == 0) return bad("pgring_pgs must be at least 1");
  if (pools == 0) return bad("the OSD needs at least one pool");
  if (TotalPgs() > (uint64_t{1} << 31)) {
    return bad(absl::StrFormat("pgring_pgs (%u) x pools (%u, one per job) is too many PGs", pgs,
                               pools));
  }
  if (object_size == 0) return bad("pgring_object_size must not be 0");
  if (entry_min == 0 || entry_min > entry_max) {
    return bad(absl::StrFormat("pgring_entry_min (%u) must be between 1 and pgring_entry_max (%u)",
                               entry_min, entry_max));
  }
  // Each payload starts with a 16-byte header (tag, PG, version) so that a
  // misplaced payload is recognised by the log check.
  if (entry_min < 16 || fastinfo_size < 16 || info_size < 16 || dup_size < 16 ||
      (OnodeValueSize() != 0 && OnodeValueSize() < 16)) {
    return bad("pgring_entry_min, pgring_fastinfo_size, pgring_info_size, pgring_dup_size and "
               "pgring_onode_size + pgring_oi_attr_len must be at least 16 bytes (the onode may "
               "be 0: no onode)");
  }
  if (osd_min_pg_log_entries > osd_max_pg_log_entries) {
    return bad(absl::StrFormat("osd_min_pg_log_entries (%u) exceeds osd_max_pg_log_entries (%u)",
                               osd_min_pg_log_entries, osd_max_pg_log_entries));
  }
  if (osd_pg_log_trim_max == 0) return bad("osd_pg_log_trim_max must be at least 1");
  return absl::OkStatus();
}

std::string EngineConfig::StoreSignature() const {
  return absl::StrCat(
      "backend=", BackendName(backend), " db=", EffectiveDbPath(), " mkfs=", mkfs,
      " chunk_size=", chunk_size, " durability=", DurabilityName(durability),
      " tail_policy=", TailPolicyName(tail_policy), " layout=", LayoutName(layout),
      " compression=", CompressionName(compression),
      " stream_chunks=", stream_chunks, " home_bytes=", home_bytes,
      " resident_bytes=", resident_bytes, " force_home_percent=", force_home_percent,
     
      " stream_bypass=", stream_bypass, " io_engine=", IoEngineName(io_engine),
      " shared_flush=", share_flush, " sync_covers=", sync_covers_partition,
      " pgs=", pgs, " single_pool_mode=", single_pool_mode, " pools=", pools,
      " object_size=", object_size, " onode_size=", onode_size,
      " oi_attr_len=", oi_attr_len, " dup_size=", dup_size,
      " entry=", entry_min, "-", entry_max, " fastinfo_size=", fastinfo_size,
      " info_size=", info_size, " full_info_every=", full_info_every, " prefill=", prefill, " no_pg_log=", no_pg_log,
      " payload=", PayloadName(payload),
      " osd_min_pg_log_entries=", osd_min_pg_log_entries,
      " osd_max_pg_log_entries=", osd_max_pg_log_entries,
      " osd_target_pg_log_entries_per_osd=", osd_target_pg_log_entries_per_osd,
      " osd_pg_log_dups_tracked=", osd_pg_log_dups_tracked,
      " osd_pg_log_trim_min=", osd_pg_log_trim_min, " osd_pg_log_trim_max=", osd_pg_log_trim_max);
}

}  // namespace pgring::fio
