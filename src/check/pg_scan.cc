#include "check/pg_scan.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/record.h"
#include "log/pg_log_state.h"
#include "log/ring_image.h"
#include "log/ring_reader.h"

namespace pgring {
namespace {

// Mirrors the PG-log state's changes (pg_log_state.h: the rules recovery
// follows) into the scan's lists of where each live item lies.
class ScanEffects final : public PgLogEffects {
 public:
  ScanEffects(const PgScanOptions& options, PgScan* out) : options_(options), out_(out) {}

  // The item being replayed, with its place in the ring.
  void SetCurrent(ScannedItem si) { current_ = std::move(si); }

  uint32_t Locator(std::string_view) override { return 0; }
  void EntryAppended(const Version& v, std::string_view payload) override {
    if (options_.keep_entry_payloads && v >= options_.from && v <= options_.to) current_.payload.assign(payload);
    out_->entries.push_back(std::move(current_));
  }
  void DupAppended(const Version&, std::string_view payload) override {
    if (options_.keep_dup_payloads) current_.payload.assign(payload);
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
  const PgScanOptions& options_;
  PgScan* out_;
  ScannedItem current_;
};

// Reads the log through the ring's one reader, turning every problem it
// reports into a problem and replaying the items of every readable record.
class Scanner final : public RingReader::Reporter {
 public:
  Scanner(BlockDevice* device, const Geometry& geometry, const PgId& pg,
          const PgPointer& pointer, const PgChunkList& chunks, std::string_view unhomed,
          const PgScanOptions& options, PgScan* out)
      : device_(device),
        unhomed_(unhomed),
        geometry_(geometry),
        pg_(pg),
        name_(pg.ToString()),
        pointer_(pointer),
        chunks_(chunks),
        options_(options),
        out_(out),
        reader_(device, geometry, chunks, name_, pointer.stamp, pointer.head, pointer.tail,
                /*first_seq=*/0, this),
        state_(pg),
        effects_(options, out) {
    state_.entries_trimmed_to = pointer.entries_trimmed_to;
    state_.dups_trimmed_to = pointer.dups_trimmed_to;
  }

  void Corruption(const RingDamage& d) override {
    out_->problems.push_back(At(d.lpos, d.where, std::string(d.kind), d.what));
  }

  void Run() {
    const PgPointer& p = pointer_;
    // The stream's bytes past the pointer's tail continue the log, as at
    // open (docs/FORMAT.md, "A pointer that lags its records").
    const bool extended = unhomed_.size() > p.unhomed;
    out_->tail = extended ? p.homed() + unhomed_.size() : p.tail;
    out_->tail_seq = p.tail_seq;
    if (extended) reader_.ExtendLimit(out_->tail);
    if (!unhomed_.empty() || p.unhomed != 0) {
      if (!SetImage()) return;
    }
    uint64_t last_progress = p.head;
    RingRecord rec;
    absl::Status s;
    while ((s = reader_.Next(&rec)).ok()) {
      if (options_.progress && rec.lpos - last_progress >= (4u << 20)) {
        options_.progress(rec.lpos - p.head);
        last_progress = rec.lpos;
      }
      if (rec.is_txn()) Apply(rec);
    }
    // Every problem has been reported; only the end of the log reads as
    // having reached the tail.
    const bool reached_tail = absl::IsOutOfRange(s);
    out_->records = reader_.records();
    out_->scanned_to = reader_.position();
    if (options_.progress) options_.progress(reader_.position() - p.head);
    if (reached_tail) {
      // Past the pointer, the records' own sequences (each checked against
      // the one before) say what the next one is.
      if (extended) {
        out_->tail_seq = reader_.next_seq();
      } else {
        (void)reader_.CheckTailSeq(p.tail_seq);
      }
    }
    // Trim points (the pointer's) drop what is trimmed.
    FinishReplay(&state_, &effects_);
    out_->last_version = state_.last_version;
    out_->complete = reached_tail && !out_->has_errors();
    if (out_->complete) {
      uint64_t oldest = out_->OldestLive(out_->tail);
      if (oldest > p.head) {
        VerifyProblem n = At(
            p.head, "head-lag",
            absl::StrFormat(
                "the head is at lpos %u but the oldest record holding anything live is at %u: %u "
                "bytes of ring are kept for nothing until the next write to this PG",
                p.head, oldest, oldest - p.head));
        n.severity = VerifyProblem::Severity::kNote;
        out_->problems.push_back(std::move(n));
      }
    }
    out_->stale_end = out_->tail;
    // With unhomed bytes, what the ring holds from homed on is not the PG's
    // log at all (homing writes those blocks whole from memory), and
    // uncommitted records would be past the stream's tail, not the ring's.
    if (options_.inspect_past_tail && reached_tail && unhomed_.empty()) InspectPastTail();
  }

