#include "ceph_payload.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/strings/str_format.h"
#include "osd_model.h"

namespace pgring::fio {
namespace {

// Ceph's little-endian encoding, with ENCODE_START/ENCODE_FINISH framing:
// struct_v, struct_compat, then a u32 length patched when the struct ends.
class Encoder {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Le(v, 2); }
  void U32(uint32_t v) { Le(v, 4); }
  void U64(uint64_t v) { Le(v, 8); }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Bool(bool v) { U8(v ? 1 : 0); }
  void F64(double d) {
    uint64_t v;
    static_assert(sizeof(v) == sizeof(d));
    std::memcpy(&v, &d, sizeof(v));
    U64(v);
  }
  void String(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  // eversion_t: version, then epoch.
  void Eversion(uint32_t epoch, uint64_t version) {
    U64(version);
    U32(epoch);
  }
  // utime_t: seconds, nanoseconds.
  void Utime(uint32_t sec, uint32_t nsec) {
    U32(sec);
    U32(nsec);
  }
  // Returns the position of the length to patch.
  size_t Start(uint8_t v, uint8_t compat) {
    U8(v);
    U8(compat);
    const size_t at = out_.size();
    U32(0);
    return at;
  }
  void Finish(size_t at) {
    const uint32_t len = static_cast<uint32_t>(out_.size() - at - 4);
    for (int i = 0; i < 4; ++i) out_[at + i] = static_cast<char>(len >> (8 * i));
  }
  std::string Take() { return std::move(out_); }

 private:
  void Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string out_;
};

constexpr uint32_t kEpoch = 1;              // the model's epoch
constexpr uint32_t kBaseTime = 1732600000;  // seconds: the "now" of the modelled cluster
constexpr uint64_t kNoSnap = ~uint64_t{0} - 1;
constexpr uint8_t kEntityClient = 0x08;
constexpr uint32_t kWriteSize = 4096;
constexpr int32_t kOpModify = 1;

// What one client write to a PG looks like, drawn from (PG, version).
struct Write {
  uint64_t object;  // RBD object number
  uint32_t hash;    // object name hash; maps to the PG
  int64_t pool;     // the PG's pool
  uint64_t offset;  // of the write in the object
  bool new_object;  // first write of the object: no prior version
  uint64_t prior;   // prior version (0: none)
  int64_t client;   // client.<id>
  uint64_t tid;
  uint32_t sec, nsec;  // mtime
};

// `pg` is the model's slot of the PG (osd_model.h: PgIdOfSlot).
Write WriteOf(const EngineConfig& c, uint32_t pg, uint64_t version) {
  Write w;
  const PgId id = PgIdOfSlot(pg, c.pgs);
  w.pool = id.pool;
  const uint64_t r = PayloadMix('w', pg, version);
  const uint64_t r2 = PayloadMix('x', pg, version);
  uint32_t mask = 1;
  while (mask < c.pgs) mask <<= 1;
  mask -= 1;
  // Ceph places by ceph_stable_mod(hash, pg_num): keep the PG's bits.
  w.hash = (static_cast<uint32_t>(r >> 32) & ~mask) | id.seed;
  w.object = (r & 0xffff) * c.pgs + id.seed;
  const uint64_t blocks = std::max<uint64_t>(1, c.object_size / kWriteSize);
  w.offset = (r2 % blocks) * kWriteSize;
  w.new_object = version == 1 || r2 % 16 == 0;
  w.prior = w.new_object ? 0 : version - 1 - (r % std::min<uint64_t>(version - 1, 1000));
  w.client = 4100 + static_cast<int64_t>(r2 % 8);
  w.tid = version * 4 + (r2 >> 8) % 4;
  // About 50 writes a second to a PG.
  w.sec = kBaseTime + static_cast<uint32_t>(version / 50) + pg % 60;
  w.nsec = static_cast<uint32_t>((r2 >> 16) % 1000000000);
  return w;
}

void Reqid(Encoder& e, const Write& w) {
  const size_t at = e.Start(2, 2);
  e.U8(kEntityClient);
  e.I64(w.client);
  e.U64(w.tid);
  e.I32(0);  // incarnation
  e.Finish(at);
}

void Hobject(Encoder& e, const Write& w) {
  const size_t at = e.Start(4, 3);
  e.String("");  // key
  e.String(absl::StrFormat("rbd_data.1f2e3d4c5b6a7.%016x", w.object));
  e.U64(kNoSnap);
  e.U32(w.hash);
  e.Bool(false);  // max
  e.String("");   // namespace
  e.I64(w.pool);
  e.Finish(at);
}

// hobject_t() and hobject_t::get_max(), as pg_info_t carries them.
void EmptyHobject(Encoder& e, bool max) {
  const size_t at = e.Start(4, 3);
  e.String("");
  e.String("");
  e.U64(0);
  e.U32(0);
  e.Bool(max);
  e.String("");
  e.I64(max ? INT64_MAX : INT64_MIN);
  e.Finish(at);
}

uint64_t LogTail(const EngineConfig& c, uint64_t version) {
  const uint64_t keep = c.TargetLogEntries();
  return version > keep ? version - keep : 0;
}

}  // namespace

std::string CephLogEntry(const EngineConfig& c, uint32_t pg, uint64_t version) {
  const Write w = WriteOf(c, pg, version);
  Encoder e;
  const size_t at = e.Start(14, 4);
  e.I32(kOpModify);
  Hobject(e, w);
  e.Eversion(kEpoch, version);
  e.Eversion(w.prior ? kEpoch : 0, w.prior);
  Reqid(e, w);
  e.Utime(w.sec, w.nsec);
  e.U32(0);        // snaps: an empty bufferlist
  e.U64(version);  // user_version
  {
    // mod_desc: a replicated pool's entries cannot roll back (no ops).
    const size_t md = e.Start(1, 1);
    e.Bool(false);  // can_local_rollback
    e.Bool(false);  // rollback_info_completed
    e.U32(0);
    e.Finish(md);
  }
  e.U32(0);  // extra_reqids
  {
    // clean_regions: what the write left clean. A new object is all dirty.
    const size_t cr = e.Start(1, 1);
    if (w.new_object) {
      e.U32(0);
    } else {
      const uint64_t end = w.offset + kWriteSize;
      e.U32(w.offset > 0 ? 2 : 1);
      if (w.offset > 0) {
        e.U64(0);
        e.U64(w.offset);
      }
      e.U64(end);
      e.U64(~uint64_t{0} - end);
    }
    e.Bool(!w.new_object);  // clean_omap
    e.Bool(w.new_object);   // new_object
    e.Finish(cr);
  }
  e.I32(0);  // return_code
  e.U32(0);  // op_returns
  e.Finish(at);
  return e.Take();
}

std::string CephLogDup(const EngineConfig& c, uint32_t pg, uint64_t version) {
  const Write w = WriteOf(c, pg, version);
  Encoder e;
  const size_t at = e.Start(2, 1);
  Reqid(e, w);
  e.Eversion(kEpoch, version);
  e.U64(version);  // user_version
  e.I32(0);        // return_code
  e.U32(0);        // op_returns
  e.Finish(at);
  return e.Take();
}

namespace {

// The stats both info forms carry, as functions of the PG's version.
struct SyntheticPgStats {
  int64_t objects, bytes, reads, read_kb, writes, write_kb, log_size;
  uint32_t fresh_sec;
};

SyntheticPgStats StatsOf(const EngineConfig& c, uint32_t pg, uint64_t version) {
  SyntheticPgStats s;
  s.objects = static_cast<int64_t>(std::min<uint64_t>(version, 2000 + pg % 97));
  s.bytes = s.objects * static_cast<int64_t>(c.object_size);
  s.writes = static_cast<int64_t>(version);
  s.write_kb = s.writes * kWriteSize / 1024;
  s.reads = static_cast<int64_t>(version / 3);
  s.read_kb = s.reads * 16;
  s.log_size = static_cast<int64_t>(version - LogTail(c, version));
  s.fresh_sec = kBaseTime + static_cast<uint32_t>(version / 50) + pg % 60;
  return s;
}

}  // namespace

std::string CephPgInfo(const EngineConfig& c, uint32_t pg, uint64_t version) {
  const SyntheticPgStats st = StatsOf(c, pg, version);
  const uint64_t tail = LogTail(c, version);
  const uint32_t created = kBaseTime - 86400 * 30;
  const uint32_t scrubbed = st.fresh_sec - 3600 * (pg % 24);
  const int32_t osds[3] = {static_cast<int32_t>(pg % 12), static_cast<int32_t>((pg + 5) % 12),
                           static_cast<int32_t>((pg + 9) % 12)};
  Encoder e;
  const size_t at = e.Start(32, 26);
  // pgid (pg_t)
  const PgId id = PgIdOfSlot(pg, c.pgs);
  e.U8(1);
  e.U64(static_cast<uint64_t>(id.pool));
  e.U32(id.seed);
  e.I32(-1);
  e.Eversion(kEpoch, version);          // last_update
  e.Eversion(kEpoch, version);          // last_complete
  e.Eversion(tail ? kEpoch : 0, tail);  // log_tail
  EmptyHobject(e, false);               // the old last_backfill
  {
    // pg_stat_t v29
    const size_t ps = e.Start(29, 22);
    e.Eversion(kEpoch, version);
    e.U64(version + 3 * (st.fresh_sec - kBaseTime));  // reported_seq
    e.U32(kEpoch);                                    // reported_epoch
    e.U32(0x6);                                       // state: active+clean
    e.Eversion(tail ? kEpoch : 0, tail);              // log_start
    e.Eversion(tail ? kEpoch : 0, tail);              // ondisk_log_start
    e.U32(kEpoch);                                    // created
    e.U32(kEpoch);                                    // last_epoch_clean
    e.U8(1);                                          // parent (pg_t 0.0)
    e.U64(0);
    e.U32(0);
    e.I32(-1);
    e.U32(0);                                               // parent_split_bits
    e.Eversion(kEpoch, version > 500 ? version - 500 : 0);  // last_scrub
    e.Utime(scrubbed, 0);
    {
      const size_t sc = e.Start(2, 2);  // object_stat_collection_t
      const size_t ss = e.Start(20, 14);
      const int64_t sum64[28] = {st.bytes,   st.objects, 0,           st.objects * 3,
                                 0,          0,          0,           st.reads,
                                 st.read_kb, st.writes,  st.write_kb, 0,
                                 0,          0,          0,           0,
                                 0,          st.objects, 0,           0,
                                 0,          0,          0,           0,
                                 0,          0,          0,           0};
      for (int64_t v : sum64) e.I64(v);
      for (int i = 0; i < 4; ++i) e.I32(0);  // flush/evict modes
      for (int i = 0; i < 8; ++i) e.I64(0);  // pinned .. repaired
      e.Finish(ss);
      e.U32(0);  // cat_sum
      e.Finish(sc);
    }
    e.I64(st.log_size);
    e.I64(st.log_size);  // ondisk_log_size
    e.U32(3);
    for (int32_t o : osds) e.I32(o);  // up
    e.U32(3);
    for (int32_t o : osds) e.I32(o);                        // acting
    for (int i = 0; i < 5; ++i) e.Utime(st.fresh_sec, 0);   // fresh change active clean unstale
    e.U32(kEpoch);                                          // mapping_epoch
    e.Eversion(kEpoch, version > 500 ? version - 500 : 0);  // last_deep_scrub
    e.Utime(scrubbed, 0);
    e.Bool(false);                             // stats_invalid
    e.Utime(scrubbed, 0);                      // last_clean_scrub_stamp
    e.Utime(created, 0);                       // last_became_active
    e.Bool(false);                             // dirty_stats_invalid
    e.I32(osds[0]);                            // up_primary
    e.I32(osds[0]);                            // acting_primary
    e.Bool(false);                             // omap_stats_invalid
    e.Bool(false);                             // hitset_stats_invalid
    e.U32(0);                                  // blocked_by
    e.Utime(st.fresh_sec, 0);                  // last_undegraded
    e.Utime(st.fresh_sec, 0);                  // last_fullsized
    e.Bool(false);                             // hitset_bytes_stats_invalid
    e.Utime(st.fresh_sec, 0);                  // last_peered
    e.Utime(created, 0);                       // last_became_peered
    e.Bool(false);                             // pin_stats_invalid
    e.U32(0);                                  // snaptrimq_len
    e.U32(0);                                  // state, high bits
    e.U32(0);                                  // purged_snaps
    e.Bool(false);                             // manifest_stats_invalid
    e.U32(0);                                  // avail_no_missing
    e.U32(0);                                  // object_location_counts
    e.I32(static_cast<int32_t>(5 + pg % 40));  // last_scrub_duration
    e.Utime(scrubbed + 86400, 0);              // scrub scheduled at
    e.I32(0);                                  // scrub duration seconds
    e.U16(3);                                  // scheduled
    e.Bool(false);
    e.Bool(false);
    e.Bool(true);          // periodic
    e.I64(st.objects);     // objects_scrubbed
    e.F64(5.0 + pg % 40);  // scrub_duration
    e.I64(0);              // objects_trimmed
    e.F64(0);              // snaptrim_duration
    e.I64(static_cast<int64_t>(std::min<uint64_t>(tail, c.osd_pg_log_dups_tracked)));
    e.Finish(ps);
  }
  {
    // pg_history_t v10
    const size_t h = e.Start(10, 4);
    for (int i = 0; i < 2; ++i) e.U32(kEpoch);  // epoch_created, last_epoch_started
    e.U32(kEpoch);                              // last_epoch_clean
    e.U32(0);                                   // last_epoch_split
    for (int i = 0; i < 3; ++i) e.U32(kEpoch);  // same interval/up/primary since
    e.Eversion(kEpoch, version > 500 ? version - 500 : 0);
    e.Utime(scrubbed, 0);
    e.Eversion(kEpoch, version > 500 ? version - 500 : 0);
    e.Utime(scrubbed, 0);
    e.Utime(scrubbed, 0);  // last_clean_scrub_stamp
    e.U32(0);              // last_epoch_marked_full
    e.U32(kEpoch);         // last_interval_started
    e.U32(kEpoch);         // last_interval_clean
    e.U32(kEpoch);         // epoch_pool_created
    e.I32(0);              // prior_readable_until_ub
    e.I32(0);
    e.Finish(h);
  }
  e.U32(0);        // purged_snaps
  e.U32(kEpoch);   // last_epoch_started
  e.U64(version);  // last_user_version
  {
    const size_t hs = e.Start(1, 1);  // pg_hit_set_history_t
    e.Eversion(0, 0);
    e.Utime(0, 0);
    const size_t hi = e.Start(2, 1);
    e.Utime(0, 0);
    e.Utime(0, 0);
    e.Eversion(0, 0);
    e.Bool(true);
    e.Finish(hi);
    e.U32(0);
    e.Finish(hs);
  }
  e.U8(0xff);             // shard: none
  EmptyHobject(e, true);  // last_backfill: MAX, backfill complete
  e.Bool(true);           // last_backfill_bitwise
  e.U32(kEpoch);          // last_interval_started
  e.Finish(at);
  return e.Take();
}

std::string CephPgFastInfo(const EngineConfig& c, uint32_t pg, uint64_t version) {
  const SyntheticPgStats st = StatsOf(c, pg, version);
  Encoder e;
  const size_t at = e.Start(1, 1);
  e.Eversion(kEpoch, version);  // last_update
  e.Eversion(kEpoch, version);  // last_complete
  e.U64(version);               // last_user_version
  e.Eversion(kEpoch, version);  // stats.version
  e.U64(version + 3 * (st.fresh_sec - kBaseTime));
  for (int i = 0; i < 7; ++i) e.Utime(st.fresh_sec, 0);
  e.I64(st.log_size);
  for (int64_t v : {st.bytes, st.objects, st.objects * 3, st.reads, st.read_kb, st.writes,
                    st.write_kb, st.objects}) {
    e.I64(v);
  }
  e.Finish(at);
  return e.Take();
}

}  // namespace pgring::fio
