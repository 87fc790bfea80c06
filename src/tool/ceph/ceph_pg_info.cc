// pg_info_t and what it holds: pg_t, pg_stat_t (object_stat_collection_t,
// object_stat_sum_t, pg_shard_t), pg_history_t, pg_hit_set_history_t.
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tool/ceph/ceph_types.h"
#include "util/status_macros.h"

namespace pgring::tool::ceph {
namespace {

constexpr uint8_t kPgInfoV = 34;
constexpr uint8_t kPgStatV = 30;
constexpr uint8_t kStatCollectionV = 2;
constexpr uint8_t kStatSumV = 20;
constexpr uint8_t kStatSumOldestV = 14;  // the oldest struct_compat Ceph writes
constexpr uint8_t kHistoryV = 10;
constexpr uint8_t kHitSetHistoryV = 1;
constexpr uint8_t kHitSetInfoV = 2;
constexpr uint8_t kPgShardV = 1;
constexpr uint8_t kPgFastInfoV = 1;

// A shard id of -1 is "no shard" (a replicated pool).
std::string PgShardText(int32_t osd, int8_t shard) {
  return shard < 0 ? absl::StrCat(osd) : absl::StrCat(osd, "(", shard, ")");
}

// pg_t: u8 version, u64 pool, u32 seed, i32 (the unused "preferred").
absl::StatusOr<Json> ReadPgT(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint8_t v, r.U8(absl::StrCat(field, ".v")));
  if (v != 1) return r.Error(field, absl::StrFormat("pg_t version %u is not 1", v));
  ASSIGN_OR_RETURN(uint64_t pool, r.U64(absl::StrCat(field, ".pool")));
  ASSIGN_OR_RETURN(uint32_t seed, r.U32(absl::StrCat(field, ".seed")));
  ASSIGN_OR_RETURN(int32_t preferred, r.I32(absl::StrCat(field, ".preferred")));
  (void)preferred;
  return Json(absl::StrFormat("%u.%x", pool, seed));
}

absl::StatusOr<Json> ReadI32Vector(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint32_t n, r.Count(field, 4));
  Json out = Json::array();
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(int32_t v, r.I32(absl::StrCat(field, "[", i, "]")));
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<Json> ReadPgShard(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_shard_t", kPgShardV));
  ASSIGN_OR_RETURN(int32_t osd, r.I32("osd"));
  ASSIGN_OR_RETURN(int8_t shard, r.I8("shard"));
  RETURN_IF_ERROR(r.End(f));
  return Json(PgShardText(osd, shard));
}

// object_stat_sum_t: int64 counters, four int32 mode flags among them, in
// Ceph's member order (which is also its encoding order).
absl::StatusOr<Json> ReadStatSum(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "object_stat_sum_t", kStatSumV));
  if (f.v < kStatSumOldestV) {
    return absl::UnimplementedError(absl::StrFormat(
        "object_stat_sum_t struct_v %u (older than %u) is not read", f.v, kStatSumOldestV));
  }
  struct Field {
    const char* name;
    int bytes;      // 8 or 4
    uint8_t since;  // struct_v that added it
  };
  static constexpr Field kFields[] = {
      {"num_bytes", 8, 0},
      {"num_objects", 8, 0},
      {"num_object_clones", 8, 0},
      {"num_object_copies", 8, 0},
      {"num_objects_missing_on_primary", 8, 0},
      {"num_objects_degraded", 8, 0},
      {"num_objects_unfound", 8, 0},
      {"num_read", 8, 0},
      {"num_read_kb", 8, 0},
      {"num_write", 8, 0},
      {"num_write_kb", 8, 0},
      {"num_scrub_errors", 8, 0},
      {"num_objects_recovered", 8, 0},
      {"num_bytes_recovered", 8, 0},
      {"num_keys_recovered", 8, 0},
      {"num_shallow_scrub_errors", 8, 0},
      {"num_deep_scrub_errors", 8, 0},
      {"num_objects_dirty", 8, 0},
      {"num_whiteouts", 8, 0},
      {"num_objects_omap", 8, 0},
      {"num_objects_hit_set_archive", 8, 0},
      {"num_objects_misplaced", 8, 0},
      {"num_bytes_hit_set_archive", 8, 0},
      {"num_flush", 8, 0},
      {"num_flush_kb", 8, 0},
      {"num_evict", 8, 0},
      {"num_evict_kb", 8, 0},
      {"num_promote", 8, 0},
      {"num_flush_mode_high", 4, 0},
      {"num_flush_mode_low", 4, 0},
      {"num_evict_mode_some", 4, 0},
      {"num_evict_mode_full", 4, 0},
      {"num_objects_pinned", 8, 0},
      {"num_objects_missing", 8, 0},
      {"num_legacy_snapsets", 8, 16},
      {"num_large_omap_objects", 8, 17},
      {"num_objects_manifest", 8, 18},
      {"num_omap_bytes", 8, 19},
      {"num_omap_keys", 8, 19},
      {"num_objects_repaired", 8, 20},
  };
  Json s;
  for (const Field& fl : kFields) {
    if (f.v < fl.since) break;
    if (fl.bytes == 8) {
      ASSIGN_OR_RETURN(int64_t v, r.I64(fl.name));
      s[fl.name] = v;
    } else {
      ASSIGN_OR_RETURN(int32_t v, r.I32(fl.name));
      s[fl.name] = v;
    }
  }
  RETURN_IF_ERROR(r.End(f));
  return s;
}

