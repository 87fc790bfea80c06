// Functional tests of what only the ring backend has: chunks, the ring
// wrapping and giving chunks back, a full partition, and the tail-block
// policy. The checks every backend must pass (operations, errors, reopen,
// bounds, commit gates, ...) are in store_contract_test.cc, run on both.
#include <cstdint>
#include <string>
#include <vector>

#include "util/store_fixture.h"

namespace pgring::testing {
namespace {

class RingStoreTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    Mkfs();
    ASSERT_OK(Open(options_));
  }
};

TEST_F(RingStoreTest, RingWrapsAndGivesChunksBack) {
  ASSERT_OK(Create(Pg(1)));
  uint64_t free_before = store_->GetStoreStats().free_chunks;
  uint64_t v = 0;
  for (int round = 0; round < 200; ++round) {
    ASSERT_OK(Append(Pg(1), v + 1, v + 20));
    v += 20;
    Transaction t;
    t.Trim(Pg(1), V(1, v - 40 > v ? 0 : (v > 40 ? v - 40 : 0)));
    if (v > 40) ASSERT_OK(store_->Commit(std::move(t)));
  }
  // 200 rounds x 20 entries x ~250 bytes = ~1 MB through a 64 KiB-chunk ring
  // holding 40 entries: the ring must have wrapped, not grown.
  auto st = store_->GetPgStats(Pg(1));
  ASSERT_OK(st);
  EXPECT_LE(st->chunks, 2u);
  EXPECT_GT(st->bytes_written, 10u * kChunkSize);
  EXPECT_EQ(Versions(Pg(1)), Range(v - 39, v));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(v - 39, v));
  Transaction rm;
  rm.RemovePg(Pg(1));
  ASSERT_OK(store_->Commit(std::move(rm)));
  EXPECT_EQ(store_->GetStoreStats().free_chunks, free_before);
  EXPECT_CODE(store_->ReadEntries(Pg(1)), kNotFound);
  Reopen();
  EXPECT_EQ(store_->GetStoreStats().free_chunks, free_before);
  EXPECT_TRUE(store_->ListPgs()->empty());
}

TEST_F(RingStoreTest, PartitionFullThenTrimFrees) {
  // One PG that never trims fills the partition (64 MiB of 64 KiB chunks).
  ASSERT_OK(Create(Pg(0)));
  ASSERT_OK(Create(Pg(1)));
  uint64_t v = 0;
  absl::Status s;
  for (uint64_t batch : {50, 1}) {
    s = absl::OkStatus();
    while (s.ok()) {
      s = Append(Pg(0), v + 1, v + batch, 1, 8000);
      if (s.ok()) v += batch;
    }
    EXPECT_CODE(s, kResourceExhausted);
  }
  EXPECT_EQ(store_->GetStoreStats().free_chunks, 0u);
  EXPECT_CODE(Append(Pg(1), 1, 1), kResourceExhausted);
  // Whatever was committed is intact, and the refused appends left nothing.
  Reopen();
  EXPECT_EQ(store_->GetPgStats(Pg(0))->last_version, V(1, v));
  EXPECT_EQ(store_->GetPgStats(Pg(1))->entries, 0u);
  // Trimming gives chunks back and work resumes.
  Transaction t;
  t.Trim(Pg(0), V(1, v - 100));
  ASSERT_OK(store_->Commit(std::move(t)));
  EXPECT_GT(store_->GetStoreStats().free_chunks, 900u);
  ASSERT_OK(Append(Pg(1), 1, 10));
  ASSERT_OK(Append(Pg(0), v + 1, v + 10));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 10));
  EXPECT_EQ(store_->GetPgStats(Pg(0))->entries, 110u);
}

// StoreStats::device_writes counts the partition's write requests, with
// the bytes: a PG's records of one transaction are one write (one extent of
// one chunk here), each PG its own.
TEST_F(RingStoreTest, DeviceWritesCountThePartitionWrites) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  const StoreStats s0 = store_->GetStoreStats();
  EXPECT_EQ(s0.device_writes, device_->writes());  // mkfs's label included
  ASSERT_OK(Append(Pg(1), 1, 1));
  const StoreStats s1 = store_->GetStoreStats();
  EXPECT_EQ(s1.device_writes, s0.device_writes + 1);
  EXPECT_GT(s1.device_bytes_written, s0.device_bytes_written);
  // Three entries and the info of one PG: still one write.
  ASSERT_OK(Append(Pg(1), 2, 4));
  const StoreStats s2 = store_->GetStoreStats();
  EXPECT_EQ(s2.device_writes, s1.device_writes + 1);
  // Two PGs in one transaction: a write each.
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(1), V(1, 5), TestPayload(5));
    t->AppendEntry(Pg(2), V(1, 1), TestPayload(1));
  }));
  const StoreStats s3 = store_->GetStoreStats();
  EXPECT_EQ(s3.device_writes, s2.device_writes + 2);
  EXPECT_EQ(s3.device_writes, device_->writes());
  EXPECT_EQ(s3.device_bytes_written, device_->bytes_written());
}

TEST_F(RingStoreTest, NeverRewritePolicyKeepsBlocksAligned) {
  options_.tail_block_policy = TailBlockPolicy::kNeverRewrite;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  for (uint64_t v = 1; v <= 30; ++v) ASSERT_OK(Append(Pg(1), v, v));
  auto st = store_->GetPgStats(Pg(1));
  ASSERT_OK(st);
  EXPECT_EQ(st->ring_bytes_used % 4096, 0u);
  EXPECT_EQ(st->bytes_written, 30u * 4096);
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 30));
  // Switching policy on an existing store is allowed: recovery is the same.
  options_.tail_block_policy = TailBlockPolicy::kRewriteTailBlock;
  Reopen();
  ASSERT_OK(Append(Pg(1), 31, 31));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 31));
}

}  // namespace
}  // namespace pgring::testing
