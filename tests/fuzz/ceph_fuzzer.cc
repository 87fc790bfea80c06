// ceph_fuzzer.cc — the Ceph decoder (src/tool/ceph/): what `pgring-tool
// decode` reads, and `log`, `dups` and `info` with --decode (ShowPayload) —
// the payloads an embedder stored, bytes pgring did not write and which need
// not be Ceph's at all.
//
// Two passes per input:
//  1. the input as a payload of each of the seven types, as is and with its
//     outer struct_len made to fit the input (bytes 2..5, what a mutation
//     that grows or shrinks a payload breaks first), so that mutations reach
//     the fields behind it;
//  2. a value built from the input (FuzzedDataProvider): an eversion_t,
//     osd_reqid_t, hobject_t, pg_log_entry_t, pg_log_dup_t or
//     pg_fast_info_t, of any struct_v the decoder reads and newer ones, with
//     every optional field, every rollback op kind, extra reqids with return
//     codes, snaps that are and are not a vector, and bytes a newer encoder
//     appended to any struct. The reference encoder below writes it, from
//     the layouts ceph_types.h documents (Ceph's), and it must decode to
//     exactly the fields it was built from — decode(encode(x)) == x — with
//     one note per struct whose appended bytes were skipped. One variant
//     names an extra reqid's return code by an index past them: refused.
//     (pgring's only other Ceph encoder, the fio engine's pgring_payload=ceph
//     generator, is decoded by fio_ceph_payload_test.)
//
// Checked on every decode:
//  - the status is OK, kDataLoss (bytes that cannot be one whole encoding)
//    or kUnimplemented (one this decoder cannot read); a kDataLoss message
//    starts with the type's name and every offset it gives lies within the
//    payload;
//  - accepted: a framed type's struct_len covers exactly the rest of the
//    payload; every strict prefix is refused with kDataLoss (the decoder
//    needs every byte it accepted: it read nothing past them), and one byte
//    more is refused ("1 trailing byte"); the outer struct_len grown over k
//    appended bytes (a newer encoder's fields) decodes to the same fields
//    and summary with one note more; a struct_compat above the version the
//    decoder reads is refused with kUnimplemented; decoding again gives the
//    same; the fields print as text and as JSON, as `decode` prints them;
//  - ShowPayload shows an entry, a dup and an info slot as `log`, `dups` and
//    `info` do: the summary and fields when the payload decodes (an info
//    slot as pg_info_t or else pg_fast_info_t), hex when not, and
//    --decode=ceph then fails naming why; --decode=none always shows hex.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "fuzz_common.h"
#include "tool/ceph/ceph_decode.h"
#include "tool/ceph/payload_view.h"
#include "tool/text_output.h"
#include "tool/tool_common.h"

