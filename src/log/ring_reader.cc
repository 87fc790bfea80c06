#include "log/ring_reader.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pgring {
namespace {
// The record type a ring with this stamp holds (a PG's: transaction
// records; the log stream's: stream records), or one an older reader may
// skip; anything else is a kind this version cannot read past safely.
bool IsReadableRecordType(uint8_t type, uint32_t stamp) {
  const uint8_t kind = type & ~kSkippableBit;
  const bool own = stamp == kStreamStamp ? kind == kRecordStream || kind == kRecordStreamLz4
                                         : kind == kRecordTxn;
  return own || (type & kSkippableBit) != 0;
}
// Reads ahead this much at a time: recovery and fsck read whole logs.
constexpr uint64_t kWindowBytes = 1 << 20;
// Said of every problem after which the log cannot be read further.
constexpr char kRestUnreadable[] = "the rest of the log cannot be read";
}  // namespace

RingReader::RingReader(BlockDevice* device, const Geometry& geometry, const PgChunkList& chunks,
                       std::string pg_name, uint32_t stamp, uint64_t from, uint64_t limit,
                       uint64_t first_seq, Reporter* reporter)
    : device_(device),
      geometry_(geometry),
      chunks_(chunks),
      pg_name_(std::move(pg_name)),
      stamp_(stamp),
      reporter_(reporter),
      align_(std::max<uint64_t>(geometry.block_size, device->logical_block_size())),
      pos_(from),
      limit_(limit),
      available_(limit),
      next_seq_(first_seq) {}

RingReader::~RingReader() { DropAhead(); }

void RingReader::DropAhead() {
  if (ahead_thread_.joinable()) ahead_thread_.join();
  ahead_len_ = 0;
}

void RingReader::StartAhead() {
  if (!background_ || ahead_thread_.joinable() || window_len_ == 0) return;
  // Only what the device holds: bytes the overlay serves are not read.
  const uint64_t from = window_start_ + window_len_;
  const uint64_t device_end = std::min(RingEnd(chunks_, geometry_), overlay_start_);
  if (from >= device_end || (from - chunks_.base) % align_ != 0) return;
  const uint64_t to = std::min(device_end, from + kWindowBytes);
  std::vector<Extent> extents;
  MapRange(chunks_, geometry_, from, to - from, &extents);
  if (!ahead_buf_ || ahead_buf_->size() < kAheadCarry + kWindowBytes) {
    ahead_buf_ = std::make_unique<AlignedBuffer>(kAheadCarry + kWindowBytes);
  }
  ahead_start_ = from;
  ahead_len_ = to - from;
  ahead_thread_ = std::thread([this, extents = std::move(extents)] {
    uint64_t filled = 0;
    for (const Extent& e : extents) {
      ahead_status_ = device_->Read(e.device_offset,
                                    {ahead_buf_->data() + kAheadCarry + filled, e.length});
      if (!ahead_status_.ok()) return;
      filled += e.length;
    }
  });
}

bool RingReader::TakeAhead(uint64_t start, uint64_t lpos, uint64_t n) {
  if (!ahead_thread_.joinable()) return false;
  ahead_thread_.join();
  // The read ahead continues the window; a record may start in the window
  // and end in it: the window's last bytes go before it.
  const bool continues = window_len_ > 0 && ahead_start_ == window_start_ + window_len_ &&
                         start >= window_start_ && start <= ahead_start_ &&
                         ahead_start_ - start <= kAheadCarry;
  const bool ok = ahead_status_.ok() && ahead_len_ > 0 && continues &&
                  lpos + n <= ahead_start_ + ahead_len_;
  if (!ok) {
    ahead_len_ = 0;  // a failed read is the synchronous read's to report
    return false;
  }
  const uint64_t carry = ahead_start_ - start;
  std::memcpy(ahead_buf_->data() + kAheadCarry - carry,
              window_->data() + window_off_ + (start - window_start_), carry);
  std::swap(window_, ahead_buf_);
  window_off_ = kAheadCarry - carry;
  window_start_ = start;
  window_len_ = carry + ahead_len_;
  ahead_len_ = 0;
  return true;
}

absl::Status RingReader::Report(std::string_view kind, uint64_t lpos, std::string what,
                                bool ends_log, bool whole_log) {
  RingDamage d;
  d.kind = kind;
  d.lpos = lpos;
  d.where = Locate(chunks_, geometry_, lpos);
  d.what = std::move(what);
  d.ends_log = ends_log;
  d.whole_log = whole_log;
  if (reporter_ != nullptr) reporter_->Corruption(d);
  // The log stream's reader is named as such; a PG's by its id.
  const std::string subject =
      stamp_ == kStreamStamp ? std::string("log stream") : absl::StrCat("PG ", pg_name_);
  if (whole_log) return absl::DataLossError(absl::StrFormat("%s: %s", subject, d.what));
  return absl::DataLossError(absl::StrFormat("%s: record at lpos %u (chunk %d, offset %u): %s",
                                             subject, lpos, d.where.chunk, d.where.offset,
                                             d.what));
}

