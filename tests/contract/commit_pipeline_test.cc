// The commit pipeline's ordering rules, tested where they can break: a ring
// write still in flight when a partition flush starts is not covered by it;
// the partition flush runs without waiting for the embedder's writes; and
// with Options::gated_writes_share_flush it does wait for them, and makes
// them durable with the records.
//
// The memory and fault-injecting devices complete writes inline, so the
// window between "write started" and "write completed" never opens there;
// HeldWriteDevice keeps one write in flight for as long as a test wants.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "device/fault_injection_device.h"
#include "device/memory_block_device.h"
#include "gtest/gtest.h"
#include "pgring/store.h"
#include "pgring/transaction.h"
#include "util/held_write_device.h"
#include "util/held_write_fixture.h"
#include "util/partition_view.h"
#include "util/power_loss_rig.h"
#include "util/sync.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

using CommitPipelineTest = HeldWriteStoreTest;

// B's ring write is in flight while A's is flushed. That flush must not
// count for B: B's record reaches the disk only after it, so B may commit
// only after another flush. Were B committed on A's flush, the power loss
// below would lose it. (A commits after B: commits keep submission order.)
TEST_F(CommitPipelineTest, AWriteInFlightWhenAFlushStartsWaitsForTheNextFlush) {
  dev_->HoldNextWrite();
  Outcome a, b;
  ASSERT_OK(store_->Submit(Append(b_, 1), b.Callback()));
  dev_->WaitUntilHeld();
  const uint64_t flushes_before = dev_->flushes();
  ASSERT_OK(store_->Submit(Append(a_, 1), a.Callback()));
  ASSERT_TRUE(WaitForFlushesAbove(flushes_before));  // A's records flushed
  EXPECT_FALSE(b.done.HasBeenNotified());
  dev_->ReleaseHeldWrite();
  ASSERT_OK(b.Wait());
  ASSERT_OK(a.Wait());

  PowerLossAndReopen();
  for (PgId pg : {a_, b_}) {
    auto e = store_->ReadEntries(pg);
    ASSERT_OK(e);
    ASSERT_EQ(e->size(), 1u) << "PG " << pg.pool << "." << pg.seed;
  }
}

// The partition is flushed as soon as the ring writes are done, while the
// embedder's own write (its gate) is still running; the commit itself waits
// for the gate.
TEST_F(CommitPipelineTest, ThePartitionFlushDoesNotWaitForTheEmbeddersWrite) {
  const uint64_t flushes_before = dev_->flushes();
  auto gate = std::make_shared<CommitGate>();
  Transaction t = Append(a_, 1);
  t.WaitFor(gate);
  Outcome out;
  ASSERT_OK(store_->Submit(std::move(t), out.Callback()));
  // The flush comes without the gate.
  EXPECT_TRUE(WaitForFlushesAbove(flushes_before));
  EXPECT_FALSE(out.done.HasBeenNotified());  // the gate is still closed
  gate->Open(absl::OkStatus());
  ASSERT_OK(out.Wait());
  auto e = store_->ReadEntries(a_);
  ASSERT_OK(e);
  EXPECT_EQ(e->size(), 1u);
}

// Options::metadata_sync_flushes_partition: RocksDB's files and the
// partition share one disk cache (every RocksDB sync flushes the device
// first, as the FS models it), so a group's synced RocksDB write makes
// durable the records that had completed before it started, and the group
// after it needs no partition flush of its own.
class SyncCoversTest : public CommitPipelineTest {
 protected:
  void SetUp() override {
    options_.metadata_sync_flushes_partition = true;
    options_.max_group_size = 1;  // one transaction per group: no batching hides a flush
    rig_.fs()->SetSyncFlushesAlso([this] {
      rig_.crash_device()->Flush().IgnoreError();
      if (release_on_sync_.exchange(false)) dev_->ReleaseHeldWrite();
    });
    CommitPipelineTest::SetUp();
  }
  std::atomic<bool> release_on_sync_{false};
};