namespace pgring::fuzz {
namespace {

using tool::Json;
using tool::ceph::CephDecoded;
using tool::ceph::CephType;
using tool::ceph::CephTypeName;
using tool::ceph::DecodeCeph;
using tool::ceph::DecodeMode;

// What the decoder reads of each type at the top level: whether it starts
// with a struct header (struct_v, struct_compat, struct_len; eversion_t is
// two bare integers) and the newest struct_v it reads.
struct TypeInfo {
  CephType type;
  bool framed;
  uint8_t known_v;
  bool has_struct_v_field;  // its fields hold "struct_v"
};
constexpr TypeInfo kTypes[] = {
    {CephType::kLogEntry, true, 14, true},   {CephType::kLogDup, true, 2, true},
    {CephType::kPgInfo, true, 34, true},     {CephType::kPgFastInfo, true, 1, true},
    {CephType::kEversion, false, 0, false},  {CephType::kReqid, true, 2, false},
    {CephType::kHobject, true, 4, false},
};

const TypeInfo& InfoOf(CephType t) {
  for (const TypeInfo& i : kTypes) {
    if (i.type == t) return i;
  }
  FuzzFail(__FILE__, __LINE__, "InfoOf", "unknown type");
}

std::string Name(CephType t) { return std::string(CephTypeName(t)); }

std::string DumpJson(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

uint32_t Le32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(b[at + i])} << (8 * i);
  return v;
}

void SetLe32(std::string* b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[at + i] = static_cast<char>(v >> (8 * i));
}

// The first difference between two decoded values, or "" when they are the
// same: objects by key whatever the order, arrays and scalars exactly (the
// same JSON type: an unsigned field is not a signed one).
std::string JsonDiff(const Json& want, const Json& got, const std::string& at) {
  if (want.type() != got.type()) {
    return absl::StrFormat("%s: want %s, got %s", at, DumpJson(want), DumpJson(got));
  }
  if (want.is_object()) {
    for (const auto& it : want.items()) {
      if (!got.contains(it.key())) return absl::StrFormat("%s.%s: missing", at, it.key());
    }
    for (const auto& it : got.items()) {
      if (!want.contains(it.key())) return absl::StrFormat("%s.%s: not expected", at, it.key());
      std::string d = JsonDiff(want.at(it.key()), it.value(), absl::StrCat(at, ".", it.key()));
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_array()) {
    if (want.size() != got.size()) {
      return absl::StrFormat("%s: want %u elements, got %u", at, want.size(), got.size());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      std::string d = JsonDiff(want[i], got[i], absl::StrCat(at, "[", i, "]"));
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want != got) return absl::StrFormat("%s: want %s, got %s", at, DumpJson(want), DumpJson(got));
  return "";
}

// --- Pass 1: any bytes, as every type. -------------------------------------

// Every "offset N" an error message gives lies within the payload.
void CheckOffsets(absl::string_view message, size_t size) {
  static constexpr absl::string_view kWord = "offset ";
  for (size_t at = message.find(kWord); at != absl::string_view::npos;
       at = message.find(kWord, at + 1)) {
    size_t i = at + kWord.size();
    uint64_t n = 0;
    bool digits = false;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9' && n < (1ull << 40)) {
      n = n * 10 + static_cast<uint64_t>(message[i] - '0');
      digits = true;
      ++i;
    }
    if (!digits) continue;
    FUZZ_CHECK(n <= size, absl::StrFormat("error names offset %u of a %u-byte payload: %s", n, size,
                                          std::string(message)));
  }
}

// A refusal is kDataLoss or kUnimplemented, and says where.
void CheckRefusal(CephType t, std::string_view b, const absl::Status& s) {
  FUZZ_CHECK(absl::IsDataLoss(s) || absl::IsUnimplemented(s),
             absl::StrCat(Name(t), ": ", s.ToString()));
  FUZZ_CHECK(!s.message().empty(), "empty error message");
  if (absl::IsDataLoss(s)) {
    FUZZ_CHECK(absl::StartsWith(s.message(), CephTypeName(t)),
               absl::StrCat(Name(t), ": the error does not start with the type: ", s.ToString()));
  }
  CheckOffsets(s.message(), b.size());
}

// The prefix lengths to try: all of them for a short payload, 36 spread over
// a longer one (its ends included).
std::vector<size_t> PrefixLengths(size_t n) {
  std::vector<size_t> out;
  if (n <= 64) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (size_t i = 0; i < 32; ++i) out.push_back(n * i / 32);
  for (size_t k = 1; k <= 4; ++k) out.push_back(n - k);
  return out;
}

// What must hold of an accepted payload.
void CheckAccepted(CephType t, std::string_view b, const CephDecoded& d) {
  const TypeInfo& info = InfoOf(t);
  const std::string name = Name(t);
  FUZZ_CHECK(d.type == t, name);
  FUZZ_CHECK(!d.summary.empty(), absl::StrCat(name, ": empty summary"));
  if (t == CephType::kEversion) FUZZ_CHECK(b.size() == 12, "eversion_t of other than 12 bytes");
  if (info.framed) {
    FUZZ_CHECK(b.size() >= 6 && Le32(b, 2) == b.size() - 6,
               absl::StrFormat("%s accepted with struct_len %u in a %u-byte payload", name,
                               b.size() >= 6 ? Le32(b, 2) : 0, b.size()));
  }
  if (info.has_struct_v_field) {
    FUZZ_CHECK(d.fields.contains("struct_v") &&
                   d.fields["struct_v"] == static_cast<uint8_t>(b[0]),
               absl::StrCat(name, ": struct_v field is not byte 0"));
  }
  // Deterministic.
  {
    absl::StatusOr<CephDecoded> again = DecodeCeph(t, b);
    FUZZ_CHECK(again.ok() && again->fields == d.fields && again->summary == d.summary &&
                   again->notes == d.notes,
               absl::StrCat(name, ": decoding again differs"));
  }
  // Printable, as `decode` prints it.
  {
    tool::TextOutput text;
    tool::ceph::AddFieldsText(d.fields, 2, &text);
    FUZZ_CHECK(!text.empty(), absl::StrCat(name, ": no text for the fields"));
    FUZZ_CHECK(!DumpJson(d.fields).empty(), "empty JSON");
  }
  // Every byte was needed: each strict prefix is refused.
  for (size_t n : PrefixLengths(b.size())) {
    absl::StatusOr<CephDecoded> p = DecodeCeph(t, b.substr(0, n));
    FUZZ_CHECK(!p.ok(), absl::StrFormat("%s: a %u-byte prefix of a %u-byte payload is accepted",
                                        name, n, b.size()));
    FUZZ_CHECK(absl::IsDataLoss(p.status()),
               absl::StrFormat("%s: a %u-byte prefix: %s", name, n, p.status().ToString()));
    CheckOffsets(p.status().message(), n);
  }
  // ... and nothing may follow.
  {
    const std::string more = std::string(b) + "\x5a";
    absl::StatusOr<CephDecoded> p = DecodeCeph(t, more);
    FUZZ_CHECK(!p.ok() && absl::IsDataLoss(p.status()) &&
                   absl::StrContains(p.status().message(), "1 trailing byte"),
               absl::StrCat(name, ": one byte more: ", p.status().ToString()));
  }
  if (!info.framed) return;
  // A newer encoder's fields appended inside the struct are skipped and
  // change nothing that was read: one note more, or, when the struct already
  // ended in bytes this decoder skips, the same note k bytes longer.
  const std::string top_note = absl::StrCat(name, " (", name, " struct_v ");
  const bool had_top_note = !d.notes.empty() && absl::StartsWith(d.notes.back(), top_note);
  for (uint32_t k : {1u, 7u}) {
    std::string newer = std::string(b) + std::string(k, '\xa5');
    SetLe32(&newer, 2, static_cast<uint32_t>(b.size() - 6 + k));
    absl::StatusOr<CephDecoded> n = DecodeCeph(t, newer);
    FUZZ_CHECK(n.ok(), absl::StrFormat("%s with %u byte(s) appended inside it: %s", name, k,
                                       n.status().ToString()));
    FUZZ_CHECK(n->fields == d.fields && n->summary == d.summary,
               absl::StrFormat("%s: %u appended byte(s) changed what was read", name, k));
    const size_t same = had_top_note ? d.notes.size() - 1 : d.notes.size();
    FUZZ_CHECK(n->notes.size() == same + 1 &&
                   std::equal(d.notes.begin(), d.notes.begin() + same, n->notes.begin()) &&
                   absl::StartsWith(n->notes.back(), top_note),
               absl::StrFormat("%s: %u appended byte(s): %u notes, was %u", name, k,
                               n->notes.size(), d.notes.size()));
    if (!had_top_note) {
      const std::string want =
          absl::StrFormat("%u byte%s at offset %u", k, k == 1 ? "" : "s", b.size());
      FUZZ_CHECK(absl::StrContains(n->notes.back(), want),
                 absl::StrFormat("%s: note '%s' does not say '%s'", name, n->notes.back(), want));
    }
  }
  // A struct_compat above what the decoder reads: it cannot read this.
  {
    std::string newer(b);
    newer[1] = static_cast<char>(info.known_v + 1);
    absl::StatusOr<CephDecoded> n = DecodeCeph(t, newer);
    FUZZ_CHECK(!n.ok() && absl::IsUnimplemented(n.status()) &&
                   absl::StrContains(n.status().message(), "struct_compat"),
               absl::StrFormat("%s with struct_compat %u: %s", name, info.known_v + 1,
                               n.status().ToString()));
  }
}

// Decodes `b` as `t`; returns whether it was accepted.
bool CheckAs(CephType t, std::string_view b) {
  absl::StatusOr<CephDecoded> d = DecodeCeph(t, b);
  if (!d.ok()) {
    CheckRefusal(t, b, d.status());
    return false;
  }
  CheckAccepted(t, b, *d);
  return true;
}

// How `log`, `dups` and `info` show the payload of an entry, a dup and an
// info slot.
void CheckShown(std::string_view b) {
  for (CephType slot : {CephType::kLogEntry, CephType::kLogDup, CephType::kPgInfo}) {
    absl::StatusOr<CephDecoded> d = DecodeCeph(slot, b);
    if (!d.ok() && slot == CephType::kPgInfo) {
      absl::StatusOr<CephDecoded> fast = DecodeCeph(CephType::kPgFastInfo, b);
      if (fast.ok()) d = std::move(fast);
    }
    for (DecodeMode mode : {DecodeMode::kAuto, DecodeMode::kCeph, DecodeMode::kNone}) {
      Json item = {{"payload", "as the caller put it"}};
      const Json before = item;
      const tool::ceph::PayloadShown shown = tool::ceph::ShowPayload(mode, slot, b, &item);
      const std::string what = absl::StrFormat("ShowPayload(%d, %s)", static_cast<int>(mode),
                                               Name(slot));
      if (mode == DecodeMode::kNone) {
        FUZZ_CHECK(!shown.failed && shown.cell == tool::Hex(b) && item == before, what);
      } else if (d.ok()) {
        FUZZ_CHECK(!shown.failed && shown.cell == d->summary, what);
        FUZZ_CHECK(item["payload"] == before["payload"] && item["summary"] == d->summary &&
                       item["type"] == Name(d->type) && item["decoded"] == d->fields,
                   absl::StrCat(what, ": the item"));
      } else if (mode == DecodeMode::kAuto) {
        FUZZ_CHECK(!shown.failed && shown.cell == tool::Hex(b) && item == before,
                   absl::StrCat(what, ": undecodable, not hex"));
      } else {
        FUZZ_CHECK(shown.failed && absl::StartsWith(shown.cell, tool::Hex(b)) &&
                       item.contains("decode_error") && !item.contains("decoded"),
                   absl::StrCat(what, ": undecodable and not failed"));
      }
    }
  }
}

void CheckPayload(std::string_view b) {
  for (const TypeInfo& info : kTypes) {
    CheckAs(info.type, b);
    if (info.framed && b.size() >= 6 && Le32(b, 2) != b.size() - 6) {
      std::string fitted(b);
      SetLe32(&fitted, 2, static_cast<uint32_t>(b.size() - 6));
      CheckAs(info.type, fitted);
    }
  }
  CheckShown(b);
}

// --- Pass 2: a value built from the input, encoded, decoded. --------------

// Ceph's little-endian encoding with its struct framing: struct_v,
// struct_compat, then a u32 length patched when the struct ends.
class Encoder {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Le(v, 4); }
  void U64(uint64_t v) { Le(v, 8); }
  void Raw(std::string_view b) { out_.append(b); }
  void String(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    Raw(s);
  }
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
  const std::string& bytes() const { return out_; }

 private:
  void Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string out_;
};

// Ceph's names, as its own dump prints them (osd_types.cc, msg_types.h).
std::string OpName(int32_t op) {
  static const char* const kNames[] = {"modify",   "clone",  "delete", "backlog",
                                       "l_revert", "l_delete", "l_mark", "promote",
                                       "clean",    "error",  "replace"};
  if (op >= 1 && op <= 11) return kNames[op - 1];
  return absl::StrCat("unknown(", op, ")");
}

std::string EntityName(uint8_t t) {
  switch (t) {
    case 0x01: return "mon";
    case 0x02: return "mds";
    case 0x04: return "osd";
    case 0x08: return "client";
    case 0x10: return "mgr";
    case 0x20: return "auth";
  }
  return absl::StrFormat("type%u", t);
}

constexpr uint64_t kNoSnap = ~uint64_t{0} - 1;
constexpr uint64_t kSnapDir = ~uint64_t{0};
constexpr int32_t kOpLostRevert = 5;
constexpr int32_t kOpError = 10;

// Builds one value from the input, writing its encoding and returning the
// fields the decoder must give.
class Generator {
 public:
  explicit Generator(FuzzedDataProvider* in) : in_(*in) {}