absl::Status RingReader::Damage(uint64_t lpos, std::string_view what, std::string_view kind) {
  return Report(kind, lpos, std::string(what), /*ends_log=*/false);
}

absl::StatusOr<const char*> RingReader::Fetch(uint64_t lpos, uint64_t n, uint64_t ahead_limit) {
  if (lpos >= overlay_start_ && lpos - overlay_start_ + n <= overlay_.size()) {
    return overlay_.data() + (lpos - overlay_start_);
  }
  if (window_ && lpos >= window_start_ && lpos + n <= window_start_ + window_len_) {
    return window_->data() + window_off_ + (lpos - window_start_);
  }
  // The device holds what lies before the overlay, within the chunks; the
  // overlay the rest (behind the stream a ring has no chunk for the bytes
  // only the stream holds, which the overlay serves).
  const uint64_t ring_end = RingEnd(chunks_, geometry_);
  const uint64_t overlay_end = overlay_start_ + overlay_.size();
  const uint64_t readable_end =
      overlay_.empty() || overlay_start_ > ring_end ? ring_end : std::max(ring_end, overlay_end);
  if (lpos < chunks_.base || lpos + n > readable_end) {
    return absl::DataLossError(absl::StrFormat("[%u, %u) lies outside the PG's chunks [%u, %u)",
                                                 lpos, lpos + n, chunks_.base, ring_end));
  }
  const uint64_t start = lpos - (lpos - chunks_.base) % align_;
  const uint64_t want = std::max(lpos + n, std::min(start + kWindowBytes, ahead_limit));
  const uint64_t end =
      std::min(readable_end, chunks_.base + (want - chunks_.base + align_ - 1) / align_ * align_);
  const uint64_t len = end - start;
  if (TakeAhead(start, lpos, n)) {
    StartAhead();
    return window_->data() + window_off_ + (lpos - window_start_);
  }
  if (!window_ || window_->size() < len) {
    window_ = std::make_unique<AlignedBuffer>(std::max<uint64_t>(len, kWindowBytes));
  }
  window_len_ = 0;
  const uint64_t from_device = std::min(end, std::max(start, overlay_start_)) - start;
  std::vector<Extent> extents;
  if (from_device > 0) MapRange(chunks_, geometry_, start, from_device, &extents);
  uint64_t filled = 0;
  for (const Extent& e : extents) {
    absl::Status s = device_->Read(e.device_offset, {window_->data() + filled, e.length});
    if (!s.ok()) return s;
    filled += e.length;
  }
  if (filled < len) {
    const uint64_t at = start + filled;
    const uint64_t have = at < overlay_end ? std::min(len - filled, overlay_end - at) : 0;
    std::memcpy(window_->data() + filled, overlay_.data() + (at - overlay_start_), have);
    // Past the overlay's end (beyond the limit, Bytes()): nothing written.
    std::memset(window_->data() + filled + have, 0, len - filled - have);
  }
  window_off_ = 0;
  window_start_ = start;
  window_len_ = len;
  StartAhead();
  return window_->data() + (lpos - window_start_);
}

void RingReader::SetOverlay(uint64_t start, std::string_view bytes) {
  DropAhead();  // it may have read what the overlay now serves
  overlay_start_ = start;
  overlay_ = bytes;
  window_len_ = 0;  // what the window holds may be the device's
}

void RingReader::SetAvailable(uint64_t end) {
  assert(end <= limit_);
  available_ = end;
}

void RingReader::ExtendLimit(uint64_t limit) {
  assert(limit >= limit_);
  if (pointer_tail_ == UINT64_MAX) pointer_tail_ = limit_;
  // Without SetAvailable everything up to the limit is available.
  if (available_ == limit_) available_ = limit;
  limit_ = limit;
}

void RingReader::ReleaseWindow() {
  DropAhead();
  ahead_buf_.reset();
  window_.reset();
  window_len_ = 0;
}

absl::StatusOr<std::string_view> RingReader::Bytes(uint64_t lpos, uint64_t n) {
  auto p = Fetch(lpos, n, lpos + n);
  if (!p.ok()) return p.status();
  return std::string_view(*p, n);
}

absl::Status RingReader::Next(RingRecord* out) {
  waiting_ = false;
  if (!ended_.ok()) return ended_;  // reported once; nothing past it can be read
  absl::Status s = NextRecord(out);
  if (!s.ok() && !absl::IsOutOfRange(s)) ended_ = s;
  return s;
}