absl::StatusOr<Json> ReadStatCollection(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "object_stat_collection_t", kStatCollectionV,
                                                /*compat_from_v=*/2, /*len_from_v=*/2));
  Json c;
  ASSIGN_OR_RETURN(c["sum"], ReadStatSum(r, "sum"));
  // The per-category sums Ceph no longer keeps (written empty).
  ASSIGN_OR_RETURN(uint32_t n, r.Count("cat_sum", 4 + 6));
  Json cats = Json::object();
  for (uint32_t i = 0; i < n; ++i) {
    const std::string at = absl::StrCat("cat_sum[", i, "]");
    ASSIGN_OR_RETURN(std::string_view name, r.LengthPrefixed(absl::StrCat(at, ".name")));
    ASSIGN_OR_RETURN(cats[std::string(name)], ReadStatSum(r, at));
  }
  c["cat_sum"] = std::move(cats);
  RETURN_IF_ERROR(r.End(f));
  return c;
}

absl::StatusOr<Json> ReadPgStat(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_stat_t", kPgStatV));
  Json s;
  auto ev = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(s[name], ReadEversion(r, name));
    return absl::OkStatus();
  };
  auto ut = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(s[name], ReadUtime(r, name));
    return absl::OkStatus();
  };
  auto flag = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(bool b, r.Bool(name));
    s[name] = b;
    return absl::OkStatus();
  };
  auto u32 = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(uint32_t v, r.U32(name));
    s[name] = v;
    return absl::OkStatus();
  };
  auto i32 = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(int32_t v, r.I32(name));
    s[name] = v;
    return absl::OkStatus();
  };
  auto i64 = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(int64_t v, r.I64(name));
    s[name] = v;
    return absl::OkStatus();
  };
  auto f64 = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(double v, r.F64(name));
    s[name] = v;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ev("version"));
  ASSIGN_OR_RETURN(uint64_t reported_seq, r.U64("reported_seq"));
  s["reported_seq"] = reported_seq;
  RETURN_IF_ERROR(u32("reported_epoch"));
  ASSIGN_OR_RETURN(uint32_t state_low, r.U32("state"));
  uint64_t state = state_low;
  RETURN_IF_ERROR(ev("log_start"));
  RETURN_IF_ERROR(ev("ondisk_log_start"));
  RETURN_IF_ERROR(u32("created"));
  RETURN_IF_ERROR(u32("last_epoch_clean"));
  ASSIGN_OR_RETURN(s["parent"], ReadPgT(r, "parent"));
  RETURN_IF_ERROR(u32("parent_split_bits"));
  RETURN_IF_ERROR(ev("last_scrub"));
  RETURN_IF_ERROR(ut("last_scrub_stamp"));
  ASSIGN_OR_RETURN(s["stats"], ReadStatCollection(r, "stats"));
  RETURN_IF_ERROR(i64("log_size"));
  RETURN_IF_ERROR(i64("ondisk_log_size"));
  ASSIGN_OR_RETURN(s["up"], ReadI32Vector(r, "up"));
  ASSIGN_OR_RETURN(s["acting"], ReadI32Vector(r, "acting"));
  RETURN_IF_ERROR(ut("last_fresh"));
  RETURN_IF_ERROR(ut("last_change"));
  RETURN_IF_ERROR(ut("last_active"));
  RETURN_IF_ERROR(ut("last_clean"));
  RETURN_IF_ERROR(ut("last_unstale"));
  RETURN_IF_ERROR(u32("mapping_epoch"));
  RETURN_IF_ERROR(ev("last_deep_scrub"));
  RETURN_IF_ERROR(ut("last_deep_scrub_stamp"));
  RETURN_IF_ERROR(flag("stats_invalid"));
  RETURN_IF_ERROR(ut("last_clean_scrub_stamp"));
  RETURN_IF_ERROR(ut("last_became_active"));
  RETURN_IF_ERROR(flag("dirty_stats_invalid"));
  RETURN_IF_ERROR(i32("up_primary"));
  RETURN_IF_ERROR(i32("acting_primary"));
  RETURN_IF_ERROR(flag("omap_stats_invalid"));
  RETURN_IF_ERROR(flag("hitset_stats_invalid"));
  ASSIGN_OR_RETURN(s["blocked_by"], ReadI32Vector(r, "blocked_by"));
  RETURN_IF_ERROR(ut("last_undegraded"));
  RETURN_IF_ERROR(ut("last_fullsized"));
  RETURN_IF_ERROR(flag("hitset_bytes_stats_invalid"));
  RETURN_IF_ERROR(ut("last_peered"));
  RETURN_IF_ERROR(ut("last_became_peered"));
  RETURN_IF_ERROR(flag("pin_stats_invalid"));
  if (f.v >= 23) {
    RETURN_IF_ERROR(u32("snaptrimq_len"));
  }
  if (f.v >= 24) {
    ASSIGN_OR_RETURN(uint32_t state_high, r.U32("state (high bits)"));
    state |= uint64_t{state_high} << 32;
    ASSIGN_OR_RETURN(s["purged_snaps"], ReadIntervalSet(r, "purged_snaps"));
  }
  s["state"] = absl::StrFormat("0x%x", state);
  if (f.v >= 25) {
    RETURN_IF_ERROR(flag("manifest_stats_invalid"));
  }
  if (f.v >= 26) {
    ASSIGN_OR_RETURN(uint32_t n, r.Count("avail_no_missing", 11));
    Json avail = Json::array();
    for (uint32_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(Json shard, ReadPgShard(r, absl::StrCat("avail_no_missing[", i, "]")));
      avail.push_back(std::move(shard));
    }
    s["avail_no_missing"] = std::move(avail);
    ASSIGN_OR_RETURN(uint32_t m, r.Count("object_location_counts", 8));
    Json counts = Json::array();
    for (uint32_t i = 0; i < m; ++i) {
      const std::string at = absl::StrCat("object_location_counts[", i, "]");
      ASSIGN_OR_RETURN(uint32_t k, r.Count(absl::StrCat(at, ".shards"), 11));
      Json shards = Json::array();
      for (uint32_t j = 0; j < k; ++j) {
        ASSIGN_OR_RETURN(Json shard, ReadPgShard(r, absl::StrCat(at, ".shards[", j, "]")));
        shards.push_back(std::move(shard));
      }
      ASSIGN_OR_RETURN(int32_t objects, r.I32(absl::StrCat(at, ".objects")));
      counts.push_back({{"shards", std::move(shards)}, {"objects", objects}});
    }
    s["object_location_counts"] = std::move(counts);
  }
  if (f.v >= 27) {
    RETURN_IF_ERROR(i32("last_scrub_duration"));
    RETURN_IF_ERROR(ut("scrub_scheduled_at"));
    RETURN_IF_ERROR(i32("scrub_duration_seconds"));
    ASSIGN_OR_RETURN(uint16_t sched, r.U16("scrub_sched_status"));
    s["scrub_sched_status"] = sched;
    RETURN_IF_ERROR(flag("scrub_is_active"));
    RETURN_IF_ERROR(flag("scrub_is_deep"));
    RETURN_IF_ERROR(flag("scrub_is_periodic"));
    RETURN_IF_ERROR(i64("objects_scrubbed"));
  }
  if (f.v >= 28) {
    RETURN_IF_ERROR(f64("scrub_duration"));
    RETURN_IF_ERROR(i64("objects_trimmed"));
    RETURN_IF_ERROR(f64("snaptrim_duration"));
  }
  if (f.v >= 29) {
    RETURN_IF_ERROR(i64("log_dups_size"));
  }
  if (f.v >= 30) {
    ASSIGN_OR_RETURN(uint16_t osd_to_respond, r.U16("scrub_osd_to_respond"));
    s["scrub_osd_to_respond"] = osd_to_respond;
    ASSIGN_OR_RETURN(uint8_t ordinal, r.U8("scrub_ordinal_of_requested_replica"));
    s["scrub_ordinal_of_requested_replica"] = ordinal;
    ASSIGN_OR_RETURN(uint8_t num, r.U8("scrub_num_to_reserve"));
    s["scrub_num_to_reserve"] = num;
  }
  s["struct_v"] = f.v;
  RETURN_IF_ERROR(r.End(f));
  return s;
}

