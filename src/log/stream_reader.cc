#include "log/stream_reader.h"

#include <algorithm>
#include <cassert>
#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/compressed_stream_record.h"
#include "util/status_macros.h"

namespace pgring {
namespace {
constexpr char kTailSeqPayload[] = "pgring/stream-tail-seq";
}  // namespace

bool IsStreamTailSeqDamage(const absl::Status& s) {
  return s.GetPayload(kTailSeqPayload).has_value();
}

absl::Status ReadStream(BlockDevice* device, const Geometry& geo, const PgChunkList& chunks,
                        const StreamPointer& p, const std::vector<uint64_t>& resync,
                        const std::function<absl::Status(const UnhomedRun&, const Item&)>& fn,
                        RingReader::Reporter* reporter, uint64_t* skipped_to) {
  RETURN_IF_ERROR(CheckPointerInChunks(p.head, p.tail, chunks, geo.chunk_size));
  absl::Status first_damage;
  uint64_t from = p.head;
  uint64_t ignored;
  if (skipped_to == nullptr) skipped_to = &ignored;
  *skipped_to = 0;
  uint64_t first_seq = 0;
  std::string scratch;  // a compressed record's items
  while (true) {
    RingReader reader(device, geo, chunks, "log stream", kStreamStamp, from, p.tail, first_seq,
                      reporter);
    reader.ReadAheadInBackground();
    RingRecord rec;
    absl::Status s;
    uint64_t at = from;
    while (true) {
      at = reader.position();
      s = reader.Next(&rec);
      if (!s.ok()) break;
      if (!rec.is_stream()) continue;  // skippable, of a kind this version does not read
      const bool compressed = (rec.header.type & ~kSkippableBit) == kRecordStreamLz4;
      absl::StatusOr<std::string_view> items =
          StreamRecordItems(rec.header.type, rec.body, &scratch);
      s = !items.ok() ? items.status() : ForEachItem(*items, [&](const Item& item) -> absl::Status {
        if (item.kind != ItemKind::kPgBytes) {
          return absl::DataLossError(absl::StrFormat(
              "item of kind %u at body offset %u in a stream record (only PG bytes belong "
              "there)",
              static_cast<unsigned>(item.kind), item.offset));
        }
        const uint64_t data_end =
            compressed ? rec.lpos + rec.size()
                       : rec.lpos + kRecordHeaderSize +
                             (item.payload.data() - rec.body.data()) + item.payload.size();
        return fn(UnhomedRun{item.lpos + item.payload.size(), rec.lpos, data_end, compressed},
                  item);
      });
      if (!s.ok()) {
        s = reader.Damage(rec.lpos, std::string(s.message()));
        break;
      }
    }
    if (absl::IsOutOfRange(s)) {
      s = reader.CheckTailSeq(p.tail_seq);
      if (!s.ok()) {
        if (first_damage.ok()) first_damage = s;
        first_damage.SetPayload(kTailSeqPayload, absl::Cord());
      }
      return first_damage;
    }
    if (!absl::IsDataLoss(s)) return s;  // the device failed
    if (first_damage.ok()) first_damage = s;
    // Go on from the next record a PG's pointer names: the damage costs
    // only the PGs whose bytes lay in the records that cannot be read.
    auto next = std::upper_bound(resync.begin(), resync.end(), at);
    if (next == resync.end() || *next >= p.tail) {
      *skipped_to = p.tail;
      return first_damage;
    }
    from = *next;
    *skipped_to = from;
    first_seq = 0;
  }
}

absl::Status ReadUnhomed(BlockDevice* device, const Geometry& geo, const PgChunkList& chunks,
                         const StreamPointer& p, const std::vector<UnhomedWant>& wants,
                         const UnhomedSink& sink, std::vector<UnhomedOutcome>* outcomes,
                         RingReader::Reporter* reporter) {
  outcomes->assign(wants.size(), UnhomedOutcome{});
  std::vector<uint64_t> covered(wants.size());
  // The stream lpos of the last record that gave each want bytes.
  std::vector<uint64_t> last_taken(wants.size(), 0);
  std::vector<bool> took(wants.size(), false);
  absl::flat_hash_map<uint32_t, size_t> by_stamp;
  std::vector<uint64_t> resync;
  for (size_t i = 0; i < wants.size(); ++i) {
    by_stamp.emplace(wants[i].stamp, i);
    resync.push_back(wants[i].stream_pos);
    covered[i] = wants[i].homed;
  }
  std::sort(resync.begin(), resync.end());
  auto fail = [&](size_t i, absl::Status error, uint64_t stream_lpos) {
    (*outcomes)[i].error = std::move(error);
    (*outcomes)[i].error_stream_lpos = stream_lpos;
    by_stamp.erase(wants[i].stamp);
  };
  auto lost = [&](size_t i, const std::string& what) {
    return absl::DataLossError(absl::StrCat("PG ", wants[i].name, ": ", what));
  };
  uint64_t skipped_to = 0;
  absl::Status read = ReadStream(
      device, geo, chunks, p, resync,
      [&](const UnhomedRun& where, const Item& item) {
        const uint64_t record_lpos = where.stream_pos;
        auto it = by_stamp.find(item.pg_stamp);
        if (it == by_stamp.end()) return absl::OkStatus();
        const size_t i = it->second;
        const UnhomedWant& w = wants[i];
        if (record_lpos < w.stream_pos) return absl::OkStatus();
        const uint64_t end = item.lpos + item.payload.size();
        if (end <= covered[i]) return absl::OkStatus();
        if (item.lpos > covered[i]) {
          fail(i,
               lost(i, absl::StrFormat("its ring bytes from lpos %u are not in the log stream: "
                                       "the stream record at stream lpos %u holds them from "
                                       "lpos %u",
                                       covered[i], record_lpos, item.lpos)),
               record_lpos);
        } else {
          absl::Status taken = sink(i, item.payload.substr(covered[i] - item.lpos), where);
          covered[i] = end;
          last_taken[i] = record_lpos;
          took[i] = true;
          if (!taken.ok()) fail(i, std::move(taken), record_lpos);
        }
        return absl::OkStatus();
      },
      reporter, &skipped_to);
  if (!read.ok() && !absl::IsDataLoss(read)) return read;
  for (auto [stamp, i] : by_stamp) {
    const UnhomedWant& w = wants[i];
    (*outcomes)[i].tail = covered[i];
    if (covered[i] >= w.tail && w.stream_pos < skipped_to &&
        (!took[i] || last_taken[i] < skipped_to)) {
      // Every byte its pointer counts is there, but nothing shows that its
      // records did not go on in what could not be read.
      (*outcomes)[i].error = lost(
          i, absl::StrFormat("its records past lpos %u may go on in the log stream's damaged "
                             "records before stream lpos %u (its pointer need not count them): "
                             "%s",
                             covered[i], skipped_to, read.message()));
      (*outcomes)[i].error_stream_lpos = skipped_to;
      (*outcomes)[i].lost_newest = true;
    } else if (covered[i] < w.tail) {
      (*outcomes)[i].error = lost(
          i, absl::StrFormat("its ring bytes [%u, %u) are not in the log stream (looked from "
                             "stream lpos %u to the stream's tail %u)%s",
                             covered[i], w.tail, w.stream_pos, p.tail,
                             read.ok() ? "" : absl::StrCat("; ", read.message())));
      (*outcomes)[i].error_stream_lpos = w.stream_pos;
    }
  }
  return read;
}

absl::Status CollectUnhomed(BlockDevice* device, const Geometry& geo, const PgChunkList& chunks,
                            const StreamPointer& p, const std::vector<UnhomedWant>& wants,
                            std::vector<UnhomedFound>* found, RingReader::Reporter* reporter) {
  found->clear();
  found->resize(wants.size());
  std::vector<UnhomedOutcome> outcomes;
  absl::Status read = ReadUnhomed(
      device, geo, chunks, p, wants,
      [&](size_t i, std::string_view bytes, const UnhomedRun& run) {
        UnhomedFound& f = (*found)[i];
        // No more than the stream holds, whatever a damaged pointer says.
        if (f.bytes.empty()) {
          f.bytes.reserve(std::min(std::max(wants[i].tail, wants[i].homed) - wants[i].homed,
                                   p.tail - p.head));
        }
        f.bytes.append(bytes);
        f.runs.push_back(run);
        return absl::OkStatus();
      },
      &outcomes, reporter);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    static_cast<UnhomedOutcome&>((*found)[i]) = std::move(outcomes[i]);
  }
  return read;
}