  // How many notes the decoder must make: one per struct with bytes it
  // does not read.
  size_t notes() const { return notes_; }
  // The one refusal this generator can build: an extra reqid's return code
  // naming an index past them.
  bool bad_index() const { return bad_index_; }

  Json Eversion(Encoder& e) {
    const uint64_t version = in_.ConsumeIntegral<uint64_t>();
    const uint32_t epoch = in_.ConsumeIntegral<uint32_t>();
    e.U64(version);
    e.U32(epoch);
    return absl::StrCat(epoch, "'", version);
  }

  Json Utime(Encoder& e) {
    const uint32_t sec = in_.ConsumeIntegral<uint32_t>();
    const uint32_t nsec = in_.ConsumeIntegral<uint32_t>();
    e.U32(sec);
    e.U32(nsec);
    return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ",
                            absl::FromUnixSeconds(sec) + absl::Nanoseconds(nsec),
                            absl::UTCTimeZone());
  }

  Json Reqid(Encoder& e) {
    const Frame f = Begin(e, 1, 4, 2);
    const uint8_t type = in_.ConsumeBool() ? in_.PickValueInArray<uint8_t>({1, 2, 4, 8, 16, 32})
                                           : in_.ConsumeIntegral<uint8_t>();
    const int64_t num = in_.ConsumeIntegral<int64_t>();
    const uint64_t tid = in_.ConsumeIntegral<uint64_t>();
    const int32_t inc = in_.ConsumeIntegral<int32_t>();
    e.U8(type);
    e.U64(static_cast<uint64_t>(num));
    e.U64(tid);
    e.U32(static_cast<uint32_t>(inc));
    End(e, f);
    return absl::StrCat(EntityName(type), ".", num, ".", inc, ":", tid);
  }