absl::StatusOr<Json> ReadHistory(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_history_t", kHistoryV,
                                                /*compat_from_v=*/4, /*len_from_v=*/4));
  Json h;
  auto epoch = [&](const char* name) -> absl::Status {
    ASSIGN_OR_RETURN(uint32_t v, r.U32(name));
    h[name] = v;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(epoch("epoch_created"));
  RETURN_IF_ERROR(epoch("last_epoch_started"));
  if (f.v >= 3) RETURN_IF_ERROR(epoch("last_epoch_clean"));
  RETURN_IF_ERROR(epoch("last_epoch_split"));
  RETURN_IF_ERROR(epoch("same_interval_since"));
  RETURN_IF_ERROR(epoch("same_up_since"));
  RETURN_IF_ERROR(epoch("same_primary_since"));
  if (f.v >= 2) {
    ASSIGN_OR_RETURN(h["last_scrub"], ReadEversion(r, "last_scrub"));
    ASSIGN_OR_RETURN(h["last_scrub_stamp"], ReadUtime(r, "last_scrub_stamp"));
  }
  if (f.v >= 5) {
    ASSIGN_OR_RETURN(h["last_deep_scrub"], ReadEversion(r, "last_deep_scrub"));
    ASSIGN_OR_RETURN(h["last_deep_scrub_stamp"], ReadUtime(r, "last_deep_scrub_stamp"));
  }
  if (f.v >= 6) {
    ASSIGN_OR_RETURN(h["last_clean_scrub_stamp"], ReadUtime(r, "last_clean_scrub_stamp"));
  }
  if (f.v >= 7) RETURN_IF_ERROR(epoch("last_epoch_marked_full"));
  if (f.v >= 8) {
    RETURN_IF_ERROR(epoch("last_interval_started"));
    RETURN_IF_ERROR(epoch("last_interval_clean"));
  }
  if (f.v >= 9) RETURN_IF_ERROR(epoch("epoch_pool_created"));
  if (f.v >= 10) {
    // A duration: i32 seconds, i32 nanoseconds.
    ASSIGN_OR_RETURN(int32_t sec, r.I32("prior_readable_until_ub.sec"));
    ASSIGN_OR_RETURN(int32_t nsec, r.I32("prior_readable_until_ub.nsec"));
    h["prior_readable_until_ub"] = static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;
  }
  h["struct_v"] = f.v;
  RETURN_IF_ERROR(r.End(f));
  return h;
}

