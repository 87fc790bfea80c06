#include "log/ring_pg_recovery.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "log/ring_image.h"
#include "log/stream_reader.h"
#include "util/status_macros.h"

namespace pgring {

RingPgRecovery::RingPgRecovery(BlockDevice* device, const Geometry& geo, RingPgLog* pg,
                               uint64_t resident)
    : device_(device), geo_(geo), pg_(pg), resident_(resident) {}

absl::Status RingPgRecovery::Start() {
  const RingBounds& p = pg_->bounds;
  for (const absl::Status& s :
       {CheckPgPointerInChunks(p.head, p.homed, p.tail, pg_->chunks, geo_.chunk_size),
        CheckChunkListBase(pg_->chunks, geo_.chunk_size)}) {
    if (!s.ok()) return absl::DataLossError(absl::StrFormat("PG %s: %s", pg_->name, s.message()));
  }
  reader_.emplace(device_, geo_, pg_->chunks, pg_->name, pg_->stamp, p.head, p.tail);
  reader_->SetAvailable(p.homed);
  RETURN_IF_ERROR(ReplayAvailable());
  // What the ring holds from the record that straddles homed (if any) and
  // from homed's block on: the first is read again with the stream's bytes
  // after it, the second is what a home write rewrites homed's block with.
  const uint64_t image_start = pg_->ImageStart();
  const uint64_t at = reader_->position();
  const uint64_t from = std::min(at, image_start);
  if (p.homed == p.head) {
    // The ring holds none of the log (it may have no chunk there): what
    // lies before the head in homed's block is no part of it.
    pg_->ring_prefix.assign(p.homed - image_start, '\0');
  } else if (from < p.homed) {
    auto bytes = reader_->Bytes(from, p.homed - from);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrFormat("PG %s: reading its ring's bytes [%u, %u) before the "
                                          "homed position: %s",
                                          pg_->name, from, p.homed, bytes.status().message()));
    }
    pending_.assign(bytes->substr(at - from));
    pg_->ring_prefix.assign(bytes->substr(image_start - from));
  }
  reader_->ReleaseWindow();
  return absl::OkStatus();
}

absl::Status RingPgRecovery::Feed(std::string_view bytes, const UnhomedRun& run) {
  const uint64_t from = covered();
  assert(run.ring_end == from + bytes.size());
  if (run.ring_end > pg_->bounds.tail) {
    // Records the pointer does not count yet: the stream's committed range
    // holds only committed transactions' records.
    pg_->bounds.tail = run.ring_end;
    reader_->ExtendLimit(run.ring_end);
    extended_ = true;
  }
  // The image keeps what the PG keeps in memory with every byte up to its
  // tail there (all of them are on the device): up to the pointer's tail
  // the bytes before that are cold as they arrive; past it, where the tail
  // moves with each run, the oldest go cold once the newer ones are in.
  if (extended_) {
    pg_->image.Append(bytes);
  } else {
    const uint64_t resident_from = pg_->ResidentFrom(pg_->bounds.tail, resident_);
    if (from < resident_from) pg_->image.AppendCold(std::min(run.ring_end, resident_from) - from);
    if (run.ring_end > resident_from) {
      pg_->image.Append(bytes.substr(std::max(from, resident_from) - from));
    }
  }
  pg_->unhomed_runs.push_back(run);
  if (extended_) pg_->EvictUnhomed(resident_, /*written=*/UINT64_MAX);
  // With no partial record pending, the reader waits at a record's start
  // (every stream item ends at a record's end) and reads the bytes where
  // they are; else it reads them after the pending ones.
  const bool in_place = pending_.empty();
  const uint64_t at = reader_->position();
  assert(!in_place || at == from);
  if (in_place) {
    reader_->SetOverlay(from, bytes);
  } else {
    pending_.append(bytes);
    reader_->SetOverlay(at, pending_);
  }
  reader_->SetAvailable(run.ring_end);
  RETURN_IF_ERROR(ReplayAvailable());
  const uint64_t next = reader_->position();
  if (in_place) {
    pending_.assign(bytes.substr(next - from));
  } else {
    pending_.erase(0, next - at);
  }
  return absl::OkStatus();
}

