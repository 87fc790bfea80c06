// The small types and the log's records: eversion_t, utime_t, osd_reqid_t,
// hobject_t, pg_log_entry_t (with ObjectModDesc and ObjectCleanRegions) and
// pg_log_dup_t.
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "tool/ceph/ceph_types.h"
#include "util/status_macros.h"

namespace pgring::tool::ceph {
namespace {

// Newest versions this decoder reads (what Ceph 19 writes, or newer where
// the layout is known).
constexpr uint8_t kReqidV = 2;
constexpr uint8_t kHobjectV = 4;
constexpr uint8_t kLogEntryV = 14;
constexpr uint8_t kModDescV = 2;
constexpr uint8_t kCleanRegionsV = 1;
constexpr uint8_t kLogDupV = 2;

// pg_log_entry_t::op
constexpr int32_t kOpLostRevert = 5;
constexpr int32_t kOpError = 10;

// hobject_t::snap's reserved values.
constexpr uint64_t kNoSnap = ~uint64_t{0} - 1;  // "head"
constexpr uint64_t kSnapDir = ~uint64_t{0};     // "snapdir"

std::string OpName(int32_t op) {
  switch (op) {
    case 1:
      return "modify";
    case 2:
      return "clone";
    case 3:
      return "delete";
    case 4:
      return "backlog";
    case 5:
      return "l_revert";
    case 6:
      return "l_delete";
    case 7:
      return "l_mark";
    case 8:
      return "promote";
    case 9:
      return "clean";
    case 10:
      return "error";
    case 11:
      return "replace";
  }
  return absl::StrCat("unknown(", op, ")");
}

std::string EntityTypeName(uint8_t t) {
  switch (t) {
    case 0x01:
      return "mon";
    case 0x02:
      return "mds";
    case 0x04:
      return "osd";
    case 0x08:
      return "client";
    case 0x10:
      return "mgr";
    case 0x20:
      return "auth";
  }
  return absl::StrFormat("type%u", t);
}

std::string SnapText(uint64_t snap) {
  if (snap == kNoSnap) return "head";
  if (snap == kSnapDir) return "snapdir";
  return absl::StrFormat("%x", snap);
}

uint32_t ReverseBits(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) {
    r = (r << 1) | (v & 1);
    v >>= 1;
  }
  return r;
}

// vector<snapid_t> (u32 count + u64s), as a pg_log_entry_t's snaps hold it.
absl::StatusOr<Json> ReadSnapVector(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint32_t n, r.Count(field, 8));
  Json out = Json::array();
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(uint64_t s, r.U64(absl::StrCat(field, "[", i, "]")));
    out.push_back(s);
  }
  return out;
}

// One rollback operation of an ObjectModDesc: its own versioned frame (read
// by Ceph without a compat check), a code, the code's arguments.
absl::StatusOr<Json> ReadModOp(CephReader& r, absl::string_view field) {
  auto f = r.Begin(field, "ObjectModDesc op", 255);
  if (!f.ok()) return f.status();
  ASSIGN_OR_RETURN(uint8_t code, r.U8("code"));
  Json op;
  switch (code) {
    case 1: {
      op["code"] = "APPEND";
      ASSIGN_OR_RETURN(uint64_t old_size, r.U64("old_size"));
      op["old_size"] = old_size;
      break;
    }
    case 2: {
      op["code"] = "SETATTRS";
      ASSIGN_OR_RETURN(uint32_t n, r.Count("attrs", 5));
      Json attrs = Json::array();
      for (uint32_t i = 0; i < n; ++i) {
        const std::string at = absl::StrCat("attrs[", i, "]");
        ASSIGN_OR_RETURN(std::string_view name, r.LengthPrefixed(absl::StrCat(at, ".name")));
        ASSIGN_OR_RETURN(bool present, r.Bool(absl::StrCat(at, ".present")));
        Json a = {{"name", std::string(name)}};
        if (present) {
          ASSIGN_OR_RETURN(std::string_view v, r.LengthPrefixed(absl::StrCat(at, ".value")));
          a["value"] = Hex(v);
        } else {
          a["value"] = nullptr;
        }
        attrs.push_back(std::move(a));
      }
      op["attrs"] = std::move(attrs);
      break;
    }
    case 3:
    case 6: {
      op["code"] = code == 3 ? "DELETE" : "TRY_DELETE";
      ASSIGN_OR_RETURN(uint64_t old_version, r.U64("old_version"));
      op["old_version"] = old_version;
      break;
    }
    case 4:
      op["code"] = "CREATE";
      break;
    case 5: {
      op["code"] = "UPDATE_SNAPS";
      ASSIGN_OR_RETURN(op["snaps"], ReadSnapVector(r, "snaps"));
      break;
    }
    case 7: {
      op["code"] = "ROLLBACK_EXTENTS";
      ASSIGN_OR_RETURN(uint64_t gen, r.U64("gen"));
      op["gen"] = gen;
      ASSIGN_OR_RETURN(uint32_t n, r.Count("extents", 16));
      Json extents = Json::array();
      for (uint32_t i = 0; i < n; ++i) {
        ASSIGN_OR_RETURN(uint64_t off, r.U64(absl::StrCat("extents[", i, "].offset")));
        ASSIGN_OR_RETURN(uint64_t len, r.U64(absl::StrCat("extents[", i, "].length")));
        extents.push_back({{"offset", off}, {"length", len}});
      }
      op["extents"] = std::move(extents);
      break;  // struct_v >= 3 adds object_size and shards: skipped by length
    }
    default:
      op["code"] = absl::StrCat("unknown(", code, ")");  // skipped by length
  }
  RETURN_IF_ERROR(r.End(*f));
  return op;
}

