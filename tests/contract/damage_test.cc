// Damage tests, in the style of LevelDB's log_test: a store is built with two
// PGs holding known entries and closed; exactly one thing is damaged on the
// partition or in RocksDB; the store is reopened. Each test checks the exact
// status code and that the message names the PG, the position (lpos, chunk,
// offset) and the kind of damage. A refused open (RecoveryPolicy::kRefuse)
// must change nothing: every refusal compares the partition's bytes and every
// RocksDB key and value before and after the open.
#include <gmock/gmock.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "device/memory_block_device.h"
#include "format/label.h"
#include "format/record.h"
#include "log/ring_layout.h"
#include "format/metadata_keys.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/rocksdb_keys.h"
#include "util/store_fixture.h"

namespace pgring::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr size_t kPayloadSize = 200;

// Fixed-size payloads and infos, so every one-entry record of any PG has the
// same size (records of two PGs can be swapped without moving boundaries).
std::string Payload(const PgId& pg, uint64_t v) {
  std::string s = absl::StrFormat("%s/entry-%06d-", pg.ToString(), v);
  while (s.size() < kPayloadSize) s += static_cast<char>('a' + (v + s.size()) % 26);
  s.resize(kPayloadSize);
  return s;
}
std::string Info(uint64_t v) { return absl::StrFormat("info@%06d", v); }

// Appends the masked CRC32C that closes every pgring RocksDB value.
std::string Seal(std::string v) {
  PutFixed32(&v, crc32c::Mask(crc32c::Value(v.data(), v.size())));
  return v;
}

struct RecordLoc {
  uint64_t lpos = 0;
  uint64_t size = 0;
  RecordHeader header;
  ChunkPos where;
};

// A PG as RocksDB and the partition hold it.
struct PgLayout {
  PgPointer ptr;
  PgChunkList chunks;
  std::vector<RecordLoc> records;
};

class DamageTest : public StoreFixture {
 protected:
  static constexpr uint64_t kEntriesA = 8;
  static constexpr uint64_t kEntriesB = 6;
  const PgId kA = Pg(0x2a);  // "1.2a"
  const PgId kB = Pg(7);     // "1.7"

  void SetUp() override {
    StoreFixture::SetUp();
    Mkfs();
    ASSERT_OK(Open(options_));
    ASSERT_OK(Create(kA));
    ASSERT_OK(Create(kB));
    // One transaction per entry: one record per entry.
    for (uint64_t v = 1; v <= kEntriesA; ++v) ASSERT_OK(Append(kA, v));
    for (uint64_t v = 1; v <= kEntriesB; ++v) ASSERT_OK(Append(kB, v));
    CloseStore();
    geo_ = ReadGeometry();
    a_ = Layout(kA);
    b_ = Layout(kB);
    ASSERT_EQ(a_.records.size(), kEntriesA);
    ASSERT_EQ(b_.records.size(), kEntriesB);
  }

  MemoryBlockDevice* mem() const { return static_cast<MemoryBlockDevice*>(device_.get()); }

  absl::Status Create(const PgId& pg) {
    Transaction t;
    t.CreatePg(pg);
    return store_->Commit(std::move(t));
  }
  absl::Status Append(const PgId& pg, uint64_t v, const Version* trim_to = nullptr) {
    Transaction t;
    t.AppendEntry(pg, V(1, v), Payload(pg, v));
    t.SetInfo(pg, Info(v));
    if (trim_to != nullptr) t.Trim(pg, *trim_to);
    return store_->Commit(std::move(t));
  }
  void CloseStore() {
    if (store_) {
      EXPECT_OK(store_->Close());
      store_.reset();
    }
  }

  // Entries 1..n of `pg` with the fixture's payloads and info n.
  void ExpectEntries(const PgId& pg, uint64_t n) {
    ASSERT_NE(store_, nullptr);
    auto r = store_->ReadEntries(pg);
    ASSERT_OK(r);
    ASSERT_EQ(r->size(), n) << pg.ToString();
    for (uint64_t v = 1; v <= n; ++v) {
      EXPECT_EQ((*r)[v - 1].version, V(1, v));
      EXPECT_EQ((*r)[v - 1].payload, Payload(pg, v));
    }
    auto info = store_->ReadInfo(pg);
    ASSERT_OK(info);
    EXPECT_EQ(*info, Info(n));
  }

  Geometry ReadGeometry() const {
    auto l = Label::Decode(mem()->ReadRaw(0, kLabelEncodedSize));
    EXPECT_TRUE(l.ok()) << l.status();
    Geometry g;
    if (!l.ok()) return g;
    g.block_size = l->block_size;
    g.chunk_size = l->chunk_size;
    g.data_offset = l->data_offset;
    g.chunk_count = l->chunk_count;
    return g;
  }

