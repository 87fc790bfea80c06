// verify_test.cc — the public Verify (pgring/verify.h), the fsck an OSD runs
// at mount: a clean store of every backend and layout reports no error and
// the counts the store itself gives; a flipped record byte is found by the
// deep check only, with its PG, chunk, offset and lpos; a damaged pointer by
// the shallow one; an embedder's RocksDB is read through the column family
// handle it gives; a store that is open, a missing path and a partition that
// is not pgring's are refused with the codes the header names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/metadata_keys.h"
#include "format/record.h"
#include "log/ring_layout.h"
#include "pgring/verify.h"
#include "util/embedder_db.h"
#include "util/rocksdb_keys.h"
#include "util/store_fixture.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const PgId kA = Pg(0x1a);
const PgId kB = Pg(0x2b);
const PgId kC = Pg(0x3c, 2);

VerifyOptions Deep(bool deep) {
  VerifyOptions o;
  o.deep = deep;
  return o;
}

// "kind@pg" of every error, in report order (notes left out).
std::vector<std::string> ErrorKinds(const VerifyReport& r) {
  std::vector<std::string> out;
  for (const VerifyProblem& p : r.problems) {
    if (p.severity != VerifyProblem::Severity::kError) continue;
    out.push_back(p.kind + (p.pg ? "@" + p.pg->ToString() : ""));
  }
  return out;
}

std::string Describe(const VerifyReport& r) {
  std::string s;
  for (const VerifyProblem& p : r.problems) s += p.ToString() + "\n";
  for (const std::string& n : r.not_checked) s += "not checked: " + n + "\n";
  return s;
}

// A store on a partition file (Verify opens the partition by path, as an
// OSD's mount does) with its own RocksDB.
class VerifyTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    UseFileDevice();
  }

  // Three PGs, entries and infos; kA trimmed (entries 1..4 gone) with dups.
  void Populate() {
    ASSERT_OK(Create(kA));
    ASSERT_OK(Create(kB));
    ASSERT_OK(Create(kC));
    for (uint64_t v = 1; v <= 12; v += 3) {
      ASSERT_OK(Append(kA, v, v + 2));
      ASSERT_OK(Append(kB, v, v + 2, 1, 900));
    }
    ASSERT_OK(Append(kC, 1, 1));
    ASSERT_OK(Do([](Transaction* t) {
      t->Trim(kA, V(1, 4));
      t->AppendDup(kA, V(1, 3), "dup-3");
      t->AppendDup(kA, V(1, 4), "dup-4");
    }));
  }

  // The store's own figures, taken before it is closed.
  StoreStats CloseAndTakeStats() {
    StoreStats s = store_->GetStoreStats();
    EXPECT_OK(store_->Close());
    store_.reset();
    return s;
  }

  Geometry geometry() const { return MakeGeometry(4096, kChunkSize, 0); }
};

// --- A clean store of each backend and layout ---------------------------------

class VerifyCleanTest : public VerifyTest, public ::testing::WithParamInterface<StoreMode> {};

TEST_P(VerifyCleanTest, ReportsNoErrorAndTheStoresOwnCounts) {
  SetLayout(GetParam(), &options_);
  MkfsAndOpen(BackendOf(GetParam()));
  Populate();
  const StoreStats stats = CloseAndTakeStats();
  ASSERT_EQ(stats.pgs, 3u);
  ASSERT_EQ(stats.live_entries, 8u + 12u + 1u);
  ASSERT_EQ(stats.live_dups, 2u);

  for (bool deep : {false, true}) {
    SCOPED_TRACE(deep ? "deep" : "shallow");
    VerifyOptions o = Deep(deep);
    using Done = std::pair<uint64_t, uint64_t>;  // PGs read, PGs to read
    std::vector<Done> progress;
    o.progress = [&](uint64_t done, uint64_t total) { progress.emplace_back(done, total); };
    auto r = Verify(device_path_, meta(), o);
    ASSERT_OK(r);
    EXPECT_EQ(r->errors, 0u) << Describe(*r);
    EXPECT_TRUE(r->clean());
    // Progress: once per PG whose records a deep check reads (ring backend).
    if (deep && BackendOf(GetParam()) == Backend::kRing) {
      EXPECT_THAT(progress, ElementsAre(Done{1, 3}, Done{2, 3}, Done{3, 3}));
    } else {
      EXPECT_THAT(progress, ElementsAre());
    }
    EXPECT_THAT(ErrorKinds(*r), ElementsAre());
    EXPECT_EQ(r->deep, deep);
    EXPECT_EQ(r->backend, BackendOf(GetParam()));
    EXPECT_EQ(r->uuid.size(), 36u) << r->uuid;
    EXPECT_EQ(r->pgs, stats.pgs);
    if (BackendOf(GetParam()) == Backend::kRing) {
      EXPECT_EQ(r->chunk_count, stats.total_chunks);
      EXPECT_EQ(r->free_chunks, stats.free_chunks);
      EXPECT_EQ(r->owned_chunks + r->free_chunks, r->chunk_count);
      EXPECT_THAT(r->not_checked, ElementsAre()) << Describe(*r);
    }
    // Entries and dups are counted from the records (deep) on the ring
    // backend, from the keys always on the RocksDB backend.
    const bool counted = deep || BackendOf(GetParam()) == Backend::kRocksDb;
    EXPECT_EQ(r->entries, counted ? stats.live_entries : 0u);
    EXPECT_EQ(r->dups, counted ? stats.live_dups : 0u);
    const bool records = deep && BackendOf(GetParam()) == Backend::kRing;
    if (records) {
      EXPECT_GT(r->records, 0u);
    } else {
      EXPECT_EQ(r->records, 0u);
    }
    EXPECT_EQ(r->stream.has_value(), GetParam() == StoreMode::kRingStream);
    if (r->stream) {
      EXPECT_EQ(r->stream->chunks, stats.stream_chunks);
      EXPECT_EQ(r->stream->tail - r->stream->head, stats.stream_bytes_used);
    }
  }
  // Verify leaves the store as it found it: it opens again.
  ASSERT_OK(Open(options_));
  EXPECT_EQ(Versions(kA), Range(5, 12));
}

