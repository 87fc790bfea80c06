#include "tool/pg_scan.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "device/aligned_buffer.h"
#include "format/record.h"
#include "log/pg_log_state.h"
#include "tool/tool_common.h"

namespace pgring::tool {
namespace {

constexpr uint64_t kWindowBytes = 1 << 20;

// A read-ahead window over one PG's ring, as RingReader keeps one.
class RingWindow {
 public:
  RingWindow(BlockDevice* device, const Geometry& g, const PgChunkList& chunks)
      : device_(device),
        g_(g),
        chunks_(chunks),
        align_(std::max<uint64_t>(g.block_size, device->logical_block_size())) {}

  // [lpos, lpos + n), read ahead up to `ahead_limit`. The range must lie in
  // the ring.
  absl::StatusOr<const char*> Get(uint64_t lpos, uint64_t n, uint64_t ahead_limit) {
    if (window_ && lpos >= start_ && lpos + n <= start_ + len_)
      return window_->data() + (lpos - start_);
    const uint64_t ring_end = RingEnd(chunks_, g_);
    if (lpos < chunks_.base || lpos + n > ring_end) {
      return absl::OutOfRangeError(absl::StrFormat("[%u, %u) lies outside the PG's chunks [%u, %u)",
                                                   lpos, lpos + n, chunks_.base, ring_end));
    }
    uint64_t start = lpos - (lpos - chunks_.base) % align_;
    uint64_t want = std::max(lpos + n, std::min(start + kWindowBytes, ahead_limit));
    uint64_t end =
        std::min(ring_end, chunks_.base + (want - chunks_.base + align_ - 1) / align_ * align_);
    uint64_t len = end - start;
    if (!window_ || window_->size() < len) {
      window_ = std::make_unique<AlignedBuffer>(std::max<uint64_t>(len, kWindowBytes));
    }
    len_ = 0;
    std::vector<Extent> extents;
    MapRange(chunks_, g_, start, len, &extents);
    uint64_t filled = 0;
    for (const Extent& e : extents) {
      absl::Status s = device_->Read(e.device_offset, {window_->data() + filled, e.length});
      if (!s.ok()) return s;
      filled += e.length;
    }
    start_ = start;
    len_ = len;
    return window_->data() + (lpos - start_);
  }

 private:
  BlockDevice* device_;
  const Geometry& g_;
  const PgChunkList& chunks_;
  const uint64_t align_;
  std::unique_ptr<AlignedBuffer> window_;
  uint64_t start_ = 0;
  uint64_t len_ = 0;
};

// Mirrors the PG-log state's changes (pg_log_state.h: the rules recovery
// follows) into the scan's lists of where each live item lies.
class ScanEffects final : public PgLogEffects {
 public:
  ScanEffects(const PgScanOptions& o, PgScan* out) : o_(o), out_(out) {}

  // The item being replayed, with its place in the ring.
  void SetCurrent(ScannedItem si) { current_ = std::move(si); }

  uint32_t Locator(std::string_view) override { return 0; }
  void EntryAppended(const Version& v, std::string_view payload) override {
    if (o_.keep_entry_payloads && v >= o_.from && v <= o_.to) current_.payload.assign(payload);
    out_->entries.push_back(std::move(current_));
  }
  void DupAppended(const Version&, std::string_view payload) override {
    if (o_.keep_dup_payloads) current_.payload.assign(payload);
    out_->dups.push_back(std::move(current_));
  }
  void InfoSet(std::string_view payload) override {
    current_.payload.assign(payload);
    out_->info = std::move(current_);
  }
  void EntryDropped(const MappingTable::Slot&, bool front) override {
    front ? out_->entries.pop_front() : out_->entries.pop_back();
  }
  void DupDropped(const MappingTable::Slot&, bool front) override {
    front ? out_->dups.pop_front() : out_->dups.pop_back();
  }
  void TrimPointMoved() override {}
  void Rewound(const Version&) override {}
  void Reset() override {}

 private:
  const PgScanOptions& o_;
  PgScan* out_;
  ScannedItem current_;
};

class Scanner {
 public:
  Scanner(BlockDevice* device, const Geometry& g, const PgId& pg, const PgPointer& p,
          const PgChunkList& c, const PgScanOptions& o, PgScan* out)
      : g_(g),
        name_(pg.ToString()),
        p_(p),
        c_(c),
        o_(o),
        out_(out),
        window_(device, g, c),
        state_(pg),
        effects_(o, out) {
    state_.entries_trimmed_to = p.entries_trimmed_to;
    state_.dups_trimmed_to = p.dups_trimmed_to;
  }