absl::StatusOr<Json> ReadModDesc(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "ObjectModDesc", kModDescV));
  Json m;
  ASSIGN_OR_RETURN(bool can_local_rollback, r.Bool("can_local_rollback"));
  ASSIGN_OR_RETURN(bool completed, r.Bool("rollback_info_completed"));
  m["can_local_rollback"] = can_local_rollback;
  m["rollback_info_completed"] = completed;
  // The operations, back to back in a bufferlist: read them in place.
  ASSIGN_OR_RETURN(uint32_t len, r.U32("ops length"));
  if (len > f.end - r.offset()) {
    return r.Error("ops", absl::StrFormat("length %u runs past the end of ObjectModDesc", len));
  }
  const size_t ops_end = r.offset() + len;
  Json ops = Json::array();
  for (int i = 0; r.offset() < ops_end; ++i) {
    ASSIGN_OR_RETURN(Json op, ReadModOp(r, absl::StrCat("ops[", i, "]")));
    ops.push_back(std::move(op));
  }
  if (r.offset() != ops_end) {
    return r.Error("ops", absl::StrFormat("the last operation ends past the ops' %u bytes", len));
  }
  m["ops"] = std::move(ops);
  RETURN_IF_ERROR(r.End(f));
  return m;
}

absl::StatusOr<Json> ReadCleanRegions(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "ObjectCleanRegions", kCleanRegionsV));
  Json c;
  ASSIGN_OR_RETURN(c["clean_offsets"], ReadIntervalSet(r, "clean_offsets"));
  ASSIGN_OR_RETURN(bool clean_omap, r.Bool("clean_omap"));
  ASSIGN_OR_RETURN(bool new_object, r.Bool("new_object"));
  c["clean_omap"] = clean_omap;
  c["new_object"] = new_object;
  RETURN_IF_ERROR(r.End(f));
  return c;
}

// vector<pg_log_op_return_item_t>: each an i32 rval and a bufferlist.
absl::StatusOr<Json> ReadOpReturns(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint32_t n, r.Count(field, 8));
  Json out = Json::array();
  for (uint32_t i = 0; i < n; ++i) {
    const std::string at = absl::StrCat(field, "[", i, "]");
    ASSIGN_OR_RETURN(int32_t rval, r.I32(absl::StrCat(at, ".rval")));
    ASSIGN_OR_RETURN(std::string_view bl, r.LengthPrefixed(absl::StrCat(at, ".bl")));
    out.push_back({{"rval", rval}, {"bl", Hex(bl)}});
  }
  return out;
}

}  // namespace

absl::StatusOr<Json> ReadIntervalSet(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint32_t n, r.Count(field, 16));
  Json out = Json::array();
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(uint64_t start, r.U64(absl::StrCat(field, "[", i, "].start")));
    ASSIGN_OR_RETURN(uint64_t len, r.U64(absl::StrCat(field, "[", i, "].length")));
    out.push_back({{"start", start}, {"length", len}});
  }
  return out;
}

absl::StatusOr<Json> ReadEversion(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint64_t version, r.U64(absl::StrCat(field, ".version")));
  ASSIGN_OR_RETURN(uint32_t epoch, r.U32(absl::StrCat(field, ".epoch")));
  return Json(absl::StrCat(epoch, "'", version));
}

