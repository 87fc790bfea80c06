#include "log/ring_pg_log.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "absl/strings/str_format.h"
#include "log/ring_image.h"

namespace pgring {

RingPgLog::RingPgLog(const PgId& id_in, uint32_t stamp_in, uint32_t block_size_in)
    : PgLogState(id_in), stamp(stamp_in), block_size(block_size_in) {}

uint64_t RingPgLog::StreamPos() const {
  if (bounds.homed == bounds.tail || unhomed_runs.empty()) return 0;
  return unhomed_runs.front().stream_pos;
}

void RingPgLog::MoveHomed(uint64_t to) {
  const uint64_t homed = bounds.homed;
  assert(to >= homed && to <= bounds.tail);
  const uint64_t start = RingImageStart(to, block_size);
  // The ring holds [ImageStart(), homed) of the old block; a new block
  // starts past homed and holds nothing of the ring's.
  if (start != ImageStart()) ring_prefix.clear();
  const uint64_t from = std::max(start, homed);
  if (from < to) {
    const uint64_t cold_end = ColdEnd();
    const uint64_t resident_from = std::max(from, cold_end);
    ring_prefix.append(resident_from > from ? std::min(resident_from, to) - from : 0, '\0');
    if (resident_from < to) {
      ring_prefix.append(image.resident().substr(resident_from - cold_end, to - resident_from));
    }
  }
  image.DropFront(to - homed);
  bounds.homed = to;
  while (!unhomed_runs.empty() && unhomed_runs.front().ring_end <= bounds.homed) {
    unhomed_runs.pop_front();
  }
}

uint64_t RingPgLog::ResidentFrom(uint64_t end, uint64_t keep) const {
  if (end - bounds.homed <= keep) return bounds.homed;
  return std::max(bounds.homed, (end - keep) / block_size * block_size);
}

void RingPgLog::EvictUnhomed(uint64_t keep, uint64_t written) {
  if (image.resident_size() <= keep) return;
  const uint64_t cold_end = ColdEnd();
  uint64_t to = ResidentFrom(bounds.homed + image.size(), keep);
  if (to <= cold_end) return;  // nothing to evict: no walk (most calls, a block at a time)
  // Only bytes a completed stream write put on the device may leave. When
  // the newest run's record is on the device every older one is (stream
  // writes complete in order). Else walk the runs from the first past
  // cold_end: from where the last walk left off (every run before it ends by
  // cold_end, which only grows), else searched for.
  uint64_t on_device = cold_end;
  if (!unhomed_runs.empty() && unhomed_runs.back().data_end <= written) {
    on_device = std::max(cold_end, unhomed_runs.back().ring_end);
  } else {
    UnhomedRuns::Walker run;
    if (!unhomed_runs.Resume(evict_mark, &run)) {
      run = unhomed_runs.WalkFrom(unhomed_runs.FirstEndingPast(cold_end));
    }
    while (!run.done() && run.run().ring_end <= cold_end) run.Next();
    evict_mark = unhomed_runs.Save(run);
    for (; !run.done() && on_device < to; run.Next()) {
      const UnhomedRun r = run.run();
      if (r.data_end > written) break;
      on_device = r.ring_end;
    }
  }
  to = std::min(to, on_device / block_size * block_size);
  if (to > cold_end) image.Evict(to - cold_end);
}

PgPointer RingPgLog::Pointer() const {
  PgPointer p;
  p.stamp = stamp;
  p.head = bounds.head;
  p.tail = bounds.tail;
  p.tail_seq = bounds.tail_seq;
  p.entries_trimmed_to = entries_trimmed_to;
  p.dups_trimmed_to = dups_trimmed_to;
  p.unhomed = bounds.tail - bounds.homed;
  p.stream_pos = StreamPos();
  return p;
}

void RingPgLog::LoadPointer(const PgPointer& p) {
  bounds = RingBounds{p.head, p.tail, p.tail_seq, p.homed()};
  entries_trimmed_to = p.entries_trimmed_to;
  dups_trimmed_to = p.dups_trimmed_to;
  loaded_stream_pos = p.stream_pos;
}

uint64_t RingPgLog::ComputeHead(uint64_t tail) const {
  uint64_t head = tail;
  const uint64_t anchor = bounds.head;
  if (!entries.empty()) head = std::min(head, MappingTable::Pos(entries.front(), anchor));
  if (!dups.empty()) head = std::min(head, MappingTable::Pos(dups.front(), anchor));
  if (has_info) head = std::min(head, info_pos);
  if (RewindPinned()) head = std::min(head, rewind_marker_pos);
  return head;
}

bool RingPgLog::RewindPinned() const {
  return has_rewind_marker && rewind_marker_version > entries_trimmed_to &&
         (entries.empty() || entries.back().v() < rewind_marker_version);
}

RingPgLogUndo::RingPgLogUndo(RingPgLog* pg)
    : pg_(pg),
      log_(pg),
      chunks_(pg->chunks),
      bounds_(pg->bounds),
      info_pos_(pg->info_pos),
      has_rewind_marker_(pg->has_rewind_marker),
      rewind_marker_pos_(pg->rewind_marker_pos),
      rewind_marker_version_(pg->rewind_marker_version) {}

void RingPgLogUndo::Restore() {
  log_.Restore();
  pg_->chunks = chunks_;
  pg_->bounds = bounds_;
  pg_->info_pos = info_pos_;
  pg_->has_rewind_marker = has_rewind_marker_;
  pg_->rewind_marker_pos = rewind_marker_pos_;
  pg_->rewind_marker_version = rewind_marker_version_;
}

void RingPgLogEffects::EntryAppended(const Version& v, std::string_view payload) {
  pg_->has_rewind_marker = false;
  if (body_ != nullptr) body_->AddEntry(v, payload);
}

void RingPgLogEffects::DupAppended(const Version& v, std::string_view payload) {
  if (body_ != nullptr) body_->AddDup(v, payload);
}

void RingPgLogEffects::InfoSet(std::string_view payload) {
  pg_->info_pos = record_pos_;
  if (body_ != nullptr) body_->AddInfo(payload);
}

void RingPgLogEffects::Rewound(const Version& v) {
  // Whether the marker holds the floor is RingPgLog::RewindPinned's call.
  pg_->has_rewind_marker = true;
  pg_->rewind_marker_pos = record_pos_;
  pg_->rewind_marker_version = v;
  if (body_ != nullptr) body_->AddRewind(v);
}

void RingPgLogEffects::Reset() {
  pg_->has_rewind_marker = false;
  if (body_ != nullptr) body_->AddReset();
}

absl::Status ReplayRecord(std::string_view body, uint64_t lpos, RingPgLog* pg) {
  RingPgLogEffects effects(pg, lpos, nullptr);
  return ForEachItem(body, [&](const Item& item) -> absl::Status {
    absl::Status s = ReplayItem(item, pg, &effects);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrFormat("%s (body offset %u)", s.message(), item.offset));
    }
    return s;
  });
}

}  // namespace pgring
