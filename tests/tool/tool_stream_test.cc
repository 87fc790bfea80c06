// pgring-tool on stream-layout stores (docs/DESIGN.md, "The log stream"):
// stores written through the library with LogLayout::kStream and a small
// stream, so that some PGs have bytes only in the stream and some have homed
// blocks. Every command reads them as the store reads them (log, dups, info,
// list-pgs, stats, export against the library's own reads; golden text);
// fsck --deep checks every stream record and every PG's bytes in the stream,
// naming the stream lpos, chunk and offset of what is wrong; layout draws the
// stream's chunks; import, surgery and repair keep the store in its layout.
#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "check/stream_view.h"
#include "format/record.h"
#include "format/metadata_keys.h"
#include "log/ring_layout.h"
#include "tool_test_util.h"

namespace pgring::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string Hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += absl::StrFormat("%02x", c);
  return out;
}

class ToolStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { store_.PopulateStream(); }

  // fsck [--deep] --format json, and the same in text.
  struct Fsck {
    int exit_code;
    nlohmann::json j;
    std::string text;
  };
  Fsck RunFsck(bool deep) {
    std::vector<std::string> args = {"fsck", "--format", "json"};
    if (deep) args.push_back("--deep");
    ToolRun r = store_.Run(args);
    EXPECT_EQ(r.err, "");
    Fsck f{r.exit_code, r.json(), ""};
    args.erase(args.begin() + 1, args.begin() + 3);
    f.text = store_.Run(args).out;
    return f;
  }
  // The PG as the library reads it (its records past its pointer's tail
  // included).
  PgStats LibraryStats(const PgId& pg) {
    Options o = StreamLayoutOptions();
    o.read_only = true;
    auto store = store_.Open(o);
    EXPECT_NE(store, nullptr);
    if (store == nullptr) return {};
    auto st = store->GetPgStats(pg);
    EXPECT_TRUE(st.ok()) << st.status();
    EXPECT_TRUE(store->Close().ok());
    return st.ok() ? *st : PgStats{};
  }
  void Golden(const std::string& name, std::vector<std::string> args, int exit_code = 0) {
    ToolRun r = store_.Run(args);
    EXPECT_EQ(r.exit_code, exit_code) << r.err;
    EXPECT_EQ(r.err, "");
    ExpectGolden("stream_" + name, MaskRocksDbSize(Normalize(r.out, store_.Join(""))));
  }

  ToolStore store_;
};

// The content has what the tests need: PGs with bytes only in the stream,
// and one with homed blocks and its partial last block in the stream.
TEST_F(ToolStreamTest, TheStoreHasUnhomedBytesAndHomedBlocks) {
  const PgPointer a = store_.Pointer(PgA()), b = store_.Pointer(PgB());
  EXPECT_GT(a.unhomed, 0u);
  EXPECT_EQ(a.homed(), 0u) << "PG 1.0's bytes are all in the stream";
  EXPECT_GT(b.unhomed, 0u);
  EXPECT_GT(b.homed(), b.head) << "PG 1.1 has homed blocks holding live records";
  EXPECT_EQ(store_.Pointer(PgC()).unhomed, 0u);
  EXPECT_GT(store_.Pointer(PgD()).unhomed, 0u);
  EXPECT_LT(store_.Pointer(PgD()).stream_pos, a.stream_pos);
  // PG 1.0's last transaction went to the stream alone: its pointer lags
  // its log, which goes on in the stream.
  EXPECT_GT(LibraryStats(PgA()).unhomed_bytes, a.unhomed);
}

