// ring_fuzzer.cc — the recovery scan of one PG's ring: RecoverRingPgs (the
// function RingStore::Recover calls: RingReader from the pointer's head to
// its tail, ReplayRecord per record, FinishReplay), on a ring in a
// MemoryBlockDevice; and, on the same ring, the tool's independent
// scan (ScanRingPg: fsck, export, repair).
//
// The input drives (FuzzedDataProvider) a writer that lays down a valid log
// the way the store does — transactions of entries, dups, infos, rewinds,
// resets and trims, one record per transaction at the tail, padded to blocks
// under kNeverRewrite, unknown skippable records now and then, stale records
// of earlier laps and other PGs around it, an uncommitted record past the
// tail — while a model keeps what the log must hold. Then it damages the
// ring and/or the pointer: byte flips, raw bytes, records altered and given
// a correct CRC again (a byte anywhere, or an item's version moved: so the
// checks behind the CRC are reached), a head, tail, tail_seq, trim point or
// stamp moved.
//
// Checked:
//  - recovery returns OK or kDataLoss naming the PG ("PG 1.2a: ..."), never
//    crashes, never hangs;
//  - with no damage inside [head, tail) and the pointer as written, recovery
//    succeeds and gives exactly the model's entries, dups, info (with their
//    record positions), last versions and head: bytes outside [head, tail)
//    are never interpreted;
//  - whatever it accepts is consistent: entry and dup versions strictly
//    increasing and above the trim points, every live item's record lies in
//    [head, tail), reads back through a fresh RingReader (CRC, stamp, lap)
//    and holds that item;
//  - the tool's scan agrees: complete without errors exactly when recovery
//    succeeds, and then with the same entries, dups and info.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "device/memory_block_device.h"
#include "format/record.h"
#include "fuzz_common.h"
#include "log/ring_pg_log.h"
#include "log/ring_pg_recovery.h"
#include "log/ring_layout.h"
#include "log/ring_reader.h"
#include "format/metadata_keys.h"
#include "check/pg_scan.h"

namespace pgring::fuzz {
namespace {

constexpr uint32_t kChunk = 64 << 10;  // the smallest chunk a label allows
constexpr uint32_t kChunkCount = 8;
const PgId kPg{1, 0x2a, -1};

// --- the ring ----------------------------------------------------------------

// The device is made once per block size and zeroed for each input: a fresh
// one costs a 1 MiB allocation (page faults) per run.
MemoryBlockDevice* ZeroedDevice(const Geometry& g) {
  static MemoryBlockDevice* devices[2] = {nullptr, nullptr};
  const uint64_t size = g.data_offset + uint64_t{kChunkCount} * kChunk;
  MemoryBlockDevice*& d = devices[g.block_size == 512 ? 0 : 1];
  if (d == nullptr) d = new MemoryBlockDevice(size, g.block_size);
  static const std::string zeros(size, '\0');
  d->WriteRaw(0, zeros);
  return d;
}

class Ring {
 public:
  Ring(const Geometry& g, const PgChunkList& c) : g_(g), c_(c), dev_(*ZeroedDevice(g)) {}

  MemoryBlockDevice* device() { return &dev_; }
  uint64_t end() const { return RingEnd(c_, g_); }

  void Write(uint64_t lpos, std::string_view bytes) {
    if (lpos >= end()) return;
    bytes = bytes.substr(0, std::min<uint64_t>(bytes.size(), end() - lpos));
    std::vector<Extent> ex;
    MapRange(c_, g_, lpos, bytes.size(), &ex);
    size_t done = 0;
    for (const Extent& e : ex) {
      dev_.WriteRaw(e.device_offset, absl::string_view(bytes.data() + done, e.length));
      done += e.length;
    }
  }
  std::string Read(uint64_t lpos, uint64_t n) {
    std::vector<Extent> ex;
    MapRange(c_, g_, lpos, n, &ex);
    std::string out;
    for (const Extent& e : ex) out += dev_.ReadRaw(e.device_offset, e.length);
    return out;
  }