 private:
  // Serves the bytes from homed's block on from the image, as recovery does.
  // False (with the problem recorded) when they cannot be had.
  bool SetImage() {
    const PgPointer& p = pointer_;
    const uint64_t homed = p.homed();
    if (unhomed_.size() < p.unhomed) {
      VerifyProblem e = At(homed, "unhomed-missing",
                     absl::StrFormat("its pointer has %u bytes [%u, %u) in the log stream, but %u "
                                     "were found there",
                                     p.unhomed, homed, p.tail, unhomed_.size()));
      out_->problems.push_back(std::move(e));
      return false;
    }
    auto image = ReadRingImage(device_, geometry_, chunks_, p.head, homed,
                               std::string(unhomed_));
    if (!image.ok()) {
      out_->problems.push_back(
          At(RingImageStart(homed, geometry_.block_size), "read-error",
             absl::StrCat("reading the block holding the homed position ", homed, ": ",
                          image.status().message())));
      return false;
    }
    image_ = *std::move(image);
    reader_.SetOverlay(RingImageStart(homed, geometry_.block_size), image_);
    return true;
  }

  VerifyProblem At(uint64_t lpos, std::string kind, std::string message) const {
    return At(lpos, Locate(chunks_, geometry_, lpos), std::move(kind), std::move(message));
  }
  VerifyProblem At(uint64_t lpos, const ChunkPos& cp, std::string kind,
                   std::string message) const {
    VerifyProblem p = PgProblem(pg_, std::move(kind), std::move(message));
    if (cp.chunk >= 0) {
      p.chunk = static_cast<uint64_t>(cp.chunk);
      p.offset = cp.offset;
    }
    p.lpos = lpos;
    return p;
  }

  void Apply(const RingRecord& rec) {
    absl::Status s = ForEachItem(rec.body, [&](const Item& it) -> absl::Status {
      ScannedItem si;
      si.version = it.version;
      si.record_lpos = rec.lpos;
      si.record_size = static_cast<uint32_t>(rec.size());
      si.record_crc = rec.header.masked_crc;
      si.record_seq = rec.header.seq;
      si.item_lpos = rec.lpos + kRecordHeaderSize + it.offset;
      si.payload_size = static_cast<uint32_t>(it.payload.size());
      const uint64_t item_lpos = si.item_lpos;
      effects_.SetCurrent(std::move(si));
      // An item that breaks the rules is reported and left out; the scan
      // goes on with the next one.
      absl::Status r = ReplayItem(it, &state_, &effects_);
      if (!r.ok()) {
        (void)reader_.Damage(item_lpos, std::string(r.message()),
                             it.kind == ItemKind::kDup       ? "dup-order"
                             : it.kind == ItemKind::kPgBytes ? "record-body"
                                                             : "entry-order");
      }
      return absl::OkStatus();
    });
    if (!s.ok()) (void)reader_.Damage(rec.lpos, std::string(s.message()));
  }

  // Uncommitted data past the tail: non-zero bytes in the rest of the tail's
  // block, and records of this PG that continue the log but were never
  // committed (a transaction whose RocksDB write never happened).
  void InspectPastTail() {
    const PgPointer& p = pointer_;
    const uint64_t ring_end = RingEnd(chunks_, geometry_);
    if (p.tail >= ring_end) return;
    const uint64_t block_end = std::min(ring_end, geometry_.AlignUp(p.tail));
    uint64_t nonzero = 0;
    if (block_end > p.tail) {
      auto b = reader_.Bytes(p.tail, block_end - p.tail);
      if (!b.ok()) return;
      for (char c : *b) nonzero += c != 0;
    }
    // The records that chain on from the tail as committed ones would: the
    // same reader's checks, stopping at the first that fails.
    RingReader chain(device_, geometry_, chunks_, name_, p.stamp, p.tail, ring_end,
                     p.tail_seq);
    RingRecord rec;
    uint64_t chained = 0;
    while (chain.Next(&rec).ok()) ++chained;
    const uint64_t chain_end = chained > 0 ? rec.lpos + rec.size() : p.tail;
    uint64_t end = p.tail;
    if (nonzero > 0) end = block_end;
    if (chained > 0) end = std::max(end, std::min(ring_end, geometry_.AlignUp(chain_end)));
    if (end == p.tail) return;
    out_->stale_end = end;
    std::string what;
    if (chained > 0) {
      what = absl::StrFormat("%u uncommitted record(s) of this PG (sequence %u on, %u bytes)",
                             chained, p.tail_seq, chain_end - p.tail);
    } else {
      what = absl::StrFormat("%u non-zero byte%s in the rest of the tail's block", nonzero,
                             nonzero == 1 ? "" : "s");
    }
    VerifyProblem n =
        At(p.tail, "past-tail",
           absl::StrFormat(
               "past the committed tail, lpos [%u, %u) holds %s: data of a transaction that never "
               "committed; never read, and `repair` zeroes it",
               p.tail, end, what));
    n.severity = VerifyProblem::Severity::kNote;
    n.fixable = true;
    out_->problems.push_back(std::move(n));
  }

  BlockDevice* device_;
  const std::string_view unhomed_;
  std::string image_;  // the reader's overlay: homed's block on
  const Geometry& geometry_;
  const PgId pg_;
  const std::string name_;  // pg_ as text, as the readers name it
  const PgPointer& pointer_;
  const PgChunkList& chunks_;
  const PgScanOptions& options_;
  PgScan* out_;
  RingReader reader_;
  PgLogState state_;
  ScanEffects effects_;
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
    if (p.severity == VerifyProblem::Severity::kError) return true;
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
                  const PgPointer& pointer, const PgChunkList& chunks, std::string_view unhomed,
                  const PgScanOptions& options) {
  PgScan out;
  Scanner(device, geometry, pg, pointer, chunks, unhomed, options, &out).Run();
  return out;
}

}  // namespace pgring