absl::StatusOr<Json> ReadUtime(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(uint32_t sec, r.U32(absl::StrCat(field, ".sec")));
  ASSIGN_OR_RETURN(uint32_t nsec, r.U32(absl::StrCat(field, ".nsec")));
  const absl::Time t = absl::FromUnixSeconds(sec) + absl::Nanoseconds(nsec);
  return Json(absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone()));
}

absl::StatusOr<Json> ReadReqid(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "osd_reqid_t", kReqidV));
  ASSIGN_OR_RETURN(uint8_t type, r.U8("name.type"));
  ASSIGN_OR_RETURN(int64_t num, r.I64("name.num"));
  ASSIGN_OR_RETURN(uint64_t tid, r.U64("tid"));
  ASSIGN_OR_RETURN(int32_t inc, r.I32("inc"));
  RETURN_IF_ERROR(r.End(f));
  // Ceph's form: <name>.<incarnation>:<tid>
  return Json(absl::StrCat(EntityTypeName(type), ".", num, ".", inc, ":", tid));
}

absl::StatusOr<Json> ReadHobject(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f,
                   r.Begin(field, "hobject_t", kHobjectV, /*compat_from_v=*/3, /*len_from_v=*/3));
  Json o;
  ASSIGN_OR_RETURN(std::string_view key, r.LengthPrefixed("key"));
  ASSIGN_OR_RETURN(std::string_view name, r.LengthPrefixed("oid.name"));
  ASSIGN_OR_RETURN(uint64_t snap, r.U64("snap"));
  ASSIGN_OR_RETURN(uint32_t hash, r.U32("hash"));
  ASSIGN_OR_RETURN(bool max, r.Bool("max"));
  o["pool"] = nullptr;
  o["namespace"] = "";
  if (f.v >= 4) {
    ASSIGN_OR_RETURN(std::string_view nspace, r.LengthPrefixed("nspace"));
    ASSIGN_OR_RETURN(int64_t pool, r.I64("pool"));
    o["pool"] = pool;
    o["namespace"] = std::string(nspace);
  }
  o["key"] = std::string(key);
  o["oid"] = std::string(name);
  o["snap"] = SnapText(snap);
  o["hash"] = absl::StrFormat("0x%08x", hash);
  o["max"] = max;
  RETURN_IF_ERROR(r.End(f));
  return o;
}

std::string HobjectText(const Json& o) {
  if (o["max"].get<bool>()) return "MAX";
  const uint32_t hash =
      static_cast<uint32_t>(std::stoul(o["hash"].get<std::string>(), nullptr, 16));
  if (o["oid"].get<std::string>().empty() && hash == 0 && o["snap"] == "0" &&
      o["key"].get<std::string>().empty()) {
    return "MIN";
  }
  // <pool>:<hash, bit-reversed as Ceph sorts objects>:<namespace>:<key>:<name>:<snap>
  return absl::StrFormat("%s:%08x:%s:%s:%s:%s", o["pool"].is_null() ? "?" : o["pool"].dump(),
                         ReverseBits(hash), o["namespace"].get<std::string>(),
                         o["key"].get<std::string>(), o["oid"].get<std::string>(),
                         o["snap"].get<std::string>());
}

