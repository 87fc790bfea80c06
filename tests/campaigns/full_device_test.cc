// Campaign 3 (issue 6): full devices. See docs/RELIABILITY.md, "3. Full
// devices".
//
// PartitionFullTest: a small partition, many PGs, appends and no trims until
//   appends are refused. Every refusal must be kResourceExhausted at Submit
//   and change nothing (the log model, which knows no space, must still match
//   the store); nothing committed before is lost (checked against the model,
//   before and after a reopen); after trims (and a PG removal) the freed
//   chunks come back and appends work again. Every tail-block policy and
//   durability mode; PGRING_FULL_CYCLES (default 1) fill/trim cycles per case.
//
// RocksDbFullTest: RocksDB runs out of space, two ways:
//   - FaultInjectionFileSystem's space budget (tests/util): writes past it
//     fail with ENOSPC (IOStatus::NoSpace), optionally syncs too;
//   - a real tmpfs mounted with size=16m (needs root and mount permission;
//     skipped with the reason otherwise), filled with a filler file.
//   The failing commit must report kResourceExhausted or an I/O error
//   (kInternal); the store must then refuse every write (kFailedPrecondition)
//   until reopened, even once space is back; after reopen with space
//   available the state is the model after a prefix of the submitted
//   transactions containing every acknowledged-durable one, and work
//   resumes. Both backends. PGRING_FULL_ITERATIONS (default 3) out-of-space
//   events per case.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <cstdarg>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <random>
#include <thread>
#include <tuple>

#include "campaigns/campaign_util.h"
#include "device/memory_block_device.h"
#include "store/open_store.h"
#include "util/fault_injection_fs.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/sync.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

CampaignSummary* const kSummary = RegisterCampaignSummary("full_devices");

std::string ModeName(DurabilityMode m) {
  return m == DurabilityMode::kSyncEach ? "SyncEach"
         : m == DurabilityMode::kGroupCommit ? "Group" : "Unsynced";
}

// ---------------------------------------------------------------------------
// The partition fills up.