absl::Status RingReader::NextRecord(RingRecord* out) {
  while (true) {
    if (pos_ >= limit_) return absl::OutOfRangeError("end of the committed log");
    const uint64_t pos = pos_;
    if (limit_ - pos < kRecordHeaderSize) {
      return Report("record-short", pos,
                    absl::StrFormat("%u bytes before the committed tail at %u are too few for a "
                                    "record header; %s",
                                    limit_ - pos, limit_, kRestUnreadable),
                    true);
    }
    if (available_ < pos + kRecordHeaderSize) return NotYet(pos);
    auto hp = Fetch(pos, kRecordHeaderSize, available_);
    if (!hp.ok()) {
      absl::Status s = Report("read-error", pos,
                              absl::StrFormat("reading the record header: %s; %s",
                                              hp.status().message(), kRestUnreadable),
                              true);
      // Keep the device's code (an I/O error is not damage on disk).
      return absl::Status(hp.status().code(), s.message());
    }
    const RecordHeader h = DecodeRecordHeader(*hp);
    // The length is only trusted once the CRC matches, but it must at least
    // keep the record inside the committed range before we read that far.
    if (h.length > limit_ - pos - kRecordHeaderSize) {
      return Report("record-length", pos,
                    absl::StrFormat("length %u runs past the committed tail at %u (damaged "
                                    "header); %s",
                                    h.length, limit_, kRestUnreadable),
                    true);
    }
    const uint64_t size = kRecordHeaderSize + h.length;
    if (available_ < pos + size) return NotYet(pos);
    auto rp = Fetch(pos, size, available_);
    if (!rp.ok()) {
      absl::Status s = Report("read-error", pos,
                              absl::StrFormat("reading the record: %s; %s",
                                              rp.status().message(), kRestUnreadable),
                              true);
      return absl::Status(rp.status().code(), s.message());
    }
    const std::string_view rec(*rp, size);
    if (!RecordCrcMatches(rec)) {
      return Report("record-crc", pos,
                    absl::StrFormat("CRC mismatch; the record's length cannot be trusted, so %s",
                                    kRestUnreadable),
                    true);
    }
    // From here the length is trustworthy: a reporter hears of every rule the
    // record breaks and reading goes on with the next record.
    ++records_;
    last_record_lpos_ = pos;
    pos_ = pos + size;
    const uint64_t expected_seq = next_seq_;
    next_seq_ = h.seq + 1;
    std::vector<std::pair<std::string_view, std::string>> broken;  // kind, what
    if (!IsReadableRecordType(h.type, stamp_)) {
      broken.emplace_back("record-type", absl::StrFormat("unknown record type %u", h.type));
    }
    if (h.pg_stamp != stamp_) {
      broken.emplace_back("record-pg", absl::StrFormat("record belongs to PG stamp %u, not %u (a "
                                                       "record of another PG)",
                                                       h.pg_stamp, stamp_));
    }
    if (h.lap != LapOf(pos, geometry_)) {
      broken.emplace_back("record-lap",
                          absl::StrFormat("record is from lap %u, expected lap %u (a stale record "
                                          "from an earlier use of the chunk)",
                                          h.lap, LapOf(pos, geometry_)));
    }
    if (expected_seq != 0 && h.seq != expected_seq) {
      broken.emplace_back("record-seq",
                          absl::StrFormat("sequence %u, expected %u", h.seq, expected_seq));
    }
    if (pos < pointer_tail_ && pos + size > pointer_tail_) {
      // Only a damaged pointer ends inside a record.
      broken.emplace_back("tail-inside-record",
                          absl::StrFormat("the pointer's tail lpos %u lies inside this record, "
                                          "which ends at %u",
                                          pointer_tail_, pos + size));
    }
    if (!broken.empty()) {
      absl::Status first;
      for (auto& [kind, what] : broken) {
        absl::Status s = Report(kind, pos, std::move(what), false);
        if (first.ok()) first = s;
      }
      if (reporter_ == nullptr) return first;
      continue;
    }
    out->lpos = pos;
    out->header = h;
    out->body = rec.substr(kRecordHeaderSize);
    return absl::OkStatus();
  }
}

absl::Status RingReader::NotYet(uint64_t lpos) {
  waiting_ = true;
  return absl::OutOfRangeError(absl::StrFormat(
      "%s: the record at lpos %u ends past the bytes available (up to %u)", pg_name_, lpos,
      available_));
}

absl::Status RingReader::CheckTailSeq(uint64_t tail_seq) {
  if (records_ == 0 || next_seq_ == tail_seq) return absl::OkStatus();
  return Report("tail-seq", last_record_lpos_,
                absl::StrFormat("the last record before the tail has sequence %u, the pointer "
                                "expects %u",
                                next_seq_ - 1, tail_seq - 1),
                false, /*whole_log=*/true);
}

}  // namespace pgring
