#include "format/record.h"

#include <cassert>

#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring {

RecordHeader DecodeRecordHeader(const char* p) {
  RecordHeader h;
  h.masked_crc = DecodeFixed32(p);
  h.type = static_cast<uint8_t>(p[4]);
  h.length = static_cast<uint32_t>(static_cast<uint8_t>(p[5])) |
             (static_cast<uint32_t>(static_cast<uint8_t>(p[6])) << 8) |
             (static_cast<uint32_t>(static_cast<uint8_t>(p[7])) << 16);
  h.pg_stamp = DecodeFixed32(p + 8);
  h.lap = DecodeFixed32(p + 12);
  h.seq = DecodeFixed64(p + 16);
  return h;
}

void AppendRecord(std::string* dst, uint8_t type, uint32_t pg_stamp,
                  uint32_t lap, uint64_t seq, std::string_view body) {
  assert(body.size() <= kMaxRecordBody);
  char h[kRecordHeaderSize];
  h[4] = static_cast<char>(type);
  uint32_t len = static_cast<uint32_t>(body.size());
  h[5] = static_cast<char>(len);
  h[6] = static_cast<char>(len >> 8);
  h[7] = static_cast<char>(len >> 16);
  EncodeFixed32(h + 8, pg_stamp);
  EncodeFixed32(h + 12, lap);
  EncodeFixed64(h + 16, seq);
  uint32_t crc = crc32c::Value(h + 4, kRecordHeaderSize - 4);
  crc = crc32c::Extend(crc, body.data(), body.size());
  EncodeFixed32(h, crc32c::Mask(crc));
  dst->append(h, kRecordHeaderSize);
  dst->append(body.data(), body.size());
}

bool RecordCrcMatches(std::string_view r) {
  if (r.size() < kRecordHeaderSize) return false;
  uint32_t stored = crc32c::Unmask(DecodeFixed32(r.data()));
  return stored == crc32c::Value(r.data() + 4, r.size() - 4);
}

size_t RecordBodyBuilder::ItemSize(size_t data_len) {
  return 1 + VarintLength(data_len) + data_len;
}

void RecordBodyBuilder::AddItem(ItemKind kind, std::string_view data) {
  body_.push_back(static_cast<char>(kind));
  PutVarint64(&body_, data.size());
  body_.append(data.data(), data.size());
}

void RecordBodyBuilder::AddVersionItem(ItemKind kind, const Version& v,
                                       std::string_view payload) {
  body_.push_back(static_cast<char>(kind));
  PutVarint64(&body_, kItemVersionSize + payload.size());
  PutFixed32(&body_, v.epoch);
  PutFixed64(&body_, v.version);
  body_.append(payload.data(), payload.size());
}

void RecordBodyBuilder::AddEntry(const Version& v, std::string_view payload) {
  AddVersionItem(ItemKind::kEntry, v, payload);
}
void RecordBodyBuilder::AddInfo(std::string_view payload) {
  AddItem(ItemKind::kInfo, payload);
}
void RecordBodyBuilder::AddDup(const Version& v, std::string_view payload) {
  AddVersionItem(ItemKind::kDup, v, payload);
}
void RecordBodyBuilder::AddRewind(const Version& v) {
  AddVersionItem(ItemKind::kRewind, v, {});
}
void RecordBodyBuilder::AddReset() { AddItem(ItemKind::kReset, {}); }

void RecordBodyBuilder::AddPgBytes(uint32_t stamp, uint64_t lpos, std::string_view bytes) {
  body_.push_back(static_cast<char>(ItemKind::kPgBytes));
  PutVarint64(&body_, kItemPgBytesPrefixSize + bytes.size());
  PutFixed32(&body_, stamp);
  PutFixed64(&body_, lpos);
  body_.append(bytes.data(), bytes.size());
}