class PartitionFullTest
    : public ::testing::TestWithParam<std::tuple<TailBlockPolicy, DurabilityMode, uint64_t>> {
 protected:
  static constexpr uint64_t kDeviceSize = 1ull << 20;  // 15 chunks of 64 KiB
  static constexpr int kPgs = 12;

  void SetUp() override {
    kSummary->Declare("lost");
    dev_ = std::make_shared<MemoryBlockDevice>(kDeviceSize);
    fs_ = std::make_shared<FaultInjectionFileSystem>();
    fs_->set_skip_real_syncs(true);  // no power loss here: only speed
    env_ = rocksdb::NewCompositeEnv(fs_);
    options_.tail_block_policy = std::get<0>(GetParam());
    options_.durability = std::get<1>(GetParam());
    options_.unsynced_max_delay = std::chrono::milliseconds(5);
    options_.reserve_chunks_per_pg = 1;
    options_.log_sink = NullLogSink();
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    ASSERT_OK(MkfsWithHooks("mem", meta(), m, hooks()));
    ASSERT_OK(Open());
  }
  void TearDown() override {
    if (store_) EXPECT_OK(store_->Close());
    store_.reset();
  }
  OpenHooks hooks() { return OpenHooks{dev_, env_.get()}; }
  MetadataLocation meta() { return MetadataLocation::OwnDb(dir_.Join("db")); }
  absl::Status Open() {
    store_.reset();
    auto s = OpenWithHooks("mem", meta(), options_, hooks());
    if (!s.ok()) return s.status();
    store_ = std::move(s).value();
    return absl::OkStatus();
  }
  // Checks the store against the model and the chunk accounting. Synced
  // first: a chunk a transaction gives up (a ring's or the stream's head
  // passing it) is released only once that commit is durable, which under
  // kUnsynced comes after its callback.
  void Check(const std::string& when) {
    const absl::Status synced = store_->Sync();
    ASSERT_TRUE(synced.ok()) << when << ": " << synced;
    std::string d = model_.Diff(*store_);
    if (!d.empty()) kSummary->Add("lost");
    ASSERT_EQ(d, "") << when;
    kSummary->Add("entries_checked", model_.live_items());
    // The stream cleaner may have a restatement in flight (it gives stream
    // chunks up when staged, and they are released once it is durable):
    // synced again until none is.
    StoreStats st;
    uint64_t owned = 0;
    for (int tries = 0; tries < 100; ++tries) {
      if (tries > 0) ASSERT_TRUE(store_->Sync().ok()) << when;
      st = store_->GetStoreStats();
      owned = 0;
      for (const auto& [id, pg] : model_.pgs()) owned += store_->GetPgStats(id)->chunks;
      if (owned + st.stream_chunks + st.free_chunks == st.total_chunks) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(owned + st.stream_chunks + st.free_chunks, st.total_chunks) << when;
  }
  void Reopen(const std::string& when) {
    ASSERT_OK(store_->Close());
    // Sometimes the other policy / mode: nothing on disk depends on them.
    if (rng_() % 3 == 0) {
      options_.tail_block_policy = static_cast<TailBlockPolicy>(rng_() % 2);
      options_.durability = static_cast<DurabilityMode>(rng_() % 3);
    }
    ASSERT_OK(Open());
    kSummary->Add("reopens");
    Check("after reopen " + when);
  }
  std::string Payload(size_t n) {
    std::string s = std::to_string(++tag_) + ":";
    while (s.size() < n) s.push_back(static_cast<char>('a' + rng_() % 26));
    return s;
  }
  PgId PgAt(int i) const { return PgId{3, static_cast<uint32_t>(i), -1}; }

  // Submits `t` if the model accepts it. Returns the Submit status; on OK
  // the model takes it and `pending` waits for its callback.
  absl::Status Submit(Transaction t) {
    LogModel next = model_;
    EXPECT_EQ(next.Apply(t), absl::StatusCode::kOk);
    pending_.push_back(std::make_unique<Pending>());
    Pending* p = pending_.back().get();
    absl::Status s = store_->Submit(std::move(t), [p](absl::Status st) {
      p->status = st;
      p->done.Notify();
    });
    if (!s.ok()) {
      pending_.pop_back();
      return s;
    }
    model_ = std::move(next);
    return s;
  }
  void WaitAll() {
    for (auto& p : pending_) {
      p->done.WaitForNotification();
      EXPECT_OK(p->status);
    }
    pending_.clear();
  }

  // Appends to random PGs (sometimes two PGs in one transaction) until 40
  // refusals in a row; every refusal must be kResourceExhausted.
  void Fill() {
    int refused_in_a_row = 0;
    uint64_t committed = 0, refused = 0;
    for (int guard = 0; refused_in_a_row < 40 && guard < 200000; ++guard) {
      Transaction t;
      int npg = rng_() % 5 == 0 ? 2 : 1;
      int first = static_cast<int>(rng_() % kPgs);
      for (int j = 0; j < npg; ++j) {
        PgId id = PgAt((first + j * 7) % kPgs);
        Version v = model_.pgs().at(id).last;
        v.epoch = 1;
        int n = 1 + static_cast<int>(rng_() % 3);
        for (int k = 0; k < n; ++k) {
          ++v.version;
          t.AppendEntry(id, v, Payload(200 + rng_() % 2800));
        }
        if (rng_() % 4 == 0) t.SetInfo(id, Payload(100 + rng_() % 400));
      }
      if (rng_() % 5 == 0) t.batch()->Put("osd.key." + std::to_string(rng_() % 20), Payload(50));
      absl::Status s = Submit(std::move(t));
      if (s.ok()) {
        ++committed;
        refused_in_a_row = 0;
        if (pending_.size() >= 8) WaitAll();
      } else {
        ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
        ++refused;
        ++refused_in_a_row;
      }
      if (::testing::Test::HasFailure()) return;
    }
    WaitAll();
    ASSERT_EQ(refused_in_a_row, 40) << "the partition never filled";
    kSummary->Add("txns_committed", committed);
    kSummary->Add("refused_full", refused);
  }

  TempDir dir_;
  std::shared_ptr<MemoryBlockDevice> dev_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  Options options_;
  std::unique_ptr<Store> store_;
  LogModel model_{Limits()};
  std::mt19937_64 rng_{std::get<2>(GetParam())};
  uint64_t tag_ = 0;
  struct Pending {
    pgring::Notification done;
    absl::Status status;
  };
  std::vector<std::unique_ptr<Pending>> pending_;
};

TEST_P(PartitionFullTest, FillRefuseReopenTrimResume) {
  {
    Transaction t;
    for (int i = 0; i < kPgs; ++i) t.CreatePg(PgAt(i));
    ASSERT_OK(Submit(std::move(t)));
    WaitAll();
  }
  const uint64_t cycles = EnvKnob("PGRING_FULL_CYCLES", 1);
  for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
    const std::string c = "cycle " + std::to_string(cycle);
    SCOPED_TRACE(c);
    Fill();
    if (HasFailure()) return;
    ASSERT_OK(store_->Sync());
    kSummary->Add("fills");
    StoreStats st = store_->GetStoreStats();
    EXPECT_EQ(st.free_chunks, 0u) << "appends were refused with free chunks left";
    Check("when full");
    Reopen("when full");
    if (HasFailure()) return;
    // Still full after the reopen: one more append to every PG is either
    // taken (room in its last chunk) or refused with kResourceExhausted.
    for (int i = 0; i < kPgs; ++i) {
      Transaction t;
      PgId id = PgAt(i);
      Version v = model_.pgs().at(id).last;
      t.AppendEntry(id, Version{1, v.version + 1}, Payload(3000));
      absl::Status s = Submit(std::move(t));
      if (!s.ok()) {
        EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
        kSummary->Add("refused_full");
      }
    }
    WaitAll();
    Check("after the post-reopen appends");
    // Free space: trim most PGs (some to their last entry), and remove and
    // recreate one.
    {
      Transaction t;
      for (int i = 0; i < kPgs; ++i) {
        const ModelPg& pg = model_.pgs().at(PgAt(i));
        if (pg.entries.empty() || rng_() % 4 == 0) continue;
        auto it = pg.entries.begin();
        std::advance(it, rng_() % 2 ? pg.entries.size() - 1 : rng_() % pg.entries.size());
        t.Trim(PgAt(i), it->first);
      }
      ASSERT_OK(Submit(std::move(t)));
      Transaction r;
      PgId victim = PgAt(static_cast<int>(rng_() % kPgs));
      r.RemovePg(victim);
      ASSERT_OK(Submit(std::move(r)));
      Transaction cr;
      cr.CreatePg(victim);
      ASSERT_OK(Submit(std::move(cr)));
      WaitAll();
      ASSERT_OK(store_->Sync());
      kSummary->Add("trims");
    }
    st = store_->GetStoreStats();
    EXPECT_GT(st.free_chunks, 0u) << "trims freed nothing";
    kSummary->Add("chunks_freed_by_trim", st.free_chunks);
    Check("after trims");
    if (rng_() % 2) Reopen("after trims");
    // Work resumes: with free chunks, the first append is taken whatever
    // PG it goes to; later ones may fill the partition again.
    for (int i = 0; i < 20; ++i) {
      Transaction t;
      PgId id = PgAt(static_cast<int>(rng_() % kPgs));
      t.AppendEntry(id, Version{1, model_.pgs().at(id).last.version + 1}, Payload(500));
      absl::Status s = Submit(std::move(t));
      if (i == 0 || !absl::IsResourceExhausted(s)) {
        ASSERT_TRUE(s.ok()) << "append " << i << " after the trims: " << s;
        kSummary->Add("appends_after_trim");
      }
    }
    WaitAll();
    Check("after resuming");
  }
  Reopen("at the end");
}

