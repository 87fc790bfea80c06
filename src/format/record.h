// record.h — the record format of a PG's ring: constants, the encoder and the
// decoder. The layout is specified in docs/FORMAT.md ("Records") and held to
// by tests/unit/record_test.cc byte for byte.
//
// Format (little-endian):
//   record := header body
//   header := crc:u32 type:u8 length:u24 pg:u32 lap:u32 seq:u64   (24 bytes)
//     crc    masked CRC32C of bytes [4, 24 + length): the rest of the header
//            and the body
//     type   bit 7 set: an older reader may skip the record; bits 0..6 the kind
//     length body bytes
//     pg     the PG's stamp (a store-wide serial given at PG creation and
//            never reused, so records of a removed PG never match a new one)
//     lap    the ring lap: lpos / chunk_size of the record's first byte, so a
//            record left in a chunk by an earlier use never matches
//     seq    the PG's record sequence, +1 per record
//   body   := item*
//   item   := kind:u8 len:varint data[len]
//     kind bit 7 set: an older reader may skip the item
//     kEntry  data = epoch:u32 version:u64 payload
//     kInfo   data = payload                 (the PG info; latest wins)
//     kDup    data = epoch:u32 version:u64 payload
//     kRewind data = epoch:u32 version:u64   (drop entries after version)
//     kReset  data = empty                   (drop every entry and dup)
//     kPad    data = zeros                   (fills a record to a block end)
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

// Item kinds.
enum class ItemKind : uint8_t {
  kEntry = 1,
  kInfo = 2,
  kDup = 3,
  kRewind = 4,
  kReset = 5,
  kPad = 6 | kSkippableBit,
};

// Bytes of an item's fixed version prefix (epoch:u32 version:u64).
inline constexpr size_t kItemVersionSize = 12;

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
  // Adds padding items totalling exactly `bytes` (bytes != 1).
  void AddPad(size_t bytes);
  size_t size() const { return body_.size(); }
  bool empty() const { return body_.empty(); }
  const std::string& body() const { return body_; }
  std::string Release() { return std::move(body_); }
  void Clear() { body_.clear(); }

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
  std::string_view payload;  // kEntry, kDup, kInfo
  size_t offset = 0;         // offset of the item within the body
};

// Calls `fn` for each item of `body` a reader of this version understands
// (skippable unknown kinds and padding are skipped). Returns kDataLoss naming
// the item offset and problem on a truncated item, a bad varint, or an
// unknown kind without the skippable bit. `fn` may return an error to stop.
absl::Status ForEachItem(std::string_view body,
                         const std::function<absl::Status(const Item&)>& fn);

}  // namespace pgring

#endif  // PGRING_FORMAT_RECORD_H_