 private:
  const Geometry g_;
  const PgChunkList c_;
  MemoryBlockDevice& dev_;
};

// --- the model of the log (what docs/FORMAT.md says a reader must find) ------

struct Placed {
  Version v;
  uint64_t pos;  // lpos of the record holding it
  friend bool operator==(const Placed&, const Placed&) = default;
};

struct Model {
  std::deque<Placed> entries, dups;
  Version last_version, last_dup_version;
  Version entries_trimmed_to, dups_trimmed_to;
  bool has_info = false;
  std::string info;
  uint64_t info_pos = 0;
  // The last rewind marker since an append or reset (RingPgLog's
  // has_rewind_marker): it keeps its record live while its version is held
  // by nothing else (RingPgLog::RewindPinned).
  bool pin = false;
  uint64_t pin_pos = 0;
  Version pin_v;
  uint64_t head = 0, tail = 0, next_seq = 1;

  // RingPgLog::ComputeHead.
  uint64_t ComputeHead() const {
    uint64_t h = tail;
    if (!entries.empty()) h = std::min(h, entries.front().pos);
    if (!dups.empty()) h = std::min(h, dups.front().pos);
    if (has_info) h = std::min(h, info_pos);
    if (pin && pin_v > entries_trimmed_to && (entries.empty() || entries.back().v < pin_v)) {
      h = std::min(h, pin_pos);
    }
    return h;
  }
};

Version NextVersion(FuzzedDataProvider& fdp, const Version& last) {
  Version v = last;
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
    v.epoch += 1;
    v.version = fdp.ConsumeIntegralInRange<uint64_t>(0, 2);
  } else {
    v.version += fdp.ConsumeIntegralInRange<uint64_t>(1, 3);
  }
  return v;
}

struct Written {
  uint64_t lpos;
  uint64_t size;
};

// Writes the transactions the input describes; returns the records written.
std::vector<Written> WriteLog(FuzzedDataProvider& fdp, const Geometry& g, Ring* ring,
                              uint32_t stamp, bool never_rewrite, Model* m) {
  std::vector<Written> records;
  for (int txn = 0; txn < 48 && fdp.remaining_bytes() > 0; ++txn) {
    const Model before = *m;
    const uint64_t pos = m->tail;
    RecordBodyBuilder body;
    const int ops = fdp.ConsumeIntegralInRange<int>(1, 5);
    for (int i = 0; i < ops; ++i) {
      switch (fdp.ConsumeIntegralInRange<int>(0, 10)) {
        case 0: case 1: case 2: case 3: {  // entry
          const Version v = NextVersion(fdp, m->last_version);
          body.AddEntry(v, std::string(fdp.ConsumeIntegralInRange<size_t>(0, 300), 'e'));
          m->entries.push_back({v, pos});
          m->last_version = v;
          m->pin = false;
          break;
        }
        case 4: {  // dup
          const Version v = NextVersion(fdp, m->last_dup_version);
          body.AddDup(v, std::string(fdp.ConsumeIntegralInRange<size_t>(0, 100), 'd'));
          m->dups.push_back({v, pos});
          m->last_dup_version = v;
          break;
        }
        case 5:  // info
          m->has_info = true;
          m->info = fdp.ConsumeRandomLengthString(200);
          m->info_pos = pos;
          body.AddInfo(m->info);
          break;
        case 6: {  // rewind to a live entry's version or to the trim point
          const size_t idx = fdp.ConsumeIntegralInRange<size_t>(0, m->entries.size());
          const Version v = idx < m->entries.size() ? m->entries[idx].v : m->entries_trimmed_to;
          if (v >= m->last_version) break;  // the store writes no marker then
          while (!m->entries.empty() && m->entries.back().v > v) m->entries.pop_back();
          m->last_version = v;
          m->pin = true;
          m->pin_pos = pos;
          m->pin_v = v;
          body.AddRewind(v);
          break;
        }
        case 7:  // reset
          m->entries.clear();
          m->dups.clear();
          m->last_version = m->last_dup_version = Version::Min();
          m->entries_trimmed_to = m->dups_trimmed_to = Version::Min();
          m->pin = false;
          body.AddReset();
          break;
        case 8: case 9: {  // trim entries (no item: the pointer moves)
          const size_t idx = fdp.ConsumeIntegralInRange<size_t>(0, m->entries.size());
          const Version v = idx < m->entries.size() ? m->entries[idx].v : m->last_version;
          if (v <= m->entries_trimmed_to) break;
          while (!m->entries.empty() && m->entries.front().v <= v) m->entries.pop_front();
          m->entries_trimmed_to = v;
          break;
        }
        case 10: {  // trim dups
          const size_t idx = fdp.ConsumeIntegralInRange<size_t>(0, m->dups.size());
          const Version v = idx < m->dups.size() ? m->dups[idx].v : m->last_dup_version;
          if (v <= m->dups_trimmed_to) break;
          while (!m->dups.empty() && m->dups.front().v <= v) m->dups.pop_front();
          m->dups_trimmed_to = v;
          break;
        }
      }
    }
    if (!body.empty()) {
      if (never_rewrite) {
        const uint64_t end = pos + kRecordHeaderSize + body.size();
        uint64_t pad = g.AlignUp(end) - end;
        if (pad == 1) pad += g.block_size;
        if (pad > 0) body.AddPad(pad);
      }
      if (pos + kRecordHeaderSize + body.size() > ring->end()) {
        *m = before;  // does not fit: the store would have grown the ring
        break;
      }
      const uint8_t type = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? 0x81 : kRecordTxn;
      std::string rec;
      AppendRecord(&rec, type, stamp, LapOf(pos, g), m->next_seq++, body.body());
      ring->Write(pos, rec);
      records.push_back({pos, rec.size()});
      m->tail = pos + rec.size();
    }
    // Now and then a record of a kind this reader skips (it still takes a
    // sequence number).
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
      const uint8_t type = static_cast<uint8_t>(0x80 | fdp.ConsumeIntegralInRange<int>(2, 127));
      const std::string junk = fdp.ConsumeRandomLengthString(100);
      if (m->tail + kRecordHeaderSize + junk.size() <= ring->end()) {
        std::string rec;
        AppendRecord(&rec, type, stamp, LapOf(m->tail, g), m->next_seq++, junk);
        ring->Write(m->tail, rec);
        records.push_back({m->tail, rec.size()});
        m->tail += rec.size();
      }
    }
    m->head = m->ComputeHead();
  }
  return records;
}