// Found by this campaign: on a full partition, a trim whose PG must carry
// its (old) info forward needs ring space for that record; it used to be
// refused with kResourceExhausted, so the trims meant to free space could
// not be committed (DESIGN.md section 6: "the store goes on working once the
// caller trims"). The trim must be taken; chunks come back where the head
// moves.
TEST_P(PartitionFullTest, TrimIsTakenOnAFullPartition) {
  const PgId a = PgAt(0), b = PgAt(1);
  {
    Transaction t;
    t.CreatePg(a);
    t.CreatePg(b);
    t.SetInfo(a, "old info of a");  // never rewritten: every trim of a carries it
    ASSERT_OK(Submit(std::move(t)));
  }
  // Fill the partition with both PGs; b rewrites its info every time. A
  // log stream's drain gives its chunks back a commit after a refusal, so
  // fill again until none is free once everything is durable.
  uint64_t v = 0;
  for (int fills = 0; fills < 10; ++fills) {
    absl::Status s;
    while (s.ok()) {
      ++v;
      for (const PgId& id : {a, b}) {
        Transaction t;
        t.AppendEntry(id, Version{1, v}, Payload(3000));
        if (id == b) t.SetInfo(b, Payload(100));
        s = Submit(std::move(t));
        if (!s.ok()) break;
      }
    }
    WaitAll();
    ASSERT_CODE(s, kResourceExhausted);
    ASSERT_OK(store_->Sync());
    if (store_->GetStoreStats().free_chunks == 0) break;
  }
  ASSERT_EQ(store_->GetStoreStats().free_chunks, 0u);
  // Trim both logs to their last entry, in one transaction.
  Transaction t;
  t.Trim(a, model_.pgs().at(a).last);
  t.Trim(b, model_.pgs().at(b).last);
  ASSERT_OK(Submit(std::move(t)));
  WaitAll();
  ASSERT_OK(store_->Sync());
  EXPECT_GT(store_->GetStoreStats().free_chunks, 0u);
  Check("after the trims");
  Reopen("after the trims");
  // Appends resume.
  Transaction t2;
  t2.AppendEntry(b, Version{1, model_.pgs().at(b).last.version + 1}, Payload(3000));
  ASSERT_OK(Submit(std::move(t2)));
  WaitAll();
  Check("after resuming");
}