// B is ready (its ring write done) before A's RocksDB write starts, so A's
// sync covers it: the store flushes the partition once, for A, and B
// survives a power loss without a flush of its own.
TEST_F(SyncCoversTest, ARecordDoneBeforeTheSyncStartsIsCoveredByIt) {
  auto gate = std::make_shared<CommitGate>();
  Transaction ta = Append(a_, 1);
  ta.WaitFor(gate);  // A waits, so that B is ready before A's group starts
  Outcome a, b;
  const uint64_t flushes_before = dev_->store_flushes();
  ASSERT_OK(store_->Submit(std::move(ta), a.Callback()));
  ASSERT_OK(store_->Submit(Append(b_, 1), b.Callback()));
  gate->Open(absl::OkStatus());
  ASSERT_OK(a.Wait());
  ASSERT_OK(b.Wait());
  EXPECT_EQ(dev_->store_flushes(), flushes_before + 1)
      << "B's group flushed the partition although A's sync had covered it";

  PowerLossAndReopen();
  for (PgId pg : {a_, b_}) {
    auto e = store_->ReadEntries(pg);
    ASSERT_OK(e);
    EXPECT_EQ(e->size(), 1u) << "PG " << pg.pool << "." << pg.seed;
  }
}

// B's ring write completes while A's RocksDB sync runs, after the cache
// flush that sync is modelled to make: it is not covered, so B's group must
// flush the partition. Were B counted as covered (ready by the time A's
// write returned), the power loss below would lose its record.
TEST_F(SyncCoversTest, ARecordDoneDuringTheSyncIsNotCoveredByIt) {
  auto gate = std::make_shared<CommitGate>();
  Transaction ta = Append(a_, 1);
  ta.WaitFor(gate);
  Outcome a, b;
  ASSERT_OK(store_->Submit(std::move(ta), a.Callback()));
  dev_->HoldNextWrite();
  ASSERT_OK(store_->Submit(Append(b_, 1), b.Callback()));
  dev_->WaitUntilHeld();
  const uint64_t flushes_before = dev_->store_flushes();
  release_on_sync_ = true;  // B's write completes inside A's sync
  gate->Open(absl::OkStatus());
  ASSERT_OK(a.Wait());
  ASSERT_OK(b.Wait());
  EXPECT_FALSE(release_on_sync_) << "no RocksDB sync released B's write";
  EXPECT_EQ(dev_->store_flushes(), flushes_before + 2) << "B committed without a flush";

  PowerLossAndReopen();
  for (PgId pg : {a_, b_}) {
    auto e = store_->ReadEntries(pg);
    ASSERT_OK(e);
    EXPECT_EQ(e->size(), 1u) << "PG " << pg.pool << "." << pg.seed << " lost its entry";
  }
}

// The committer writes the log stream: the transactions staged while a
// group's covering sync runs get no stream write until it has returned,
// then one for all of them (a write done during the sync would not be
// covered by it anyway). They commit, and survive a power loss.
class SyncCoversStreamTest : public SyncCoversTest {
 protected:
  void SetUp() override {
    layout_ = LogLayout::kStream;
    options_.stream.bypass_when_idle = false;
    SyncCoversTest::SetUp();
  }
};