void AppendPadRecord(std::string* dst, uint8_t type, uint32_t pg_stamp, uint32_t lap,
                     uint64_t seq, size_t size) {
  assert(size >= kMinPadRecord);
  RecordBodyBuilder body;
  body.AddPad(size - kRecordHeaderSize);
  AppendRecord(dst, type, pg_stamp, lap, seq, body.body());
}

void RecordBodyBuilder::AddPad(size_t bytes) {
  assert(bytes != 1);
  // An item of n data bytes takes n+2 bytes for n < 128 and n+3 for
  // 128 <= n < 16384; 130 is the one total neither form reaches, so it is
  // split as 2 + 128.
  while (bytes > 0) {
    size_t take;
    if (bytes == 130) {
      take = 2;
    } else if (bytes <= 129) {
      take = bytes;
    } else {
      take = std::min<size_t>(bytes, 16383 + 3);
      if (bytes - take == 1 || bytes - take == 130) take -= 3;
    }
    size_t data = take <= 129 ? take - 2 : take - 3;
    body_.push_back(static_cast<char>(ItemKind::kPad));
    PutVarint64(&body_, data);
    body_.append(data, '\0');
    bytes -= take;
  }
}

absl::Status ForEachItem(std::string_view body,
                         const std::function<absl::Status(const Item&)>& fn) {
  std::string_view in = body;
  while (!in.empty()) {
    size_t offset = body.size() - in.size();
    auto kind = static_cast<ItemKind>(static_cast<uint8_t>(in.front()));
    in.remove_prefix(1);
    uint64_t len = 0;
    if (!GetVarint64(&in, &len)) {
      return absl::DataLossError(absl::StrFormat(
          "item at body offset %u: truncated or bad varint length", offset));
    }
    if (len > in.size()) {
      return absl::DataLossError(absl::StrFormat(
          "item at body offset %u: length %u runs past the end of the body (%u bytes left)",
          offset, len, in.size()));
    }
    std::string_view data = in.substr(0, len);
    in.remove_prefix(len);
    Item item{kind, {}, {}, offset};
    switch (kind) {
      case ItemKind::kEntry:
      case ItemKind::kDup:
      case ItemKind::kRewind:
        if (kind == ItemKind::kRewind && data.size() != kItemVersionSize) {
          return absl::DataLossError(absl::StrFormat(
              "item at body offset %u: rewind item has %u bytes, not %u", offset, len,
              kItemVersionSize));
        }
        if (data.size() < kItemVersionSize) {
          return absl::DataLossError(absl::StrFormat(
              "item at body offset %u: %u bytes is too short for its kind", offset, len));
        }
        item.version.epoch = DecodeFixed32(data.data());
        item.version.version = DecodeFixed64(data.data() + 4);
        item.payload = data.substr(kItemVersionSize);
        break;
      case ItemKind::kInfo:
        item.payload = data;
        break;
      case ItemKind::kReset:
        if (!data.empty()) {
          return absl::DataLossError(absl::StrFormat(
              "item at body offset %u: reset item carries %u bytes", offset, len));
        }
        break;
      case ItemKind::kPgBytes:
        if (data.size() < kItemPgBytesPrefixSize) {
          return absl::DataLossError(absl::StrFormat(
              "item at body offset %u: PG bytes item has %u bytes, fewer than its %u-byte "
              "stamp and lpos",
              offset, len, kItemPgBytesPrefixSize));
        }
        item.pg_stamp = DecodeFixed32(data.data());
        item.lpos = DecodeFixed64(data.data() + 4);
        item.payload = data.substr(kItemPgBytesPrefixSize);
        break;
      case ItemKind::kPad:
        continue;
      default:
        if (static_cast<uint8_t>(kind) & kSkippableBit) continue;
        return absl::DataLossError(absl::StrFormat(
            "item at body offset %u: unknown kind %u", offset, static_cast<unsigned>(kind)));
    }
    absl::Status s = fn(item);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace pgring