absl::Status ReadUnhomedBytes(BlockDevice* device, const Geometry& geo,
                              const PgChunkList& stream_chunks, uint32_t stamp,
                              const UnhomedRuns& runs, uint64_t from, uint64_t to,
                              std::string* out) {
  return ReadUnhomedRanges(device, geo, stream_chunks, stamp, runs, {RingRange{from, to}}, out);
}

namespace {
// Appends the ring bytes [from, to) of the PG whose stamp is `stamp` from
// the compressed stream record `record` (all its bytes) at stream lpos
// `pos`, after RingReader's checks of a record read by itself.
absl::Status TakeFromCompressedRecord(std::string_view record, uint64_t pos,
                                      const Geometry& geo, uint32_t stamp, uint64_t from,
                                      uint64_t to, std::string* scratch, std::string* out) {
  auto damage = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrFormat("log stream: the compressed record at stream lpos %u %s", pos, what));
  };
  const RecordHeader h = DecodeRecordHeader(record.data());
  if (kRecordHeaderSize + h.length != record.size()) {
    return damage(absl::StrFormat("has length %u where its PG's index has %u", h.length,
                                  record.size() - kRecordHeaderSize));
  }
  if (!RecordCrcMatches(record)) return damage("fails its CRC");
  if (h.type != kRecordStreamLz4 || h.pg_stamp != kStreamStamp) {
    return damage(absl::StrFormat("has type %u and stamp %u, not a compressed stream record's",
                                  h.type, h.pg_stamp));
  }
  if (h.lap != LapOf(pos, geo)) {
    return damage(absl::StrFormat("has lap %u where %u was written", h.lap, LapOf(pos, geo)));
  }
  absl::StatusOr<std::string_view> items =
      StreamRecordItems(h.type, record.substr(kRecordHeaderSize), scratch);
  if (!items.ok()) return damage(std::string(items.status().message()));
  bool found = false;
  absl::Status walked = ForEachItem(*items, [&](const Item& item) -> absl::Status {
    if (found || item.kind != ItemKind::kPgBytes || item.pg_stamp != stamp) {
      return absl::OkStatus();
    }
    if (item.lpos <= from && to <= item.lpos + item.payload.size()) {
      out->append(item.payload.substr(from - item.lpos, to - from));
      found = true;
    }
    return absl::OkStatus();
  });
  if (!walked.ok()) return damage(std::string(walked.message()));
  if (!found) {
    return damage(absl::StrFormat("does not hold lpos [%u, %u) of the PG with stamp %u", from,
                                  to, stamp));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status ReadUnhomedRanges(BlockDevice* device, const Geometry& geo,
                               const PgChunkList& stream_chunks, uint32_t stamp,
                               const UnhomedRuns& runs,
                               const std::vector<RingRange>& ranges, std::string* out) {
  // Runs whose stream bytes lie within this many bytes of each other are
  // read in one I/O: reading a block between them costs less than another
  // request. No more: the reads are in flight together, so a wider gap
  // only adds bytes (a PG's records written once lie ~32 KiB apart at 128
  // PGs; reading the gaps too made a whole-log read 5x slower,
  // docs/decisions/2026-11-28-write-once-plan.md).
  constexpr uint64_t kJoinGap = 4096;
  // The stream bytes to read for ring bytes [ring_from, ring_to): those
  // bytes themselves, or the whole compressed record holding them.
  struct Piece {
    uint64_t stream_from, stream_to;
    bool compressed = false;
    uint64_t ring_from = 0, ring_to = 0;
  };
  std::vector<Piece> pieces;
  uint64_t total = 0;
  [[maybe_unused]] uint64_t last_to = 0;
  // The runs are in ring order, as the ranges are: the first range finds
  // its run by bisection (a PG written once holds thousands), each later
  // one resumes the search where the one before it stopped.
  auto run = runs.end();
  for (const RingRange& range : ranges) {
    const uint64_t from = range.from, to = range.to;
    if (from >= to) continue;
    assert(from >= last_to);  // sorted and apart: the pieces stay in stream order
    last_to = to;
    total += to - from;
    uint64_t at = from;
    if (run == runs.end()) run = runs.begin() + runs.FirstEndingPast(at);
    while (run != runs.begin() && std::prev(run)->ring_end > at) --run;
    for (; run != runs.end() && at < to; ++run) {
      const UnhomedRun& r = *run;
      if (r.ring_end <= at) continue;
      const uint64_t end = std::min(to, r.ring_end);
      if (r.compressed) {
        if (r.data_end <= r.stream_pos + kRecordHeaderSize ||
            r.data_end - r.stream_pos > kRecordHeaderSize + kMaxRecordBody) {
          return absl::DataLossError(absl::StrFormat(
              "the compressed stream record at %u that holds unhomed bytes up to lpos %u "
              "would end at %u", r.stream_pos, r.ring_end, r.data_end));
        }
        pieces.push_back(Piece{r.stream_pos, r.data_end, true, at, end});
        at = end;
        if (at >= to) break;
        continue;
      }
      const uint64_t stream_from = r.data_end - (r.ring_end - at);
      if (r.ring_end - at > r.data_end || stream_from < r.stream_pos + kRecordHeaderSize) {
        return absl::DataLossError(absl::StrFormat(
            "unhomed bytes from lpos %u would lie before the stream record at %u that holds "
            "them up to lpos %u", at, r.stream_pos, r.ring_end));
      }
      pieces.push_back(Piece{stream_from, r.data_end - (r.ring_end - end)});
      at = end;
      if (at >= to) break;  // the next range may start in this run
    }
    if (at < to) {
      return absl::DataLossError(absl::StrFormat(
          "unhomed bytes [%u, %u) are not all named by the stream records kept for them (up to "
          "%u)", from, to, at));
    }
  }
  if (pieces.empty()) return absl::OkStatus();
  // Stretches of the stream read in one I/O each: a piece through the last
  // one near it, widened to whole blocks.
  struct Stretch {
    uint64_t lo, hi;    // stream lpos, block-aligned
    size_t first, end;  // its pieces
  };
  const uint64_t ring_end = RingEnd(stream_chunks, geo);
  std::vector<Stretch> stretches;
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i + 1;
    while (j < pieces.size() && pieces[j].stream_from >= pieces[j - 1].stream_to &&
           pieces[j].stream_from - pieces[j - 1].stream_to <= kJoinGap) {
      ++j;
    }
    const uint64_t lo = pieces[i].stream_from, hi = pieces[j - 1].stream_to;
    // A range outside the stream's chunks is refused (kDataLoss), never
    // read from elsewhere.
    if (lo < stream_chunks.base || hi > ring_end) {
      return absl::DataLossError(absl::StrFormat(
          "log stream: [%u, %u) lies outside the stream's chunks [%u, %u)", lo, hi,
          stream_chunks.base, ring_end));
    }
    const uint64_t b = geo.block_size;
    const uint64_t alo = stream_chunks.base + (lo - stream_chunks.base) / b * b;
    // ring_end is a chunk boundary, so the rounded-up end stays inside.
    const uint64_t ahi = stream_chunks.base + (hi - stream_chunks.base + b - 1) / b * b;
    stretches.push_back(Stretch{alo, ahi, i, j});
    i = j;
  }
  // Every stretch's reads in flight together (BlockDevice::ReadMany), in
  // batches that bound the memory a long PG log's read holds at once.
  constexpr uint64_t kBatchBytes = 16 << 20;
  out->reserve(out->size() + total);
  std::string scratch;  // a compressed record's items
  for (size_t s = 0; s < stretches.size();) {
    size_t e = s;
    uint64_t bytes = 0;
    while (e < stretches.size() &&
           (e == s || bytes + (stretches[e].hi - stretches[e].lo) <= kBatchBytes)) {
      bytes += stretches[e].hi - stretches[e].lo;
      ++e;
    }
    AlignedBuffer buf(bytes);
    std::vector<BlockDevice::ReadRequest> reads;
    std::vector<Extent> extents;
    uint64_t at_buf = 0;
    for (size_t k = s; k < e; ++k) {
      extents.clear();
      MapRange(stream_chunks, geo, stretches[k].lo, stretches[k].hi - stretches[k].lo, &extents);
      for (const Extent& x : extents) {
        reads.push_back({x.device_offset, absl::Span<char>(buf.data() + at_buf, x.length)});
        at_buf += x.length;
      }
    }
    RETURN_IF_ERROR(device->ReadMany(reads));
    at_buf = 0;
    for (size_t k = s; k < e; ++k) {
      const Stretch& st = stretches[k];
      for (size_t q = st.first; q < st.end; ++q) {
        const Piece& pc = pieces[q];
        const char* at = buf.data() + at_buf + (pc.stream_from - st.lo);
        if (pc.compressed) {
          RETURN_IF_ERROR(TakeFromCompressedRecord(
              std::string_view(at, pc.stream_to - pc.stream_from), pc.stream_from, geo, stamp,
              pc.ring_from, pc.ring_to, &scratch, out));
        } else {
          out->append(at, pc.stream_to - pc.stream_from);
        }
      }
      at_buf += st.hi - st.lo;
    }
    s = e;
  }
  return absl::OkStatus();
}

}  // namespace pgring