  // --- The partition, by logical position in a PG's ring.
  std::string ReadLogical(const PgChunkList& c, uint64_t lpos, uint64_t n) const {
    std::vector<Extent> ex;
    MapRange(c, geo_, lpos, n, &ex);
    std::string out;
    for (const Extent& e : ex) out += mem()->ReadRaw(e.device_offset, e.length);
    return out;
  }
  void WriteLogical(const PgChunkList& c, uint64_t lpos, std::string_view data) {
    std::vector<Extent> ex;
    MapRange(c, geo_, lpos, data.size(), &ex);
    size_t off = 0;
    for (const Extent& e : ex) {
      mem()->WriteRaw(e.device_offset, absl::string_view(data.data() + off, e.length));
      off += e.length;
    }
  }
  // Applies `edit` to the bytes of record `r` (header + body); with
  // `reseal`, recomputes its CRC so that only the semantic checks can tell.
  void EditRecord(const PgLayout& l, const RecordLoc& r, const std::function<void(char*)>& edit,
                  bool reseal) {
    std::string rec = ReadLogical(l.chunks, r.lpos, r.size);
    edit(rec.data());
    if (reseal) {
      EncodeFixed32(rec.data(), crc32c::Mask(crc32c::Value(rec.data() + 4, rec.size() - 4)));
      ASSERT_TRUE(RecordCrcMatches(rec));
    }
    WriteLogical(l.chunks, r.lpos, rec);
  }
  void FlipByte(uint64_t device_offset, uint8_t mask = 0x01) {
    std::string b = mem()->ReadRaw(device_offset, 1);
    b[0] = static_cast<char>(b[0] ^ mask);
    mem()->WriteRaw(device_offset, b);
  }

