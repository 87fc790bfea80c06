// fsck on damaged stores, LevelDB style: one test per kind of damage. Each
// builds the standard store through the public API, damages exactly one thing
// (a byte of a record, of the label, of a RocksDB value; two PGs claiming one
// chunk; ...), runs `pgring-tool fsck [--deep] --format json` as a subprocess,
// and checks that fsck names exactly that damage — the kind, the PG, the
// chunk, the offset, the lpos — and nothing else, with exit status 1.
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "format/record.h"
#include "format/metadata_keys.h"
#include "format/rocksdb_backend_keys.h"
#include "tool_test_util.h"
#include "util/coding.h"

namespace pgring::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Fsck {
  int exit_code;
  nlohmann::json j;
  std::string text;
};

class ToolFsckTest : public ::testing::Test {
 protected:
  void SetUp() override { store_.Populate(); }

  Fsck Run(bool deep) {
    std::vector<std::string> args = {"fsck", "--format", "json"};
    if (deep) args.push_back("--deep");
    ToolRun r = store_.Run(args);
    EXPECT_EQ(r.err, "");
    Fsck f{r.exit_code, r.json(), ""};
    args.erase(args.begin() + 1, args.begin() + 3);
    ToolRun t = store_.Run(args);
    EXPECT_EQ(t.exit_code, r.exit_code);
    f.text = t.out;
    return f;
  }

  // The record of `pg` at `lpos`: header and body.
  std::pair<RecordHeader, std::string> ReadRecord(const PgId& pg, uint64_t lpos) {
    const uint64_t off = store_.DeviceOffset(pg, lpos);
    std::string h = store_.ReadDevice(off, kRecordHeaderSize);
    RecordHeader hdr = DecodeRecordHeader(h.data());
    return {hdr, store_.ReadDevice(off + kRecordHeaderSize, hdr.length)};
  }
  // Writes a record with a valid CRC (same chunk: the tests keep it small).
  void WriteRecord(const PgId& pg, uint64_t lpos, uint32_t stamp, uint32_t lap, uint64_t seq,
                   const std::string& body) {
    std::string rec;
    AppendRecord(&rec, kRecordTxn, stamp, lap, seq, body);
    store_.WriteDevice(store_.DeviceOffset(pg, lpos), rec);
  }
  void FlipDbValueByte(const std::string& key, size_t at) {
    auto c = store_.DbContents();
    ASSERT_TRUE(c.count(key)) << key;
    std::string v = c[key];
    v[at] = static_cast<char>(v[at] ^ 0x40);
    store_.PutDbValue(key, v);
  }

  ToolStore store_;
};

TEST_F(ToolFsckTest, CleanStoreIsClean) {
  for (bool deep : {false, true}) {
    Fsck f = Run(deep);
    EXPECT_EQ(f.exit_code, 0) << f.text;
    EXPECT_THAT(ProblemKinds(f.j), IsEmpty());
    EXPECT_THAT(NoteKinds(f.j), IsEmpty());
    EXPECT_EQ(f.j["summary"]["owned_chunks"].get<uint64_t>() +
                  f.j["summary"]["free_chunks"].get<uint64_t>(),
              f.j["summary"]["chunks"].get<uint64_t>());
  }
}

TEST_F(ToolFsckTest, FlippedByteInARecordIsACrcMismatchThere) {
  // PG 1.0's second record starts at lpos 214 (see the golden log output).
  const uint64_t lpos = 214;
  store_.FlipDeviceByte(store_.DeviceOffset(PgA(), lpos + 40));
  Fsck shallow = Run(false);
  EXPECT_EQ(shallow.exit_code, 0) << "shallow fsck does not read records";
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("record-crc@1.0"));
  const auto& p = f.j["problems"][0];
  EXPECT_EQ(p["chunk"], store_.Chunks(PgA()).chunks[0]);
  EXPECT_EQ(p["offset"], lpos);
  EXPECT_EQ(p["lpos"], lpos);
  EXPECT_FALSE(p["fixable"].get<bool>());
  EXPECT_THAT(f.text, HasSubstr(absl::StrFormat(
                          "PG 1.0: chunk %u, offset 214 (lpos 214): record-crc: CRC mismatch",
                          store_.Chunks(PgA()).chunks[0])));
  EXPECT_THAT(f.text, HasSubstr("result: 1 problem (0 fixable by repair)"));
}

