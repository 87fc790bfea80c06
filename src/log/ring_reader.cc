#include "log/ring_reader.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"

namespace pgring {
namespace {
// Reads ahead this much at a time: recovery reads whole logs.
constexpr uint64_t kWindowBytes = 1 << 20;
}  // namespace

RingReader::RingReader(BlockDevice* device, const Geometry& geometry,
                       const PgChunkList& chunks, std::string pg_name,
                       uint32_t stamp, uint64_t from, uint64_t limit,
                       uint64_t first_seq)
    : device_(device),
      geometry_(geometry),
      chunks_(chunks),
      pg_name_(std::move(pg_name)),
      stamp_(stamp),
      pos_(from),
      limit_(limit),
      next_seq_(first_seq) {}

absl::Status RingReader::Damage(uint64_t lpos, std::string_view what) const {
  ChunkPos cp = Locate(chunks_, geometry_, lpos);
  return absl::DataLossError(absl::StrFormat(
      "PG %s: record at lpos %u (chunk %d, offset %u): %s", pg_name_, lpos,
      cp.chunk, cp.offset, what));
}

absl::StatusOr<const char*> RingReader::Fetch(uint64_t lpos, uint64_t n) {
  if (lpos >= window_start_ && lpos + n <= window_start_ + window_len_) {
    return window_->data() + (lpos - window_start_);
  }
  uint64_t start = geometry_.AlignDown(lpos);
  uint64_t end = geometry_.AlignUp(std::max(lpos + n, std::min(start + kWindowBytes, limit_)));
  end = std::min(end, RingEnd(chunks_, geometry_));
  if (start < chunks_.base || lpos + n > end) {
    return Damage(lpos, "range lies outside the PG's chunks");
  }
  uint64_t len = end - start;
  if (!window_ || window_->size() < len) {
    window_ = std::make_unique<AlignedBuffer>(std::max<uint64_t>(len, kWindowBytes));
  }
  std::vector<Extent> extents;
  MapRange(chunks_, geometry_, start, len, &extents);
  uint64_t filled = 0;
  for (const Extent& e : extents) {
    absl::Status s = device_->Read(e.device_offset, {window_->data() + filled, e.length});
    if (!s.ok()) {
      window_len_ = 0;
      return absl::Status(s.code(), absl::StrFormat("PG %s: reading lpos %u: %s", pg_name_,
                                                     start + filled, s.message()));
    }
    filled += e.length;
  }
  bytes_read_ += len;
  window_start_ = start;
  window_len_ = len;
  return window_->data() + (lpos - window_start_);
}

absl::Status RingReader::Next(RingRecord* out) {
  if (pos_ >= limit_) return absl::OutOfRangeError("end of the committed log");
  if (limit_ - pos_ < kRecordHeaderSize) {
    return Damage(pos_, absl::StrFormat("%u bytes before the committed tail at %u are "
                                        "too few for a record header",
                                        limit_ - pos_, limit_));
  }
  auto hp = Fetch(pos_, kRecordHeaderSize);
  if (!hp.ok()) return hp.status();
  RecordHeader h = DecodeRecordHeader(*hp);
  // The length is only trusted once the CRC matches, but it must at least
  // keep the record inside the committed range before we read that far.
  if (h.length > limit_ - pos_ - kRecordHeaderSize) {
    return Damage(pos_, absl::StrFormat("length %u runs past the committed tail at %u "
                                        "(damaged header)", h.length, limit_));
  }
  auto rp = Fetch(pos_, kRecordHeaderSize + h.length);
  if (!rp.ok()) return rp.status();
  std::string_view rec(*rp, kRecordHeaderSize + h.length);
  if (!RecordCrcMatches(rec)) return Damage(pos_, "CRC mismatch");
  if ((h.type & ~kSkippableBit) != kRecordTxn && !(h.type & kSkippableBit)) {
    return Damage(pos_, absl::StrFormat("unknown record type %u", h.type));
  }
  if (h.pg_stamp != stamp_) {
    return Damage(pos_, absl::StrFormat("record belongs to PG stamp %u, not %u "
                                        "(a record of another PG)", h.pg_stamp, stamp_));
  }
  if (h.lap != LapOf(pos_, geometry_)) {
    return Damage(pos_, absl::StrFormat("record is from lap %u, expected lap %u (a stale "
                                        "record from an earlier use of the chunk)",
                                        h.lap, LapOf(pos_, geometry_)));
  }
  if (next_seq_ != 0 && h.seq != next_seq_) {
    return Damage(pos_, absl::StrFormat("sequence %u, expected %u", h.seq, next_seq_));
  }
  out->lpos = pos_;
  out->header = h;
  out->body = rec.substr(kRecordHeaderSize);
  next_seq_ = h.seq + 1;
  pos_ += rec.size();
  return absl::OkStatus();
}

}  // namespace pgring