TEST_F(SyncCoversStreamTest, RecordsStagedDuringTheSyncGoOutInOneWriteAfterIt) {
  constexpr int kDuring = 3;
  Outcome a, during[kDuring];
  std::atomic<bool> arm{false};
  uint64_t writes_before = 0, writes_in_sync = 0, stream_writes_before = 0;
  absl::Status submitted;
  rig_.fs()->SetSyncFlushesAlso([&] {
    rig_.crash_device()->Flush().IgnoreError();
    if (!arm.exchange(false)) return;
    // Inside A's group's synced RocksDB write: stage three transactions.
    writes_before = dev_->writes();
    stream_writes_before = store_->GetStoreStats().stream_writes;
    // A write issued by Submit would be counted by now (this device
    // completes writes as they are issued).
    for (int i = 0; i < kDuring && submitted.ok(); ++i) {
      submitted = store_->Submit(Append(b_, i + 1), during[i].Callback());
    }
    writes_in_sync = dev_->writes() - writes_before;
  });
  auto gate = std::make_shared<CommitGate>();
  Transaction ta = Append(a_, 1);
  ta.WaitFor(gate);
  ASSERT_OK(store_->Submit(std::move(ta), a.Callback()));
  arm = true;
  gate->Open(absl::OkStatus());
  ASSERT_OK(a.Wait());
  // Checked before waiting for them: were they never submitted, the waits
  // below would hang instead of failing.
  ASSERT_FALSE(arm) << "A's group made no synced RocksDB write";
  ASSERT_OK(submitted);
  for (auto& d : during) ASSERT_OK(d.Wait());
  EXPECT_EQ(writes_in_sync, 0u) << "the stream wrote while the covering sync ran";
  EXPECT_EQ(store_->GetStoreStats().stream_writes - stream_writes_before, 1u)
      << "the three records staged during the sync took more than one write";

  PowerLossAndReopen();
  auto ea = store_->ReadEntries(a_);
  ASSERT_OK(ea);
  EXPECT_EQ(ea->size(), 1u);
  auto eb = store_->ReadEntries(b_);
  ASSERT_OK(eb);
  EXPECT_EQ(eb->size(), static_cast<size_t>(kDuring));
}

// The log partition and the OSD's data partition on one disk: two views of
// one fault-injecting device, so a flush of either makes both durable and a
// power loss drops every write to either that no finished flush covered.
class SharedFlushTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kPartition = 16 << 20;

  void SetUp() override {
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    ASSERT_OK(rig_.Mkfs(m));
    options_.log_sink = NullLogSink();
    // The ring writes these tests hold and count are per-PG rings' writes.
    options_.log_layout = LogLayout::kPerPgRings;
    options_.gated_writes_share_flush = true;
  }
  absl::Status Open() {
    absl::Status s = rig_.Open(options_);
    store_ = rig_.store();
    return s;
  }
  void CreatePg() {
    Transaction c;
    c.CreatePg(pg_);
    ASSERT_OK(store_->Commit(std::move(c)));
  }
  static std::string Block(char c) { return std::string(4096, c); }
  std::string ReadData(uint64_t offset) {
    AlignedBuffer buf(4096);
    EXPECT_OK(data_->Read(offset, buf.span()));
    return std::string(buf.data(), buf.size());
  }

  const PgId pg_{1, 1, -1};
  std::shared_ptr<BlockDevice> disk_, data_;
  PowerLossRig rig_{2 * kPartition, [this](std::shared_ptr<BlockDevice> disk) {
                      disk_ = disk;
                      data_ = std::make_shared<PartitionView>(disk, kPartition, kPartition);
                      return std::make_shared<PartitionView>(disk, 0, kPartition);
                    }};
  Options options_;
  Store* store_ = nullptr;
};

// The gate opens when the data write has completed, unflushed. The store
// must not flush before that (the flush would not cover the data), and the
// flush it does start afterwards must be the one the commit waits for: were
// the transaction committed on a flush that ran before its data write, the
// power loss below would keep the commit and lose the data.
TEST_F(SharedFlushTest, TheFlushWaitsForTheGatesAndMakesTheirWritesDurable) {
  options_.durability = DurabilityMode::kGroupCommit;
  ASSERT_OK(Open());
  CreatePg();
  const uint64_t flushes_before = disk_->flushes();
  auto gate = std::make_shared<CommitGate>();
  Transaction t;
  t.AppendEntry(pg_, Version{1, 1}, std::string(300, 'e'));
  t.WaitFor(gate);
  Outcome out;
  ASSERT_OK(store_->Submit(std::move(t), out.Callback()));
  // The ring write completes at once on this device; the flush must still
  // wait for the gate.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(disk_->flushes(), flushes_before) << "the partition was flushed before the gate opened";
  EXPECT_FALSE(out.done.HasBeenNotified());
  ASSERT_OK(data_->Write(0, Block('D')));  // completed, not flushed
  gate->Open(absl::OkStatus());
  ASSERT_OK(out.Wait());
  EXPECT_EQ(disk_->flushes(), flushes_before + 1) << "one flush for the data and the records";

  ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kDropUnflushed));
  ASSERT_OK(Open());
  EXPECT_EQ(ReadData(0), Block('D')) << "a committed transaction lost its data write";
  auto e = store_->ReadEntries(pg_);
  ASSERT_OK(e);
  EXPECT_EQ(e->size(), 1u);
}