TEST_F(ToolFsckTest, DamagedLengthRunsPastTheTail) {
  const uint64_t off = store_.DeviceOffset(PgA(), 214);
  store_.WriteDevice(off + 7, std::string(1, '\x7f'));  // length's top byte
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("record-length@1.0"));
  EXPECT_EQ(f.j["problems"][0]["lpos"], 214);
}

TEST_F(ToolFsckTest, RecordOfAnotherPg) {
  auto [h, body] = ReadRecord(PgA(), 214);
  WriteRecord(PgA(), 214, /*stamp=*/2, h.lap, h.seq, body);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("record-pg@1.0"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(), HasSubstr("stamp 2, not 1"));
}

TEST_F(ToolFsckTest, StaleLap) {
  auto [h, body] = ReadRecord(PgA(), 214);
  WriteRecord(PgA(), 214, h.pg_stamp, h.lap + 7, h.seq, body);
  Fsck f = Run(true);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("record-lap@1.0"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(), HasSubstr("lap 7, expected lap 0"));
}

TEST_F(ToolFsckTest, SequenceGap) {
  auto [h, body] = ReadRecord(PgA(), 214);
  WriteRecord(PgA(), 214, h.pg_stamp, h.lap, h.seq + 1, body);
  Fsck f = Run(true);
  // The gap, and therefore the last sequence does not match the pointer's.
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("record-seq@1.0", "tail-seq@1.0"));
  EXPECT_EQ(f.j["problems"][0]["lpos"], 214);
}

TEST_F(ToolFsckTest, EntryVersionsOutOfOrder) {
  auto [h, body] = ReadRecord(PgA(), 214);
  // The record's first item is entry 1'11: make it 1'5 (not after 1'10).
  ASSERT_EQ(static_cast<uint8_t>(body[0]), 1);
  ASSERT_EQ(DecodeFixed64(body.data() + 6), 11u);
  EncodeFixed64(body.data() + 6, 5);
  WriteRecord(PgA(), 214, h.pg_stamp, h.lap, h.seq, body);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("entry-order@1.0"));
  EXPECT_EQ(f.j["problems"][0]["lpos"], 214 + 24);  // the item itself
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(), HasSubstr("1'5 is not after 1'10"));
}

TEST_F(ToolFsckTest, FlippedByteInTheLabel) {
  store_.FlipDeviceByte(40);  // partition_size
  for (bool deep : {false, true}) {
    Fsck f = Run(deep);
    EXPECT_EQ(f.exit_code, 1);
    ASSERT_THAT(ProblemKinds(f.j), ElementsAre("label-damaged")) << f.text;
    EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(), HasSubstr("CRC mismatch"));
    EXPECT_TRUE(f.j["problems"][0]["fixable"].get<bool>());
    EXPECT_EQ(f.j["problems"][0]["offset"], 0);
  }
}

TEST_F(ToolFsckTest, FlippedByteInAPointerValue) {
  FlipDbValueByte(PgPointerKey(PgD()), 10);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("pointer-damaged@1.2"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(), HasSubstr("CRC mismatch"));
  EXPECT_THAT(f.text, HasSubstr("not checked: the records of PG 1.2"));
}

TEST_F(ToolFsckTest, FlippedByteInAChunkListValue) {
  FlipDbValueByte(PgChunksKey(PgB()), 3);
  Fsck f = Run(true);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("chunk-list-damaged@1.1"));
  // Its chunks are no longer counted as owned: they would look free.
  EXPECT_EQ(f.j["summary"]["owned_chunks"], 2);
}