  // --- RocksDB, opened directly (the store must be closed).
  std::string DbGet(const std::string& key) const {
    auto all = ReadAllKeys(db_path_);
    auto it = all.find(key);
    EXPECT_NE(it, all.end()) << key;
    return it == all.end() ? std::string() : it->second;
  }
  void DbWrite(const std::function<void(rocksdb::WriteBatch*)>& fill) {
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(rocksdb::Options(), db_path_, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::WriteBatch batch;
    fill(&batch);
    rocksdb::WriteOptions wo;
    wo.sync = true;
    s = db->Write(wo, &batch);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = db->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void DbPut(const std::string& key, const std::string& value) {
    DbWrite([&](rocksdb::WriteBatch* b) { ASSERT_TRUE(b->Put(key, value).ok()); });
  }
  void DbDelete(const std::string& key) {
    DbWrite([&](rocksdb::WriteBatch* b) { ASSERT_TRUE(b->Delete(key).ok()); });
  }

  // The PG's pointer and chunk list from RocksDB, and its records from the
  // partition (walked by their lengths, unverified: call it on an undamaged
  // store).
  PgLayout Layout(const PgId& pg) const {
    PgLayout l;
    auto p = PgPointer::Decode(DbGet(PgPointerKey(pg)));
    auto c = PgChunkList::Decode(DbGet(PgChunksKey(pg)));
    EXPECT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(c.ok()) << c.status();
    if (!p.ok() || !c.ok()) return l;
    l.ptr = *p;
    l.chunks = *c;
    for (uint64_t pos = l.ptr.head; pos < l.ptr.tail;) {
      RecordLoc r;
      r.lpos = pos;
      r.header = DecodeRecordHeader(ReadLogical(l.chunks, pos, kRecordHeaderSize).data());
      r.size = kRecordHeaderSize + r.header.length;
      r.where = Locate(l.chunks, geo_, pos);
      if (pos + r.size > l.ptr.tail) {
        ADD_FAILURE() << "record at " << pos << " runs past the tail " << l.ptr.tail;
        break;
      }
      l.records.push_back(r);
      pos += r.size;
    }
    return l;
  }

  // "PG 1.2a: record at lpos L (chunk C, offset O): "
  static std::string At(const PgId& pg, const RecordLoc& r) {
    return absl::StrFormat("PG %s: record at lpos %d (chunk %d, offset %d): ", pg.ToString(),
                           r.lpos, r.where.chunk, r.where.offset);
  }

  // Opens with options_ and expects a refusal with `code` whose message
  // contains every one of `needles`; checks that the refused open changed
  // neither the partition nor RocksDB. Stores the status in *out if given.
  void ExpectRefused(absl::StatusCode code, const std::vector<std::string>& needles,
                     absl::Status* out = nullptr) {
    CloseStore();
    const std::string dev_before = mem()->ReadRaw(0, mem()->size());
    const auto db_before = ReadAllKeys(db_path_);
    absl::Status s = Open(options_);
    EXPECT_EQ(s.code(), code) << s;
    for (const std::string& n : needles) EXPECT_THAT(std::string(s.message()), HasSubstr(n));
    EXPECT_EQ(store_, nullptr);
    store_.reset();
    EXPECT_TRUE(mem()->ReadRaw(0, mem()->size()) == dev_before)
        << "the refused open changed the partition";
    EXPECT_TRUE(ReadAllKeys(db_path_) == db_before) << "the refused open changed RocksDB";
    if (out != nullptr) *out = s;
  }
  void ExpectRecordDamage(const PgId& pg, const RecordLoc& r, const std::string& what) {
    ExpectRefused(absl::StatusCode::kDataLoss, {At(pg, r) + what});
  }

  Geometry geo_;
  PgLayout a_, b_;
};

TEST_F(DamageTest, UndamagedStoreOpens) {
  ASSERT_OK(Open(options_));
  ExpectEntries(kA, kEntriesA);
  ExpectEntries(kB, kEntriesB);
  EXPECT_EQ(a_.ptr.stamp, 1u);
  EXPECT_EQ(b_.ptr.stamp, 2u);
  // The chunks of the two PGs differ (the copy test relies on it).
  ASSERT_EQ(a_.chunks.chunks.size(), 1u);
  ASSERT_EQ(b_.chunks.chunks.size(), 1u);
  EXPECT_NE(a_.chunks.chunks[0], b_.chunks.chunks[0]);
}

// --- Records inside the committed range -------------------------------------

TEST_F(DamageTest, BodyByteFlippedIsCrcMismatch) {
  // Every record of both PGs, one at a time.
  for (const auto& [pg, layout] : {std::pair{kA, a_}, std::pair{kB, b_}}) {
    for (const RecordLoc& r : layout.records) {
      SCOPED_TRACE(absl::StrFormat("PG %s lpos %d", pg.ToString(), r.lpos));
      const std::string orig = ReadLogical(layout.chunks, r.lpos, r.size);
      EditRecord(layout, r, [&](char* p) { p[kRecordHeaderSize + r.header.length / 2] ^= 0x20; },
                 false);
      ExpectRecordDamage(pg, r, "CRC mismatch");
      WriteLogical(layout.chunks, r.lpos, orig);
    }
  }
  ASSERT_OK(Open(options_));
  ExpectEntries(kA, kEntriesA);
  ExpectEntries(kB, kEntriesB);
}

TEST_F(DamageTest, StoredCrcFlippedIsCrcMismatch) {
  const RecordLoc& r = a_.records[2];
  EditRecord(a_, r, [](char* p) { p[1] ^= 0x04; }, false);
  ExpectRecordDamage(kA, r, "CRC mismatch");
}

TEST_F(DamageTest, LengthFieldRunningPastTheTailIsDamagedHeader) {
  const RecordLoc& r = a_.records[3];
  const uint32_t damaged = r.header.length ^ 0x400000;  // bit 22 of the u24
  EditRecord(a_, r, [](char* p) { p[7] ^= 0x40; }, false);
  ExpectRecordDamage(kA, r,
                     absl::StrFormat("length %d runs past the committed tail at %d (damaged header)",
                                     damaged, a_.ptr.tail));
}

TEST_F(DamageTest, LengthFieldInsideTheRangeIsCrcMismatch) {
  // A shorter length keeps the record inside the committed range; the CRC,
  // computed over the wrong span, catches it.
  const RecordLoc& r = a_.records[3];
  const uint32_t damaged = r.header.length - 1;
  EditRecord(a_, r, [&](char* p) {
    p[5] = static_cast<char>(damaged);
    p[6] = static_cast<char>(damaged >> 8);
    p[7] = static_cast<char>(damaged >> 16);
  }, false);
  ExpectRecordDamage(kA, r, "CRC mismatch");
}

TEST_F(DamageTest, LastRecordLengthDamagedIsDamagedHeader) {
  // The last record before the tail: any longer length runs past the tail.
  const RecordLoc& r = a_.records.back();
  EditRecord(a_, r, [](char* p) { p[5] ^= 0x01; }, false);
  const uint32_t damaged = r.header.length ^ 0x01;
  if (damaged > r.header.length) {
    ExpectRecordDamage(kA, r,
                       absl::StrFormat("length %d runs past the committed tail at %d "
                                       "(damaged header)", damaged, a_.ptr.tail));
  } else {
    ExpectRecordDamage(kA, r, "CRC mismatch");
  }
}

TEST_F(DamageTest, StampResealedIsCaughtByTheStampCheck) {
  const RecordLoc& r = a_.records[4];
  EditRecord(a_, r, [](char* p) { EncodeFixed32(p + 8, 1234); }, true);
  ExpectRecordDamage(kA, r,
                     absl::StrFormat("record belongs to PG stamp 1234, not %d (a record of "
                                     "another PG)", a_.ptr.stamp));
}

TEST_F(DamageTest, LapResealedIsCaughtByTheLapCheck) {
  const RecordLoc& r = a_.records[4];
  ASSERT_EQ(r.header.lap, 0u);
  EditRecord(a_, r, [](char* p) { EncodeFixed32(p + 12, 7); }, true);
  ExpectRecordDamage(kA, r,
                     "record is from lap 7, expected lap 0 (a stale record from an earlier use "
                     "of the chunk)");
}

TEST_F(DamageTest, SequenceResealedIsCaughtByTheSequenceCheck) {
  const RecordLoc& r = a_.records[5];
  EditRecord(a_, r, [](char* p) { EncodeFixed64(p + 16, 1000); }, true);
  ExpectRecordDamage(kA, r, absl::StrFormat("sequence 1000, expected %d", r.header.seq));
}

TEST_F(DamageTest, LastSequenceResealedIsCaught) {
  const RecordLoc& r = a_.records.back();
  EditRecord(a_, r, [](char* p) { EncodeFixed64(p + 16, 1000); }, true);
  ExpectRecordDamage(kA, r, absl::StrFormat("sequence 1000, expected %d", r.header.seq));
}

TEST_F(DamageTest, HeadSequenceResealedIsCaught) {
  // Nothing tells the reader the first record's sequence (the pointer holds
  // only the tail's), so a damaged one is taken as given and the mismatch
  // surfaces at the next record: the message names that record's lpos, one
  // record after the damage (a known imprecision; still kDataLoss, still
  // refused).
  const RecordLoc& r0 = a_.records[0];
  const RecordLoc& r1 = a_.records[1];
  EditRecord(a_, r0, [](char* p) { EncodeFixed64(p + 16, 1000); }, true);
  ExpectRecordDamage(kA, r1, absl::StrFormat("sequence %d, expected 1001", r1.header.seq));
}

TEST_F(DamageTest, PointerTailSequenceDisagreeingWithTheRecordsIsCaught) {
  PgPointer p = a_.ptr;
  p.tail_seq += 1;
  DbPut(PgPointerKey(kA), p.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {absl::StrFormat("PG 1.2a: the last record before the tail has sequence %d, "
                                 "the pointer expects %d",
                                 a_.ptr.tail_seq - 1, p.tail_seq - 1)});
}

TEST_F(DamageTest, UnknownRecordTypeResealedIsCaught) {
  const RecordLoc& r = a_.records[2];
  EditRecord(a_, r, [](char* p) { p[4] = 5; }, true);
  ExpectRecordDamage(kA, r, "unknown record type 5");
}

TEST_F(DamageTest, StreamRecordTypeResealedIsCaught) {
  // A stream record's type in a PG's ring: never a PG's record.
  const RecordLoc& r = a_.records[2];
  EditRecord(a_, r, [](char* p) { p[4] = kRecordStream; }, true);
  ExpectRecordDamage(kA, r, "unknown record type 2");
}

TEST_F(DamageTest, StreamItemInAPgRecordIsCaughtByReplay) {
  // Entry 4's kind byte made kPgBytes (CRC resealed): the body parses (its
  // version reads as stamp 1, lpos 4), but a PG's record never holds a
  // stream item, so replay refuses it rather than skip it.
  const RecordLoc& r = a_.records[3];
  EditRecord(a_, r, [](char* p) { p[kRecordHeaderSize] = static_cast<char>(ItemKind::kPgBytes); },
             true);
  ExpectRecordDamage(kA, r,
                     "a stream item (PG bytes of stamp 1 at lpos 4) in a PG's record (body "
                     "offset 0)");
}

TEST_F(DamageTest, ItemVersionResealedIsCaughtByReplay) {
  // Entry 4's version rewritten to 1'1 (CRC resealed): the record is sound
  // but breaks the log's order, caught when it is replayed.
  const RecordLoc& r = a_.records[3];
  const size_t version_at =
      kRecordHeaderSize + 1 + VarintLength(kItemVersionSize + kPayloadSize) + 4;
  EditRecord(a_, r, [&](char* p) { EncodeFixed64(p + version_at, 1); }, true);
  ExpectRecordDamage(kA, r, "entry version 1'1 is not after 1'3 (body offset 0)");
}

TEST_F(DamageTest, RecordOfAnotherPgCopiedInIsStampMismatch) {
  // B's third record, byte for byte (valid CRC, same lap and sequence), put
  // where A's third record was.
  const RecordLoc& ra = a_.records[2];
  const RecordLoc& rb = b_.records[2];
  ASSERT_EQ(ra.size, rb.size);
  ASSERT_EQ(ra.header.seq, rb.header.seq);
  ASSERT_EQ(ra.header.lap, rb.header.lap);
  WriteLogical(a_.chunks, ra.lpos, ReadLogical(b_.chunks, rb.lpos, rb.size));
  ExpectRecordDamage(kA, ra,
                     absl::StrFormat("record belongs to PG stamp %d, not %d (a record of "
                                     "another PG)", b_.ptr.stamp, a_.ptr.stamp));
}

TEST_F(DamageTest, StaleLapRecordFromAReusedChunk) {
  // A real ring: each transaction is padded to one block (kNeverRewrite),
  // the PG keeps two chunks and trims as it goes, so lap 2 reuses the chunk
  // lap 0 was written in. Beyond lap 2's tail that chunk still holds lap 0's
  // records, CRCs intact. A pointer whose tail runs one block too far (as a
  // lost ring write under a committed pointer would leave it) brings one
  // into the committed range: only the lap check can tell.
  options_.tail_block_policy = TailBlockPolicy::kNeverRewrite;
  options_.reserve_chunks_per_pg = 2;
  ASSERT_OK(Open(options_));
  const PgId c = Pg(0x3c);
  ASSERT_OK(Create(c));
  const uint64_t per_chunk = kChunkSize / geo_.block_size;  // records per chunk
  const uint64_t last = 2 * per_chunk + per_chunk / 2;      // halfway into lap 2
  PgLayout lap0;
  for (uint64_t v = 1; v <= last; ++v) {
    Version trim = V(1, v - 2);
    ASSERT_OK(Append(c, v, v > 2 ? &trim : nullptr));
    if (v == per_chunk) {
      CloseStore();
      lap0 = Layout(c);
      ASSERT_OK(Open(options_));
    }
  }
  CloseStore();
  ASSERT_EQ(lap0.chunks.chunks.size(), 1u);
  ASSERT_EQ(lap0.ptr.tail, kChunkSize);  // lap 0 filled its chunk
  const uint32_t reused = lap0.chunks.chunks[0];
  PgLayout l = Layout(c);
  ASSERT_EQ(l.ptr.tail, last * geo_.block_size);
  ASSERT_EQ(l.chunks.base, kChunkSize);  // the ring went round once...
  ASSERT_EQ(l.chunks.chunks.size(), 2u);
  ASSERT_EQ(l.chunks.chunks[1], reused);  // ...and lap 2 is in lap 0's chunk
  // The block just past the tail: lap 0's record of entry last - 2*per_chunk + 1.
  const uint64_t stale_lpos = l.ptr.tail;
  std::string stale = ReadLogical(l.chunks, stale_lpos, geo_.block_size);
  RecordHeader h = DecodeRecordHeader(stale.data());
  ASSERT_EQ(h.lap, 0u);
  ASSERT_EQ(h.pg_stamp, l.ptr.stamp);
  ASSERT_LE(kRecordHeaderSize + h.length, stale.size());
  ASSERT_TRUE(RecordCrcMatches(std::string_view(stale.data(), kRecordHeaderSize + h.length)));
  // Before the damage the store opens and holds the last two entries.
  ASSERT_OK(Open(options_));
  auto e = store_->ReadEntries(c);
  ASSERT_OK(e);
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ(e->back().version, V(1, last));
  CloseStore();
  // The damage: the pointer's tail one record further.
  PgPointer p = l.ptr;
  p.tail += geo_.block_size;
  p.tail_seq += 1;
  DbPut(PgPointerKey(c), p.Encode());
  RecordLoc r;
  r.lpos = stale_lpos;
  r.where = ChunkPos{reused, stale_lpos % kChunkSize};
  ExpectRecordDamage(c, r,
                     "record is from lap 0, expected lap 2 (a stale record from an earlier use "
                     "of the chunk)");
}

// --- Bytes beyond the committed tail ----------------------------------------

TEST_F(DamageTest, BytesPastTheTailAreNeverRead) {
  ASSERT_EQ(a_.chunks.base, 0u);
  ASSERT_EQ(b_.chunks.base, 0u);
  // A: a perfectly valid next record (right stamp, lap and sequence, good
  // CRC) just past the tail, as an uncommitted transaction leaves it.
  RecordBodyBuilder body;
  body.AddEntry(V(1, kEntriesA + 1), "uncommitted");
  body.AddInfo("uncommitted info");
  std::string forged;
  AppendRecord(&forged, kRecordTxn, a_.ptr.stamp, LapOf(a_.ptr.tail, geo_), a_.ptr.tail_seq,
               body.body());
  WriteLogical(a_.chunks, a_.ptr.tail, forged);
  // ...and garbage after it to the end of A's chunk.
  const uint64_t garbage_at = a_.ptr.tail + forged.size();
  WriteLogical(a_.chunks, garbage_at, std::string(kChunkSize - garbage_at, '\xa5'));
  // B: garbage from its tail to the end of its chunk, including the rest of
  // the tail block.
  WriteLogical(b_.chunks, b_.ptr.tail, std::string(kChunkSize - b_.ptr.tail, '\xff'));

  ASSERT_OK(Open(options_));
  ExpectEntries(kA, kEntriesA);
  ExpectEntries(kB, kEntriesB);
  // The rings continue from their committed tails, over the junk.
  ASSERT_OK(Append(kA, kEntriesA + 1));
  ASSERT_OK(Append(kB, kEntriesB + 1));
  ExpectEntries(kA, kEntriesA + 1);
  Reopen();
  ExpectEntries(kA, kEntriesA + 1);
  ExpectEntries(kB, kEntriesB + 1);
}

// --- RocksDB values ---------------------------------------------------------

TEST_F(DamageTest, PointerValueByteFlippedIsCrcMismatch) {
  std::string v = DbGet(PgPointerKey(kA));
  v[10] ^= 0x08;  // a byte of the head
  DbPut(PgPointerKey(kA), v);
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value is damaged: CRC mismatch"});
}

TEST_F(DamageTest, PointerValueTruncatedIsRefused) {
  const std::string v = DbGet(PgPointerKey(kA));
  DbPut(PgPointerKey(kA), v.substr(0, 3));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value is truncated (3 bytes)"});
  // Cut short by one byte: the CRC no longer matches.
  DbPut(PgPointerKey(kA), v.substr(0, v.size() - 1));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value is damaged: CRC mismatch"});
  // Cut short and resealed: the fields do not add up.
  DbPut(PgPointerKey(kA), Seal(v.substr(0, v.size() - 4 - 8)));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value has the wrong length"});
}

TEST_F(DamageTest, PointerValueOfUnknownFormatIsRefused) {
  std::string v = DbGet(PgPointerKey(kA));
  std::string fields = v.substr(0, v.size() - 4);
  fields[0] = 9;
  DbPut(PgPointerKey(kA), Seal(fields));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value has unknown format 9"});
}

TEST_F(DamageTest, ChunkListValueDamagedIsRefused) {
  const std::string v = DbGet(PgChunksKey(kB));
  std::string flipped = v;
  flipped[3] ^= 0x80;
  DbPut(PgChunksKey(kB), flipped);
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.7: PG chunk list value is damaged: CRC mismatch"});
  // A count that does not match the chunks that follow (resealed).
  std::string fields = v.substr(0, v.size() - 4);
  EncodeFixed32(fields.data() + 9, 3);
  DbPut(PgChunksKey(kB), Seal(fields));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.7: PG chunk list value has the wrong length"});
}

TEST_F(DamageTest, PointerWithoutChunkListIsRefused) {
  DbDelete(PgChunksKey(kA));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: has a pointer but no chunk list"});
}

TEST_F(DamageTest, ChunkListWithoutPointerIsRefused) {
  DbDelete(PgPointerKey(kB));
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.7: has a chunk list but no pointer"});
}

TEST_F(DamageTest, PointerHeadPastTailIsRefused) {
  PgPointer p = a_.ptr;
  p.head = p.tail + 4096;
  DbPut(PgPointerKey(kA), p.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {absl::StrFormat("PG 1.2a: PG pointer has head %d past tail %d", p.head, p.tail)});
}

TEST_F(DamageTest, PointerTailOutsideItsChunksIsRefused) {
  PgPointer p = a_.ptr;
  p.tail = RingEnd(a_.chunks, geo_) + 100;
  DbPut(PgPointerKey(kA), p.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {absl::StrFormat("PG 1.2a: pointer's homed bytes [%d, %d) lie outside its chunks "
                                 "[%d, %d)",
                                 p.head, p.tail, a_.chunks.base, RingEnd(a_.chunks, geo_))});
}

TEST_F(DamageTest, PointerStampNeverIssuedIsRefused) {
  PgPointer p = a_.ptr;
  p.stamp = 99;
  DbPut(PgPointerKey(kA), p.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: stamp 99 was never issued (next is 3)"});
}

TEST_F(DamageTest, StampSharedByTwoPgsIsRefused) {
  // Stamps are never reused, so two pointers with one stamp are damage even
  // when no record shows it yet: an empty PG given A's stamp would accept
  // A's stale records (left in chunks A gave back) as its own.
  ASSERT_OK(Open(options_));
  const PgId c = Pg(0x3c);
  ASSERT_OK(Create(c));
  CloseStore();
  PgLayout lc = Layout(c);
  ASSERT_TRUE(lc.records.empty());
  PgPointer p = lc.ptr;
  p.stamp = a_.ptr.stamp;
  DbPut(PgPointerKey(c), p.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {absl::StrFormat("PG 1.2a and PG 1.3c both have stamp %d", a_.ptr.stamp)});
}

TEST_F(DamageTest, ChunkClaimedByTwoPgsIsRefused) {
  PgChunkList c = b_.chunks;
  const uint32_t shared = a_.chunks.chunks[0];
  c.chunks.push_back(shared);
  DbPut(PgChunksKey(kB), c.Encode());
  absl::Status s;
  ExpectRefused(absl::StatusCode::kDataLoss, {}, &s);
  // PGs are claimed in PG order: 1.7's list before 1.2a's.
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(absl::StrFormat("PG 1.2a: chunk %d is claimed by PG 1.7 (position %d) and "
                                        "PG 1.2a (position 0)",
                                        shared, c.chunks.size() - 1)));
}

TEST_F(DamageTest, ChunkListedTwiceByOnePgIsRefused) {
  PgChunkList c = a_.chunks;
  c.chunks.push_back(c.chunks[0]);
  DbPut(PgChunksKey(kA), c.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {absl::StrFormat("PG 1.2a: chunk %d appears twice in the chunk list (positions 0 "
                                 "and %d)",
                                 c.chunks[0], c.chunks.size() - 1)});
}

TEST_F(DamageTest, ChunkNumberOutOfRangeIsRefused) {
  PgChunkList c = a_.chunks;
  c.chunks[0] = 5000;
  DbPut(PgChunksKey(kA), c.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {absl::StrFormat("PG 1.2a: chunk 5000 is out of range (the partition has %d "
                                 "chunks)", geo_.chunk_count)});
}

TEST_F(DamageTest, MalformedPgKeyIsRefused) {
  DbPut(std::string(kPgPointerPrefix) + "short", a_.ptr.Encode());
  ExpectRefused(absl::StatusCode::kDataLoss, {"malformed pointer key"});
}

TEST_F(DamageTest, StoreMetaDamagedIsRefused) {
  std::string v = DbGet(std::string(kMetaKey));
  v[20] ^= 0x10;  // a byte of the UUID
  DbPut(std::string(kMetaKey), v);
  ExpectRefused(absl::StatusCode::kDataLoss,
                {"RocksDB at " + db_path_,
                 "store metadata (pgring.meta) value is damaged: CRC mismatch"});
}

TEST_F(DamageTest, StoreMetaDisagreeingWithTheLabelIsRefused) {
  auto m = StoreMeta::Decode(DbGet(std::string(kMetaKey)));
  ASSERT_OK(m);
  m->chunk_count -= 1;
  DbPut(std::string(kMetaKey), m->Encode());
  ExpectRefused(absl::StatusCode::kDataLoss,
                {"disagree about the store's geometry",
                 absl::StrFormat("chunk_count %d in the label, %d in the metadata",
                                 m->chunk_count + 1, m->chunk_count)});
}

TEST_F(DamageTest, StoreMetaNextStampRolledBackIsRefused) {
  // A stale pgring.meta whose next stamp is behind the PGs' stamps.
  auto m = StoreMeta::Decode(DbGet(std::string(kMetaKey)));
  ASSERT_OK(m);
  m->next_pg_stamp = 2;
  DbPut(std::string(kMetaKey), m->Encode());
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.7: stamp 2 was never issued (next is 2)"});
}

TEST_F(DamageTest, StoreMetaNextStampZeroIsRefused) {
  // 0 is not "unknown": every stamp is at or past it, so no PG's was issued
  // (a store that went on would issue stamps its PGs already hold).
  auto m = StoreMeta::Decode(DbGet(std::string(kMetaKey)));
  ASSERT_OK(m);
  m->next_pg_stamp = 0;
  DbPut(std::string(kMetaKey), m->Encode());
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.7: stamp 2 was never issued (next is 0)"});
}

TEST_F(DamageTest, StoreMetaMissingIsRefused) {
  DbDelete(std::string(kMetaKey));
  ExpectRefused(absl::StatusCode::kFailedPrecondition,
                {"RocksDB at " + db_path_, "holds no pgring store"});
}

// --- The label --------------------------------------------------------------

TEST_F(DamageTest, ZeroedLabelIsNoLabel) {
  mem()->WriteRaw(0, std::string(kLabelRegionSize, '\0'));
  ExpectRefused(absl::StatusCode::kFailedPrecondition, {"has no pgring label"});
}

TEST_F(DamageTest, LabelByteFlippedIsCrcMismatch) {
  FlipByte(20);  // a byte of the UUID
  ExpectRefused(absl::StatusCode::kDataLoss, {"pgring label is damaged: CRC mismatch"});
  FlipByte(20);
  // Every encoded byte after the magic, one at a time (the magic itself
  // reads as "no label"; see ZeroedLabelIsNoLabel).
  for (uint64_t i = sizeof(kLabelMagic); i < kLabelEncodedSize; ++i) {
    FlipByte(i, 0x10);
    absl::Status s = Open(options_);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "byte " << i << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("CRC mismatch")) << "byte " << i;
    store_.reset();
    FlipByte(i, 0x10);
  }
  ASSERT_OK(Open(options_));
  ExpectEntries(kA, kEntriesA);
}

TEST_F(DamageTest, RocksDbOfAnotherStoreIsRefused) {
  // A second store (its own partition and RocksDB); then open this
  // partition with that store's RocksDB.
  auto other_dev = std::make_shared<MemoryBlockDevice>(kDeviceSize);
  const std::string other_db = dir_.Join("other-db");
  OpenHooks h;
  h.device = other_dev;
  ASSERT_OK(MkfsWithHooks("mem", MetadataLocation::OwnDb(other_db), DefaultMkfs(), h));
  auto label = Label::Decode(mem()->ReadRaw(0, kLabelEncodedSize));
  ASSERT_OK(label);
  db_path_ = other_db;
  auto other_meta = StoreMeta::Decode(DbGet(std::string(kMetaKey)));
  ASSERT_OK(other_meta);
  ASSERT_FALSE(label->uuid == other_meta->uuid);
  ExpectRefused(absl::StatusCode::kFailedPrecondition,
                {label->uuid.ToString(), other_meta->uuid.ToString(), "RocksDB at " + other_db,
                 "do not belong together"});
}

TEST_F(DamageTest, DeviceSmallerThanTheLabelSaysIsRefused) {
  constexpr uint64_t kSmall = kDeviceSize / 2;
  auto small = std::make_shared<MemoryBlockDevice>(kSmall);
  small->WriteRaw(0, mem()->ReadRaw(0, kSmall));
  device_ = small;
  ExpectRefused(absl::StatusCode::kFailedPrecondition,
                {absl::StrFormat("is %d bytes but its label says the store spans %d bytes",
                                 kSmall, kDeviceSize)});
}

// --- RecoveryPolicy::kMarkDamaged -------------------------------------------

TEST_F(DamageTest, MarkDamagedIsolatesTheDamagedPg) {
  const RecordLoc& r = a_.records[3];
  EditRecord(a_, r, [&](char* p) { p[kRecordHeaderSize + 5] ^= 0x01; }, false);
  ExpectRecordDamage(kA, r, "CRC mismatch");

  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ASSERT_OK(Open(options_));
  // The healthy PG: reads and appends.
  ExpectEntries(kB, kEntriesB);
  ASSERT_OK(Append(kB, kEntriesB + 1));
  ExpectEntries(kB, kEntriesB + 1);
  auto sb = store_->GetPgStats(kB);
  ASSERT_OK(sb);
  EXPECT_FALSE(sb->damaged);
  // The damaged PG: listed, marked, and every operation is kDataLoss naming
  // the damage.
  EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{kB, kA}));  // sorted: 1.7 < 1.2a
  auto sa = store_->GetPgStats(kA);
  ASSERT_OK(sa);
  EXPECT_TRUE(sa->damaged);
  EXPECT_EQ(sa->chunks, 1u);
  const std::string what = At(kA, r) + "CRC mismatch";
  for (absl::Status s : {store_->ReadEntries(kA).status(), store_->ReadInfo(kA).status(),
                         store_->ReadDups(kA).status(), Append(kA, kEntriesA + 1)}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(what));
  }
  EXPECT_THAT(std::string(Append(kA, kEntriesA + 1).message()), HasSubstr("can only be removed"));
  // A transaction touching both PGs is refused whole.
  {
    Transaction t;
    t.AppendEntry(kB, V(1, kEntriesB + 2), Payload(kB, kEntriesB + 2));
    t.AppendEntry(kA, V(1, kEntriesA + 1), Payload(kA, kEntriesA + 1));
    EXPECT_CODE(store_->Commit(std::move(t)), kDataLoss);
    ExpectEntries(kB, kEntriesB + 1);
  }
  // Removing it gives its chunks back.
  const uint64_t free_before = store_->GetStoreStats().free_chunks;
  Transaction rm;
  rm.RemovePg(kA);
  ASSERT_OK(store_->Commit(std::move(rm)));
  EXPECT_EQ(store_->GetStoreStats().free_chunks, free_before + sa->chunks);
  EXPECT_CODE(store_->ReadEntries(kA), kNotFound);
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{kB});
  // The store is clean again: kRefuse opens it.
  CloseStore();
  options_.recovery_policy = RecoveryPolicy::kRefuse;
  ASSERT_OK(Open(options_));
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{kB});
  ExpectEntries(kB, kEntriesB + 1);
  EXPECT_EQ(store_->GetStoreStats().free_chunks, free_before + sa->chunks);
  // A new PG under the old name starts empty and works.
  ASSERT_OK(Create(kA));
  ASSERT_OK(Append(kA, 1));
  Reopen();
  ExpectEntries(kA, 1);
}