absl::StatusOr<Json> ReadHitSetInfo(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_hit_set_info_t", kHitSetInfoV));
  Json i;
  ASSIGN_OR_RETURN(i["begin"], ReadUtime(r, "begin"));
  ASSIGN_OR_RETURN(i["end"], ReadUtime(r, "end"));
  ASSIGN_OR_RETURN(i["version"], ReadEversion(r, "version"));
  i["using_gmt"] = false;
  if (f.v >= 2) {
    ASSIGN_OR_RETURN(bool gmt, r.Bool("using_gmt"));
    i["using_gmt"] = gmt;
  }
  RETURN_IF_ERROR(r.End(f));
  return i;
}

absl::StatusOr<Json> ReadHitSetHistory(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_hit_set_history_t", kHitSetHistoryV));
  Json h;
  ASSIGN_OR_RETURN(h["current_last_update"], ReadEversion(r, "current_last_update"));
  // Two placeholders Ceph still writes: a stamp and an info.
  ASSIGN_OR_RETURN(Json stamp, ReadUtime(r, "dummy_stamp"));
  ASSIGN_OR_RETURN(Json info, ReadHitSetInfo(r, "dummy_info"));
  (void)stamp;
  (void)info;
  ASSIGN_OR_RETURN(uint32_t n, r.Count("history", 6 + 28));
  Json history = Json::array();
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(Json one, ReadHitSetInfo(r, absl::StrCat("history[", i, "]")));
    history.push_back(std::move(one));
  }
  h["history"] = std::move(history);
  RETURN_IF_ERROR(r.End(f));
  return h;
}

}  // namespace