  Json Hobject(Encoder& e) {
    const Frame f = Begin(e, 3, 6, 4);  // 3: the first with a length
    const std::string key = in_.ConsumeRandomLengthString(16);
    const std::string name = in_.ConsumeRandomLengthString(48);
    const uint64_t snap = in_.ConsumeBool() ? in_.PickValueInArray<uint64_t>({kNoSnap, kSnapDir, 0})
                                            : in_.ConsumeIntegral<uint64_t>();
    const uint32_t hash = in_.ConsumeIntegral<uint32_t>();
    const uint8_t max = in_.ConsumeIntegral<uint8_t>();
    e.String(key);
    e.String(name);
    e.U64(snap);
    e.U32(hash);
    e.U8(max);
    Json o;
    o["pool"] = nullptr;
    o["namespace"] = "";
    if (f.v >= 4) {
      const std::string nspace = in_.ConsumeRandomLengthString(16);
      const int64_t pool = in_.ConsumeIntegral<int64_t>();
      e.String(nspace);
      e.U64(static_cast<uint64_t>(pool));
      o["pool"] = pool;
      o["namespace"] = nspace;
    }
    o["key"] = key;
    o["oid"] = name;
    o["snap"] = snap == kNoSnap ? "head" : snap == kSnapDir ? "snapdir" : absl::StrFormat("%x", snap);
    o["hash"] = absl::StrFormat("0x%08x", hash);
    o["max"] = max != 0;
    End(e, f);
    return o;
  }

