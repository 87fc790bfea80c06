// stream_fuzzer.cc — recovery of the PGs' unhomed bytes from the log stream
// (LogLayout::kStream; docs/DESIGN.md §10, docs/FORMAT.md "Stream records"):
// CollectUnhomed (ReadStream under it: ReadUnhomed), as the tool calls it,
// on a stream in a MemoryBlockDevice; then the PGs' recovery as
// RingStore::Recover runs it (RecoverRingPgs: each ring up to homed, then
// one pass over the stream feeding each PG its bytes, replayed as they
// come, with one block of them kept in memory).
//
// The input drives (FuzzedDataProvider) a writer that lays the stream and
// the PGs' rings down the way the store does (RingStore::PlanStream,
// LogStream::Reserve): 1-4 PGs, each with its own ring; per transaction one
// real PG record (entries) for each PG it touches, and one stream record
// (kRecordStream, stamp kStreamStamp) of kPgBytes items holding each PG's
// bytes past its new homed; a PG homes in whole blocks once home_bytes of
// them wait (or all of it now and then: a forced home, a full stream), its
// ring getting those bytes; padding under kNeverRewrite; the stream's first
// chunk reused once wholly behind its head (the earliest stream_pos of a PG
// with unhomed bytes), so stale stream records of earlier laps lie around;
// removed PGs whose items stay in the stream (and whose chunks the stream
// may take); a valid uncommitted stream record past the tail. The model
// keeps each PG's bytes, homed position, stream_pos and entries. Then it
// damages the stream or the pointers: byte flips, raw bytes, stream records
// altered and re-sealed with a correct CRC (a byte anywhere, or a kPgBytes
// item's stamp or lpos moved), the stream pointer's tail moved back to an
// earlier record (a pointer older than the stream's contents: the records
// after it are still there, valid), its head, tail or tail_seq moved
// anywhere, a PG's stream_pos moved, a stale record of an earlier lap
// before the head holding other bytes for a PG (the head and that PG's
// stream_pos moved back to it: only the lap check refuses it).
//
// Checked:
//  - CollectUnhomed returns OK or kDataLoss (the stream's first damage,
//    "log stream: record at lpos ..."); each PG's result is its bytes or
//    kDataLoss naming the PG ("PG 1.2: ..."); never a crash or a hang;
//  - the runs given with a PG's bytes name where each of them lies in the
//    stream: ReadUnhomedBytes through them reads the same bytes back;
//  - bytes given to a PG are exactly the bytes written for it, unless a
//    record was re-sealed (a CRC-valid forgery the stream cannot tell): then
//    the PG's own record checks must catch it — recovery fails with
//    kDataLoss naming the PG, or returns exactly the model;
//  - recovery never returns entries other than the model's, and never
//    fails a PG given exactly its bytes; it finds the stream damage the
//    tool's pass finds, and fails every PG whose bytes that pass could not
//    gather;
//  - a recovered PG keeps fewer than two blocks of its unhomed bytes in
//    memory, the newest, and its runs read every one of them back;
//  - with no damage inside the stream's [head, tail) and the pointers as
//    written, CollectUnhomed returns OK, each PG gets exactly its bytes, and
//    every PG recovers exactly;
//  - with only the stream pointer's tail moved back to a record boundary,
//    exactly the PGs with bytes at or past it fail.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "device/memory_block_device.h"
#include "format/compressed_stream_record.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "fuzz_common.h"
#include "log/ring_layout.h"
#include "log/ring_pg_log.h"
#include "log/ring_pg_recovery.h"
#include "log/stream_reader.h"