absl::StatusOr<Json> ReadPgInfo(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_info_t", kPgInfoV));
  Json i;
  ASSIGN_OR_RETURN(Json pgid, ReadPgT(r, "pgid"));
  i["pgid"] = pgid;
  ASSIGN_OR_RETURN(i["last_update"], ReadEversion(r, "last_update"));
  ASSIGN_OR_RETURN(i["last_complete"], ReadEversion(r, "last_complete"));
  ASSIGN_OR_RETURN(i["log_tail"], ReadEversion(r, "log_tail"));
  // The nibblewise last_backfill Ceph no longer uses (written empty).
  ASSIGN_OR_RETURN(Json old_last_backfill, ReadHobject(r, "old_last_backfill"));
  (void)old_last_backfill;
  ASSIGN_OR_RETURN(Json stats, ReadPgStat(r, "stats"));
  ASSIGN_OR_RETURN(Json history, ReadHistory(r, "history"));
  ASSIGN_OR_RETURN(i["purged_snaps"], ReadIntervalSet(r, "purged_snaps"));
  ASSIGN_OR_RETURN(uint32_t les, r.U32("last_epoch_started"));
  i["last_epoch_started"] = les;
  ASSIGN_OR_RETURN(uint64_t luv, r.U64("last_user_version"));
  i["last_user_version"] = luv;
  ASSIGN_OR_RETURN(i["hit_set_history"], ReadHitSetHistory(r, "hit_set"));
  ASSIGN_OR_RETURN(int8_t shard, r.I8("pgid.shard"));
  if (shard >= 0) i["pgid"] = absl::StrCat(pgid.get<std::string>(), "s", shard);
  ASSIGN_OR_RETURN(i["last_backfill"], ReadHobject(r, "last_backfill"));
  ASSIGN_OR_RETURN(bool bitwise, r.Bool("last_backfill_bitwise"));
  i["last_backfill_bitwise"] = bitwise;
  i["last_interval_started"] = les;
  if (f.v >= 32) {
    ASSIGN_OR_RETURN(uint32_t lis, r.U32("last_interval_started"));
    i["last_interval_started"] = lis;
  }
  if (f.v >= 33) {
    ASSIGN_OR_RETURN(uint32_t n, r.Count("partial_writes_last_complete", 1 + 24));
    Json pw = Json::array();
    for (uint32_t k = 0; k < n; ++k) {
      const std::string at = absl::StrCat("partial_writes_last_complete[", k, "]");
      Json e;
      ASSIGN_OR_RETURN(int8_t s, r.I8(absl::StrCat(at, ".shard")));
      e["shard"] = s;
      ASSIGN_OR_RETURN(e["from"], ReadEversion(r, absl::StrCat(at, ".from")));
      ASSIGN_OR_RETURN(e["to"], ReadEversion(r, absl::StrCat(at, ".to")));
      pw.push_back(std::move(e));
    }
    i["partial_writes_last_complete"] = std::move(pw);
  }
  if (f.v >= 34) {
    ASSIGN_OR_RETURN(uint32_t e, r.U32("partial_writes_last_complete_epoch"));
    i["partial_writes_last_complete_epoch"] = e;
  }
  i["history"] = std::move(history);
  i["stats"] = std::move(stats);
  i["struct_v"] = f.v;
  RETURN_IF_ERROR(r.End(f));
  return i;
}