TEST_F(ToolStreamTest, FsckIsClean) {
  for (bool deep : {false, true}) {
    Fsck f = RunFsck(deep);
    EXPECT_EQ(f.exit_code, 0) << f.text;
    EXPECT_THAT(ProblemKinds(f.j), IsEmpty()) << f.text;
    EXPECT_THAT(NoteKinds(f.j), IsEmpty()) << f.text;
    EXPECT_THAT(f.j["not_checked"], IsEmpty()) << f.text;
    // The stream's chunks are owned: owned = the PGs' + the stream's.
    uint64_t owned = store_.StreamChunks().chunks.size();
    for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) owned += store_.Chunks(pg).chunks.size();
    EXPECT_EQ(f.j["summary"]["owned_chunks"], owned);
    const auto& st = f.j["summary"]["stream"];
    ASSERT_FALSE(st.is_null());
    EXPECT_EQ(st["chunks"], store_.StreamChunks().chunks.size());
    EXPECT_EQ(st["head"], store_.StreamPtr().head);
    EXPECT_EQ(st["tail"], store_.StreamPtr().tail);
    if (deep) {
      EXPECT_EQ(st["unhomed_pgs"], 3);  // 1.0, 1.1, 1.2
      EXPECT_EQ(st["unhomed_bytes"], LibraryStats(PgA()).unhomed_bytes +
                                         LibraryStats(PgB()).unhomed_bytes +
                                         LibraryStats(PgD()).unhomed_bytes);
      // Every live item of every PG was read.
      EXPECT_EQ(f.j["summary"]["entries"], 20 + 100 + 9);
    }
  }
  Golden("fsck_deep.txt", {"fsck", "--deep"});
}