INSTANTIATE_TEST_SUITE_P(
    Campaign, PartitionFullTest,
    ::testing::Combine(::testing::Values(TailBlockPolicy::kRewriteTailBlock,
                                         TailBlockPolicy::kNeverRewrite),
                       ::testing::Values(DurabilityMode::kGroupCommit, DurabilityMode::kSyncEach,
                                         DurabilityMode::kUnsynced),
                       ::testing::Values(1)),
    [](const auto& i) {
      return std::string(std::get<0>(i.param) == TailBlockPolicy::kRewriteTailBlock
                             ? "Rewrite_"
                             : "NeverRewrite_") +
             ModeName(std::get<1>(i.param)) + "_" + std::to_string(std::get<2>(i.param));
    });

// ---------------------------------------------------------------------------
// RocksDB runs out of space.

// Drives a random workload and keeps the models after each submitted
// transaction from the durable watermark on (as crash_test does).
class Driver {
 public:
  Driver(uint64_t seed, int64_t pool) : work_(seed, Params(pool)) {
    snapshots_.emplace_back(0, model_);
  }
  static WorkloadParams Params(int64_t pool) {
    WorkloadParams wp;
    wp.max_pgs = 6;
    wp.keep_entries = 30;
    wp.keep_dups = 20;
    wp.max_payload = 600;
    wp.large_payload_rate = 0.02;
    wp.pool = pool;
    return wp;
  }

  // Submits up to `max_txns` valid transactions (pipelined, depth 1-4) until
  // one fails. Returns the first failure (Submit's, or a callback's), or OK.
  absl::Status Run(Store* store, int max_txns, bool unsynced) {
    int n = 0;
    while (n < max_txns) {
      int depth = 1 + static_cast<int>(work_.rng()() % 4);
      std::vector<std::unique_ptr<pgring::Notification>> done;
      std::vector<absl::Status> results(depth);
      size_t first = submitted_;
      absl::Status failure;
      for (int d = 0; d < depth && n < max_txns; ++d) {
        Transaction t = work_.Next(model_);
        LogModel next = model_;
        if (next.Apply(t) != absl::StatusCode::kOk) continue;  // valid ones only
        done.push_back(std::make_unique<pgring::Notification>());
        pgring::Notification* note = done.back().get();
        absl::Status* res = &results[done.size() - 1];
        absl::Status s = store->Submit(std::move(t), [note, res](absl::Status st) {
          *res = st;
          note->Notify();
        });
        if (!s.ok()) {
          done.pop_back();
          failure = s;
          break;
        }
        model_ = std::move(next);
        ++submitted_;
        ++n;
        snapshots_.emplace_back(submitted_, model_);
      }
      // The first failed commit is the failure; a Submit refused after it
      // (kFailedPrecondition, the sticky error) is its consequence.
      bool all_ok = true;
      absl::Status commit_failure;
      for (size_t d = 0; d < done.size(); ++d) {
        done[d]->WaitForNotification();
        if (!results[d].ok() && commit_failure.ok()) commit_failure = results[d];
        all_ok &= results[d].ok();
      }
      if (!commit_failure.ok()) failure = commit_failure;
      if (!unsynced && all_ok) durable_ = first + done.size();
      if (unsynced && all_ok && failure.ok() && work_.rng()() % 3 == 0) {
        if (store->Sync().ok()) durable_ = submitted_;
      }
      while (snapshots_.size() > 1 && snapshots_.front().first < durable_) snapshots_.pop_front();
      if (!failure.ok()) return failure;
    }
    return absl::OkStatus();
  }