namespace pgring::fuzz {
namespace {

constexpr uint32_t kChunk = 64 << 10;  // the smallest chunk a label allows
constexpr uint32_t kChunkCount = 12;
constexpr int kMaxPgs = 4;

MemoryBlockDevice* ZeroedDevice(const Geometry& g) {
  static MemoryBlockDevice* devices[2] = {nullptr, nullptr};
  const uint64_t size = g.data_offset + uint64_t{kChunkCount} * kChunk;
  MemoryBlockDevice*& d = devices[g.block_size == 512 ? 0 : 1];
  if (d == nullptr) d = new MemoryBlockDevice(size, g.block_size);
  static const std::string zeros(size, '\0');
  d->WriteRaw(0, zeros);
  return d;
}

void WriteAt(MemoryBlockDevice* dev, const Geometry& g, const PgChunkList& c, uint64_t lpos,
             std::string_view bytes) {
  const uint64_t end = RingEnd(c, g);
  if (lpos >= end || lpos < c.base) return;
  bytes = bytes.substr(0, std::min<uint64_t>(bytes.size(), end - lpos));
  std::vector<Extent> ex;
  MapRange(c, g, lpos, bytes.size(), &ex);
  size_t done = 0;
  for (const Extent& e : ex) {
    dev->WriteRaw(e.device_offset, absl::string_view(bytes.data() + done, e.length));
    done += e.length;
  }
}

std::string ReadAt(MemoryBlockDevice* dev, const Geometry& g, const PgChunkList& c, uint64_t lpos,
                   uint64_t n) {
  std::vector<Extent> ex;
  MapRange(c, g, lpos, n, &ex);
  std::string out;
  for (const Extent& e : ex) out += dev->ReadRaw(e.device_offset, e.length);
  return out;
}

struct Placed {
  Version v;
  uint64_t pos;
  friend bool operator==(const Placed&, const Placed&) = default;
};

struct Pg {
  PgId id;
  std::string name;
  uint32_t stamp = 0;
  PgChunkList chunks;
  uint64_t head = 0, homed = 0, tail = 0, next_seq = 1;
  std::string bytes;  // the ring's bytes [head, tail), as written
  std::vector<Placed> entries;
  uint64_t last_version = 0;
  std::deque<UnhomedRun> runs;  // which stream records hold [homed, tail)
  bool removed = false;

  uint64_t StreamPos() const { return homed < tail ? runs.front().stream_pos : 0; }
  std::string Unhomed() const { return bytes.substr(homed - head); }
  void MoveHomed(uint64_t to) {
    homed = to;
    while (!runs.empty() && runs.front().ring_end <= homed) runs.pop_front();
  }
};

struct Stream {
  PgChunkList chunks;
  uint32_t max_chunks = 1;
  uint64_t head = 0, tail = 0, tail_seq = 1;
  struct Rec {
    uint64_t lpos, size, seq;
  };
  std::vector<Rec> records;  // every committed record written, in order
};

// LogStream::Reserve: room for [tail, end), reusing the first chunk once it
// lies wholly behind the head, else a free chunk while below max_chunks.
bool Reserve(const Geometry& g, Stream* s, uint64_t end, std::vector<uint32_t>* free) {
  if (s->chunks.chunks.empty()) s->chunks.base = s->tail / kChunk * kChunk;
  while (RingEnd(s->chunks, g) < end) {
    if (!s->chunks.chunks.empty() && s->chunks.base + kChunk <= s->head) {
      const uint32_t first = s->chunks.chunks.front();
      s->chunks.chunks.erase(s->chunks.chunks.begin());
      s->chunks.chunks.push_back(first);
      s->chunks.base += kChunk;
      continue;
    }
    if (s->chunks.chunks.size() >= s->max_chunks || free->empty()) return false;
    s->chunks.chunks.push_back(free->back());
    free->pop_back();
  }
  return true;
}

std::vector<Placed> Placements(const MappingTable& t, uint64_t anchor) {
  std::vector<Placed> out;
  for (size_t i = 0; i < t.size(); ++i) {
    const MappingTable::Slot s = t.at(i);
    out.push_back({s.v(), MappingTable::Pos(s, anchor)});
  }
  return out;
}

std::string Describe(const std::vector<Placed>& v) {
  std::string s;
  for (const Placed& p : v) absl::StrAppend(&s, p.v.ToString(), "@", p.pos, " ");
  return s;
}

}  // namespace
}  // namespace pgring::fuzz

extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size) {
  using namespace pgring;
  using namespace pgring::fuzz;
  FuzzedDataProvider fdp(data, size);
  // Consumed first, from the input's last bytes: how much damage (0: none).
  const int damage = fdp.ConsumeIntegralInRange<int>(0, 3);

  Geometry g;
  g.block_size = fdp.ConsumeBool() ? 512 : 4096;
  g.chunk_size = kChunk;
  g.chunk_count = kChunkCount;
  g.data_offset = 4096;
  MemoryBlockDevice* dev = ZeroedDevice(g);
  const bool never_rewrite = fdp.ConsumeBool();
  // StreamCompression::kLz4: records compressed where that shrinks them.
  const bool compress = fdp.ConsumeBool();
  StreamRecordCompressor compressor;
  std::string compressed;
  // StreamOptions::home_bytes as the store uses it: whole blocks.
  const uint64_t home_bytes = fdp.ConsumeIntegralInRange<uint64_t>(1, 4) * g.block_size;

  std::vector<uint32_t> free;
  for (uint32_t i = 0; i < kChunkCount; ++i) free.push_back(i);
  for (size_t i = free.size(); i > 1; --i) {
    std::swap(free[i - 1], free[fdp.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  }

  // The stream, where it stands in its lpos.
  Stream stream;
  stream.max_chunks = fdp.ConsumeIntegralInRange<uint32_t>(1, 3);
  {
    uint64_t lap = 0;
    switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
      case 0: lap = 0; break;
      case 1: lap = fdp.ConsumeIntegralInRange<uint64_t>(1, 100); break;
      case 2: lap = (1ull << 32) - 2 + fdp.ConsumeIntegralInRange<uint64_t>(0, 3); break;
    }
    stream.tail = lap * kChunk + fdp.ConsumeIntegralInRange<uint64_t>(0, kChunk - 1);
    if (never_rewrite) stream.tail = g.AlignUp(stream.tail);
    stream.head = stream.tail;
    stream.chunks.base = stream.tail / kChunk * kChunk;
    stream.tail_seq = fdp.ConsumeIntegralInRange<uint64_t>(1, 1000);
  }

  // The PGs, each with its own ring.
  std::vector<Pg> pgs(fdp.ConsumeIntegralInRange<int>(1, kMaxPgs));
  for (size_t i = 0; i < pgs.size(); ++i) {
    Pg& pg = pgs[i];
    pg.id = PgId{1, static_cast<uint32_t>(i + 1), -1};
    pg.name = pg.id.ToString();
    pg.stamp = static_cast<uint32_t>(1 + i + kMaxPgs * fdp.ConsumeIntegralInRange<uint32_t>(0, 50));
    const int n = fdp.ConsumeIntegralInRange<int>(1, 2);
    for (int k = 0; k < n; ++k) {
      pg.chunks.chunks.push_back(free.back());
      free.pop_back();
    }
    pg.chunks.base = fdp.ConsumeIntegralInRange<uint64_t>(0, 3) * kChunk;
    pg.head = pg.homed = pg.tail =
        pg.chunks.base + fdp.ConsumeIntegralInRange<uint64_t>(0, kChunk / 2);
    pg.next_seq = fdp.ConsumeIntegralInRange<uint64_t>(1, 1000);
  }

  // What the free chunks held before: zeros, noise, or stream records of an
  // earlier lap carrying these PGs' stamps (only the lap tells them apart).
  switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: break;
    case 1: {
      uint64_t x = fdp.ConsumeIntegral<uint64_t>() | 1;
      std::string noise(kChunk, '\0');
      for (uint32_t c : free) {
        for (char& ch : noise) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          ch = static_cast<char>(x);
        }
        dev->WriteRaw(g.ChunkOffset(c), noise);
      }
      break;
    }
    case 2: {
      uint64_t seq = 1;
      for (uint32_t c : free) {
        for (uint64_t off = 0; off + 600 < kChunk;) {
          RecordBodyBuilder b;
          const Pg& pg = pgs[seq % pgs.size()];
          b.AddPgBytes(pg.stamp, pg.head + off % 2000, std::string(300, 'S'));
          std::string rec;
          AppendRecord(&rec, kRecordStream, kStreamStamp,
                       static_cast<uint32_t>(stream.chunks.base / kChunk - 1), seq++, b.body());
          dev->WriteRaw(g.ChunkOffset(c) + off, rec);
          off += rec.size();
        }
      }
      break;
    }
  }

  auto update_head = [&] {
    stream.head = stream.tail;
    for (const Pg& pg : pgs) {
      if (!pg.removed && pg.homed < pg.tail) stream.head = std::min(stream.head, pg.StreamPos());
    }
  };

  // The transactions.
  for (int txn = 0; txn < 40 && fdp.remaining_bytes() > 0; ++txn) {
    struct Change {
      Pg* pg;
      uint64_t pos;
      std::string rec;
      uint64_t homed_after;
      std::vector<Placed> entries;
    };
    std::vector<Change> changes;
    RecordBodyBuilder sbody;
    for (Pg& pg : pgs) {
      if (pg.removed || !fdp.ConsumeBool()) continue;
      Change c{&pg, pg.tail, {}, pg.homed, {}};
      RecordBodyBuilder body;
      uint64_t v = pg.last_version;
      const int n = fdp.ConsumeIntegralInRange<int>(1, 3);
      for (int k = 0; k < n; ++k) {
        v += 1;
        body.AddEntry(Version{1, v},
                      std::string(fdp.ConsumeIntegralInRange<size_t>(0, 600),
                                  static_cast<char>('a' + pg.stamp % 26)));
        c.entries.push_back({Version{1, v}, c.pos});
      }
      AppendRecord(&c.rec, kRecordTxn, pg.stamp, LapOf(c.pos, g), pg.next_seq, body.body());
      const uint64_t new_tail = c.pos + c.rec.size();
      if (new_tail > RingEnd(pg.chunks, g)) continue;  // the store would grow the ring
      // RingStore::PlanStream: home whole blocks once home_bytes wait.
      if (g.AlignDown(new_tail) >= g.AlignDown(pg.homed) + home_bytes) {
        c.homed_after = g.AlignDown(new_tail);
      }
      const uint64_t from = std::max(c.pos, c.homed_after);
      if (from < new_tail) {
        sbody.AddPgBytes(pg.stamp, from, std::string_view(c.rec).substr(from - c.pos));
      }
      changes.push_back(std::move(c));
    }
    // Now and then a transaction homes everything it wrote (a forced home,
    // an idle store's bypass, a full stream).
    bool home_all = fdp.ConsumeIntegralInRange<int>(0, 9) == 0;
    std::string srec;
    const uint64_t spos = stream.tail;
    if (!home_all && !sbody.empty()) {
      // As RingStore::PlanStream writes it: compressed, ended by filler, or
      // plain, ended by a pad item.
      const bool lz4 = compress && compressor.Compress(sbody.body(), &compressed);
      if (lz4) {
        if (never_rewrite) {
          const uint64_t len = kRecordHeaderSize + compressed.size();
          compressed.append(g.AlignUp(spos + len) - (spos + len), '\0');
        }
      } else if (never_rewrite) {
        const uint64_t len = kRecordHeaderSize + sbody.size();
        size_t pad = g.AlignUp(spos + len) - (spos + len);
        if (pad == 1) pad += g.block_size;
        sbody.AddPad(pad);
      }
      AppendRecord(&srec, lz4 ? kRecordStreamLz4 : kRecordStream, kStreamStamp, LapOf(spos, g),
                   stream.tail_seq, lz4 ? compressed : sbody.body());
      if (!Reserve(g, &stream, spos + srec.size(), &free)) {
        home_all = true;
        srec.clear();
      }
    }
    for (Change& c : changes) {
      Pg& pg = *c.pg;
      const uint64_t new_tail = c.pos + c.rec.size();
      if (home_all) c.homed_after = new_tail;
      pg.bytes += c.rec;
      pg.tail = new_tail;
      pg.next_seq += 1;
      pg.last_version = c.entries.back().v.version;
      pg.entries.insert(pg.entries.end(), c.entries.begin(), c.entries.end());
      if (!srec.empty() && std::max(c.pos, c.homed_after) < new_tail) {
        pg.runs.push_back(UnhomedRun{.ring_end = new_tail, .stream_pos = spos});
      }
      if (c.homed_after > pg.homed) {  // the home write
        WriteAt(dev, g, pg.chunks, pg.homed,
                std::string_view(pg.bytes).substr(pg.homed - pg.head, c.homed_after - pg.homed));
      }
      pg.MoveHomed(c.homed_after);
    }
    if (!srec.empty()) {
      WriteAt(dev, g, stream.chunks, spos, srec);
      stream.records.push_back({spos, srec.size(), stream.tail_seq});
      stream.tail += srec.size();
      stream.tail_seq += 1;
    }
    // Now and then a PG is removed: its items stay in the stream, its
    // chunks may become the stream's.
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
      Pg& pg = pgs[fdp.ConsumeIntegralInRange<size_t>(0, pgs.size() - 1)];
      if (!pg.removed) {
        pg.removed = true;
        for (uint32_t c : pg.chunks.chunks) free.insert(free.begin(), c);
      }
    }
    update_head();
  }

  // A transaction whose pointers never reached RocksDB: its stream record
  // lies past the tail, valid in every way.
  for (const Pg& pg : pgs) {
    if (pg.removed || !fdp.ConsumeBool()) continue;
    RecordBodyBuilder b;
    b.AddPgBytes(pg.stamp, pg.tail, "uncommitted");
    std::string rec;
    AppendRecord(&rec, kRecordStream, kStreamStamp, LapOf(stream.tail, g), stream.tail_seq,
                 b.body());
    if (!stream.chunks.chunks.empty() && stream.tail + rec.size() <= RingEnd(stream.chunks, g)) {
      WriteAt(dev, g, stream.chunks, stream.tail, rec);
    }
    break;
  }

  std::vector<const Pg*> live;
  for (const Pg& pg : pgs) {
    if (!pg.removed) live.push_back(&pg);
  }
  if (stream.chunks.chunks.empty()) {
    for (const Pg* pg : live) FUZZ_CHECK(pg->homed == pg->tail, "unhomed bytes without a stream");
    return 0;
  }
  std::vector<UnhomedWant> wants;
  std::vector<const Pg*> wanting;
  for (const Pg* pg : live) {
    if (pg->homed == pg->tail) continue;
    wants.push_back(UnhomedWant{pg->name, pg->stamp, pg->homed, pg->tail, pg->StreamPos()});
    wanting.push_back(pg);
  }
  StreamPointer sp{stream.head, stream.tail, stream.tail_seq};
  std::vector<Stream::Rec> committed;  // the records in [head, tail)
  for (const Stream::Rec& r : stream.records) {
    if (r.lpos >= stream.head) committed.push_back(r);
  }

  // Damage.
  struct Range {
    uint64_t from, to;
  };
  std::vector<Range> touched;  // stream lpos
  bool resealed = false, older_tail = false, pointer_moved = false, want_moved = false;
  const uint64_t sbase = stream.chunks.base;
  const uint64_t span = RingEnd(stream.chunks, g) - sbase;
  for (int i = 0; i < damage; ++i) {
    const int op = fdp.ConsumeIntegralInRange<int>(0, 7);
    switch (op) {
      case 0: {  // flip a byte
        const uint64_t at = sbase + fdp.ConsumeIntegralInRange<uint64_t>(0, span - 1);
        std::string b = ReadAt(dev, g, stream.chunks, at, 1);
        b[0] = static_cast<char>(b[0] ^ fdp.ConsumeIntegralInRange<int>(1, 255));
        WriteAt(dev, g, stream.chunks, at, b);
        touched.push_back({at, at + 1});
        break;
      }
      case 1: {  // raw bytes
        const uint64_t at = sbase + fdp.ConsumeIntegralInRange<uint64_t>(0, span - 1);
        const std::string b = fdp.ConsumeRandomLengthString(256);
        WriteAt(dev, g, stream.chunks, at, b);
        touched.push_back({at, at + b.size()});
        break;
      }
      case 2:    // alter a committed record anywhere and give it a correct CRC
      case 3: {  // move a kPgBytes item's stamp or lpos, re-sealed
        if (committed.empty()) break;
        const Stream::Rec r = committed[fdp.ConsumeIntegralInRange<size_t>(0, committed.size() - 1)];
        std::string rec = ReadAt(dev, g, stream.chunks, r.lpos, r.size);
        size_t at = fdp.ConsumeIntegralInRange<size_t>(4, rec.size() - 1);
        int delta = fdp.ConsumeIntegralInRange<int>(1, 255);
        if (op == 3) {
          std::vector<size_t> fields;  // offsets of the stamp and lpos fields
          (void)ForEachItem(std::string_view(rec).substr(kRecordHeaderSize), [&](const Item& it) {
            if (it.kind == ItemKind::kPgBytes) {
              const size_t f = kRecordHeaderSize + it.offset + 1 +
                               VarintLength(kItemVersionSize + it.payload.size());
              fields.push_back(f);
              fields.push_back(f + 4);
            }
            return absl::OkStatus();
          });
          if (!fields.empty()) {
            const size_t f = fields[fdp.ConsumeIntegralInRange<size_t>(0, fields.size() - 1)];
            if (fdp.ConsumeBool()) {  // 32 bits: the stamp, or the lpos's low half
              EncodeFixed32(rec.data() + f, DecodeFixed32(rec.data() + f) +
                                                fdp.ConsumeIntegralInRange<int>(-kMaxPgs, kMaxPgs));
            } else {
              EncodeFixed64(rec.data() + f, DecodeFixed64(rec.data() + f) +
                                                fdp.ConsumeIntegralInRange<int>(-600, 600));
            }
            delta = 0;
          }
        }
        rec[at] = static_cast<char>(rec[at] ^ delta);
        PutMaskedCrc(&rec, 0, 4, rec.size());
        WriteAt(dev, g, stream.chunks, r.lpos, rec);
        touched.push_back({r.lpos, r.lpos + r.size});
        resealed = true;
        break;
      }
      case 4: {  // an older stream pointer: the tail at an earlier record
        if (committed.empty()) break;
        const Stream::Rec r = committed[fdp.ConsumeIntegralInRange<size_t>(0, committed.size() - 1)];
        sp.tail = std::min(sp.tail, r.lpos);
        sp.tail_seq = r.lpos == sp.tail ? r.seq : sp.tail_seq;
        sp.head = std::min(sp.head, sp.tail);
        older_tail = true;
        break;
      }
      case 5:  // the stream pointer moved anywhere
        switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
          case 0: sp.head = sbase + fdp.ConsumeIntegralInRange<uint64_t>(0, span); break;
          case 1: sp.tail = sbase + fdp.ConsumeIntegralInRange<uint64_t>(0, span); break;
          case 2: sp.tail_seq += fdp.ConsumeIntegralInRange<int>(-2, 2); break;
        }
        if (sp.head > sp.tail) std::swap(sp.head, sp.tail);
        pointer_moved = true;
        break;
      case 6: {  // a PG's stream_pos moved
        if (wants.empty()) break;
        UnhomedWant& w = wants[fdp.ConsumeIntegralInRange<size_t>(0, wants.size() - 1)];
        if (fdp.ConsumeBool() && !committed.empty()) {
          w.stream_pos =
              committed[fdp.ConsumeIntegralInRange<size_t>(0, committed.size() - 1)].lpos;
        } else {
          w.stream_pos = sbase + fdp.ConsumeIntegralInRange<uint64_t>(0, span);
        }
        want_moved = true;
        break;
      }
      case 7: {  // a stale record of an earlier lap before the head, holding
                 // other bytes for a PG's unhomed range: the head and that
                 // PG's stream_pos moved back to it (only its lap tells)
        if (wants.empty()) break;
        UnhomedWant& w = wants[fdp.ConsumeIntegralInRange<size_t>(0, wants.size() - 1)];
        RecordBodyBuilder b;
        b.AddPgBytes(w.stamp, w.homed, std::string(w.tail - w.homed, 'S'));
        const uint64_t size = kRecordHeaderSize + b.size();
        if (stream.head < sbase + size) break;
        const uint64_t at = sbase + fdp.ConsumeIntegralInRange<uint64_t>(0, stream.head - sbase - size);
        if (at > sp.tail) break;
        std::string rec;
        AppendRecord(&rec, kRecordStream, kStreamStamp, LapOf(at, g) - 1,
                     fdp.ConsumeIntegralInRange<uint64_t>(1, 1000), b.body());
        WriteAt(dev, g, stream.chunks, at, rec);
        sp.head = at;
        w.stream_pos = at;
        pointer_moved = want_moved = true;
        break;
      }
    }
  }
  pointer_moved |= !(sp == StreamPointer{stream.head, stream.tail, stream.tail_seq}) && !older_tail;
  bool inside = false;
  for (const Range& r : touched) inside |= r.from < stream.tail && r.to > stream.head;
  const bool clean = !inside && !pointer_moved && !older_tail && !want_moved && !resealed;

  std::vector<UnhomedFound> found;
  const absl::Status st = CollectUnhomed(dev, g, stream.chunks, sp, wants, &found);
  FUZZ_CHECK(st.ok() || absl::IsDataLoss(st), st.ToString());
  FUZZ_CHECK(found.size() == wants.size(), "one result per PG");
  if (!st.ok() && CheckPointerInChunks(sp.head, sp.tail, stream.chunks, kChunk).ok()) {
    // A record's damage names its stream lpos; the end's, the sequences.
    FUZZ_CHECK(absl::StartsWith(st.message(), "log stream: ") &&
                   (absl::StrContains(st.message(), "lpos") ||
                    absl::StrContains(st.message(), "sequence")),
               absl::StrCat("stream damage not located: ", st.ToString()));
  }
  if (clean) FUZZ_CHECK(st.ok(), absl::StrCat("an undamaged stream fails: ", st.ToString()));

  for (size_t i = 0; i < wants.size(); ++i) {
    const Pg& pg = *wanting[i];
    const UnhomedFound& f = found[i];
    if (!f.error.ok()) {
      FUZZ_CHECK(absl::IsDataLoss(f.error) &&
                     absl::StartsWith(f.error.message(), absl::StrCat("PG ", pg.name, ": ")),
                 absl::StrCat("a PG's failure does not name it: ", f.error.ToString()));
      FUZZ_CHECK(!clean, absl::StrCat("an undamaged stream fails PG ", pg.name, ": ",
                                      f.error.ToString()));
      if (older_tail && !inside && !pointer_moved && !want_moved && !resealed) {
        FUZZ_CHECK(pg.runs.back().stream_pos >= sp.tail,
                   absl::StrFormat("PG %s fails with all its bytes before the older tail %u: %s",
                                   pg.name, sp.tail, f.error.ToString()));
      }
      continue;
    }
    FUZZ_CHECK(f.bytes.size() == pg.tail - pg.homed,
               absl::StrFormat("PG %s given %u bytes for [%u, %u)", pg.name, f.bytes.size(),
                               pg.homed, pg.tail));
    // The runs name where each byte lies in the stream: read back through
    // them (as a store does once the bytes have left memory), they are the
    // bytes the pass handed over.
    std::string back;
    const absl::Status rb =
        ReadUnhomedBytes(dev, g, stream.chunks, pg.stamp, f.runs, pg.homed, pg.tail, &back);
    FUZZ_CHECK(rb.ok() && back == f.bytes,
               absl::StrFormat("PG %s: its bytes read back through its runs (%s) are %s, the "
                               "pass gave %s", pg.name, rb.ToString(), Hex(back), Hex(f.bytes)));
    const bool exact = f.bytes == pg.Unhomed();
    // Only a CRC-valid forgery can give a PG bytes not written for it; its
    // own records' checks must then catch it (below).
    FUZZ_CHECK(exact || resealed,
               absl::StrFormat("PG %s given bytes not written for it: %s, written %s", pg.name,
                               Hex(f.bytes), Hex(pg.Unhomed())));
    if (older_tail && !inside && !pointer_moved && !want_moved && !resealed) {
      FUZZ_CHECK(pg.runs.back().stream_pos < sp.tail,
                 absl::StrFormat("PG %s has bytes past the older tail %u but recovers", pg.name,
                                 sp.tail));
    }
  }

  // The PGs as the store recovers them (RecoverRingPgs): each ring up to
  // homed, then the one pass over the stream feeding each PG its bytes and
  // replaying them as they come, one block of them kept in memory.
  std::vector<PgPointer> pointers(live.size());
  std::vector<std::unique_ptr<RingPgLog>> logs;
  std::vector<RingPgLog*> recovering;
  for (size_t k = 0; k < live.size(); ++k) {
    const Pg* pg = live[k];
    PgPointer& p = pointers[k];
    p.stamp = pg->stamp;
    p.head = pg->head;
    p.tail = pg->tail;
    p.tail_seq = pg->next_seq;
    p.unhomed = pg->tail - pg->homed;
    p.stream_pos = pg->StreamPos();
    for (size_t i = 0; i < wanting.size(); ++i) {
      if (wanting[i] == pg) p.stream_pos = wants[i].stream_pos;  // as damaged, if it was
    }
    logs.push_back(std::make_unique<RingPgLog>(pg->id, pg->stamp, g.block_size));
    logs.back()->LoadPointer(p);
    logs.back()->chunks = pg->chunks;
    recovering.push_back(logs.back().get());
  }
  std::vector<absl::Status> outcome;
  absl::Status stream_damage;
  const absl::Status rs = RecoverRingPgs(
      dev, g, recovering, StreamSource{&sp, &stream.chunks}, g.block_size,
      [](size_t n, const std::function<void(size_t)>& fn) {
        for (size_t i = 0; i < n; ++i) fn(i);
      },
      &outcome, &stream_damage);
  FUZZ_CHECK(rs.ok(), rs.ToString());
  // The store's pass finds the damage the tool's does.
  FUZZ_CHECK(stream_damage.ok() == st.ok(),
             absl::StrCat("the store's pass says ", stream_damage.ToString(), ", the tool's ",
                          st.ToString()));
  for (size_t k = 0; k < live.size(); ++k) {
    const Pg* pg = live[k];
    const RingPgLog& log = *logs[k];
    const UnhomedFound* f = nullptr;
    for (size_t i = 0; i < wanting.size(); ++i) {
      if (wanting[i] == pg) f = &found[i];
    }
    const absl::Status& s = outcome[k];
    FUZZ_CHECK(s.ok() || absl::IsDataLoss(s), s.ToString());
    // A PG whose bytes the tool's pass could not gather fails the store's.
    FUZZ_CHECK(f == nullptr || f->error.ok() || !s.ok(),
               absl::StrCat("PG ", pg->name, " recovers, but its bytes are not all in the "
                            "stream: ", f == nullptr ? "" : f->error.ToString()));
    const bool exact = f == nullptr || (f->error.ok() && f->bytes == pg->Unhomed());
    if (!s.ok()) {
      FUZZ_CHECK(absl::StartsWith(s.message(), absl::StrCat("PG ", pg->name, ": ")),
                 s.ToString());
      FUZZ_CHECK(!exact, absl::StrCat("PG ", pg->name, " given exactly its bytes fails: ",
                                      s.ToString()));
      continue;
    }
    const std::vector<Placed> got = Placements(log.entries, pointers[k].head);
    FUZZ_CHECK(got == pg->entries, absl::StrFormat("PG %s: recovered %s, written %s", pg->name,
                                                   Describe(got), Describe(pg->entries)));
    // What stays in memory: its newest bytes, whole blocks of the oldest
    // gone, and the runs name where every byte lies.
    const std::string unhomed = f == nullptr ? std::string() : f->bytes;
    FUZZ_CHECK(log.image.size() == unhomed.size() && log.image.resident_size() <= 2 * g.block_size &&
                   unhomed.substr(log.image.cold()) == log.image.resident(),
               absl::StrFormat("PG %s: an image of %u bytes, %u of them cold, for %u unhomed",
                               pg->name, log.image.size(), log.image.cold(), unhomed.size()));
    std::string back;
    const absl::Status rb =
        ReadUnhomedBytes(dev, g, stream.chunks, pg->stamp, log.unhomed_runs, log.bounds.homed,
                         log.bounds.tail, &back);
    FUZZ_CHECK(rb.ok() && back == unhomed,
               absl::StrFormat("PG %s: its bytes read back through the recovered runs (%s) are "
                               "%s, the stream gave %s", pg->name, rb.ToString(), Hex(back),
                               Hex(unhomed)));
  }
  return 0;
}