  void Run() {
    uint64_t pos = p_.head;
    uint64_t expected_seq = 0;  // 0: none yet (the head's sequence is taken as given)
    uint64_t last_progress = 0;
    bool ok = true;
    while (pos < p_.tail) {
      if (o_.progress && pos - last_progress >= (4u << 20)) {
        o_.progress(pos - p_.head);
        last_progress = pos;
      }
      if (p_.tail - pos < kRecordHeaderSize) {
        Error(pos, "record-short",
              absl::StrFormat(
                  "%u bytes before the committed tail at %u are too few for a record header; the "
                  "rest of the log cannot be read",
                  p_.tail - pos, p_.tail));
        ok = false;
        break;
      }
      auto hp = window_.Get(pos, kRecordHeaderSize, p_.tail);
      if (!hp.ok()) {
        Error(pos, "read-error",
              absl::StrCat("reading the record header: ", hp.status().message()));
        ok = false;
        break;
      }
      RecordHeader h = DecodeRecordHeader(*hp);
      if (h.length > p_.tail - pos - kRecordHeaderSize) {
        Error(pos, "record-length",
              absl::StrFormat("length %u runs past the committed tail at %u (damaged header); the "
                              "rest of the log "
                              "cannot be read",
                              h.length, p_.tail));
        ok = false;
        break;
      }
      const uint64_t size = kRecordHeaderSize + h.length;
      auto rp = window_.Get(pos, size, p_.tail);
      if (!rp.ok()) {
        Error(pos, "read-error", absl::StrCat("reading the record: ", rp.status().message()));
        ok = false;
        break;
      }
      std::string_view rec(*rp, size);
      if (!RecordCrcMatches(rec)) {
        Error(pos, "record-crc",
              "CRC mismatch; the record's length cannot be trusted, so the "
              "rest of the log cannot be read");
        ok = false;
        break;
      }
      // From here the length is trustworthy: report and go on.
      bool usable = true;
      const bool known = (h.type & ~kSkippableBit) == kRecordTxn;
      if (!known && !(h.type & kSkippableBit)) {
        Error(pos, "record-type", absl::StrFormat("unknown record type 0x%02x", h.type));
        usable = false;
      }
      if (h.pg_stamp != p_.stamp) {
        Error(pos, "record-pg",
              absl::StrFormat("record belongs to PG stamp %u, not %u (a record of another PG)",
                              h.pg_stamp, p_.stamp));
        usable = false;
      }
      if (h.lap != LapOf(pos, g_)) {
        Error(
            pos, "record-lap",
            absl::StrFormat(
                "record is from lap %u, expected lap %u (a stale record from an earlier use of the "
                "chunk)",
                h.lap, LapOf(pos, g_)));
        usable = false;
      }
      if (expected_seq != 0 && h.seq != expected_seq) {
        Error(pos, "record-seq", absl::StrFormat("sequence %u, expected %u", h.seq, expected_seq));
        usable = false;
      }
      expected_seq = h.seq + 1;
      ++out_->records;
      last_record_lpos_ = pos;
      if (usable && known) Apply(pos, h, rec);
      pos += size;
    }
    out_->scanned_to = pos;
    if (o_.progress) o_.progress(pos - p_.head);
    if (ok && out_->records > 0 && expected_seq != p_.tail_seq) {
      Error(
          last_record_lpos_, "tail-seq",
          absl::StrFormat("the last record before the tail has sequence %u, the pointer expects %u",
                          expected_seq - 1, p_.tail_seq - 1));
    }
    // Trim points (the pointer's) drop what is trimmed.
    FinishReplay(&state_, &effects_);
    out_->complete = ok && !out_->has_errors();
    if (out_->complete) {
      uint64_t oldest = out_->OldestLive(p_.tail);
      if (oldest > p_.head) {
        Problem n = At(
            p_.head, "head-lag",
            absl::StrFormat(
                "the head is at lpos %u but the oldest record holding anything live is at %u: %u "
                "bytes of ring are kept for nothing until the next write to this PG",
                p_.head, oldest, oldest - p_.head));
        n.severity = Problem::Severity::kNote;
        out_->problems.push_back(std::move(n));
      }
    }
    out_->stale_end = p_.tail;
    if (o_.inspect_past_tail && ok) InspectPastTail();
  }

 private:
  Problem At(uint64_t lpos, std::string kind, std::string message) const {
    Problem p;
    p.kind = std::move(kind);
    p.pg = name_;
    ChunkPos cp = Locate(c_, g_, lpos);
    if (cp.chunk >= 0) {
      p.chunk = static_cast<uint64_t>(cp.chunk);
      p.offset = cp.offset;
    }
    p.lpos = lpos;
    p.message = std::move(message);
    return p;
  }
  void Error(uint64_t lpos, std::string kind, std::string message) {
    out_->problems.push_back(At(lpos, std::move(kind), std::move(message)));
  }

