// compressed_stream_record.h — the body of a compressed stream record
// (kRecordStreamLz4; docs/FORMAT.md, "Compressed stream records"):
//
//   body := raw_len:varint lz4_len:varint block[lz4_len] filler
//
// `block` is one LZ4 block (the LZ4 block format, no frame, no dictionary)
// that decompresses to exactly raw_len bytes: the items a kRecordStream
// body would hold. `filler` (any bytes, written as zeros) lets the record
// end where the writer needs it to (kNeverRewrite ends a record at a block
// boundary); a reader ignores it.
//
// A transaction's stream record is compressed on its own, so a PG's record
// bytes are still found by the position of the stream record that holds
// them; a stream write of many such records is not compressed as a whole,
// since its records' positions are handed out before it is written
// (docs/decisions/2026-11-29-compressing-stream-records.md).
#ifndef PGRING_FORMAT_COMPRESSED_STREAM_RECORD_H_
#define PGRING_FORMAT_COMPRESSED_STREAM_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

union LZ4_stream_u;

namespace pgring {

// Compresses stream record bodies. Not thread-safe: one per writer.
class StreamRecordCompressor {
 public:
  StreamRecordCompressor();
  ~StreamRecordCompressor();
  StreamRecordCompressor(const StreamRecordCompressor&) = delete;
  StreamRecordCompressor& operator=(const StreamRecordCompressor&) = delete;

  // Sets `*body` to the compressed body of `items` (no filler) and returns
  // true, or returns false when it would not be smaller than `items`
  // (`*body` is then unspecified).
  bool Compress(std::string_view items, std::string* body);

 private:
  LZ4_stream_u* state_;
};

// The items a stream record of `type` holds: `body` itself for a
// kRecordStream, or, for a kRecordStreamLz4, `body` decompressed into
// `*scratch` (the view points there). kDataLoss naming the problem when a
// compressed body is malformed.
absl::StatusOr<std::string_view> StreamRecordItems(uint8_t type, std::string_view body,
                                                   std::string* scratch);

}  // namespace pgring

#endif  // PGRING_FORMAT_COMPRESSED_STREAM_RECORD_H_