TEST_F(DamageTest, MarkDamagedStillRefusesMetadataDamage) {
  // kMarkDamaged covers damaged logs; a store whose RocksDB values cannot be
  // decoded is still refused whole.
  std::string v = DbGet(PgPointerKey(kA));
  v[10] ^= 0x08;
  DbPut(PgPointerKey(kA), v);
  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value is damaged"});
}

TEST_F(DamageTest, MarkDamagedCoversAPointerOutsideItsChunks) {
  PgPointer p = a_.ptr;
  p.tail = RingEnd(a_.chunks, geo_) + 100;
  DbPut(PgPointerKey(kA), p.Encode());
  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->GetPgStats(kA)->damaged);
  EXPECT_CODE(store_->ReadEntries(kA), kDataLoss);
  ExpectEntries(kB, kEntriesB);
  Transaction rm;
  rm.RemovePg(kA);
  ASSERT_OK(store_->Commit(std::move(rm)));
  CloseStore();
  options_.recovery_policy = RecoveryPolicy::kRefuse;
  ASSERT_OK(Open(options_));
  ExpectEntries(kB, kEntriesB);
}

// --- The check at open (Options::verify_on_open) ---------------------------
//
// The checks pgring::Verify runs, before Open writes anything: a store they
// find an error in is refused with kDataLoss naming it as Verify's report
// does; a healthy store opens as it does without them.

