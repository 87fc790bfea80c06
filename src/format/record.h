// record.h — the record format of a PG's ring: constants, the encoder and the
// decoder. The byte layout (header fields, item kinds, padding) is specified
// in docs/FORMAT.md, "Records", and held to byte for byte by
// tests/unit/record_test.cc and tests/unit/format_golden_test.cc.
#ifndef PGRING_FORMAT_RECORD_H_
#define PGRING_FORMAT_RECORD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pgring/types.h"

namespace pgring {

inline constexpr size_t kRecordHeaderSize = 24;
inline constexpr uint32_t kMaxRecordBody = (1u << 24) - 1;
inline constexpr uint8_t kSkippableBit = 0x80;

// Record kinds (header type, bits 0..6).
inline constexpr uint8_t kRecordTxn = 1;  // the items one transaction wrote to one PG
// A transaction's record in the log stream (stream mode, format version 2 on):
// kPgBytes items only, one per PG whose bytes it leaves unhomed. Never in a
// PG's ring.
inline constexpr uint8_t kRecordStream = 2;
// A stream record whose items are lz4-compressed (format version 5 on;
// compressed_stream_record.h): the same items as kRecordStream's, in a
// smaller body. Never in a PG's ring.
inline constexpr uint8_t kRecordStreamLz4 = 3;

// The stream's record stamp. PG stamps stop at 2^32 - 2, so a stream record
// can never pass as a PG's, nor a PG's as the stream's.
inline constexpr uint32_t kStreamStamp = 0xFFFFFFFF;

// Item kinds.
enum class ItemKind : uint8_t {
  kEntry = 1,
  kInfo = 2,
  kDup = 3,
  kRewind = 4,
  kReset = 5,
  kPad = 6 | kSkippableBit,
  kPgBytes = 7,  // stream records only: one PG's record bytes at their ring lpos

};

// Bytes of an item's fixed version prefix (epoch:u32 version:u64).
inline constexpr size_t kItemVersionSize = 12;
// Bytes of a kPgBytes item's fixed prefix (stamp:u32 lpos:u64).
inline constexpr size_t kItemPgBytesPrefixSize = 12;

struct RecordHeader {
  uint32_t masked_crc = 0;
  uint8_t type = 0;
  uint32_t length = 0;
  uint32_t pg_stamp = 0;
  uint32_t lap = 0;
  uint64_t seq = 0;
};

// Parses the 24 header bytes at `p` (no validation).
RecordHeader DecodeRecordHeader(const char* p);

// Appends a whole record (header + body) to `dst`.
void AppendRecord(std::string* dst, uint8_t type, uint32_t pg_stamp,
                  uint32_t lap, uint64_t seq, std::string_view body);

// The smallest pad record: its header and one pad item of no data.
inline constexpr size_t kMinPadRecord = kRecordHeaderSize + 2;

// Appends a record of exactly `size` bytes (at least kMinPadRecord)
// whose body is only kPad items: it fills a block's end so that the next
// record starts on a block boundary.
void AppendPadRecord(std::string* dst, uint8_t type, uint32_t pg_stamp, uint32_t lap,
                     uint64_t seq, size_t size);

// True if the CRC in `header_and_body` (24 + length bytes) matches.
bool RecordCrcMatches(std::string_view header_and_body);

// Builds a record body item by item.
class RecordBodyBuilder {
 public:
  void AddEntry(const Version& v, std::string_view payload);
  void AddInfo(std::string_view payload);
  void AddDup(const Version& v, std::string_view payload);
  void AddRewind(const Version& v);
  void AddReset();
  // One PG's record bytes that lie at [lpos, lpos + bytes.size()) of the ring
  // of the PG whose stamp is `stamp`.
  void AddPgBytes(uint32_t stamp, uint64_t lpos, std::string_view bytes);
  // Adds padding items totalling exactly `bytes` (bytes != 1).
  void AddPad(size_t bytes);
  size_t size() const { return body_.size(); }
  bool empty() const { return body_.empty(); }
  const std::string& body() const { return body_; }
  std::string Release() { return std::move(body_); }
  void Clear() { body_.clear(); }
  void Reserve(size_t bytes) { body_.reserve(bytes); }

  // Bytes an item with `data_len` data bytes takes.
  static size_t ItemSize(size_t data_len);

 private:
  void AddItem(ItemKind kind, std::string_view data);
  void AddVersionItem(ItemKind kind, const Version& v, std::string_view payload);
  std::string body_;
};

// One decoded item. `payload` points into the body.
struct Item {
  ItemKind kind;
  Version version;           // kEntry, kDup, kRewind
  std::string_view payload;  // kEntry, kDup, kInfo; kPgBytes: the PG's bytes
  size_t offset = 0;         // offset of the item within the body
  uint32_t pg_stamp = 0;     // kPgBytes
  uint64_t lpos = 0;         // kPgBytes: ring lpos of payload's first byte
};

// Calls `fn` for each item of `body` a reader of this version understands
// (skippable unknown kinds and padding are skipped). Returns kDataLoss naming
// the item offset and problem on a truncated item, a bad varint, or an
// unknown kind without the skippable bit. Which record types may hold which
// kinds is the caller's rule: a kPgBytes item is handed out like the others.
// `fn` may return an error to stop.
absl::Status ForEachItem(std::string_view body,
                         const std::function<absl::Status(const Item&)>& fn);

}  // namespace pgring

#endif  // PGRING_FORMAT_RECORD_H_