TEST_F(ToolFsckTest, FlippedByteInTheStoreMetadata) {
  FlipDbValueByte(std::string(kMetaKey), 8);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("meta-damaged"));
}

TEST_F(ToolFsckTest, ImpossibleGeometryUnderAValidCrcDoesNotCrash) {
  store_.FlipDeviceByte(40);  // the label: fsck must fall back on pgring.meta...
  auto m = StoreMeta::Decode(store_.DbContents()[std::string(kMetaKey)]);
  ASSERT_TRUE(m.ok());
  m->chunk_size = 0;  // ...which says something impossible, with a valid CRC
  store_.PutDbValue(std::string(kMetaKey), m->Encode());
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_THAT(ProblemKinds(f.j), ElementsAre("label-damaged", "meta-damaged"));
  EXPECT_THAT(f.text, HasSubstr("not checked: the PGs: neither the label nor pgring.meta"));
  EXPECT_FALSE(f.j["problems"][0]["fixable"].get<bool>()) << "nothing sane to rewrite it from";
  for (const auto& c : std::vector<std::vector<std::string>>{{"repair"}, {"list-pgs"}, {"stats"}}) {
    ToolRun r = store_.Run(c);
    EXPECT_NE(r.exit_code, 0);
  }
}

TEST_F(ToolFsckTest, TwoPgsClaimTheSameChunk) {
  PgChunkList d = store_.Chunks(PgD());
  const uint32_t stolen = store_.Chunks(PgA()).chunks[0];
  d.chunks[0] = stolen;
  store_.SetChunks(PgD(), d);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("chunk-owned-twice@1.2"));
  const auto& p = f.j["problems"][0];
  EXPECT_EQ(p["chunk"], stolen);
  EXPECT_THAT(p["message"].get<std::string>(),
              HasSubstr(absl::StrFormat("chunk %u is claimed by PG 1.0 (position 0) and PG 1.2 "
                                        "(position 0)",
                                        stolen)));
  EXPECT_THAT(f.text, HasSubstr("not checked: the records of PG 1.0"));
  EXPECT_THAT(f.text, HasSubstr("not checked: the records of PG 1.2"));
}

TEST_F(ToolFsckTest, ChunkTwiceInOneList) {
  PgChunkList b = store_.Chunks(PgB());
  b.chunks[1] = b.chunks[0];
  store_.SetChunks(PgB(), b);
  Fsck f = Run(false);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("chunk-owned-twice@1.1"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(), HasSubstr("appears twice"));
}

TEST_F(ToolFsckTest, ChunkOutOfRange) {
  PgChunkList d = store_.Chunks(PgD());
  d.chunks[0] = 4000;
  store_.SetChunks(PgD(), d);
  Fsck f = Run(true);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("chunk-out-of-range@1.2"));
  EXPECT_EQ(f.j["problems"][0]["chunk"], 4000);
}

TEST_F(ToolFsckTest, ChunkPastTheTailIsFixable) {
  PgChunkList a = store_.Chunks(PgA());
  a.chunks.push_back(30);  // a free chunk
  store_.SetChunks(PgA(), a);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("chunk-beyond-tail@1.0"));
  EXPECT_EQ(f.j["problems"][0]["chunk"], 30);
  EXPECT_TRUE(f.j["problems"][0]["fixable"].get<bool>());
  EXPECT_EQ(f.j["fixable"], 1);
}

TEST_F(ToolFsckTest, PointerOutsideItsChunks) {
  PgPointer p = store_.Pointer(PgA());
  p.tail = 3 * ToolStore::kChunkSize;
  store_.PutDbValue(PgPointerKey(PgA()), p.Encode());
  Fsck f = Run(true);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("pointer-outside-ring@1.0"));
}