TEST_F(DamageTest, VerifyOnOpenPassesAnUndamagedStore) {
  uint64_t last = kEntriesA;
  for (VerifyOnOpen v : {VerifyOnOpen::kShallow, VerifyOnOpen::kDeep}) {
    SCOPED_TRACE(static_cast<int>(v));
    options_.verify_on_open = v;
    ASSERT_OK(Open(options_));
    ExpectEntries(kA, last);
    ExpectEntries(kB, kEntriesB);
    ASSERT_OK(Append(kA, ++last));
    CloseStore();
    ASSERT_OK(Open(options_));
    ExpectEntries(kA, last);
    CloseStore();
  }
}

TEST_F(DamageTest, VerifyOnOpenDeepNamesEveryDamagedRecordItFinds) {
  // A record of each PG, its body flipped.
  const RecordLoc& ra = a_.records[2];
  const RecordLoc& rb = b_.records[4];
  EditRecord(a_, ra, [&](char* p) { p[kRecordHeaderSize + ra.header.length / 2] ^= 0x20; }, false);
  EditRecord(b_, rb, [&](char* p) { p[kRecordHeaderSize + rb.header.length / 2] ^= 0x20; }, false);
  const auto line = [](const PgId& pg, const RecordLoc& r) {
    return absl::StrFormat("PG %s: chunk %d, offset %d (lpos %d): record-crc: CRC mismatch",
                           pg.ToString(), r.where.chunk, r.where.offset, r.lpos);
  };
  options_.verify_on_open = VerifyOnOpen::kDeep;
  ExpectRefused(absl::StatusCode::kDataLoss,
                {"the partition: the deep check at open (Options::verify_on_open) found 2 errors, "
                 "so the store was not opened and nothing was written: ",
                 line(kA, ra), line(kB, rb)});
  // The shallow check reads no record: recovery refuses the store as it
  // does with no check, at the first damaged record it meets.
  for (VerifyOnOpen v : {VerifyOnOpen::kShallow, VerifyOnOpen::kOff}) {
    SCOPED_TRACE(static_cast<int>(v));
    options_.verify_on_open = v;
    absl::Status s;
    ExpectRefused(absl::StatusCode::kDataLoss, {"CRC mismatch"}, &s);
    EXPECT_THAT(std::string(s.message()), AnyOf(HasSubstr(At(kA, ra)), HasSubstr(At(kB, rb))));
    EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("verify_on_open")));
  }
}

