// record_fuzzer.cc — the record codec (src/format/record.{h,cc}).
//
// Input: the bytes of a record as it lies in a ring (header + body), or of
// anything else. Checked on every input:
//  1. ForEachItem over the input taken as a body, and over the record's body,
//     agrees with a reference parser written from docs/FORMAT.md ("Items"):
//     same accept/reject, same items (kind, version, payload, offset, and a
//     kPgBytes item's stamp and lpos), and a rejection is kDataLoss naming
//     the offset of the item at fault.
//     An accepted body re-encodes (RecordBodyBuilder) to bytes that parse
//     back to the same items, and to the very same bytes when it has no pad or
//     unknown items and only shortest varints (what writers produce).
//  2. The header: DecodeRecordHeader + AppendRecord round-trip every field;
//     RecordCrcMatches holds exactly when the stored CRC is the CRC of the
//     bytes, so a record whose CRC matches re-encodes to the same bytes. The
//     same record with its CRC recomputed must match and re-encode exactly.
//  3. AddPad(n) (n from the first two bytes) fills exactly n bytes with items
//     the parser skips.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "format/record.h"
#include "fuzz_common.h"
#include "util/coding.h"

namespace pgring::fuzz {
namespace {

struct ParsedItem {
  uint8_t kind;
  Version version;
  std::string payload;
  size_t offset;
  uint32_t pg_stamp = 0;  // kPgBytes
  uint64_t lpos = 0;      // kPgBytes
  friend bool operator==(const ParsedItem&, const ParsedItem&) = default;
};

struct RefResult {
  bool ok = true;
  size_t error_offset = 0;  // the item at fault
  bool canonical = true;    // writers' bytes: no skipped items, shortest varints
  std::vector<ParsedItem> items;
};

// The item grammar of docs/FORMAT.md, written independently of ForEachItem.
RefResult ReferenceParse(std::string_view b) {
  RefResult r;
  size_t pos = 0;
  auto fail = [&](size_t at) {
    r.ok = false;
    r.error_offset = at;
    r.items.clear();
    return r;
  };
  while (pos < b.size()) {
    const size_t off = pos;
    const uint8_t kind = static_cast<uint8_t>(b[pos++]);
    // varint: LEB128, at most 10 bytes; bits beyond 64 in a tenth byte ignored.
    uint64_t len = 0;
    size_t nbytes = 0;
    bool done = false;
    while (nbytes < 10) {
      if (pos >= b.size()) return fail(off);
      const uint8_t byte = static_cast<uint8_t>(b[pos++]);
      len |= static_cast<uint64_t>(byte & 0x7f) << (7 * nbytes);
      ++nbytes;
      if (!(byte & 0x80)) {
        done = true;
        break;
      }
    }
    if (!done) return fail(off);
    if (nbytes != VarintLength(len)) r.canonical = false;
    if (len > b.size() - pos) return fail(off);
    std::string_view data = b.substr(pos, len);
    pos += len;
    ParsedItem it{kind, {}, {}, off};
    switch (kind) {
      case 0x01:  // entry
      case 0x03:  // dup
        if (data.size() < 12) return fail(off);
        it.version = Version{DecodeFixed32(data.data()), DecodeFixed64(data.data() + 4)};
        it.payload = std::string(data.substr(12));
        break;
      case 0x04:  // rewind
        if (data.size() != 12) return fail(off);
        it.version = Version{DecodeFixed32(data.data()), DecodeFixed64(data.data() + 4)};
        break;
      case 0x02:  // info
        it.payload = std::string(data);
        break;
      case 0x05:  // reset
        if (!data.empty()) return fail(off);
        break;
      case 0x07:  // PG bytes: stamp:u32 lpos:u64 bytes
        if (data.size() < 12) return fail(off);
        it.pg_stamp = DecodeFixed32(data.data());
        it.lpos = DecodeFixed64(data.data() + 4);
        it.payload = std::string(data.substr(12));
        break;
      default:  // kPad (0x86) and every other kind with bit 7: skipped
        if (!(kind & 0x80)) return fail(off);
        r.canonical = false;
        continue;
    }
    r.items.push_back(std::move(it));
  }
  return r;
}

absl::Status Parse(std::string_view body, std::vector<ParsedItem>* out) {
  out->clear();
  return ForEachItem(body, [&](const Item& it) -> absl::Status {
    // The payload must point into the body.
    if (!it.payload.empty()) {
      FUZZ_CHECK(it.payload.data() >= body.data() &&
                     it.payload.data() + it.payload.size() <= body.data() + body.size(),
                 absl::StrFormat("item at %u: payload outside the body", it.offset));
    }
    out->push_back(ParsedItem{static_cast<uint8_t>(it.kind), it.version,
                              std::string(it.payload), it.offset, it.pg_stamp, it.lpos});
    return absl::OkStatus();
  });
}

void CheckBody(std::string_view body) {
  std::vector<ParsedItem> got;
  absl::Status s = Parse(body, &got);
  RefResult ref = ReferenceParse(body);
  FUZZ_CHECK(s.ok() == ref.ok,
             absl::StrFormat("ForEachItem says %s, the FORMAT.md reference parser %s (body %s)",
                             s.ToString(), ref.ok ? "accepts" : "rejects", Hex(body)));
  if (!s.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(s), s.ToString());
    const std::string prefix = absl::StrFormat("item at body offset %u:", ref.error_offset);
    FUZZ_CHECK(absl::StartsWith(s.message(), prefix),
               absl::StrFormat("error \"%s\" should start \"%s\"", s.message(), prefix));
    return;
  }
  FUZZ_CHECK(got == ref.items, absl::StrFormat("ForEachItem and the reference parser disagree "
                                               "on the items of %s", Hex(body)));
  // Stopping: an error from the callback is returned as is.
  if (!got.empty()) {
    absl::Status stop = ForEachItem(
        body, [](const Item&) { return absl::CancelledError("stop"); });
    FUZZ_CHECK(absl::IsCancelled(stop), stop.ToString());
  }
  // Re-encode what was understood.
  RecordBodyBuilder b;
  for (const ParsedItem& it : got) {
    switch (static_cast<ItemKind>(it.kind)) {
      case ItemKind::kEntry: b.AddEntry(it.version, it.payload); break;
      case ItemKind::kDup: b.AddDup(it.version, it.payload); break;
      case ItemKind::kInfo: b.AddInfo(it.payload); break;
      case ItemKind::kRewind: b.AddRewind(it.version); break;
      case ItemKind::kReset: b.AddReset(); break;
      case ItemKind::kPgBytes: b.AddPgBytes(it.pg_stamp, it.lpos, it.payload); break;
      case ItemKind::kPad: FUZZ_CHECK(false, "a pad item was handed out");
    }
  }
  if (ref.canonical) {
    FUZZ_CHECK(b.body() == body, absl::StrFormat("canonical body %s re-encodes as %s", Hex(body),
                                                 Hex(b.body())));
  }
  std::vector<ParsedItem> again;
  absl::Status s2 = Parse(b.body(), &again);
  FUZZ_CHECK(s2.ok(), s2.ToString());
  FUZZ_CHECK(again.size() == got.size(), "re-encoded body has a different item count");
  for (size_t i = 0; i < got.size(); ++i) {
    FUZZ_CHECK(again[i].kind == got[i].kind && again[i].version == got[i].version &&
                   again[i].payload == got[i].payload && again[i].pg_stamp == got[i].pg_stamp &&
                   again[i].lpos == got[i].lpos,
               absl::StrFormat("item %u changed in a re-encode", i));
  }
}

void CheckRecord(std::string_view rec) {
  // rec is a whole record: 24 + header.length bytes.
  const RecordHeader h = DecodeRecordHeader(rec.data());
  FUZZ_CHECK(rec.size() == kRecordHeaderSize + h.length, "CheckRecord: size");
  const std::string_view body = rec.substr(kRecordHeaderSize);
  std::string again;
  AppendRecord(&again, h.type, h.pg_stamp, h.lap, h.seq, body);
  FUZZ_CHECK(again.size() == rec.size(), "AppendRecord size");
  // Every header field but the CRC round-trips.
  FUZZ_CHECK(again.substr(4) == rec.substr(4),
             absl::StrFormat("header %s re-encodes as %s", Hex(rec.substr(0, 24)),
                             Hex(std::string_view(again).substr(0, 24))));
  const RecordHeader h2 = DecodeRecordHeader(again.data());
  FUZZ_CHECK(h2.type == h.type && h2.length == h.length && h2.pg_stamp == h.pg_stamp &&
                 h2.lap == h.lap && h2.seq == h.seq,
             "header fields changed in a re-encode");
  FUZZ_CHECK(RecordCrcMatches(again), "a record AppendRecord wrote fails its CRC");
  const bool match = RecordCrcMatches(rec);
  FUZZ_CHECK(match == (again == rec),
             absl::StrFormat("RecordCrcMatches says %d but the re-encoded record is %s", match,
                             again == rec ? "identical" : "different"));
  CheckBody(body);
}

}  // namespace
}  // namespace pgring::fuzz

extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size) {
  using namespace pgring;
  using namespace pgring::fuzz;
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  // 1. The whole input as a record body.
  CheckBody(in);

  // 2. The input as a record.
  if (size >= kRecordHeaderSize) {
    const RecordHeader h = DecodeRecordHeader(in.data());
    std::string rec;
    if (size - kRecordHeaderSize >= h.length) {
      CheckRecord(in.substr(0, kRecordHeaderSize + h.length));
      rec.assign(in.substr(0, kRecordHeaderSize + h.length));
    } else {
      // Truncated: make it whole by shortening the length to what is there.
      rec.assign(in);
      const uint32_t len = static_cast<uint32_t>(size - kRecordHeaderSize);
      rec[5] = static_cast<char>(len);
      rec[6] = static_cast<char>(len >> 8);
      rec[7] = static_cast<char>(len >> 16);
    }
    // The same record with a correct CRC: must match and re-encode exactly.
    PutMaskedCrc(&rec, 0, 4, rec.size());
    FUZZ_CHECK(RecordCrcMatches(rec), "a record with its CRC recomputed does not match");
    CheckRecord(rec);
  }

  // 3. Padding of n bytes.
  if (size >= 2) {
    const size_t n = (static_cast<size_t>(data[0]) | static_cast<size_t>(data[1]) << 8) % 40000;
    if (n != 1) {
      RecordBodyBuilder b;
      b.AddPad(n);
      FUZZ_CHECK(b.size() == n, absl::StrFormat("AddPad(%u) wrote %u bytes", n, b.size()));
      size_t items = 0;
      absl::Status s = ForEachItem(b.body(), [&](const Item&) {
        ++items;
        return absl::OkStatus();
      });
      FUZZ_CHECK(s.ok() && items == 0, absl::StrFormat("AddPad(%u): %s, %u items", n,
                                                       s.ToString(), items));
      RefResult ref = ReferenceParse(b.body());
      FUZZ_CHECK(ref.ok && ref.items.empty(), absl::StrFormat("AddPad(%u) bytes rejected", n));
    }
  }
  return 0;
}