// A transaction with no ring writes (only the embedder's keys and its data
// write) still needs the flush before its commit: it makes the data durable.
TEST_F(SharedFlushTest, ATransactionWithoutRecordsStillFlushesItsGatedWrites) {
  options_.durability = DurabilityMode::kGroupCommit;
  ASSERT_OK(Open());
  const uint64_t flushes_before = disk_->flushes();
  auto gate = std::make_shared<CommitGate>();
  Transaction t;
  ASSERT_TRUE(t.batch()->Put("osd.onode.1", "object metadata").ok());
  t.WaitFor(gate);
  Outcome out;
  ASSERT_OK(store_->Submit(std::move(t), out.Callback()));
  ASSERT_OK(data_->Write(4096, Block('X')));
  gate->Open(absl::OkStatus());
  ASSERT_OK(out.Wait());
  EXPECT_EQ(disk_->flushes(), flushes_before + 1);
  ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kDropUnflushed));
  ASSERT_OK(Open());
  EXPECT_EQ(ReadData(4096), Block('X')) << "a committed transaction lost its data write";
}

// kUnsynced acknowledges once the ring writes and the gates are done; the
// background commit's flush covers the gates' writes too. (kUnsynced always
// flushed in the committer, after the gates; this holds it to that with the
// option set.)
TEST_F(SharedFlushTest, UnsyncedCommitsFlushTheGatedWrites) {
  options_.durability = DurabilityMode::kUnsynced;
  ASSERT_OK(Open());
  CreatePg();
  for (uint64_t v = 1; v <= 8; ++v) {
    auto gate = std::make_shared<CommitGate>();
    Transaction t;
    t.AppendEntry(pg_, Version{1, v}, std::string(200, 'e'));
    t.WaitFor(gate);
    Outcome out;
    ASSERT_OK(store_->Submit(std::move(t), out.Callback()));
    ASSERT_OK(data_->Write(v * 4096, Block(static_cast<char>('a' + v))));
    gate->Open(absl::OkStatus());
    ASSERT_OK(out.Wait());
  }
  ASSERT_OK(store_->Sync());
  ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kDropUnflushed));
  ASSERT_OK(Open());
  for (uint64_t v = 1; v <= 8; ++v) {
    EXPECT_EQ(ReadData(v * 4096), Block(static_cast<char>('a' + v))) << "data write " << v;
  }
  auto e = store_->ReadEntries(pg_);
  ASSERT_OK(e);
  EXPECT_EQ(e->size(), 8u);
}

// The RocksDB backend has no flush before its commit to share.
TEST(SharedFlushOptionTest, TheRocksDbBackendRefusesIt) {
  PowerLossRig rig(16 << 20);
  MkfsOptions m;
  m.backend = Backend::kRocksDb;
  ASSERT_OK(rig.Mkfs(m));
  Options o;
  o.log_sink = NullLogSink();
  o.gated_writes_share_flush = true;
  absl::Status s = rig.Open(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("gated_writes_share_flush needs the ring backend"),
            std::string::npos) << s;
}