absl::StatusOr<Json> ReadPgFastInfo(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_fast_info_t", kPgFastInfoV));
  Json i;
  ASSIGN_OR_RETURN(i["last_update"], ReadEversion(r, "last_update"));
  ASSIGN_OR_RETURN(i["last_complete"], ReadEversion(r, "last_complete"));
  ASSIGN_OR_RETURN(uint64_t luv, r.U64("last_user_version"));
  i["last_user_version"] = luv;
  Json s;
  ASSIGN_OR_RETURN(s["version"], ReadEversion(r, "stats.version"));
  ASSIGN_OR_RETURN(uint64_t seq, r.U64("stats.reported_seq"));
  s["reported_seq"] = seq;
  for (const char* t : {"last_fresh", "last_active", "last_peered", "last_clean", "last_unstale",
                        "last_undegraded", "last_fullsized"}) {
    ASSIGN_OR_RETURN(s[t], ReadUtime(r, absl::StrCat("stats.", t)));
  }
  ASSIGN_OR_RETURN(int64_t log_size, r.I64("stats.log_size"));
  s["log_size"] = log_size;
  Json sum;
  for (const char* n : {"num_bytes", "num_objects", "num_object_copies", "num_read", "num_read_kb",
                        "num_write", "num_write_kb", "num_objects_dirty"}) {
    ASSIGN_OR_RETURN(int64_t v, r.I64(absl::StrCat("stats.sum.", n)));
    sum[n] = v;
  }
  s["sum"] = std::move(sum);
  i["stats"] = std::move(s);
  i["struct_v"] = f.v;
  RETURN_IF_ERROR(r.End(f));
  return i;
}

std::string PgFastInfoText(const Json& i) {
  return absl::StrFormat(
      "fast info lu %s lc %s luv %u log_size %d objects %d", i["last_update"].get<std::string>(),
      i["last_complete"].get<std::string>(), i["last_user_version"].get<uint64_t>(),
      i["stats"]["log_size"].get<int64_t>(), i["stats"]["sum"]["num_objects"].get<int64_t>());
}

std::string PgInfoText(const Json& i) {
  const Json& h = i["history"];
  return absl::StrFormat("pg %s lu %s lc %s tail %s les %u luv %u (ec %u les %u lec %u sis %u)",
                         i["pgid"].get<std::string>(), i["last_update"].get<std::string>(),
                         i["last_complete"].get<std::string>(), i["log_tail"].get<std::string>(),
                         i["last_epoch_started"].get<uint32_t>(),
                         i["last_user_version"].get<uint64_t>(), h["epoch_created"].get<uint32_t>(),
                         h["last_epoch_started"].get<uint32_t>(), h.value("last_epoch_clean", 0u),
                         h["same_interval_since"].get<uint32_t>());
}

}  // namespace pgring::tool::ceph