absl::StatusOr<Json> ReadLogEntry(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f,
                   r.Begin(field, "pg_log_entry_t", kLogEntryV, /*compat_from_v=*/4,
                           /*len_from_v=*/4));
  Json e;
  ASSIGN_OR_RETURN(int32_t op, r.I32("op"));
  e["op"] = OpName(op);
  ASSIGN_OR_RETURN(e["object"], ReadHobject(r, "soid"));
  ASSIGN_OR_RETURN(e["version"], ReadEversion(r, "version"));
  // A LOST_REVERT keeps reverting_to where the others keep prior_version.
  const bool revert = op == kOpLostRevert && f.v >= 6;
  ASSIGN_OR_RETURN(e[revert ? "reverting_to" : "prior_version"],
                   ReadEversion(r, revert ? "reverting_to" : "prior_version"));
  ASSIGN_OR_RETURN(e["reqid"], ReadReqid(r, "reqid"));
  ASSIGN_OR_RETURN(e["mtime"], ReadUtime(r, "mtime"));
  if (revert) {
    ASSIGN_OR_RETURN(e["prior_version"], ReadEversion(r, "prior_version"));
  }
  // snaps: a bufferlist that holds a vector<snapid_t> when not empty.
  ASSIGN_OR_RETURN(std::string_view snaps, r.LengthPrefixed("snaps"));
  if (snaps.empty()) {
    e["snaps"] = Json::array();
  } else {
    CephReader sr(snaps);
    auto v = ReadSnapVector(sr, "snaps");
    e["snaps"] = v.ok() && sr.ExpectConsumed("snaps").ok() ? *v : Json(Hex(snaps));
  }
  if (f.v >= 8) {
    ASSIGN_OR_RETURN(uint64_t uv, r.U64("user_version"));
    e["user_version"] = uv;
  }
  if (f.v >= 9) {
    ASSIGN_OR_RETURN(e["mod_desc"], ReadModDesc(r, "mod_desc"));
  }
  Json extra = Json::array();
  if (f.v >= 10) {
    ASSIGN_OR_RETURN(uint32_t n, r.Count("extra_reqids", 6 + 8));
    for (uint32_t i = 0; i < n; ++i) {
      const std::string at = absl::StrCat("extra_reqids[", i, "]");
      Json x;
      ASSIGN_OR_RETURN(x["reqid"], ReadReqid(r, at));
      ASSIGN_OR_RETURN(uint64_t uv, r.U64(absl::StrCat(at, ".user_version")));
      x["user_version"] = uv;
      extra.push_back(std::move(x));
    }
  }
  int32_t return_code = 0;
  if (f.v >= 11 && op == kOpError) {
    ASSIGN_OR_RETURN(return_code, r.I32("return_code"));
  }
  if (f.v >= 12 && !extra.empty()) {
    ASSIGN_OR_RETURN(uint32_t n, r.Count("extra_reqid_return_codes", 8));
    for (uint32_t i = 0; i < n; ++i) {
      const std::string at = absl::StrCat("extra_reqid_return_codes[", i, "]");
      ASSIGN_OR_RETURN(uint32_t idx, r.U32(absl::StrCat(at, ".index")));
      ASSIGN_OR_RETURN(int32_t rc, r.I32(absl::StrCat(at, ".return_code")));
      if (idx < extra.size()) {
        extra[idx]["return_code"] = rc;
      } else {
        return r.Error(at,
                       absl::StrFormat("index %u is past the %u extra_reqids", idx, extra.size()));
      }
    }
  }
  e["extra_reqids"] = std::move(extra);
  if (f.v >= 13) {
    ASSIGN_OR_RETURN(e["clean_regions"], ReadCleanRegions(r, "clean_regions"));
  }
  Json op_returns = Json::array();
  if (f.v >= 14) {
    if (op != kOpError) {
      ASSIGN_OR_RETURN(return_code, r.I32("return_code"));
    }
    ASSIGN_OR_RETURN(op_returns, ReadOpReturns(r, "op_returns"));
  }
  e["return_code"] = return_code;
  e["op_returns"] = std::move(op_returns);
  e["struct_v"] = f.v;
  RETURN_IF_ERROR(r.End(f));
  return e;
}

std::string LogEntryText(const Json& e) {
  // Ceph's pg_log_entry_t form: version (prior) op object by reqid mtime rc
  return absl::StrFormat("%s (%s) %s %s by %s %s rc=%d", e["version"].get<std::string>(),
                         e["prior_version"].get<std::string>(), e["op"].get<std::string>(),
                         HobjectText(e["object"]), e["reqid"].get<std::string>(),
                         e["mtime"].get<std::string>(), e["return_code"].get<int32_t>());
}

absl::StatusOr<Json> ReadLogDup(CephReader& r, absl::string_view field) {
  ASSIGN_OR_RETURN(CephReader::Frame f, r.Begin(field, "pg_log_dup_t", kLogDupV));
  Json d;
  ASSIGN_OR_RETURN(d["reqid"], ReadReqid(r, "reqid"));
  ASSIGN_OR_RETURN(d["version"], ReadEversion(r, "version"));
  ASSIGN_OR_RETURN(uint64_t uv, r.U64("user_version"));
  d["user_version"] = uv;
  ASSIGN_OR_RETURN(int32_t rc, r.I32("return_code"));
  d["return_code"] = rc;
  d["op_returns"] = Json::array();
  if (f.v >= 2) {
    ASSIGN_OR_RETURN(d["op_returns"], ReadOpReturns(r, "op_returns"));
  }
  d["struct_v"] = f.v;
  RETURN_IF_ERROR(r.End(f));
  return d;
}

std::string LogDupText(const Json& d) {
  return absl::StrFormat("log_dup(reqid=%s v=%s uv=%u rc=%d)", d["reqid"].get<std::string>(),
                         d["version"].get<std::string>(), d["user_version"].get<uint64_t>(),
                         d["return_code"].get<int32_t>());
}

}  // namespace pgring::tool::ceph