// A commit group is one atomic RocksDB write, so a PG's own keys (the ring
// backend's pointer and chunk list, the RocksDB backend's info and state)
// need only their last value in it (store/group_batch.h). Three
// transactions on one PG are held in one group by their gates; the group
// must still commit what the last of them left, through a power loss.
class OneGroupTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    MkfsOptions m;
    m.backend = GetParam();
    m.chunk_size = 64 << 10;
    ASSERT_OK(rig_.Mkfs(m));
    options_.log_sink = NullLogSink();
    // The ring writes these tests hold and count are per-PG rings' writes.
    options_.log_layout = LogLayout::kPerPgRings;
    options_.durability = DurabilityMode::kGroupCommit;
    // The ring backend's committer then flushes once per group, and a
    // group is every ready transaction: the gates alone decide it.
    options_.gated_writes_share_flush = GetParam() == Backend::kRing;
    ASSERT_OK(Open());
    Transaction c;
    c.CreatePg(pg_);
    ASSERT_OK(store_->Commit(std::move(c)));
  }
  absl::Status Open() {
    absl::Status s = rig_.Open(options_);
    store_ = rig_.store();
    return s;
  }
  // Submits each transaction behind a gate of its own, opens the gates
  // last to first, and waits: all commit in one group.
  void CommitInOneGroup(std::vector<Transaction> txns) {
    const StoreStats before = store_->GetStoreStats();
    std::vector<std::shared_ptr<CommitGate>> gates;
    std::vector<std::unique_ptr<Outcome>> outs;
    for (auto& t : txns) {
      gates.push_back(std::make_shared<CommitGate>());
      t.WaitFor(gates.back());
      outs.push_back(std::make_unique<Outcome>());
      ASSERT_OK(store_->Submit(std::move(t), outs.back()->Callback()));
    }
    for (auto it = gates.rbegin(); it != gates.rend(); ++it) (*it)->Open(absl::OkStatus());
    for (auto& o : outs) ASSERT_OK(o->Wait());
    const StoreStats after = store_->GetStoreStats();
    ASSERT_EQ(after.commit_groups - before.commit_groups, 1u);
    superseded_ = after.superseded_key_writes - before.superseded_key_writes;
  }
  void PowerLossAndReopen() {
    ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kDropUnflushed));
    ASSERT_OK(Open());
  }

  const PgId pg_{1, 7, -1};
  PowerLossRig rig_{16 << 20};
  Options options_;
  Store* store_ = nullptr;
  uint64_t superseded_ = 0;
};

TEST_P(OneGroupTest, APgsKeysAreWrittenOnceAndHoldTheLastValue) {
  std::vector<Transaction> txns(3);
  for (uint64_t v = 1; v <= 3; ++v) {
    txns[v - 1].AppendEntry(pg_, Version{1, v}, std::string(200, static_cast<char>('a' + v)));
    txns[v - 1].SetInfo(pg_, "info-" + std::to_string(v));
  }
  CommitInOneGroup(std::move(txns));
  // Ring: the pointer of the first two. RocksDB: their info (and state,
  // when they changed it).
  EXPECT_GE(superseded_, 2u);

  PowerLossAndReopen();
  auto e = store_->ReadEntries(pg_);
  ASSERT_OK(e);
  ASSERT_EQ(e->size(), 3u);
  EXPECT_EQ((*e)[2].version, (Version{1, 3}));
  auto info = store_->ReadInfo(pg_);
  ASSERT_OK(info);
  EXPECT_EQ(*info, "info-3");
}

// A removal between two writes of the PG's keys: the earlier write is left
// out, the later one lands after the removal (in the RocksDB backend a range
// deletion), and a removal with nothing after it wins.
TEST_P(OneGroupTest, ARemovalInTheGroupKeepsItsPlace) {
  const PgId other{1, 8, -1};
  std::vector<Transaction> txns(5);
  txns[0].AppendEntry(pg_, Version{1, 1}, "first");
  txns[0].SetInfo(pg_, "before-removal");
  txns[0].CreatePg(other);
  txns[0].SetInfo(other, "other");
  txns[1].RemovePg(pg_);
  txns[2].CreatePg(pg_);
  txns[2].AppendEntry(pg_, Version{2, 1}, "second life");
  txns[3].SetInfo(pg_, "after-removal");
  txns[4].RemovePg(other);
  CommitInOneGroup(std::move(txns));
  EXPECT_GE(superseded_, 1u);

  PowerLossAndReopen();
  auto e = store_->ReadEntries(pg_);
  ASSERT_OK(e);
  ASSERT_EQ(e->size(), 1u);
  EXPECT_EQ((*e)[0].version, (Version{2, 1}));
  EXPECT_EQ((*e)[0].payload, "second life");
  auto info = store_->ReadInfo(pg_);
  ASSERT_OK(info);
  EXPECT_EQ(*info, "after-removal");
  EXPECT_EQ(store_->ReadEntries(other).status().code(), absl::StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, OneGroupTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         BackendName);

}  // namespace
}  // namespace pgring::testing