TEST_F(ToolFsckTest, MissingKeys) {
  store_.DeleteDbKey(PgChunksKey(PgA()));
  store_.DeleteDbKey(PgPointerKey(PgD()));
  Fsck f = Run(true);
  ASSERT_THAT(ProblemKinds(f.j),
              ElementsAre("pointer-without-chunk-list@1.0", "chunk-list-without-pointer@1.2"));
}

TEST_F(ToolFsckTest, StampsNeverIssuedOrShared) {
  PgPointer p = store_.Pointer(PgC());
  p.stamp = 1;  // PG 1.0's
  store_.PutDbValue(PgPointerKey(PgC()), p.Encode());
  PgPointer d = store_.Pointer(PgD());
  d.stamp = 99;
  store_.PutDbValue(PgPointerKey(PgD()), d.Encode());
  Fsck f = Run(false);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("stamp-invalid@1.2", "stamp-shared@2.1f"));
}

TEST_F(ToolFsckTest, UnknownKeyUnderPgringPrefix) {
  store_.PutDbValue("pgring.bogus", "x");
  Fsck f = Run(false);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("key-malformed"));
}

TEST_F(ToolFsckTest, StreamKeysAreRead) {
  // The keys of a stream that never held anything: both, no chunks.
  store_.PutDbValue(std::string(kStreamPointerKey), StreamPointer{0, 0, 1}.Encode());
  store_.PutDbValue(std::string(kStreamChunksKey), PgChunkList{}.Encode());
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 0) << f.text;
  EXPECT_THAT(ProblemKinds(f.j), IsEmpty());
  EXPECT_EQ(f.j["summary"]["stream"]["chunks"], 0);
  // A damaged stream pointer is the stream's problem, named as such.
  FlipDbValueByte(std::string(kStreamPointerKey), 1);
  f = Run(false);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("stream-pointer-damaged"));
  EXPECT_TRUE(f.j["problems"][0]["stream"].get<bool>());
  EXPECT_THAT(f.text,
              HasSubstr("log stream: stream-pointer-damaged: RocksDB key pgring.stream.ptr"));
}

TEST_F(ToolFsckTest, UncommittedBytesPastTheTailAreANote) {
  const PgPointer p = store_.Pointer(PgA());
  store_.WriteDevice(store_.DeviceOffset(PgA(), p.tail), "garbage of a lost transaction");
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 0) << f.text;
  EXPECT_THAT(ProblemKinds(f.j), IsEmpty());
  ASSERT_THAT(NoteKinds(f.j), ElementsAre("past-tail@1.0"));
  EXPECT_EQ(f.j["notes"][0]["lpos"], p.tail);
}

TEST_F(ToolFsckTest, UncommittedRecordPastTheTailIsANote) {
  const PgPointer p = store_.Pointer(PgA());
  RecordBodyBuilder b;
  b.AddEntry({1, 21}, "never committed");
  WriteRecord(PgA(), p.tail, p.stamp, 0, p.tail_seq, b.body());
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 0);
  ASSERT_THAT(NoteKinds(f.j), ElementsAre("past-tail@1.0"));
  EXPECT_THAT(f.j["notes"][0]["message"].get<std::string>(), HasSubstr("1 uncommitted record(s)"));
}

TEST_F(ToolFsckTest, EveryProblemIsReportedNotJustTheFirst) {
  store_.FlipDeviceByte(store_.DeviceOffset(PgA(), 214 + 40));
  FlipDbValueByte(PgPointerKey(PgD()), 10);
  store_.FlipDeviceByte(33);  // the label
  PgChunkList b = store_.Chunks(PgB());
  b.chunks.push_back(29);
  store_.SetChunks(PgB(), b);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_THAT(ProblemKinds(f.j), ElementsAre("label-damaged", "record-crc@1.0",
                                             "chunk-beyond-tail@1.1", "pointer-damaged@1.2"));
  EXPECT_THAT(f.text, HasSubstr("result: 4 problems (2 fixable by repair)"));
}