absl::Status RingPgRecovery::Finish() {
  if (covered() < pg_->bounds.tail) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: its ring bytes [%u, %u) are neither on its ring nor in the log stream",
        pg_->name, covered(), pg_->bounds.tail));
  }
  if (reader_->position() != pg_->bounds.tail) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: its records end at lpos %u, short of its tail %u", pg_->name,
        reader_->position(), pg_->bounds.tail));
  }
  if (extended_) {
    // The reader checked each record's sequence against the one before.
    pg_->bounds.tail_seq = reader_->next_seq();
  } else {
    RETURN_IF_ERROR(reader_->CheckTailSeq(pg_->bounds.tail_seq));
  }
  // The head and the trim points are the pointer's: a change to either
  // writes it.
  FinishReplay(pg_, nullptr);
  reader_.reset();
  pending_ = std::string();
  // The image grew by appends: the room they left goes back.
  pg_->image.ShrinkToFit();
  return absl::OkStatus();
}

absl::Status RingPgRecovery::ReplayAvailable() {
  RingRecord rec;
  while (true) {
    absl::Status s = reader_->Next(&rec);
    // The limit, or the end of what has arrived; a device's kOutOfRange is
    // its error.
    if (absl::IsOutOfRange(s) &&
        (reader_->waiting() || reader_->position() == pg_->bounds.tail)) {
      return absl::OkStatus();
    }
    if (!s.ok()) return s;
    if (!rec.is_txn()) continue;  // skippable, of a kind this version does not read
    s = ReplayRecord(rec.body, rec.lpos, pg_);
    if (!s.ok()) return reader_->Damage(rec.lpos, std::string(s.message()));
  }
}

absl::Status RecoverRingPgs(BlockDevice* device, const Geometry& geo,
                            const std::vector<RingPgLog*>& pgs, const StreamSource& stream,
                            uint64_t resident, const ForEachPg& for_each,
                            std::vector<absl::Status>* outcome, absl::Status* stream_damage) {
  std::vector<std::unique_ptr<RingPgRecovery>> recovery(pgs.size());
  outcome->assign(pgs.size(), absl::OkStatus());
  *stream_damage = absl::OkStatus();
  for_each(pgs.size(), [&](size_t i) {
    recovery[i] = std::make_unique<RingPgRecovery>(device, geo, pgs[i], resident);
    (*outcome)[i] = recovery[i]->Start();
  });
  // The PGs with bytes in the stream, and where each wants them from.
  std::vector<size_t> which;
  std::vector<UnhomedWant> wants;
  for (size_t i = 0; i < pgs.size(); ++i) {
    if (!(*outcome)[i].ok()) continue;
    const RingPgLog& pg = *pgs[i];
    // A pointer with nothing unhomed counts every record.
    if (recovery[i]->covered() == pg.bounds.tail) continue;
    which.push_back(i);
    wants.push_back(UnhomedWant{pg.name, pg.stamp, recovery[i]->covered(), pg.bounds.tail,
                                pg.loaded_stream_pos});
  }
  if (stream.pointer == nullptr) {
    // Open refuses such a pointer before recovery; a caller that did not
    // gets the same answer here.
    for (size_t i : which) {
      (*outcome)[i] = absl::DataLossError(absl::StrFormat(
          "PG %s: its bytes from lpos %u are in the log stream, but there is none",
          pgs[i]->name, pgs[i]->bounds.homed));
    }
  } else {
    // Read whether or not a PG needs it: damage that costs no PG is still
    // found, and reported.
    std::vector<UnhomedOutcome> outcomes;
    absl::Status read = ReadUnhomed(
        device, geo, *stream.chunks, *stream.pointer, wants,
        [&](size_t w, std::string_view bytes, const UnhomedRun& run) {
          return recovery[which[w]]->Feed(bytes, run);
        },
        &outcomes);
    if (!read.ok() && !absl::IsDataLoss(read)) return read;
    *stream_damage = read;
    for (size_t w = 0; w < which.size(); ++w) {
      if (!outcomes[w].error.ok()) (*outcome)[which[w]] = outcomes[w].error;
    }
  }
  for_each(pgs.size(), [&](size_t i) {
    if ((*outcome)[i].ok()) (*outcome)[i] = recovery[i]->Finish();
    recovery[i].reset();
  });
  return absl::OkStatus();
}

}  // namespace pgring