  Json LogEntry(Encoder& e) {
    const Frame f = Begin(e, 4, 16, 14);  // 4: the first with a length
    const int32_t op = in_.ConsumeIntegralInRange<int>(0, 3) != 0
                           ? in_.ConsumeIntegralInRange<int32_t>(1, 11)
                           : in_.ConsumeIntegral<int32_t>();
    e.U32(static_cast<uint32_t>(op));
    Json j;
    j["op"] = OpName(op);
    j["object"] = Hobject(e);
    j["version"] = Eversion(e);
    const bool revert = op == kOpLostRevert && f.v >= 6;
    j[revert ? "reverting_to" : "prior_version"] = Eversion(e);
    j["reqid"] = Reqid(e);
    j["mtime"] = Utime(e);
    if (revert) j["prior_version"] = Eversion(e);
    j["snaps"] = Snaps(e);
    if (f.v >= 8) j["user_version"] = U64(e);
    if (f.v >= 9) j["mod_desc"] = ModDesc(e);
    Json extra = Json::array();
    if (f.v >= 10) {
      const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
      e.U32(n);
      for (uint32_t i = 0; i < n; ++i) {
        Json x;
        x["reqid"] = Reqid(e);
        x["user_version"] = U64(e);
        extra.push_back(std::move(x));
      }
    }
    int32_t return_code = 0;
    if (f.v >= 11 && op == kOpError) return_code = I32(e);
    if (f.v >= 12 && !extra.empty()) {
      const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
      e.U32(n);
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t index = in_.ConsumeIntegralInRange<uint32_t>(0, extra.size() - 1);
        if (in_.ConsumeIntegralInRange<int>(0, 15) == 0) {
          index = static_cast<uint32_t>(extra.size()) + in_.ConsumeIntegral<uint8_t>();
          bad_index_ = true;
        }
        e.U32(index);
        const int32_t rc = I32(e);
        if (index < extra.size()) extra[index]["return_code"] = rc;
      }
    }
    j["extra_reqids"] = std::move(extra);
    if (f.v >= 13) j["clean_regions"] = CleanRegions(e);
    Json op_returns = Json::array();
    if (f.v >= 14) {
      if (op != kOpError) return_code = I32(e);
      op_returns = OpReturns(e);
    }
    j["return_code"] = return_code;
    j["op_returns"] = std::move(op_returns);
    j["struct_v"] = f.v;
    End(e, f);
    return j;
  }

  Json LogDup(Encoder& e) {
    const Frame f = Begin(e, 1, 3, 2);
    Json d;
    d["reqid"] = Reqid(e);
    d["version"] = Eversion(e);
    d["user_version"] = U64(e);
    d["return_code"] = I32(e);
    d["op_returns"] = f.v >= 2 ? OpReturns(e) : Json::array();
    d["struct_v"] = f.v;
    End(e, f);
    return d;
  }

  Json PgFastInfo(Encoder& e) {
    const Frame f = Begin(e, 1, 2, 1);
    Json i;
    i["last_update"] = Eversion(e);
    i["last_complete"] = Eversion(e);
    i["last_user_version"] = U64(e);
    Json s;
    s["version"] = Eversion(e);
    s["reported_seq"] = U64(e);
    for (const char* t : {"last_fresh", "last_active", "last_peered", "last_clean",
                          "last_unstale", "last_undegraded", "last_fullsized"}) {
      s[t] = Utime(e);
    }
    s["log_size"] = I64(e);
    Json sum;
    for (const char* n : {"num_bytes", "num_objects", "num_object_copies", "num_read",
                          "num_read_kb", "num_write", "num_write_kb", "num_objects_dirty"}) {
      sum[n] = I64(e);
    }
    s["sum"] = std::move(sum);
    i["stats"] = std::move(s);
    i["struct_v"] = f.v;
    End(e, f);
    return i;
  }

 private:
  struct Frame {
    size_t at;
    uint8_t v;
  };

  // A struct header: struct_v in [lo, hi] (above the decoder's version: a
  // newer encoder's), struct_compat at most both v and `compat_max` (what
  // the decoder reads).
  Frame Begin(Encoder& e, uint8_t lo, uint8_t hi, uint8_t compat_max) {
    const uint8_t v = in_.ConsumeIntegralInRange<uint8_t>(lo, hi);
    const uint8_t compat = in_.ConsumeIntegralInRange<uint8_t>(0, std::min(v, compat_max));
    return {e.Start(v, compat), v};
  }
  // Ends a struct, sometimes after fields a newer encoder would append:
  // bytes the decoder skips by the length, with a note.
  void End(Encoder& e, const Frame& f) {
    if (in_.ConsumeIntegralInRange<int>(0, 7) == 0) {
      std::string more = in_.ConsumeBytesAsString(in_.ConsumeIntegralInRange<size_t>(1, 9));
      more.resize(std::max<size_t>(more.size(), 1), '\xee');
      e.Raw(more);
      ++notes_;
    }
    e.Finish(f.at);
  }

  Json U64(Encoder& e) {
    const uint64_t v = in_.ConsumeIntegral<uint64_t>();
    e.U64(v);
    return v;
  }
  int32_t I32(Encoder& e) {
    const int32_t v = in_.ConsumeIntegral<int32_t>();
    e.U32(static_cast<uint32_t>(v));
    return v;
  }
  Json I64(Encoder& e) {
    const int64_t v = in_.ConsumeIntegral<int64_t>();
    e.U64(static_cast<uint64_t>(v));
    return v;
  }
  // A flag as a byte: Ceph's bool, any non-zero byte true.
  bool Flag(Encoder& e) {
    const uint8_t b = in_.ConsumeBool() ? in_.ConsumeIntegral<uint8_t>() : in_.ConsumeBool();
    e.U8(b);
    return b != 0;
  }

  // vector<snapid_t>: a count, then the snaps.
  Json SnapVector(Encoder& e) {
    const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 4);
    e.U32(n);
    Json out = Json::array();
    for (uint32_t i = 0; i < n; ++i) out.push_back(U64(e));
    return out;
  }

  // A log entry's snaps: a bufferlist, which the decoder shows as the
  // vector<snapid_t> it holds when it holds exactly one, else as hex.
  Json Snaps(Encoder& e) {
    switch (in_.ConsumeIntegralInRange<int>(0, 2)) {
      case 0:
        e.U32(0);
        return Json::array();
      case 1: {
        Encoder inner;
        Json v = SnapVector(inner);
        e.String(inner.bytes());
        return v;
      }
      default: {
        const std::string raw = in_.ConsumeRandomLengthString(24);
        e.String(raw);
        if (raw.empty()) return Json::array();
        if (raw.size() >= 4 && (raw.size() - 4) % 8 == 0 && Le32(raw, 0) == (raw.size() - 4) / 8) {
          Json v = Json::array();
          for (size_t at = 4; at < raw.size(); at += 8) {
            v.push_back(uint64_t{Le32(raw, at)} | uint64_t{Le32(raw, at + 4)} << 32);
          }
          return v;
        }
        return tool::Hex(raw);
      }
    }
  }

  Json ModOp(Encoder& e) {
    const Frame f = Begin(e, 1, 3, 255);  // read without a compat check
    const uint8_t code = in_.ConsumeIntegralInRange<int>(0, 7) != 0
                             ? in_.ConsumeIntegralInRange<uint8_t>(1, 7)
                             : in_.ConsumeIntegral<uint8_t>();
    e.U8(code);
    Json op;
    switch (code) {
      case 1:
        op["code"] = "APPEND";
        op["old_size"] = U64(e);
        break;
      case 2: {
        op["code"] = "SETATTRS";
        const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
        e.U32(n);
        Json attrs = Json::array();
        for (uint32_t i = 0; i < n; ++i) {
          const std::string name = in_.ConsumeRandomLengthString(12);
          e.String(name);
          Json a = {{"name", name}};
          if (Flag(e)) {
            const std::string value = in_.ConsumeRandomLengthString(12);
            e.String(value);
            a["value"] = tool::Hex(value);
          } else {
            a["value"] = nullptr;
          }
          attrs.push_back(std::move(a));
        }
        op["attrs"] = std::move(attrs);
        break;
      }
      case 3:
      case 6:
        op["code"] = code == 3 ? "DELETE" : "TRY_DELETE";
        op["old_version"] = U64(e);
        break;
      case 4:
        op["code"] = "CREATE";
        break;
      case 5:
        op["code"] = "UPDATE_SNAPS";
        op["snaps"] = SnapVector(e);
        break;
      case 7: {
        op["code"] = "ROLLBACK_EXTENTS";
        op["gen"] = U64(e);
        const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
        e.U32(n);
        Json extents = Json::array();
        for (uint32_t i = 0; i < n; ++i) {
          Json x;
          x["offset"] = U64(e);
          x["length"] = U64(e);
          extents.push_back(std::move(x));
        }
        op["extents"] = std::move(extents);
        break;
      }
      default:
        // A code this decoder does not know: whatever follows it in the
        // op's struct is skipped by its length (End may add some).
        op["code"] = absl::StrCat("unknown(", code, ")");
    }
    End(e, f);
    return op;
  }

  Json ModDesc(Encoder& e) {
    const Frame f = Begin(e, 1, 3, 2);
    Json m;
    m["can_local_rollback"] = Flag(e);
    m["rollback_info_completed"] = Flag(e);
    // The ops, back to back in a bufferlist.
    Encoder ops;
    Json list = Json::array();
    const int n = in_.ConsumeIntegralInRange<int>(0, 3);
    for (int i = 0; i < n; ++i) list.push_back(ModOp(ops));
    e.String(ops.bytes());
    m["ops"] = std::move(list);
    End(e, f);
    return m;
  }

  Json CleanRegions(Encoder& e) {
    const Frame f = Begin(e, 1, 2, 1);
    Json c;
    const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
    e.U32(n);
    Json offsets = Json::array();
    for (uint32_t i = 0; i < n; ++i) {
      Json x;
      x["start"] = U64(e);
      x["length"] = U64(e);
      offsets.push_back(std::move(x));
    }
    c["clean_offsets"] = std::move(offsets);
    c["clean_omap"] = Flag(e);
    c["new_object"] = Flag(e);
    End(e, f);
    return c;
  }

  // vector<pg_log_op_return_item_t>.
  Json OpReturns(Encoder& e) {
    const uint32_t n = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
    e.U32(n);
    Json out = Json::array();
    for (uint32_t i = 0; i < n; ++i) {
      const int32_t rval = I32(e);
      const std::string bl = in_.ConsumeRandomLengthString(12);
      e.String(bl);
      out.push_back({{"rval", rval}, {"bl", tool::Hex(bl)}});
    }
    return out;
  }

  FuzzedDataProvider& in_;
  size_t notes_ = 0;
  bool bad_index_ = false;
};