TEST_F(ToolFsckTest, PartitionOfAnotherStore) {
  ToolStore other;
  ToolRun r =
      RunTool({"--dev", other.dev(), "--db", store_.db(), "fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  EXPECT_THAT(ProblemKinds(j), ElementsAre("uuid-mismatch"));
  EXPECT_THAT(j["not_checked"][0].get<std::string>(), HasSubstr("not this RocksDB's"));
}

TEST_F(ToolFsckTest, LabelAndMetadataDisagreeAboutTheGeometry) {
  auto m = StoreMeta::Decode(store_.DbContents()[std::string(kMetaKey)]);
  ASSERT_TRUE(m.ok());
  m->chunk_count -= 1;  // still a geometry of its own, but not the label's
  store_.PutDbValue(std::string(kMetaKey), m->Encode());
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("geometry-mismatch"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(),
              HasSubstr(absl::StrFormat("chunk_count %d in the label, %d in the metadata",
                                        m->chunk_count + 1, m->chunk_count)));
  EXPECT_THAT(f.j["not_checked"][0].get<std::string>(), HasSubstr("disagree about the geometry"));
}

TEST_F(ToolFsckTest, TruncatedPartition) {
  ASSERT_EQ(::truncate(store_.dev().c_str(), 1 << 20), 0);
  Fsck f = Run(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("partition-truncated"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(),
              HasSubstr("the device is 1048576 bytes but the store spans 2097152"));
}

TEST_F(ToolFsckTest, TruncatedPartitionCutsAPgsChunk) {
  // PG 1.1 owns chunks 2 and 1, PG 1.2 chunk 3 (see the golden outputs): cut
  // the partition inside chunk 2.
  ASSERT_EQ(::truncate(store_.dev().c_str(), 4096 + 2 * ToolStore::kChunkSize + 4096), 0);
  Fsck f = Run(true);
  ASSERT_THAT(ProblemKinds(f.j), ElementsAre("partition-truncated"));
  EXPECT_THAT(f.j["problems"][0]["message"].get<std::string>(),
              HasSubstr("PG(s) 1.1, 1.2 own chunks there"));
  EXPECT_THAT(f.text, HasSubstr("not checked: the records of PG 1.1"));
}

// The RocksDB backend: its keys checked shallowly.
class ToolFsckRocksDbTest : public ::testing::Test {
 protected:
  void SetUp() override { store_.Populate(); }
  ToolStore store_{Backend::kRocksDb};
};

TEST_F(ToolFsckRocksDbTest, Clean) {
  ToolRun r = store_.Run({"fsck", "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(ProblemKinds(r.json()), IsEmpty());
  EXPECT_EQ(r.json()["summary"]["entries"], 179);
}

TEST_F(ToolFsckRocksDbTest, DamagedStateValue) {
  const std::string key = PgLogKeyPrefix(PgD()) + std::string(kStateKeyName);
  auto c = store_.DbContents();
  ASSERT_TRUE(c.count(key));
  std::string v = c[key];
  v[1] = static_cast<char>(v[1] ^ 1);
  store_.PutDbValue(key, v);
  ToolRun r = store_.Run({"fsck", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(ProblemKinds(r.json()), ElementsAre("rdb-state-damaged@1.2"));
}

TEST_F(ToolFsckRocksDbTest, MissingStateAndMalformedKey) {
  store_.DeleteDbKey(PgLogKeyPrefix(PgA()) + std::string(kStateKeyName));
  store_.PutDbValue(PgLogKeyPrefix(PgD()) + "0000000001.0000000000000000000x", "y");
  ToolRun r = store_.Run({"fsck", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(ProblemKinds(r.json()),
              ElementsAre("rdb-state-missing@1.0", "rdb-key-malformed@1.2"));
}

}  // namespace
}  // namespace pgring::testing