  // After a reopen: finds the snapshot the store matches (at or after the
  // durable watermark) and makes it the model. Returns a description of the
  // mismatch, or empty.
  std::string Match(const Store& store, uint64_t* entries) {
    std::string diffs;
    for (const auto& [index, model] : snapshots_) {
      if (index < durable_) continue;
      std::string d = model.Diff(store);
      if (d.empty()) {
        const size_t matched = index;  // `index` and `model` die with clear()
        model_ = model;
        *entries += model_.live_items();
        submitted_ = durable_ = matched;
        snapshots_.clear();
        snapshots_.emplace_back(matched, model_);
        return "";
      }
      diffs += "\n  vs state after " + std::to_string(index) + " txns: " + d;
    }
    return "recovered state is no prefix covering the " + std::to_string(durable_) +
           " durable transactions:" + diffs;
  }

  // A valid transaction (for the refusal checks); empty if none came up.
  Transaction AnyValid() {
    for (int i = 0; i < 50; ++i) {
      Transaction t = work_.Next(model_);
      LogModel next = model_;
      if (next.Apply(t) == absl::StatusCode::kOk) return t;
    }
    return Transaction();
  }

  const LogModel& model() const { return model_; }
  size_t durable() const { return durable_; }

 private:
  RandomWorkload work_;
  LogModel model_{Limits()};
  std::deque<std::pair<size_t, LogModel>> snapshots_;
  size_t submitted_ = 0;
  size_t durable_ = 0;
};

// What the store must do when a RocksDB write ran out of space. `free_space`
// gives the space back.
void CheckOutOfSpace(Store* store, Driver* driver, const absl::Status& failure,
                     const std::function<void()>& free_space, const std::function<absl::Status()>& reopen,
                     const std::function<Store*()>& current) {
  ASSERT_FALSE(failure.ok());
  absl::Status reported = failure;
  if (failure.code() == absl::StatusCode::kFailedPrecondition) {
    // kUnsynced acknowledges before the commit: the failed commit shows at
    // the next Submit (the sticky error) and Sync() reports it.
    reported = store->Sync();
    kSummary->Add("failed_after_ack_unsynced");
  }
  EXPECT_TRUE(reported.code() == absl::StatusCode::kResourceExhausted ||
              reported.code() == absl::StatusCode::kInternal)
      << "the failing commit: " << failure << "; Sync: " << reported;
  kSummary->Add(reported.code() == absl::StatusCode::kResourceExhausted
                    ? "failed_resource_exhausted"
                    : "failed_io_error");
  // Sticky: every further write is refused, also once space is back.
  for (int i = 0; i < 3; ++i) {
    if (i == 2) free_space();
    Transaction t = driver->AnyValid();
    if (t.empty()) continue;
    pgring::Notification n;
    absl::Status cb;
    absl::Status s = store->Submit(std::move(t), [&](absl::Status st) {
      cb = st;
      n.Notify();
    });
    if (s.ok()) {
      n.WaitForNotification();
      ADD_FAILURE() << "a write after the failure was accepted (callback: " << cb << ")";
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
      kSummary->Add("refused_sticky");
    }
  }
  // Reads still answer (from memory) or fail cleanly; no crash.
  for (const auto& [id, pg] : driver->model().pgs()) store->ReadEntries(id).IgnoreError();
  absl::Status close = store->Close();
  kSummary->Add(close.ok() ? "close_ok" : "close_error");
  ASSERT_OK(reopen());
  kSummary->Add("reopens");
  uint64_t entries = 0;
  std::string d = driver->Match(*current(), &entries);
  if (!d.empty()) kSummary->Add("lost");
  ASSERT_EQ(d, "");
  kSummary->Add("entries_checked", entries);
}