TEST_F(DamageTest, VerifyOnOpenShallowNamesADamagedPointer) {
  std::string v = DbGet(PgPointerKey(kA));
  v[10] ^= 0x08;
  DbPut(PgPointerKey(kA), v);
  options_.verify_on_open = VerifyOnOpen::kShallow;
  ExpectRefused(absl::StatusCode::kDataLoss,
                {"the shallow check at open (Options::verify_on_open) found 1 error,",
                 "PG 1.2a: pointer-damaged: RocksDB key pgring.ptr: PG pointer value is damaged: "
                 "CRC mismatch"});
  // Without the check, open refuses it all the same, in its own words.
  options_.verify_on_open = VerifyOnOpen::kOff;
  ExpectRefused(absl::StatusCode::kDataLoss, {"PG 1.2a: PG pointer value is damaged: CRC mismatch"});
}

TEST_F(DamageTest, VerifyOnOpenRefusesAChunkListLongerThanItsRing) {
  // A free chunk added to the end of A's list, past the chunk that holds its
  // tail: open takes the list as room to grow, the checks as an error
  // (chunk-beyond-tail, which `repair` gives back).
  uint32_t extra = 0;
  while (extra == a_.chunks.chunks[0] || extra == b_.chunks.chunks[0]) ++extra;
  ASSERT_LT(extra, geo_.chunk_count);
  PgChunkList c = a_.chunks;
  c.chunks.push_back(extra);
  DbPut(PgChunksKey(kA), c.Encode());
  // Open with no check: as before.
  ASSERT_OK(Open(options_));
  ExpectEntries(kA, kEntriesA);
  ExpectEntries(kB, kEntriesB);
  CloseStore();
  for (VerifyOnOpen v : {VerifyOnOpen::kShallow, VerifyOnOpen::kDeep}) {
    SCOPED_TRACE(static_cast<int>(v));
    options_.verify_on_open = v;
    ExpectRefused(absl::StatusCode::kDataLoss,
                  {"check at open (Options::verify_on_open) found 1 error,",
                   absl::StrFormat("PG 1.2a: chunk %d: chunk-beyond-tail: the chunk list holds 1 "
                                   "chunk(s) past the one holding the tail (chunk(s) %d)",
                                   extra, extra)});
  }
}

}  // namespace
}  // namespace pgring::testing