// Fills the ring with what an earlier life of its chunks left: valid records
// of another PG, or of this PG from an earlier lap.
void WriteStale(FuzzedDataProvider& fdp, const Geometry& g, const PgChunkList& c, Ring* ring,
                uint32_t stamp) {
  const bool other_pg = fdp.ConsumeBool();
  uint64_t seq = fdp.ConsumeIntegralInRange<uint64_t>(1, 100);
  for (uint64_t pos = c.base; pos + kRecordHeaderSize < ring->end();) {
    RecordBodyBuilder b;
    b.AddEntry(Version{1, seq}, std::string(500 + fdp.ConsumeIntegralInRange<size_t>(0, 3000), 's'));
    std::string rec;
    AppendRecord(&rec, kRecordTxn, other_pg ? stamp + 1 : stamp,
                 other_pg ? LapOf(pos, g) : LapOf(pos, g) - 1, seq++, b.body());
    ring->Write(pos, rec);
    pos += rec.size();
  }
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

// Reads the record at `pos` again, straight from the device, verifies it
// (within the tail, CRC, stamp, lap, a transaction record) and returns its
// body.
std::string VerifiedBodyAt(Ring* ring, const Geometry& g, const PgPointer& p, uint64_t pos) {
  FUZZ_CHECK(pos >= p.head && pos + kRecordHeaderSize <= p.tail,
             absl::StrFormat("a live item's record at lpos %u is outside [head %u, tail %u)",
                             pos, p.head, p.tail));
  const RecordHeader h = DecodeRecordHeader(ring->Read(pos, kRecordHeaderSize).data());
  FUZZ_CHECK(h.length <= p.tail - pos - kRecordHeaderSize,
             absl::StrFormat("the record at lpos %u runs past the tail", pos));
  const std::string rec = ring->Read(pos, kRecordHeaderSize + h.length);
  FUZZ_CHECK(RecordCrcMatches(rec) && h.pg_stamp == p.stamp && h.lap == LapOf(pos, g) &&
                 (h.type & ~kSkippableBit) == kRecordTxn,
             absl::StrFormat("the record at lpos %u holding a live item does not verify", pos));
  return rec.substr(kRecordHeaderSize);
}

std::vector<Item> ItemsOf(const std::string& body) {
  std::vector<Item> items;
  absl::Status s = ForEachItem(body, [&](const Item& it) {
    items.push_back(it);
    return absl::OkStatus();
  });
  FUZZ_CHECK(s.ok(), s.ToString());
  return items;
}

void CheckHeldBy(Ring* ring, const Geometry& g, const PgPointer& p,
                 const std::vector<Placed>& list, ItemKind kind) {
  uint64_t cached_pos = ~0ull;
  std::string body;
  std::vector<Item> items;
  for (const Placed& e : list) {
    if (e.pos != cached_pos) {
      body = VerifiedBodyAt(ring, g, p, e.pos);
      items = ItemsOf(body);
      cached_pos = e.pos;
    }
    bool found = false;
    for (const Item& i : items) found |= i.kind == kind && i.version == e.v;
    FUZZ_CHECK(found, absl::StrFormat("the record at lpos %u does not hold %s %s", e.pos,
                                      kind == ItemKind::kEntry ? "entry" : "dup", e.v.ToString()));
  }
}

void CheckConsistent(Ring* ring, const Geometry& g, const PgPointer& p, const RingPgLog& pg) {
  const std::vector<Placed> entries = Placements(pg.entries, p.head);
  const std::vector<Placed> dups = Placements(pg.dups, p.head);
  for (size_t i = 0; i < entries.size(); ++i) {
    const Version floor = i == 0 ? p.entries_trimmed_to : entries[i - 1].v;
    FUZZ_CHECK(entries[i].v > floor, absl::StrFormat("entries out of order: %s (trimmed to %s)",
                                                     Describe(entries),
                                                     p.entries_trimmed_to.ToString()));
  }
  for (size_t i = 0; i < dups.size(); ++i) {
    const Version floor = i == 0 ? p.dups_trimmed_to : dups[i - 1].v;
    FUZZ_CHECK(dups[i].v > floor, absl::StrFormat("dups out of order: %s (trimmed to %s)",
                                                  Describe(dups), p.dups_trimmed_to.ToString()));
  }
  FUZZ_CHECK(entries.empty() || pg.last_version >= entries.back().v, "last_version below an entry");
  FUZZ_CHECK(pg.last_version >= p.entries_trimmed_to, "last_version below the trim point");
  FUZZ_CHECK(dups.empty() || pg.last_dup_version >= dups.back().v, "last_dup_version below a dup");
  FUZZ_CHECK(pg.last_dup_version >= p.dups_trimmed_to, "last_dup_version below the trim point");
  CheckHeldBy(ring, g, p, entries, ItemKind::kEntry);
  CheckHeldBy(ring, g, p, dups, ItemKind::kDup);
  if (pg.has_info) {
    const std::string body = VerifiedBodyAt(ring, g, p, pg.info_pos);
    std::optional<std::string> last;
    for (const Item& i : ItemsOf(body)) {
      if (i.kind == ItemKind::kInfo) last = std::string(i.payload);
    }
    FUZZ_CHECK(last.has_value() && *last == pg.info,
               absl::StrFormat("the record at lpos %u does not end with the info recovered",
                               pg.info_pos));
  }
}

// The tool's scan must agree with recovery.
void CheckAgainstToolScan(BlockDevice* dev, const Geometry& g, const PgChunkList& c,
                          const PgPointer& p, const absl::Status& recovered, const RingPgLog& pg) {
  PgScanOptions o;
  o.keep_entry_payloads = true;
  o.keep_dup_payloads = true;
  PgScan scan = ScanRingPg(dev, g, kPg, p, c, /*unhomed=*/{}, o);
  std::string problems;
  for (const auto& pr : scan.problems) absl::StrAppend(&problems, pr.ToString(), "; ");
  FUZZ_CHECK(recovered.ok() == scan.complete,
             absl::StrFormat("recovery says %s but the tool's scan is %s: %s", recovered.ToString(),
                             scan.complete ? "complete" : "incomplete", problems));
  FUZZ_CHECK(scan.complete != scan.has_errors(), "scan complete with errors");
  if (!recovered.ok()) return;
  std::vector<Placed> se, sd;
  for (const auto& e : scan.entries) se.push_back({e.version, e.record_lpos});
  for (const auto& d : scan.dups) sd.push_back({d.version, d.record_lpos});
  const std::vector<Placed> re = Placements(pg.entries, p.head);
  const std::vector<Placed> rd = Placements(pg.dups, p.head);
  FUZZ_CHECK(se == re, absl::StrFormat("entries: recovery %s, tool scan %s", Describe(re),
                                       Describe(se)));
  FUZZ_CHECK(sd == rd, absl::StrFormat("dups: recovery %s, tool scan %s", Describe(rd),
                                       Describe(sd)));
  FUZZ_CHECK(scan.info.has_value() == pg.has_info, "info: recovery and the tool scan disagree");
  if (pg.has_info) {
    FUZZ_CHECK(scan.info->payload == pg.info && scan.info->record_lpos == pg.info_pos,
               "info payload/position: recovery and the tool scan disagree");
  }
}

void CheckEqualsModel(const Model& m, const PgPointer& p, const RingPgLog& pg) {
  const std::vector<Placed> re = Placements(pg.entries, p.head);
  const std::vector<Placed> rd = Placements(pg.dups, p.head);
  const std::vector<Placed> me(m.entries.begin(), m.entries.end());
  const std::vector<Placed> md(m.dups.begin(), m.dups.end());
  FUZZ_CHECK(re == me, absl::StrFormat("entries: recovered %s, written %s", Describe(re),
                                       Describe(me)));
  FUZZ_CHECK(rd == md, absl::StrFormat("dups: recovered %s, written %s", Describe(rd),
                                       Describe(md)));
  FUZZ_CHECK(pg.has_info == m.has_info && (!m.has_info || (pg.info == m.info &&
                                                           pg.info_pos == m.info_pos)),
             "info: recovered differs from written");
  FUZZ_CHECK(pg.last_version == m.last_version,
             absl::StrFormat("last version: recovered %s, written %s", pg.last_version.ToString(),
                             m.last_version.ToString()));
  FUZZ_CHECK(pg.last_dup_version == m.last_dup_version,
             absl::StrFormat("last dup version: recovered %s, written %s",
                             pg.last_dup_version.ToString(), m.last_dup_version.ToString()));
  FUZZ_CHECK(pg.ComputeHead(p.tail) == p.head,
             absl::StrFormat("after recovery the head would be %u, the pointer says %u "
                             "(tail %u; entries %s; dups %s; info %s at %u)",
                             pg.ComputeHead(p.tail), p.head, p.tail, Describe(re), Describe(rd),
                             pg.has_info ? "yes" : "no", pg.info_pos));
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

  // The PG's chunks, in ring order, and where the ring stands in its stream.
  PgChunkList c;
  {
    std::vector<uint32_t> free;
    for (uint32_t i = 0; i < kChunkCount; ++i) free.push_back(i);
    const int n = fdp.ConsumeIntegralInRange<int>(1, 4);
    for (int i = 0; i < n; ++i) {
      const size_t k = fdp.ConsumeIntegralInRange<size_t>(0, free.size() - 1);
      c.chunks.push_back(free[k]);
      free.erase(free.begin() + static_cast<long>(k));
    }
    uint64_t lap = 0;
    switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: lap = 0; break;
      case 1: lap = fdp.ConsumeIntegralInRange<uint64_t>(1, 100); break;
      case 2: lap = fdp.ConsumeIntegral<uint32_t>(); break;
      case 3: lap = (1ull << 32) - 2 + fdp.ConsumeIntegralInRange<uint64_t>(0, 4); break;  // laps wrap
    }
    c.base = lap * kChunk;
  }
  Ring ring(g, c);
  const uint32_t stamp = fdp.ConsumeIntegralInRange<uint32_t>(1, 1000);

  switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {  // what the chunks held before
    case 0: break;  // zeros
    case 1: {
      std::string noise(4096, '\0');
      uint64_t x = fdp.ConsumeIntegral<uint64_t>() | 1;
      for (uint64_t at = c.base; at < ring.end(); at += noise.size()) {
        for (char& ch : noise) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          ch = static_cast<char>(x);
        }
        ring.Write(at, noise);
      }
      break;
    }
    case 2: WriteStale(fdp, g, c, &ring, stamp); break;
  }

  Model m;
  const bool never_rewrite = fdp.ConsumeBool();
  {
    uint64_t start = c.base + fdp.ConsumeIntegralInRange<uint64_t>(0, kChunk + 100);
    if (never_rewrite) start = g.AlignUp(start);
    start = std::min(start, ring.end());
    m.head = m.tail = start;
    m.next_seq = fdp.ConsumeIntegralInRange<uint64_t>(1, 1u << 20);
    m.entries_trimmed_to = m.last_version = Version{0, fdp.ConsumeIntegralInRange<uint64_t>(0, 5)};
    m.dups_trimmed_to = m.last_dup_version = Version{0, fdp.ConsumeIntegralInRange<uint64_t>(0, 5)};
  }
  std::vector<Written> records = WriteLog(fdp, g, &ring, stamp, never_rewrite, &m);

  // A transaction whose pointer never reached RocksDB: its record lies past
  // the tail, valid in every way.
  if (fdp.ConsumeBool() && m.tail + 200 < ring.end()) {
    RecordBodyBuilder b;
    b.AddEntry(Version{m.last_version.epoch, m.last_version.version + 1}, "uncommitted");
    std::string rec;
    AppendRecord(&rec, kRecordTxn, stamp, LapOf(m.tail, g), m.next_seq, b.body());
    ring.Write(m.tail, rec);
  }

  PgPointer p;
  p.stamp = stamp;
  p.head = m.head;
  p.tail = m.tail;
  p.tail_seq = m.next_seq;
  p.entries_trimmed_to = m.entries_trimmed_to;
  p.dups_trimmed_to = m.dups_trimmed_to;

  // Damage.
  struct Range {
    uint64_t from, to;
  };
  std::vector<Range> touched;
  bool pointer_moved = false;
  const uint64_t span = ring.end() - c.base;
  for (int i = 0; i < damage; ++i) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: {  // flip a byte
        const uint64_t at = c.base + fdp.ConsumeIntegralInRange<uint64_t>(0, span - 1);
        std::string b = ring.Read(at, 1);
        b[0] = static_cast<char>(b[0] ^ fdp.ConsumeIntegralInRange<int>(1, 255));
        ring.Write(at, b);
        touched.push_back({at, at + 1});
        break;
      }
      case 1: {  // raw bytes
        const uint64_t at = c.base + fdp.ConsumeIntegralInRange<uint64_t>(0, span - 1);
        const std::string b = fdp.ConsumeRandomLengthString(256);
        ring.Write(at, b);
        touched.push_back({at, std::min(at + b.size(), ring.end())});
        break;
      }
      case 2: {  // alter a record and give it a correct CRC again
        if (records.empty()) break;
        const Written w = records[fdp.ConsumeIntegralInRange<size_t>(0, records.size() - 1)];
        std::string rec = ring.Read(w.lpos, w.size);
        const size_t at = fdp.ConsumeIntegralInRange<size_t>(4, rec.size() - 1);
        rec[at] = static_cast<char>(rec[at] ^ fdp.ConsumeIntegralInRange<int>(1, 255));
        PutMaskedCrc(&rec, 0, 4, rec.size());
        ring.Write(w.lpos, rec);
        touched.push_back({w.lpos, w.lpos + w.size});
        break;
      }
      case 7: {  // move an item's version in a record, re-sealed
        if (records.empty()) break;
        const Written w = records[fdp.ConsumeIntegralInRange<size_t>(0, records.size() - 1)];
        std::string rec = ring.Read(w.lpos, w.size);
        const std::string body = rec.substr(kRecordHeaderSize);
        std::vector<size_t> fields;  // offsets of version fields in the body
        (void)ForEachItem(body, [&](const Item& it) {
          if (it.kind == ItemKind::kEntry || it.kind == ItemKind::kDup ||
              it.kind == ItemKind::kRewind) {
            fields.push_back(it.offset + 1 + VarintLength(kItemVersionSize + it.payload.size()));
          }
          return absl::OkStatus();
        });
        if (fields.empty()) break;
        const size_t at = kRecordHeaderSize +
                          fields[fdp.ConsumeIntegralInRange<size_t>(0, fields.size() - 1)];
        if (fdp.ConsumeBool()) {
          EncodeFixed64(rec.data() + at + 4, DecodeFixed64(rec.data() + at + 4) +
                                                 fdp.ConsumeIntegralInRange<int>(-3, 3));
        } else {
          EncodeFixed32(rec.data() + at, DecodeFixed32(rec.data() + at) +
                                             fdp.ConsumeIntegralInRange<int>(-1, 1));
        }
        PutMaskedCrc(&rec, 0, 4, rec.size());
        ring.Write(w.lpos, rec);
        touched.push_back({w.lpos, w.lpos + w.size});
        break;
      }
      case 3:
        p.head = c.base + fdp.ConsumeIntegralInRange<uint64_t>(0, span);
        pointer_moved = true;
        break;
      case 4:
        p.tail = c.base + fdp.ConsumeIntegralInRange<uint64_t>(0, span);
        pointer_moved = true;
        break;
      case 5:
        p.tail_seq += fdp.ConsumeIntegralInRange<int>(-2, 2);
        p.entries_trimmed_to.version += fdp.ConsumeIntegralInRange<int>(-1, 3);
        p.dups_trimmed_to.version += fdp.ConsumeIntegralInRange<int>(-1, 3);
        pointer_moved = true;
        break;
      case 6:
        p.stamp = fdp.ConsumeIntegralInRange<uint32_t>(1, 1001);
        pointer_moved = true;
        break;
    }
  }
  // The store refuses these before reading the ring (PgPointer::Decode,
  // RingPgRecovery::Start): base <= head <= tail <= ring end.
  if (p.head > p.tail) std::swap(p.head, p.tail);
  bool inside = false;
  for (const Range& r : touched) inside |= r.from < p.tail && r.to > p.head;
  pointer_moved |= p.head != m.head || p.tail != m.tail || p.tail_seq != m.next_seq ||
                   p.stamp != stamp || p.entries_trimmed_to != m.entries_trimmed_to ||
                   p.dups_trimmed_to != m.dups_trimmed_to;

  RingPgLog pg(kPg, p.stamp, g.block_size);
  pg.LoadPointer(p);
  pg.chunks = c;
  std::vector<absl::Status> outcome;
  absl::Status stream_damage;
  const absl::Status rs = RecoverRingPgs(
      ring.device(), g, {&pg}, StreamSource{}, UINT64_MAX,
      [](size_t n, const std::function<void(size_t)>& fn) {
        for (size_t i = 0; i < n; ++i) fn(i);
      },
      &outcome, &stream_damage);
  FUZZ_CHECK(rs.ok() && stream_damage.ok(), rs.ToString());
  const absl::Status s = outcome[0];
  FUZZ_CHECK(s.ok() || absl::IsDataLoss(s), s.ToString());
  if (!s.ok()) {
    FUZZ_CHECK(absl::StartsWith(s.message(), "PG 1.2a: "), s.ToString());
  }
  if (!inside && !pointer_moved) {
    FUZZ_CHECK(s.ok(), absl::StrCat("an undamaged log fails recovery: ", s.ToString()));
    CheckEqualsModel(m, p, pg);
  }
  if (s.ok()) CheckConsistent(&ring, g, p, pg);
  CheckAgainstToolScan(ring.device(), g, c, p, s, pg);
  return 0;
}