// log, dups and info show what the store itself reads, item for item.
TEST_F(ToolStreamTest, ReadCommandsShowWhatTheStoreReads) {
  std::map<PgId, std::vector<LogEntry>> entries, dups;
  std::map<PgId, std::string> infos;
  {
    auto store = store_.Open(StreamLayoutOptions());
    ASSERT_NE(store, nullptr);
    for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) {
      auto e = store->ReadEntries(pg);
      ASSERT_TRUE(e.ok()) << e.status();
      entries[pg] = *e;
      auto d = store->ReadDups(pg);
      ASSERT_TRUE(d.ok()) << d.status();
      dups[pg] = *d;
      auto i = store->ReadInfo(pg);
      if (i.ok()) infos[pg] = *i;
    }
    ASSERT_TRUE(store->Close().ok());
  }
  ASSERT_EQ(entries[PgA()].size(), 20u);
  for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) {
    SCOPED_TRACE(pg.ToString());
    ToolRun log = store_.Run({"log", "--pg", pg.ToString(), "--format", "json"});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    auto j = log.json();
    ASSERT_EQ(j["entries"].size(), entries[pg].size());
    for (size_t i = 0; i < entries[pg].size(); ++i) {
      EXPECT_EQ(j["entries"][i]["version"], entries[pg][i].version.ToString());
      EXPECT_EQ(j["entries"][i]["payload"], Hex(entries[pg][i].payload));
    }
    EXPECT_THAT(j["problems"], IsEmpty());
    ToolRun d = store_.Run({"dups", "--pg", pg.ToString(), "--format", "json"});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    auto dj = d.json();
    ASSERT_EQ(dj["dups"].size(), dups[pg].size());
    for (size_t i = 0; i < dups[pg].size(); ++i) {
      EXPECT_EQ(dj["dups"][i]["payload"], Hex(dups[pg][i].payload));
    }
    ToolRun info = store_.Run({"info", "--pg", pg.ToString(), "--format", "json"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    auto ij = info.json();
    if (infos.count(pg)) {
      EXPECT_EQ(ij["info"]["payload"], Hex(infos[pg]));
    } else {
      EXPECT_TRUE(ij["info"].is_null());
    }
    // The pointer's stream fields, with the records past its tail.
    const PgPointer p = store_.Pointer(pg);
    EXPECT_EQ(ij["unhomed"], LibraryStats(pg).unhomed_bytes);
    EXPECT_EQ(ij["stream_pos"], p.stream_pos);
    EXPECT_EQ(ij["homed"]["lpos"], p.homed());
  }
  Golden("info_1.0.txt", {"info", "--pg", "1.0"});
  Golden("info_1.1.txt", {"info", "--pg", "1.1"});
  Golden("log_1.0.txt", {"log", "--pg", "1.0"});
}

TEST_F(ToolStreamTest, ListPgsAndStats) {
  ToolRun r = store_.Run({"list-pgs", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = r.json();
  ASSERT_EQ(j["pgs"].size(), 4u);
  for (const auto& p : j["pgs"]) EXPECT_EQ(p["status"], "ok") << p.dump();
  Golden("list_pgs.txt", {"list-pgs"});

  ToolRun s = store_.Run({"stats", "--format", "json"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto sj = s.json();
  const uint64_t stream_chunks = store_.StreamChunks().chunks.size();
  uint64_t owned = stream_chunks;
  for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) owned += store_.Chunks(pg).chunks.size();
  EXPECT_EQ(sj["owned_chunks"], owned);
  EXPECT_EQ(sj["free_chunks"], sj["chunks"].get<uint64_t>() - owned);
  EXPECT_EQ(sj["stream"]["chunks"], stream_chunks);
  EXPECT_EQ(sj["damaged_pgs"], 0);
  Golden("stats.txt", {"stats"});
}

// export reads the full log (ring and stream); import into a stream store
// keeps its stream; both stores then read the same.
TEST_F(ToolStreamTest, ExportImportRoundTrip) {
  const std::string file = store_.Join("pg.export");
  ToolRun e = store_.Run({"export", "--pg", "1.0", "--file", file});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_THAT(e.out, HasSubstr("exported PG 1.0: 20 entries, 3 dups, info (8 bytes)"));

  ToolStore other;
  other.PopulateStream();
  ToolRun i = other.Run({"import", "--file", file, "--pg", "5.5"});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  auto keys = other.DbContents();
  EXPECT_TRUE(keys.count(std::string(kStreamPointerKey))) << "import kept the log stream";
  ToolRun f = other.Run({"fsck", "--deep"});
  EXPECT_EQ(f.exit_code, 0) << f.out;

  auto src = store_.Open(StreamLayoutOptions());
  auto dst = other.Open(StreamLayoutOptions());
  ASSERT_NE(src, nullptr);
  ASSERT_NE(dst, nullptr);
  EXPECT_EQ(*src->ReadEntries(PgA()), *dst->ReadEntries(PgId{5, 0x5, -1}));
  EXPECT_EQ(*src->ReadDups(PgA()), *dst->ReadDups(PgId{5, 0x5, -1}));
  EXPECT_EQ(*src->ReadInfo(PgA()), *dst->ReadInfo(PgId{5, 0x5, -1}));
}

// Surgery opens the store in its own layout: the stream stays.
TEST_F(ToolStreamTest, SurgeryKeepsTheStream) {
  ToolRun t = store_.Run({"trim", "--pg", "1.0", "--to", "1.5", "--yes-i-really-mean-it"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_TRUE(store_.DbContents().count(std::string(kStreamPointerKey)));
  Fsck f = RunFsck(true);
  EXPECT_EQ(f.exit_code, 0) << f.text;
  ToolRun log = store_.Run({"log", "--pg", "1.0", "--format", "json"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_EQ(log.json()["entries"].size(), 15u);
}

TEST_F(ToolStreamTest, LayoutDrawsTheStream) {
  const std::string svg = store_.Join("layout.svg");
  ToolRun r = store_.Run({"layout", "--out", svg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t n = store_.StreamChunks().chunks.size();
  EXPECT_THAT(r.out, HasSubstr(absl::StrFormat("the log stream (%u chunk%s)", n,
                                               n == 1 ? "" : "s")));
  std::ifstream in(svg);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  EXPECT_THAT(text, HasSubstr(absl::StrFormat("chunk %u: the log stream",
                                              store_.StreamChunks().chunks[0])));
  EXPECT_THAT(text, HasSubstr(absl::StrFormat("%u in the log stream", n)));
  ExpectGolden("stream_layout.svg", Normalize(text));
}

// ---------------------------------------------------------------------------
// Damage

// A flipped byte in the stream record holding PG 1.0's first unhomed bytes:
// fsck names the record (stream lpos, chunk, offset) and the PGs it costs:
// PG 1.0, whose bytes lay in it, and PGs 1.1 and 1.2, which have no record
// after it and whose pointers need not count their newest records (they may
// have lain there). PG 2.1f's pointer has nothing unhomed: it counts every
// record, and the damage costs it nothing.
TEST_F(ToolStreamTest, FlippedByteInAStreamRecord) {
  const uint64_t lpos = store_.Pointer(PgA()).stream_pos;
  store_.FlipDeviceByte(store_.StreamDeviceOffset(lpos) + kRecordHeaderSize + 5);
  Fsck shallow = RunFsck(false);
  EXPECT_EQ(shallow.exit_code, 0) << "shallow fsck does not read records";
  Fsck f = RunFsck(true);
  EXPECT_EQ(f.exit_code, 1);
  ASSERT_THAT(ProblemKinds(f.j),
              ElementsAre("stream-record-crc", "unhomed-missing@1.0", "unhomed-unknown-end@1.1",
                          "unhomed-unknown-end@1.2"))
      << f.text;
  EXPECT_THAT(f.j["problems"][2]["message"].get<std::string>(),
              HasSubstr("may go on in the log stream's damaged records"));
  const auto& p = f.j["problems"][0];
  Geometry g;
  g.chunk_size = ToolStore::kChunkSize;
  g.chunk_count = 1u << 20;
  const ChunkPos cp = Locate(store_.StreamChunks(), g, lpos);
  EXPECT_TRUE(p["stream"].get<bool>());
  EXPECT_EQ(p["lpos"], lpos);
  EXPECT_EQ(p["chunk"], cp.chunk);
  EXPECT_EQ(p["offset"], cp.offset);
  EXPECT_THAT(f.text, HasSubstr(absl::StrFormat(
                          "log stream: chunk %u, offset %u (stream lpos %u): stream-record-crc: "
                          "CRC mismatch",
                          cp.chunk, cp.offset, lpos)));
  const auto& q = f.j["problems"][1];
  EXPECT_EQ(q["stream_lpos"], lpos);
  EXPECT_EQ(q["lpos"], 0);
  // The PG's line names both positions: where its ring bytes end (homed) and
  // where the stream was to hold the rest.
  EXPECT_THAT(f.text, HasSubstr(absl::StrFormat(
                          "PG 1.0: (lpos 0, stream lpos %u): unhomed-missing: ", lpos)));
  EXPECT_THAT(f.text, HasSubstr("not checked: the records of PG 1.0"));
  EXPECT_EQ(f.j["summary"]["stream"]["unhomed_pgs"], 0);
  // The library agrees: under kMarkDamaged the same three are marked, and
  // PG 2.1f opens.
  {
    Options o = StreamLayoutOptions();
    o.read_only = true;
    o.recovery_policy = RecoveryPolicy::kMarkDamaged;
    auto store = store_.Open(o);
    ASSERT_NE(store, nullptr);
    for (const PgId& pg : {PgA(), PgB(), PgD()}) EXPECT_TRUE(store->GetPgStats(pg)->damaged) << pg.ToString();
    EXPECT_FALSE(store->GetPgStats(PgC())->damaged);
    ASSERT_TRUE(store->Close().ok());
  }
  // Repair refuses both and changes nothing.
  const std::string before = store_.DeviceBytes();
  ToolRun r = store_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("why: damage inside the log stream's committed range"));
  EXPECT_THAT(r.out, HasSubstr("why: the PG's newest committed bytes are not in the log stream"));
  EXPECT_EQ(store_.DeviceBytes(), before);
  // The PG cannot be read, and says why.
  ToolRun log = store_.Run({"log", "--pg", "1.0"});
  EXPECT_EQ(log.exit_code, 1);
  EXPECT_THAT(log.err, HasSubstr("PG 1.0: its ring bytes [0, "));
}

// A stream pointer older than the PGs' (restored from before PG 1.0's last
// transaction, which trimmed and so wrote PG 1.0's pointer): the stream
// ends before PG 1.0's newest bytes. (Records past an older stream pointer
// that no PG pointer counts read as uncommitted, as they would be had the
// batch never reached RocksDB.)
TEST(ToolStreamDamageTest, StreamPointerOlderThanThePgs) {
  ToolStore store;
  store.PopulateStream();
  const std::string old_ptr = store.DbContents()[std::string(kStreamPointerKey)];
  ASSERT_FALSE(old_ptr.empty());
  {
    auto s = store.Open(StreamLayoutOptions());
    ASSERT_NE(s, nullptr);
    Transaction t;
    t.AppendEntry(PgA(), {1, 21}, "a-21");
    t.Trim(PgA(), {1, 2});
    ASSERT_TRUE(s->Commit(std::move(t)).ok());
    ASSERT_TRUE(s->Close().ok());
  }
  store.PutDbValue(std::string(kStreamPointerKey), old_ptr);
  ToolRun shallow = store.Run({"fsck"});
  EXPECT_EQ(shallow.exit_code, 0) << "PG 1.0's stream_pos is in the old stream: shallow passes";
  ToolRun r = store.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  ASSERT_THAT(ProblemKinds(j), ElementsAre("unhomed-missing@1.0")) << r.out;
  const PgPointer a = store.Pointer(PgA());
  EXPECT_EQ(j["problems"][0]["stream_lpos"], a.stream_pos);
  EXPECT_THAT(j["problems"][0]["message"].get<std::string>(),
              HasSubstr("are not in the log stream"));
}

// The stream pointer of an even older stream (before PG 1.0's first
// write): PG 1.0's stream_pos lies past its tail, which the keys alone show.
TEST(ToolStreamDamageTest, StreamPositionPastTheStreamsTail) {
  ToolStore store;
  store.PopulateStream();
  StreamPointer p = store.StreamPtr();
  p.tail = store.Pointer(PgA()).stream_pos;  // ends where PG 1.0's bytes begin
  store.PutDbValue(std::string(kStreamPointerKey), p.Encode());
  ToolRun r = store.Run({"fsck", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  ASSERT_THAT(ProblemKinds(j), ElementsAre("unhomed-missing@1.0")) << r.out;
  EXPECT_THAT(j["problems"][0]["message"].get<std::string>(),
              HasSubstr("outside the stream's committed range"));
}

// A pointer whose tail lies inside a record the stream's bytes hold whole
// (only damage moves a tail there).
TEST(ToolStreamDamageTest, PointerTailInsideARecord) {
  ToolStore store;
  store.PopulateStream();
  PgPointer a = store.Pointer(PgA());
  a.tail -= 10;
  a.unhomed -= 10;
  store.PutDbValue(PgPointerKey(PgA()), a.Encode());
  ToolRun r = store.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  ASSERT_THAT(ProblemKinds(j), ElementsAre("tail-inside-record@1.0")) << r.out;
  EXPECT_THAT(j["problems"][0]["message"].get<std::string>(),
              HasSubstr("the pointer's tail lpos"));
}

// One of the stream's two keys missing: reported once; the PGs whose bytes
// are in the stream are not read (their damage would only repeat it).
TEST(ToolStreamDamageTest, StreamChunkListMissing) {
  ToolStore store;
  store.PopulateStream();
  store.DeleteDbKey(std::string(kStreamChunksKey));
  ToolRun r = store.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  ASSERT_THAT(ProblemKinds(j), ElementsAre("stream-pointer-without-chunk-list")) << r.out;
  EXPECT_TRUE(j["problems"][0]["stream"].get<bool>());
  std::string not_checked = j["not_checked"].dump();
  EXPECT_THAT(not_checked, HasSubstr("the records of PG 1.0"));
  EXPECT_THAT(not_checked, Not(HasSubstr("PG 2.1f")));
}

// A PG's chunk list naming one of the stream's chunks: the PG is named (the
// stream claims first, as in the store), and neither is read.
TEST(ToolStreamDamageTest, PgClaimingAStreamChunk) {
  ToolStore store;
  store.PopulateStream();
  PgChunkList c = store.Chunks(PgB());
  c.chunks.back() = store.StreamChunks().chunks[0];
  store.SetChunks(PgB(), c);
  ToolRun r = store.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  EXPECT_THAT(ProblemKinds(j), ElementsAre("chunk-owned-twice@1.1")) << r.out;
  EXPECT_THAT(j["problems"][0]["message"].get<std::string>(), HasSubstr("the log stream"));
  EXPECT_THAT(j["not_checked"].dump(), HasSubstr("the log stream's records"));
}

// A stream problem that costs no PG anything is still reported: the last
// stream record's sequence does not match the stream pointer's tail_seq
// (every PG's bytes are read in full).
TEST(ToolStreamDamageTest, StreamTailSeqMismatchCostsNoPgAndIsReported) {
  ToolStore store;
  store.PopulateStream();
  StreamPointer p = store.StreamPtr();
  p.tail_seq += 1;
  store.PutDbValue(std::string(kStreamPointerKey), p.Encode());
  ToolRun r = store.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  ASSERT_THAT(ProblemKinds(j), ElementsAre("stream-tail-seq")) << r.out;
  EXPECT_TRUE(j["problems"][0]["stream"].get<bool>());
  EXPECT_EQ(j["summary"]["stream"]["unhomed_pgs"], 3);
  EXPECT_THAT(j["not_checked"], IsEmpty());

  // Store::Open agrees: a writable open refuses, since its next stream
  // record would take the pointer's sequence and break the chain the next
  // open follows; a read-only open reads every PG.
  Options o;
  o.log_layout = LogLayout::kStream;
  auto writable = Store::Open(store.dev(), MetadataLocation::OwnDb(store.db()), o);
  ASSERT_FALSE(writable.ok());
  EXPECT_TRUE(absl::IsDataLoss(writable.status())) << writable.status();
  EXPECT_THAT(std::string(writable.status().message()),
              AllOf(HasSubstr("the pointer expects"), HasSubstr("not opened for writing")));
  o.read_only = true;
  auto readable = Store::Open(store.dev(), MetadataLocation::OwnDb(store.db()), o);
  ASSERT_TRUE(readable.ok()) << readable.status();
  auto pgs = (*readable)->ListPgs();
  ASSERT_TRUE(pgs.ok());
  EXPECT_FALSE(pgs->empty());
  for (const PgId& pg : *pgs) EXPECT_TRUE((*readable)->ReadEntries(pg).ok()) << pg.ToString();
}

// A pointer whose homed position (tail - unhomed) is before its head: the
// ring would have to hold bytes it never got. Named as a pointer outside its
// ring, and the PG is not read.
TEST(ToolStreamDamageTest, HomedBeforeHead) {
  ToolStore store;
  store.PopulateStream();
  PgPointer b = store.Pointer(PgB());
  b.unhomed = b.tail - b.head + 8;
  store.PutDbValue(PgPointerKey(PgB()), b.Encode());
  ToolRun r = store.Run({"fsck", "--deep", "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = r.json();
  ASSERT_THAT(ProblemKinds(j), ElementsAre("pointer-outside-ring@1.1")) << r.out;
  EXPECT_THAT(j["problems"][0]["message"].get<std::string>(), HasSubstr("is before its head"));
  ToolRun log = store.Run({"log", "--pg", "1.1"});
  EXPECT_EQ(log.exit_code, 1);
  EXPECT_THAT(log.err, HasSubstr("is before its head"));
}

// Repair on a clean stream store has nothing to do and writes nothing.
TEST_F(ToolStreamTest, RepairLeavesACleanStreamStoreAlone) {
  const std::string dev = store_.DeviceBytes();
  const auto keys = store_.DbContents();
  ToolRun r = store_.Run({"repair"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("(nothing to do)"));
  EXPECT_EQ(store_.DeviceBytes(), dev);
  EXPECT_EQ(store_.DbContents(), keys);
}

// A command that writes through the library keeps the store's layout and
// runs no stream cleaner (home_bytes 0, the default, would start one, and it
// would restate PGs the command was not asked about); a home_bytes the
// caller set is kept.
TEST(KeepLogLayoutTest, StreamStoreKeepsTheStreamAndRunsNoCleaner) {
  StreamKeys stream;
  stream.has_pointer_key = true;
  Options o;
  ASSERT_EQ(o.stream.home_bytes, 0u);
  KeepLogLayout(stream, &o);
  EXPECT_EQ(o.log_layout, LogLayout::kStream);
  EXPECT_NE(o.stream.home_bytes, 0u);
  Options set;
  set.stream.home_bytes = 8192;
  KeepLogLayout(stream, &set);
  EXPECT_EQ(set.stream.home_bytes, 8192u);
  Options none;
  KeepLogLayout(StreamKeys{}, &none);
  EXPECT_EQ(none.log_layout, LogLayout::kPerPgRings);
}

}  // namespace
}  // namespace pgring::testing
