// GroupBatchMerger: a commit group's batches as one RocksDB write, each
// store key written once. Checked byte for byte against the batch the
// public WriteBatch API builds for the expected operations, and applied to
// a real RocksDB where the order of a range deletion matters.
#include "store/group_batch.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <string>
#include <vector>

#include "util/test_util.h"

namespace pgring {
namespace {

// One transaction's batch: the embedder's keys written directly, the
// store's through a StoreKeyWriter.
struct TxnBatch {
  rocksdb::WriteBatch batch;
  std::vector<StoreKeyWrite> notes;
  StoreKeyWriter store{&batch, nullptr, &notes};
  GroupMember member() { return GroupMember{&batch, &notes}; }
};

// The sequence number field is the RocksDB write's, not the batch's: the
// merged and the expected batch both leave it zero.
void ExpectSameBytes(const rocksdb::WriteBatch& got, const rocksdb::WriteBatch& want) {
  EXPECT_EQ(got.Count(), want.Count());
  EXPECT_EQ(got.Data(), want.Data());
}

TEST(GroupBatchTest, OnlyTheLastWriteOfAStoreKeyInTheGroupIsKept) {
  TxnBatch a, b, c;
  a.batch.Put("onode/1", "o1");
  a.store.Put("pg/1", "ptr-a");
  a.store.Put("pg/2", "ptr-a2");
  b.batch.Put("onode/2", "o2");
  b.store.Put("pg/1", "ptr-b");
  c.store.Put("pg/3", "ptr-c");
  c.store.Put("pg/1", "ptr-c");

  GroupBatchMerger merger;
  uint64_t dropped = 0;
  std::vector<GroupMember> members{a.member(), b.member(), c.member()};
  auto merged = merger.Merge(members, &dropped);

  rocksdb::WriteBatch want;
  want.Put("onode/1", "o1");
  want.Put("pg/2", "ptr-a2");
  want.Put("onode/2", "o2");
  want.Put("pg/3", "ptr-c");
  want.Put("pg/1", "ptr-c");
  ExpectSameBytes(*merged, want);
  EXPECT_EQ(dropped, 2u);
}

TEST(GroupBatchTest, NothingIsDroppedWhenEveryStoreKeyIsWrittenOnce) {
  TxnBatch a, b;
  a.batch.Put("onode/1", "o1");
  a.store.Put("pg/1", "p1");
  b.store.Delete("pg/2");
  b.batch.Put("onode/2", "o2");
  GroupBatchMerger merger;
  uint64_t dropped = 0;
  std::vector<GroupMember> members{a.member(), b.member()};
  auto merged = merger.Merge(members, &dropped);
  rocksdb::WriteBatch want;
  want.Put("onode/1", "o1");
  want.Put("pg/1", "p1");
  want.Delete("pg/2");
  want.Put("onode/2", "o2");
  ExpectSameBytes(*merged, want);
  EXPECT_EQ(dropped, 0u);
}

TEST(GroupBatchTest, ADeleteAndAPutReplaceEachOther) {
  TxnBatch a, b, c;
  a.store.Put("pg/1", "p1");
  b.store.Delete("pg/1");
  b.store.Delete("pg/2");
  c.store.Put("pg/2", "p2");
  GroupBatchMerger merger;
  uint64_t dropped = 0;
  std::vector<GroupMember> members{a.member(), b.member(), c.member()};
  auto merged = merger.Merge(members, &dropped);
  rocksdb::WriteBatch want;
  want.Delete("pg/1");
  want.Put("pg/2", "p2");
  ExpectSameBytes(*merged, want);
  EXPECT_EQ(dropped, 2u);
}

// The embedder's keys are never dropped, even one named like a store key:
// only noted records are candidates.
TEST(GroupBatchTest, TheEmbeddersKeysAreNeverDropped) {
  TxnBatch a, b;
  a.batch.Put("pg/1", "embedder");
  a.batch.Merge("counter", "+1");
  b.batch.Merge("counter", "+1");
  b.store.Put("pg/1", "store");
  GroupBatchMerger merger;
  uint64_t dropped = 0;
  std::vector<GroupMember> members{a.member(), b.member()};
  auto merged = merger.Merge(members, &dropped);
  rocksdb::WriteBatch want;
  want.Put("pg/1", "embedder");
  want.Merge("counter", "+1");
  want.Merge("counter", "+1");
  want.Put("pg/1", "store");
  ExpectSameBytes(*merged, want);
  EXPECT_EQ(dropped, 0u);
}

// A member without notes (or with an empty batch) merges as it is, and the
// merger's table is clear for the next group.
TEST(GroupBatchTest, MembersWithoutNotesAndSuccessiveGroups) {
  GroupBatchMerger merger;
  uint64_t dropped = 0;
  {
    TxnBatch a;
    a.store.Put("pg/1", "p1");
    rocksdb::WriteBatch plain;
    plain.Put("k", "v");
    std::vector<GroupMember> members{a.member(), GroupMember{&plain, nullptr}};
    auto merged = merger.Merge(members, &dropped);
    rocksdb::WriteBatch want;
    want.Put("pg/1", "p1");
    want.Put("k", "v");
    ExpectSameBytes(*merged, want);
  }
  {
    // pg/1 again, in a new group: kept.
    TxnBatch a, b;
    a.store.Put("pg/1", "p2");
    b.batch.Put("k2", "v2");
    std::vector<GroupMember> members{a.member(), b.member()};
    auto merged = merger.Merge(members, &dropped);
    rocksdb::WriteBatch want;
    want.Put("pg/1", "p2");
    want.Put("k2", "v2");
    ExpectSameBytes(*merged, want);
  }
  EXPECT_EQ(dropped, 0u);
}

// Applied to RocksDB: a store key written before a range deletion that
// covers it, and not after, stays deleted (its record keeps its place); one
// written again after the deletion takes the last value.
TEST(GroupBatchTest, TheMergedBatchKeepsRangeDeletionOrderInRocksDb) {
  testing::TempDir dir;
  rocksdb::Options o;
  o.create_if_missing = true;
  std::unique_ptr<rocksdb::DB> db;
  {
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, dir.Join("db"), &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    db.reset(raw);
  }
  TxnBatch a, b, c;
  a.store.Put("pg/1/info", "a");
  a.store.Put("pg/2/info", "a");
  b.batch.DeleteRange("pg/", "pg0");
  c.store.Put("pg/2/info", "c");
  GroupBatchMerger merger;
  uint64_t dropped = 0;
  std::vector<GroupMember> members{a.member(), b.member(), c.member()};
  auto merged = merger.Merge(members, &dropped);
  EXPECT_EQ(dropped, 1u);
  rocksdb::Status s = db->Write(rocksdb::WriteOptions(), merged.get());
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string v;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), "pg/1/info", &v).IsNotFound());
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "pg/2/info", &v).ok());
  EXPECT_EQ(v, "c");
}

}  // namespace
}  // namespace pgring