void CheckRoundTrip(FuzzedDataProvider* in) {
  static constexpr CephType kBuilt[] = {CephType::kEversion, CephType::kReqid,
                                        CephType::kHobject,  CephType::kLogEntry,
                                        CephType::kLogDup,   CephType::kPgFastInfo};
  const CephType t = in->PickValueInArray(kBuilt);
  Generator g(in);
  Encoder e;
  Json want;
  switch (t) {
    case CephType::kEversion:
      want = {{"version", g.Eversion(e)}};
      break;
    case CephType::kReqid:
      want = {{"reqid", g.Reqid(e)}};
      break;
    case CephType::kHobject:
      want = g.Hobject(e);
      break;
    case CephType::kLogEntry:
      want = g.LogEntry(e);
      break;
    case CephType::kLogDup:
      want = g.LogDup(e);
      break;
    default:
      want = g.PgFastInfo(e);
      break;
  }
  const std::string& b = e.bytes();
  const std::string name = Name(t);
  absl::StatusOr<CephDecoded> d = DecodeCeph(t, b);
  if (g.bad_index()) {
    FUZZ_CHECK(!d.ok() && absl::IsDataLoss(d.status()) &&
                   absl::StrContains(d.status().message(), "is past the") &&
                   absl::StrContains(d.status().message(), "extra_reqid_return_codes["),
               absl::StrCat(name, " naming an extra reqid past them: ", d.status().ToString()));
    CheckRefusal(t, b, d.status());
    return;
  }
  FUZZ_CHECK(d.ok(), absl::StrFormat("%s the reference encoder wrote is refused: %s (%s)", name,
                                     d.status().ToString(), Hex(b)));
  const std::string diff = JsonDiff(want, d->fields, name);
  FUZZ_CHECK(diff.empty(), absl::StrFormat("decode(encode(x)) != x: %s (%s)", diff, Hex(b)));
  FUZZ_CHECK(d->notes.size() == g.notes(),
             absl::StrFormat("%s: %u notes for %u structs with appended bytes", name,
                             d->notes.size(), g.notes()));
  if (t == CephType::kEversion || t == CephType::kReqid) {
    FUZZ_CHECK(d->summary == want.begin().value(), absl::StrCat(name, ": summary"));
  }
  CheckAccepted(t, b, *d);
  CheckShown(b);
}

}  // namespace
}  // namespace pgring::fuzz

extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size) {
  using namespace pgring::fuzz;
  CheckPayload(std::string_view(reinterpret_cast<const char*>(data), size));
  FuzzedDataProvider in(data, size);
  CheckRoundTrip(&in);
  return 0;
}