// Keeps RocksDB's info LOG off the full file system. Debian's librocksdb
// 7.8 is built with assertions, and its info logger aborts the process
// (WritableFileWriter::AssertFalseAndGetStatusForPrevError:
// `sync_without_flush_called_') on the first line it logs after one of its
// writes failed with ENOSPC. See docs/RELIABILITY.md, "3. Full devices".
class NoInfoLogFileSystem : public rocksdb::FileSystemWrapper {
 public:
  NoInfoLogFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "PgringNoInfoLogFileSystem"; }
  rocksdb::IOStatus NewLogger(const std::string&, const rocksdb::IOOptions&,
                              std::shared_ptr<rocksdb::Logger>* result,
                              rocksdb::IODebugContext*) override {
    struct Quiet : rocksdb::Logger {
      using rocksdb::Logger::Logv;
      void Logv(const char*, va_list) override {}
      size_t GetLogFileSize() const override { return 0; }
    };
    *result = std::make_shared<Quiet>();
    return rocksdb::IOStatus::OK();
  }
};

// A real small file system: tmpfs, filled up with a filler file.
class TmpfsMount {
 public:
  explicit TmpfsMount(std::string path) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, "size=16m") != 0) {
      error_ = std::string("mount -t tmpfs -o size=16m: ") + std::strerror(errno);
    } else {
      mounted_ = true;
    }
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  // Fills the file system up to `leave` free bytes with a filler file.
  void Fill(uint64_t leave) {
    struct statvfs v;
    ASSERT_EQ(::statvfs(path_.c_str(), &v), 0);
    uint64_t avail = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
    uint64_t n = avail > leave ? avail - leave : 0;
    int fd = ::open((path_ + "/filler").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    std::string block(1 << 16, 'f');
    for (uint64_t w = 0; w < n;) {
      ssize_t r = ::write(fd, block.data(), std::min<uint64_t>(block.size(), n - w));
      if (r <= 0) break;  // already full
      w += static_cast<uint64_t>(r);
    }
    ::close(fd);
  }
  void Free() { ::unlink((path_ + "/filler").c_str()); }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

class RocksDbFullTest : public ::testing::TestWithParam<std::tuple<Backend, int>> {
 protected:
  void SetUp() override {
    kSummary->Declare("lost");
    options_.log_sink = NullLogSink();
    options_.reserve_chunks_per_pg = 1;
    options_.unsynced_max_delay = std::chrono::milliseconds(5);
    options_.limits.max_payload_bytes = 64 << 10;
    dev_ = std::make_shared<MemoryBlockDevice>(32ull << 20);
  }
  void TearDown() override {
    if (store_) store_->Close().IgnoreError();
    store_.reset();
  }
  absl::Status Mkfs(const std::string& db, rocksdb::Env* env) {
    db_ = db;
    env_ = env;
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    m.backend = std::get<0>(GetParam());
    return MkfsWithHooks("mem", MetadataLocation::OwnDb(db_), m, OpenHooks{dev_, env_});
  }
  absl::Status Open() {
    store_.reset();
    auto s = OpenWithHooks("mem", MetadataLocation::OwnDb(db_), options_, OpenHooks{dev_, env_});
    if (!s.ok()) return s.status();
    store_ = std::move(s).value();
    unsynced_ = options_.durability == DurabilityMode::kUnsynced;
    return absl::OkStatus();
  }

  bool unsynced_ = false;  // the open store's mode is kUnsynced
  // Members, so they outlive the store (closed in TearDown()).
  TempDir dir_;
  std::unique_ptr<TmpfsMount> mnt_;  // unmounted after the store closes
  std::shared_ptr<FaultInjectionFileSystem> fi_fs_;
  std::unique_ptr<rocksdb::Env> fi_env_;
  std::shared_ptr<MemoryBlockDevice> dev_;
  std::string db_;
  rocksdb::Env* env_ = nullptr;
  Options options_;
  std::unique_ptr<Store> store_;
};

// Variant: 0 = ENOSPC on writes, 1 = ENOSPC on writes and syncs.
TEST_P(RocksDbFullTest, FaultInjectedEnospc) {
  const auto [backend, variant] = GetParam();
  fi_fs_ = std::make_shared<FaultInjectionFileSystem>();
  fi_fs_->set_skip_real_syncs(true);
  fi_env_ = rocksdb::NewCompositeEnv(fi_fs_);
  FaultInjectionFileSystem* fs = fi_fs_.get();
  ASSERT_OK(Mkfs(dir_.Join("db"), fi_env_.get()));
  ASSERT_OK(Open());
  Driver driver(17 + variant + 10 * static_cast<int>(backend), 1);
  std::mt19937_64 rng(variant * 31 + static_cast<int>(backend));
  const uint64_t iterations = EnvKnob("PGRING_FULL_ITERATIONS", 3);
  for (uint64_t it = 0; it < iterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    const bool unsynced = unsynced_;
    // The mode of the next open (after the failure).
    options_.durability = static_cast<DurabilityMode>(rng() % 3);
    ASSERT_OK(driver.Run(store_.get(), 5 + static_cast<int>(rng() % 30), unsynced));
    const uint64_t budget = rng() % (48 << 10);
    fs->SetSpaceBudget(budget, variant == 1);
    absl::Status failure = driver.Run(store_.get(), 20000, unsynced);
    ASSERT_FALSE(failure.ok()) << "never ran out of a budget of " << budget << " bytes";
    EXPECT_GT(fs->no_space_errors(), 0u);
    kSummary->Add("enospc_events");
    CheckOutOfSpace(
        store_.get(), &driver, failure, [&] { fs->SetSpaceBudget(std::nullopt); },
        [&] { return Open(); }, [&] { return store_.get(); });
    if (HasFatalFailure()) return;
    // Work resumes.
    ASSERT_OK(driver.Run(store_.get(), 20, unsynced_));
    ASSERT_OK(store_->Sync());
  }
  ASSERT_OK(store_->Close());
  ASSERT_OK(Open());
  uint64_t entries = 0;
  ASSERT_EQ(driver.Match(*store_, &entries), "");
  kSummary->Add("entries_checked", entries);
}

TEST_P(RocksDbFullTest, RealTmpfsEnospc) {
  if (std::get<1>(GetParam()) != 0) GTEST_SKIP() << "one tmpfs case per backend";
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  mnt_ = std::make_unique<TmpfsMount>(dir_.Join("tmpfs"));
  TmpfsMount& mnt = *mnt_;
  if (!mnt.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << mnt.error();
  fi_env_ = rocksdb::NewCompositeEnv(std::make_shared<NoInfoLogFileSystem>());
  ASSERT_OK(Mkfs(dir_.Join("tmpfs") + "/db", fi_env_.get()));
  ASSERT_OK(Open());
  Driver driver(99 + static_cast<int>(std::get<0>(GetParam())), 1);
  std::mt19937_64 rng(5);
  const uint64_t iterations = EnvKnob("PGRING_FULL_ITERATIONS", 3);
  for (uint64_t it = 0; it < iterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    options_.durability = rng() % 2 ? DurabilityMode::kGroupCommit : DurabilityMode::kSyncEach;
    ASSERT_OK(driver.Run(store_.get(), 5 + static_cast<int>(rng() % 30), false));
    mnt.Fill(rng() % (16 << 10));
    absl::Status failure = driver.Run(store_.get(), 200000, false);
    ASSERT_FALSE(failure.ok()) << "the tmpfs never filled";
    kSummary->Add("tmpfs_enospc_events");
    CheckOutOfSpace(
        store_.get(), &driver, failure, [&] { mnt.Free(); }, [&] { return Open(); },
        [&] { return store_.get(); });
    if (HasFatalFailure()) return;
    ASSERT_OK(driver.Run(store_.get(), 20, false));
  }
  ASSERT_OK(store_->Close());
  ASSERT_OK(Open());
  uint64_t entries = 0;
  ASSERT_EQ(driver.Match(*store_, &entries), "");
  kSummary->Add("entries_checked", entries);
  ASSERT_OK(store_->Close());
  store_.reset();
}

INSTANTIATE_TEST_SUITE_P(Campaign, RocksDbFullTest,
                         ::testing::Combine(::testing::Values(Backend::kRing, Backend::kRocksDb),
                                            ::testing::Values(0, 1)),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param) == Backend::kRing ? "Ring"
                                                                                     : "RocksDb") +
                                  (std::get<1>(i.param) ? "_WritesAndSyncs" : "_Writes");
                         });

}  // namespace
}  // namespace pgring::testing
