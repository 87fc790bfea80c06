// ring_reader.h — reads a PG's records in order from a logical position up to
// a limit (the committed tail), with large aligned reads, and verifies each
// one: length within the limit, CRC, PG stamp, lap and consecutive sequence.
// Used by recovery (head to tail), by reads of entries, and by fsck.
//
// Everything between a PG's head and its committed tail was written by
// committed transactions, so any record that fails a check there is damage,
// reported as kDataLoss naming the PG, lpos, chunk, chunk offset and the
// failed check. Bytes at or past the limit are never read as records.
#ifndef PGRING_LOG_RING_READER_H_
#define PGRING_LOG_RING_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "format/record.h"
#include "log/ring_layout.h"
#include "format/metadata_keys.h"

namespace pgring {

struct RingRecord {
  uint64_t lpos = 0;
  RecordHeader header;
  std::string_view body;  // valid until the next call to Next()
  uint64_t size() const { return kRecordHeaderSize + header.length; }
};

class RingReader {
 public:
  // `pg_name` is used in error messages. `first_seq` is the sequence the
  // first record must have (0: take the first record's sequence as given).
  RingReader(BlockDevice* device, const Geometry& geometry,
             const PgChunkList& chunks, std::string pg_name, uint32_t stamp,
             uint64_t from, uint64_t limit, uint64_t first_seq = 0);

  // Reads the next record into *out. Returns kOutOfRange at the limit,
  // kDataLoss on damage, or the device's error.
  absl::Status Next(RingRecord* out);

  uint64_t position() const { return pos_; }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t bytes_read() const { return bytes_read_; }

  // "PG 1.2a: record at lpos 8192 (chunk 7, offset 8192): <what>"
  absl::Status Damage(uint64_t lpos, std::string_view what) const;

 private:
  // Makes [lpos, lpos + n) available in the window; returns a pointer to it.
  absl::StatusOr<const char*> Fetch(uint64_t lpos, uint64_t n);

  BlockDevice* device_;
  const Geometry geometry_;
  const PgChunkList& chunks_;
  const std::string pg_name_;
  const uint32_t stamp_;
  uint64_t pos_;
  const uint64_t limit_;
  uint64_t next_seq_;
  std::unique_ptr<AlignedBuffer> window_;
  uint64_t window_start_ = 0;
  uint64_t window_len_ = 0;
  uint64_t bytes_read_ = 0;
};

}  // namespace pgring

#endif  // PGRING_LOG_RING_READER_H_