  void Apply(uint64_t pos, const RecordHeader& h, std::string_view rec) {
    std::string_view body = rec.substr(kRecordHeaderSize);
    absl::Status s = ForEachItem(body, [&](const Item& it) -> absl::Status {
      ScannedItem si;
      si.version = it.version;
      si.record_lpos = pos;
      si.record_size = static_cast<uint32_t>(rec.size());
      si.record_crc = h.masked_crc;
      si.record_seq = h.seq;
      si.item_lpos = pos + kRecordHeaderSize + it.offset;
      si.payload_size = static_cast<uint32_t>(it.payload.size());
      const uint64_t item_lpos = si.item_lpos;
      effects_.SetCurrent(std::move(si));
      // An item that breaks the rules is reported and left out; the scan
      // goes on with the next one.
      absl::Status r = ReplayItem(it, &state_, &effects_);
      if (!r.ok()) {
        Error(item_lpos, it.kind == ItemKind::kDup ? "dup-order" : "entry-order",
              std::string(r.message()));
      }
      return absl::OkStatus();
    });
    if (!s.ok()) Error(pos, "record-body", std::string(s.message()));
  }

  // Uncommitted data past the tail: non-zero bytes in the rest of the tail's
  // block, and records of this PG that continue the log but were never
  // committed (a transaction whose RocksDB write never happened).
  void InspectPastTail() {
    const uint64_t ring_end = RingEnd(c_, g_);
    if (p_.tail >= ring_end) return;
    const uint64_t block_end = std::min(ring_end, g_.AlignUp(p_.tail));
    uint64_t nonzero = 0;
    if (block_end > p_.tail) {
      auto b = window_.Get(p_.tail, block_end - p_.tail, block_end);
      if (!b.ok()) return;
      for (uint64_t i = 0; i < block_end - p_.tail; ++i) nonzero += (*b)[i] != 0;
    }
    uint64_t pos = p_.tail, seq = p_.tail_seq, chained = 0;
    while (ring_end - pos >= kRecordHeaderSize) {
      auto hp = window_.Get(pos, kRecordHeaderSize, ring_end);
      if (!hp.ok()) break;
      RecordHeader h = DecodeRecordHeader(*hp);
      if (h.length > ring_end - pos - kRecordHeaderSize || h.pg_stamp != p_.stamp ||
          h.lap != LapOf(pos, g_) || h.seq != seq) {
        break;
      }
      auto rp = window_.Get(pos, kRecordHeaderSize + h.length, ring_end);
      if (!rp.ok() || !RecordCrcMatches(std::string_view(*rp, kRecordHeaderSize + h.length))) break;
      pos += kRecordHeaderSize + h.length;
      ++seq;
      ++chained;
    }
    uint64_t end = p_.tail;
    if (nonzero > 0) end = block_end;
    if (chained > 0) end = std::max(end, std::min(ring_end, g_.AlignUp(pos)));
    if (end == p_.tail) return;
    out_->stale_end = end;
    std::string what;
    if (chained > 0) {
      what = absl::StrFormat("%u uncommitted record(s) of this PG (sequence %u on, %u bytes)",
                             chained, p_.tail_seq, pos - p_.tail);
    } else {
      what = absl::StrFormat("%u non-zero byte%s in the rest of the tail's block", nonzero,
                             nonzero == 1 ? "" : "s");
    }
    Problem n =
        At(p_.tail, "past-tail",
           absl::StrFormat(
               "past the committed tail, lpos [%u, %u) holds %s: data of a transaction that never "
               "committed; never read, and `repair` zeroes it",
               p_.tail, end, what));
    n.severity = Problem::Severity::kNote;
    n.fixable = true;
    out_->problems.push_back(std::move(n));
  }

  const Geometry& g_;
  const std::string name_;
  const PgPointer& p_;
  const PgChunkList& c_;
  const PgScanOptions& o_;
  PgScan* out_;
  RingWindow window_;
  PgLogState state_;
  ScanEffects effects_;
  uint64_t last_record_lpos_ = 0;
};

}  // namespace

uint64_t PgScan::live_payload_bytes() const {
  uint64_t n = info ? info->payload_size : 0;
  for (const auto& e : entries) n += e.payload_size;
  for (const auto& d : dups) n += d.payload_size;
  return n;
}

bool PgScan::has_errors() const {
  for (const auto& p : problems) {
    if (p.severity == Problem::Severity::kError) return true;
  }
  return false;
}

uint64_t PgScan::OldestLive(uint64_t tail) const {
  uint64_t oldest = tail;
  if (!entries.empty()) oldest = std::min(oldest, entries.front().record_lpos);
  if (!dups.empty()) oldest = std::min(oldest, dups.front().record_lpos);
  if (info) oldest = std::min(oldest, info->record_lpos);
  return oldest;
}

PgScan ScanRingPg(BlockDevice* device, const Geometry& geometry, const PgId& pg,
                  const PgPointer& pointer, const PgChunkList& chunks,
                  const PgScanOptions& options) {
  PgScan out;
  Scanner(device, geometry, pg, pointer, chunks, options, &out).Run();
  return out;
}

absl::Status ReadRing(BlockDevice* device, const Geometry& g, const PgChunkList& chunks,
                      uint64_t lpos, uint64_t n, std::string* out) {
  RingWindow w(device, g, chunks);
  auto p = w.Get(lpos, n, lpos + n);
  if (!p.ok()) return p.status();
  out->assign(*p, n);
  return absl::OkStatus();
}

}  // namespace pgring::tool