INSTANTIATE_TEST_SUITE_P(AllModes, VerifyCleanTest, kAllStoreModes, StoreModeParamName);

// --- Damage -------------------------------------------------------------------

// A flipped byte in a record's body breaks its CRC: only the deep check
// reads records, and it names the PG, the chunk, the offset in the chunk and
// the lpos of the record.
TEST_F(VerifyTest, FlippedRecordByteIsFoundByDeepOnlyWithItsPlace) {
  MkfsAndOpen(Backend::kRing);
  Populate();
  CloseAndTakeStats();
  const auto keys = ReadAllKeys(db_path_);
  auto ptr = PgPointer::Decode(keys.at(PgPointerKey(kB)));
  auto chunks = PgChunkList::Decode(keys.at(PgChunksKey(kB)));
  ASSERT_OK(ptr);
  ASSERT_OK(chunks);
  ASSERT_GT(ptr->tail, ptr->head + kRecordHeaderSize + 8);
  const ChunkPos at = Locate(*chunks, geometry(), ptr->head);
  ASSERT_GE(at.chunk, 0);
  const uint64_t device_offset =
      geometry().ChunkOffset(static_cast<uint32_t>(at.chunk)) + at.offset + kRecordHeaderSize + 5;
  {
    std::fstream f(device_path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(device_offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(device_offset));
    f.write(&c, 1);
    ASSERT_TRUE(f.good());
  }

  auto shallow = Verify(device_path_, meta(), Deep(false));
  ASSERT_OK(shallow);
  EXPECT_EQ(shallow->errors, 0u) << Describe(*shallow);

  auto deep = Verify(device_path_, meta(), Deep(true));
  ASSERT_OK(deep);
  EXPECT_EQ(deep->errors, 1u) << Describe(*deep);
  ASSERT_THAT(ErrorKinds(*deep), ElementsAre("record-crc@" + kB.ToString())) << Describe(*deep);
  const VerifyProblem& p = deep->problems.front();
  EXPECT_EQ(p.severity, VerifyProblem::Severity::kError);
  EXPECT_EQ(p.pg, kB);
  EXPECT_FALSE(p.stream);
  EXPECT_EQ(p.chunk, static_cast<uint64_t>(at.chunk));
  EXPECT_EQ(p.offset, at.offset);
  EXPECT_EQ(p.lpos, ptr->head);
  EXPECT_THAT(p.message, HasSubstr("CRC"));
  EXPECT_THAT(p.ToString(), HasSubstr("PG " + kB.ToString() + ": chunk " +
                                      std::to_string(at.chunk) + ", offset " +
                                      std::to_string(at.offset)));
  // The other PGs are read in full.
  EXPECT_GT(deep->records, 0u);
}

// A damaged pointer value is found without reading a record; the PG's
// records are then not read (and said so), the other PGs' are.
TEST_F(VerifyTest, DamagedPointerIsFoundByShallow) {
  MkfsAndOpen(Backend::kRing);
  Populate();
  CloseAndTakeStats();
  std::string value = ReadAllKeys(db_path_).at(PgPointerKey(kA));
  value[value.size() / 2] ^= 0x01;
  RawDbWrite([&](rocksdb::WriteBatch* b) { ASSERT_TRUE(b->Put(PgPointerKey(kA), value).ok()); });

  for (bool deep : {false, true}) {
    SCOPED_TRACE(deep ? "deep" : "shallow");
    auto r = Verify(device_path_, meta(), Deep(deep));
    ASSERT_OK(r);
    EXPECT_EQ(r->errors, 1u) << Describe(*r);
    EXPECT_THAT(ErrorKinds(*r), ElementsAre("pointer-damaged@" + kA.ToString())) << Describe(*r);
    EXPECT_THAT(r->problems.front().message, HasSubstr("pgring.ptr"));
    EXPECT_FALSE(r->clean());
    if (deep) {
      EXPECT_THAT(r->not_checked, ElementsAre(HasSubstr("the records of PG " + kA.ToString())));
      EXPECT_EQ(r->entries, 12u + 1u);  // kB's and kC's
    }
  }
}

// --- The embedder's RocksDB ---------------------------------------------------

// An OSD's RocksDB with pgring's keys in a column family of their own, open
// in the OSD (read-write) while Verify reads through its handle.
class VerifySharedDbTest : public VerifyTest {
 protected:
  void SetUp() override {
    VerifyTest::SetUp();
    osd_ = std::make_unique<EmbedderDb>(dir_.Join("osd-db"),
                                        std::vector<std::string>{"onodes", "pgring"});
    ASSERT_NE(osd_->db(), nullptr);
  }
  void TearDown() override {
    store_.reset();
    osd_.reset();
  }
  MetadataLocation shared() const { return osd_->location(2); }

  std::unique_ptr<EmbedderDb> osd_;
};

TEST_F(VerifySharedDbTest, ReadsTheColumnFamilyThroughTheOpenHandle) {
  ASSERT_OK(pgring::Mkfs(device_path_, shared(), DefaultMkfs()));
  auto store = Store::Open(device_path_, shared(), options_);
  ASSERT_OK(store);
  store_ = *std::move(store);
  Populate();
  const StoreStats stats = CloseAndTakeStats();

  auto r = Verify(device_path_, shared(), Deep(true));
  ASSERT_OK(r);
  EXPECT_EQ(r->errors, 0u) << Describe(*r);
  EXPECT_EQ(r->pgs, 3u);
  EXPECT_EQ(r->entries, stats.live_entries);
  EXPECT_EQ(r->free_chunks, stats.free_chunks);

  // Damage in the column family is found there: a PG's chunk list gone.
  ASSERT_TRUE(osd_->db()->Delete(rocksdb::WriteOptions(), osd_->handle(2), PgChunksKey(kC)).ok());
  auto damaged = Verify(device_path_, shared(), Deep(false));
  ASSERT_OK(damaged);
  EXPECT_THAT(ErrorKinds(*damaged), ElementsAre("pointer-without-chunk-list@" + kC.ToString()))
      << Describe(*damaged);

  // The OSD's handle is still its own, open and writable.
  ASSERT_TRUE(osd_->db()->Put(rocksdb::WriteOptions(), osd_->handle(1), "onode", "x").ok());
  std::string v;
  ASSERT_TRUE(osd_->db()->Get(rocksdb::ReadOptions(), osd_->handle(1), "onode", &v).ok());
  EXPECT_EQ(v, "x");
}

// The keys are where the location says, or Verify finds no store: the
// default column family of the same DB holds none.
TEST_F(VerifySharedDbTest, AnotherColumnFamilyHoldsNoStore) {
  ASSERT_OK(pgring::Mkfs(device_path_, shared(), DefaultMkfs()));
  auto r = Verify(device_path_, osd_->location(1), Deep(false));
  EXPECT_CODE(r, kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("column family 'onodes' holds no pgring store"));
}

// --- What Verify refuses ------------------------------------------------------

TEST_F(VerifyTest, StoreThatIsOpenIsRefused) {
  MkfsAndOpen(Backend::kRing);
  Populate();
  auto r = Verify(device_path_, meta(), Deep(false));
  EXPECT_CODE(r, kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("is in use"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(device_path_));
  // The open store goes on.
  ASSERT_OK(Append(kC, 2, 2));
  CloseAndTakeStats();
  EXPECT_OK(Verify(device_path_, meta(), Deep(false)));
}

TEST_F(VerifyTest, MissingPathsAreNotFound) {
  MkfsAndOpen(Backend::kRing);
  CloseAndTakeStats();
  const std::string missing = dir_.Join("no-such-partition");
  auto r = Verify(missing, meta(), Deep(false));
  EXPECT_CODE(r, kNotFound);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(missing));

  const std::string no_db = dir_.Join("no-such-db");
  auto d = Verify(device_path_, MetadataLocation::OwnDb(no_db), Deep(false));
  EXPECT_CODE(d, kNotFound);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr(no_db));
}

TEST_F(VerifyTest, PartitionWithoutALabelIsNotAStore) {
  MkfsAndOpen(Backend::kRing);
  CloseAndTakeStats();
  const std::string blank = dir_.Join("blank");
  MakeFile(blank, 1 << 20);
  auto r = Verify(blank, meta(), Deep(false));
  EXPECT_CODE(r, kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(blank));
}

}  // namespace
}  // namespace pgring::testing
