#include "format/compressed_stream_record.h"

#include <lz4.h>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "format/record.h"
#include "util/coding.h"

namespace pgring {

StreamRecordCompressor::StreamRecordCompressor() : state_(LZ4_createStream()) {}

StreamRecordCompressor::~StreamRecordCompressor() { LZ4_freeStream(state_); }

bool StreamRecordCompressor::Compress(std::string_view items, std::string* body) {
  if (items.empty() || items.size() > kMaxRecordBody) return false;
  body->clear();
  PutVarint64(body, items.size());
  // lz4_len goes before the block; its width is known only after, so room
  // for the widest a smaller-than-items block can need, closed up after.
  const size_t head = body->size();
  const size_t len_room = VarintLength(items.size());
  if (head + len_room >= items.size()) return false;
  const size_t most = items.size() - head - len_room - 1;  // the block must leave it smaller
  body->resize(head + len_room + most);
  // Reset, not initialised again: a fresh block each time (no dictionary),
  // without clearing the 16 KiB table each record.
  LZ4_resetStream_fast(state_);
  const int n = LZ4_compress_fast_continue(state_, items.data(), body->data() + head + len_room,
                                           static_cast<int>(items.size()),
                                           static_cast<int>(most), /*acceleration=*/1);
  if (n <= 0) return false;
  std::string len;
  PutVarint64(&len, static_cast<uint64_t>(n));
  body->replace(head, len_room, len);
  body->resize(head + len.size() + static_cast<size_t>(n));
  return true;
}

absl::StatusOr<std::string_view> StreamRecordItems(uint8_t type, std::string_view body,
                                                   std::string* scratch) {
  if ((type & ~kSkippableBit) != kRecordStreamLz4) return body;
  std::string_view in = body;
  uint64_t raw_len = 0, lz4_len = 0;
  if (!GetVarint64(&in, &raw_len) || !GetVarint64(&in, &lz4_len)) {
    return absl::DataLossError("compressed stream record: truncated or bad varint length");
  }
  if (raw_len == 0 || raw_len > kMaxRecordBody) {
    return absl::DataLossError(absl::StrFormat(
        "compressed stream record: %u uncompressed bytes (1 to %u)", raw_len, kMaxRecordBody));
  }
  if (lz4_len > in.size()) {
    return absl::DataLossError(absl::StrFormat(
        "compressed stream record: an lz4 block of %u bytes in %u bytes of body", lz4_len,
        in.size()));
  }
  scratch->resize(raw_len);
  const int n = LZ4_decompress_safe(in.data(), scratch->data(), static_cast<int>(lz4_len),
                                    static_cast<int>(raw_len));
  if (n < 0 || static_cast<uint64_t>(n) != raw_len) {
    return absl::DataLossError(absl::StrFormat(
        "compressed stream record: its lz4 block does not decompress to the %u bytes it names%s",
        raw_len, n < 0 ? " (malformed)" : absl::StrFormat(" (%d)", n)));
  }
  return std::string_view(*scratch);
}

}  // namespace pgring
