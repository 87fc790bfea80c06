// Campaign 6b (issue 14, item 5): concurrency on the real device. See
// docs/RELIABILITY.md, "6. Concurrency".
//
// One store on a partition file opened by path (FileBlockDevice, O_DIRECT,
// io_uring: writes complete on the completion thread, unlike the memory
// device's, which complete inline), its own RocksDB on the real file system;
// every store mode (per-PG rings, the log stream, the RocksDB backend) in
// every durability mode. Writer threads SHARE the PGs: a writer locks the
// 1-3 PGs it draws (a test lock per PG, taken in PG order), builds a random
// transaction from their models (every operation: appends, trims, rewinds,
// resets, dups, info, removes and re-creates, some invalid), applies it to
// the model and submits it while still holding them. So each PG's model
// sees its transactions in the order the store does, and every Submit's
// code and every commit's outcome is checked exactly. Commit callbacks
// sometimes submit a follow-up transaction on a PG whose lock is free
// (try_lock: a callback never waits on the test's locks). Every payload is
// stamped with its PG, kind and version.
//
// Readers, at the same time: half their reads lock a PG and compare it
// with its model exactly (LogModel::DiffPg: every entry and dup by version
// and payload, the info, the stats, ranged reads at drawn bounds); the
// other half read without the lock, a moving target, and check each item's
// stamp (a payload of another PG, kind or version fails), the bounds of a
// ranged read, increasing versions and the status codes.
//
// An epoch ends one of two ways. Quiesced: the writers finish, the whole
// store is compared with the model, then closed. Or racing: Close() is
// called while writers submit and readers read; a call refused as closed
// must say "store is closed", only once Close has begun, and a read that
// starts after Close returned must be refused; every transaction accepted
// before must commit OK. Either way the embedder keys in RocksDB are
// compared with the writers' models, and the store is reopened (random
// tail-block policy) and compared again, its floors probed. A watchdog
// turns a hang into a failure that prints every thread's stack (gdb).
//
// Knobs: PGRING_DEVCONC_TXNS (transactions per writer over the run, default
// 120), PGRING_DEVCONC_EPOCHS (default 3), PGRING_DEVCONC_WRITERS (default
// 4), PGRING_DEVCONC_READERS (default 2), PGRING_DEVCONC_DEADLINE_S (the
// watchdog's deadline per epoch, default 600).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <rocksdb/write_batch.h>

#include "campaigns/campaign_util.h"
#include "device/file_block_device.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/store_fixture.h"
#include "util/watchdog.h"

namespace pgring::testing {
namespace {

CampaignSummary* const kSummary = RegisterCampaignSummary("device_concurrency");

constexpr int64_t kPool = 10;
constexpr int kPgs = 12;  // PG seeds 0..11 of pool 10, shared by every writer
constexpr char kKeyPrefix[] = "osd.key.";

PgId PgOf(int slot) { return PgId{kPool, static_cast<uint32_t>(slot), -1}; }

// Payload stamps: "<kind><pg>@<version>|" (info: "I<pg>|"), so that a read
// that returns another PG's, kind's or version's bytes is caught without
// the model.
std::string Stamp(char kind, const PgId& pg, const Version& v) {
  return std::string(1, kind) + pg.ToString() + "@" + v.ToString() + "|";
}
std::string InfoStamp(const PgId& pg) { return "I" + pg.ToString() + "|"; }

// `t` with every payload stamped; the embedder's batch moves over.
Transaction Stamped(Transaction t) {
  using T = Transaction::OpType;
  Transaction out;
  for (const Transaction::Op& op : t.ops()) {
    switch (op.type) {
      case T::kCreatePg: out.CreatePg(op.pg); break;
      case T::kRemovePg: out.RemovePg(op.pg); break;
      case T::kAppendEntry: out.AppendEntry(op.pg, op.version, Stamp('E', op.pg, op.version) + op.payload); break;
      case T::kAppendDup: out.AppendDup(op.pg, op.version, Stamp('D', op.pg, op.version) + op.payload); break;
      case T::kSetInfo: out.SetInfo(op.pg, InfoStamp(op.pg) + op.payload); break;
      case T::kTrimDups: out.TrimDups(op.pg, op.version); break;
      case T::kTrim: out.Trim(op.pg, op.version); break;
      case T::kRewind: out.Rewind(op.pg, op.version); break;
      case T::kResetLog: out.ResetLog(op.pg); break;
    }
  }
  if (std::unique_ptr<rocksdb::WriteBatch> b = t.ReleaseBatch()) *out.batch() = std::move(*b);
  return out;
}

bool IsClosedError(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) && s.message().find("store is closed") != std::string::npos;
}

std::string ModeName(DurabilityMode m) {
  return m == DurabilityMode::kSyncEach ? "SyncEach"
         : m == DurabilityMode::kGroupCommit ? "GroupCommit" : "Unsynced";
}

// One PG's model and the test's lock on it (held across the Submit).
struct Slot {
  std::mutex mu;
  std::optional<ModelPg> pg;  // absent: the PG does not exist
};

class DeviceConcurrencyTest
    : public StoreFixture,
      public ::testing::WithParamInterface<std::tuple<StoreMode, DurabilityMode>> {
 protected:
  struct Writer {
    explicit Writer(uint64_t seed, int index) : work(seed, Params(index)) {}
    static WorkloadParams Params(int index) {
      WorkloadParams wp;
      wp.pool = kPool;
      wp.keep_entries = 40;
      wp.keep_dups = 25;
      wp.remove_rate = 0.03;  // remove/create churn
      wp.key_prefix = std::string(kKeyPrefix) + "w" + std::to_string(index) + ".";
      return wp;
    }
    RandomWorkload work;
    std::map<std::string, std::string> kv;  // this writer's embedder keys
    uint64_t submitted = 0, refused = 0, closed_refusals = 0;
  };

  void Fail(const std::string& e) {
    std::lock_guard<std::mutex> l(mu_);
    if (error_.empty()) error_ = e;
  }
  bool Failed() {
    std::lock_guard<std::mutex> l(mu_);
    return !error_.empty();
  }

  // Every transaction Submit accepted has had its callback return.
  void WaitOutstanding() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return outstanding_ == 0; });
  }
  void Settle() {
    std::lock_guard<std::mutex> l(mu_);
    if (--outstanding_ == 0) cv_.notify_all();
  }

  // The model of the locked slots `held` (a LogModel of those PGs alone)
  // and the ones of them that do not exist.
  LogModel SubModel(const std::vector<int>& held, std::vector<PgId>* absent) {
    LogModel m(options_.limits);
    for (int i : held) {
      if (slots_[i].pg) {
        m.mutable_pgs()[PgOf(i)] = *slots_[i].pg;
      } else if (absent != nullptr) {
        absent->push_back(PgOf(i));
      }
    }
    return m;
  }
  void WriteBack(const std::vector<int>& held, const LogModel& m) {
    for (int i : held) {
      auto it = m.pgs().find(PgOf(i));
      slots_[i].pg = it == m.pgs().end() ? std::nullopt : std::optional<ModelPg>(it->second);
    }
  }

  // Submits `t` (stamped) on the held slots whose model is `m`, with `done`
  // as its callback; on acceptance the slots and `kv` take the new model.
  // Returns false once the store refuses it as closed.
  bool SubmitModelled(Store* store, const std::vector<int>& held, LogModel m, Transaction t,
                      std::map<std::string, std::string>* kv, CommitCallback done,
                      uint64_t* refused) {
    const std::string what = std::to_string(t.ops().size()) + "-op transaction";
    const absl::StatusCode want = m.Apply(t);
    {
      std::lock_guard<std::mutex> l(mu_);
      ++outstanding_;
    }
    const absl::Status s = store->Submit(std::move(t), std::move(done));
    if (!s.ok()) Settle();
    if (IsClosedError(s)) {
      if (!closing_.load()) Fail(what + " refused as closed before Close() was called");
      return false;
    }
    if (s.code() != want) {
      Fail(what + ": store says " + s.ToString() + ", model says " +
           absl::StatusCodeToString(want));
      return false;
    }
    if (!s.ok()) {
      ++*refused;
      return true;
    }
    WriteBack(held, m);
    for (const auto& [k, v] : m.kv()) (*kv)[k] = v;
    return true;
  }

  CommitCallback Callback(Store* store, bool may_follow_up) {
    return [this, store, may_follow_up](absl::Status st) {
      if (!st.ok()) Fail("a commit failed: " + st.ToString());
      if (may_follow_up && st.ok()) FollowUp(store);
      Settle();
    };
  }

  // From a callback (one at a time, in submission order): a transaction on
  // a PG nobody holds, if there is one, whose own callback does nothing more.
  void FollowUp(Store* store) {
    std::lock_guard<std::mutex> cl(follow_mu_);
    if (std::uniform_int_distribution<int>(0, 3)(follow_work_->rng()) != 0) return;
    const int i = static_cast<int>(follow_work_->rng()() % kPgs);
    std::unique_lock<std::mutex> l(slots_[i].mu, std::try_to_lock);
    if (!l.owns_lock() || !slots_[i].pg) return;
    LogModel m = SubModel({i}, nullptr);
    static const std::vector<PgId> kNone;
    Transaction t = Stamped(follow_work_->Next(m, &kNone));
    if (SubmitModelled(store, {i}, std::move(m), std::move(t), &follow_kv_,
                       Callback(store, false), &follow_refused_)) {
      ++follow_ups_;
    }
  }

  void RunWriter(Store* store, Writer* w, uint64_t txns) {
    auto& rng = w->work.rng();
    uint64_t n = 0;
    bool open = true;
    while (open && n < txns && !Failed()) {
      const int depth = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int d = 0; open && d < depth && n < txns; ++d, ++n) {
        std::vector<int> held;
        const int k = std::uniform_int_distribution<int>(1, 3)(rng);
        for (int j = 0; j < k; ++j) held.push_back(static_cast<int>(rng() % kPgs));
        std::sort(held.begin(), held.end());
        held.erase(std::unique(held.begin(), held.end()), held.end());
        std::vector<std::unique_lock<std::mutex>> locks;
        for (int i : held) locks.emplace_back(slots_[i].mu);
        std::vector<PgId> absent;
        LogModel m = SubModel(held, &absent);
        Transaction t = Stamped(w->work.Next(m, &absent));
        ++w->submitted;
        open = SubmitModelled(store, held, std::move(m), std::move(t), &w->kv,
                              Callback(store, true), &w->refused);
        if (!open) ++w->closed_refusals;
      }
      // Pipelined up to `depth`: wait for this writer's share of commits
      // by waiting for all (the other writers' too) now and then.
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) WaitOutstanding();
    }
  }

  struct ReaderStats {
    uint64_t exact_reads = 0, moving_reads = 0, entries = 0, refused_closed = 0;
  };

  // A read's status against Close: refused as closed only once Close has
  // begun, and always once it has returned (`after_close`: it had when the
  // read began). True if refused as closed.
  bool RefusedAsClosed(const absl::Status& s, bool after_close, const std::string& what,
                       ReaderStats* st) {
    if (IsClosedError(s)) {
      if (!closing_.load()) Fail(what + " refused as closed before Close() was called");
      ++st->refused_closed;
      return true;
    }
    if (after_close) Fail(what + ", begun after Close() returned, was answered: " + s.ToString());
    return false;
  }

  // Checks one read of a PG nobody holds: each item's stamp, its bounds,
  // versions increasing, the status.
  void CheckMoving(const absl::StatusOr<std::vector<LogEntry>>& r, char kind, const PgId& id,
                   const Version& from, const Version& to, bool after_close, ReaderStats* st) {
    const std::string what = std::string(kind == 'E' ? "ReadEntries" : "ReadDups") + " of " +
                             id.ToString();
    if (RefusedAsClosed(r.status(), after_close, what, st)) return;
    if (!r.ok()) {
      const absl::StatusCode c = r.status().code();
      // Missing PG; a range past the floor or inverted (entries only).
      const bool expected =
          c == absl::StatusCode::kNotFound ||
          (kind == 'E' && (c == absl::StatusCode::kOutOfRange ||
                           (c == absl::StatusCode::kInvalidArgument && from > to)));
      if (!expected) Fail(what + ": " + r.status().ToString());
      return;
    }
    for (size_t i = 0; i < r->size(); ++i) {
      const LogEntry& e = (*r)[i];
      if (i > 0 && !((*r)[i - 1].version < e.version)) Fail(what + ": versions not increasing");
      if (e.version < from || e.version > to) Fail(what + ": " + e.version.ToString() + " out of range");
      if (!e.payload.starts_with(Stamp(kind, id, e.version))) {
        Fail(what + ": item " + e.version.ToString() + " carries another's payload, stamped " +
             e.payload.substr(0, e.payload.find('|') + 1));
      }
    }
    st->entries += r->size();
  }

  void RunReader(const Store* store, uint64_t seed, ReaderStats* st) {
    std::mt19937_64 rng(seed);
    auto version = [&] { return Version{static_cast<uint32_t>(1 + rng() % 3), rng() % 200}; };
    while (!stop_readers_.load() && !Failed()) {
      const int i = static_cast<int>(rng() % kPgs);
      const PgId id = PgOf(i);
      const bool after_close = close_returned_.load();
      if (rng() % 2 == 0) {
        // Exact: the PG held still, against its model.
        std::string d;
        {
          std::lock_guard<std::mutex> l(slots_[i].mu);
          d = SubModel({i}, nullptr).DiffPg(*store, id, rng());
        }
        ++st->exact_reads;
        if (d.find("store is closed") != std::string::npos && closing_.load()) {
          ++st->refused_closed;
        } else if (!d.empty()) {
          Fail("reader, PG " + id.ToString() + " held: " + d);
        } else if (after_close) {
          Fail("reader: a read of PG " + id.ToString() + " begun after Close() returned was answered");
        }
        continue;
      }
      ++st->moving_reads;
      switch (rng() % 5) {
        case 0:
        case 1: {
          Version from = version(), to = version();
          if (rng() % 4 == 0) from = Version::Min();
          if (rng() % 4 == 0) to = Version::Max();
          CheckMoving(store->ReadEntries(id, from, to), 'E', id, from, to, after_close, st);
          break;
        }
        case 2:
          CheckMoving(store->ReadDups(id), 'D', id, Version::Min(), Version::Max(), after_close, st);
          break;
        case 3: {
          auto info = store->ReadInfo(id);
          const std::string what = "ReadInfo of " + id.ToString();
          if (RefusedAsClosed(info.status(), after_close, what, st)) break;
          if (info.ok() && !info->starts_with(InfoStamp(id))) {
            Fail(what + " returns another's, stamped " + info->substr(0, info->find('|') + 1));
          } else if (!info.ok() && !absl::IsNotFound(info.status())) {
            Fail(what + ": " + info.status().ToString());
          }
          break;
        }
        default: {
          auto l = store->ListPgs();
          store->GetStoreStats();  // answers, closed or not
          if (RefusedAsClosed(l.status(), after_close, "ListPgs", st)) break;
          if (!l.ok()) {
            Fail("ListPgs: " + l.status().ToString());
          } else {
            for (const PgId& p : *l) {
              if (p.pool != kPool || p.seed >= kPgs) Fail("ListPgs lists " + p.ToString());
            }
          }
          break;
        }
      }
    }
  }

  LogModel WholeModel() {
    LogModel all(options_.limits);
    for (int i = 0; i < kPgs; ++i) {
      std::lock_guard<std::mutex> l(slots_[i].mu);
      if (slots_[i].pg) all.mutable_pgs()[PgOf(i)] = *slots_[i].pg;
    }
    return all;
  }

  // The embedder keys in RocksDB against the writers' models (store closed).
  std::string DiffKeys(const std::vector<std::unique_ptr<Writer>>& ws) {
    std::map<std::string, std::string> want = follow_kv_;
    for (const auto& w : ws) want.insert(w->kv.begin(), w->kv.end());
    std::map<std::string, std::string> got;
    for (auto& [k, v] : DumpDb()) {
      if (k.starts_with(kKeyPrefix)) got[k] = v;
    }
    if (got == want) return "";
    for (const auto& [k, v] : want) {
      auto it = got.find(k);
      if (it == got.end()) return "embedder key " + k + " missing";
      if (it->second != v) return "embedder key " + k + " has another value";
    }
    return std::to_string(got.size() - want.size()) + " embedder keys the model lacks";
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::string error_;
  uint64_t outstanding_ = 0;
  Slot slots_[kPgs];
  std::atomic<bool> closing_{false}, close_returned_{false}, stop_readers_{false};
  // The follow-ups' workload, keys and counts (callbacks run one at a time;
  // the lock is for TSan's sake across reopens, whose threads differ).
  std::mutex follow_mu_;
  std::unique_ptr<RandomWorkload> follow_work_;
  std::map<std::string, std::string> follow_kv_;
  uint64_t follow_ups_ = 0, follow_refused_ = 0;
};

TEST_P(DeviceConcurrencyTest, SharedPgsExactReadsRacingClose) {
  const auto [mode, durability] = GetParam();
  kSummary->Declare("lost");
  const int writers = static_cast<int>(EnvKnob("PGRING_DEVCONC_WRITERS", 4));
  const int readers = static_cast<int>(EnvKnob("PGRING_DEVCONC_READERS", 2));
  const uint64_t epochs = EnvKnob("PGRING_DEVCONC_EPOCHS", 3);
  const uint64_t txns = EnvKnob("PGRING_DEVCONC_TXNS", 120);
  const auto deadline = std::chrono::seconds(EnvKnob("PGRING_DEVCONC_DEADLINE_S", 600));
  const uint64_t seed = static_cast<uint64_t>(mode) * 10 + static_cast<uint64_t>(durability) + 1;

  UseFileDevice();
  {
    // The point is writes completed on io_uring's completion thread: skip,
    // saying why, where the kernel refuses io_uring (never pass without it).
    FileBlockDeviceOptions probe;
    probe.use_io_uring = true;
    auto d = FileBlockDevice::Open(device_path_, probe);
    ASSERT_OK(d);
    if (!(*d)->using_io_uring()) {
      GTEST_SKIP() << "io_uring is not available here: " << (*d)->io_uring_fallback_reason();
    }
  }
  options_.limits.max_payload_bytes = 64 << 10;
  options_.io_engine = IoEngine::kIoUring;
  options_.durability = durability;
  options_.unsynced_max_delay = std::chrono::milliseconds(5);
  SetLayout(mode, &options_);
  options_.stream.bypass_when_idle = true;  // both paths of the stream
  MkfsOptions mkfs = DefaultMkfs();
  mkfs.backend = BackendOf(mode);
  Mkfs(mkfs);
  ASSERT_OK(Open(options_));

  std::vector<std::unique_ptr<Writer>> ws;
  for (int i = 0; i < writers; ++i) ws.push_back(std::make_unique<Writer>(seed * 100 + i, i));
  WorkloadParams fp = Writer::Params(writers);
  fp.key_prefix = std::string(kKeyPrefix) + "cb.";
  follow_work_ = std::make_unique<RandomWorkload>(seed * 100 + 99, fp);
  std::mt19937_64 rng(seed);
  uint64_t racing_closes = 0, checked = 0;
  ReaderStats total;
  for (uint64_t epoch = 0; epoch < epochs; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    // Racing closes in the later epochs, so the first builds up PGs.
    const bool racing = epoch > 0 && rng() % 2 == 0;
    const uint64_t share = (txns + epochs - 1) / epochs;
    Store* store = store_.get();
    closing_ = false;
    close_returned_ = false;
    stop_readers_ = false;
    std::vector<ReaderStats> rs(readers);
    {
      Watchdog dog(deadline, StoreModeName(mode) + "/" + ModeName(durability) + " epoch " +
                                 std::to_string(epoch) + (racing ? " (racing Close)" : ""));
      std::vector<std::thread> rthreads, wthreads;
      for (int r = 0; r < readers; ++r) {
        rthreads.emplace_back([this, store, s = rng(), st = &rs[r]] { RunReader(store, s, st); });
      }
      for (int i = 0; i < writers; ++i) {
        // Writers end apart; racing a Close, they run until it refuses them.
        const uint64_t n = racing ? UINT64_MAX : share / 2 + rng() % (share / 2 + 1);
        wthreads.emplace_back([this, store, w = ws[i].get(), n] { RunWriter(store, w, n); });
      }
      if (racing) {
        // Close while they run (a few ms in: writers are mid-stream).
        std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 20000));
        closing_ = true;
        EXPECT_OK(store_->Close());
        close_returned_ = true;
        EXPECT_TRUE(IsClosedError(store_->Sync())) << "Sync after Close";
        EXPECT_TRUE(store_->Close().ok()) << "a second Close";
        ++racing_closes;
      }
      for (auto& t : wthreads) t.join();
      WaitOutstanding();
      if (racing) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // reads after Close
      stop_readers_ = true;
      for (auto& t : rthreads) t.join();
    }
    ASSERT_EQ(error_, "");
    for (const auto& r : rs) {
      total.exact_reads += r.exact_reads;
      total.moving_reads += r.moving_reads;
      total.entries += r.entries;
      total.refused_closed += r.refused_closed;
    }
    LogModel all = WholeModel();
    if (!racing) {
      const std::string d = all.Diff(*store_, rng());
      if (!d.empty()) kSummary->Add("lost");
      ASSERT_EQ(d, "") << "quiesced";
      checked += all.live_items();
    }
    ASSERT_EQ(DiffKeys(ws), "");  // closes the store
    options_.tail_block_policy = static_cast<TailBlockPolicy>(rng() % 2);
    ASSERT_OK(Open(options_));
    const std::string d = all.Diff(*store_, rng());
    if (!d.empty()) kSummary->Add("lost");
    ASSERT_EQ(d, "") << "after reopen";
    ASSERT_EQ(all.ProbeFloors(*store_), "");
    checked += all.live_items();
  }
  uint64_t submitted = 0, refused = 0, closed = 0;
  for (const auto& w : ws) {
    submitted += w->submitted;
    refused += w->refused;
    closed += w->closed_refusals;
  }
  EXPECT_GT(submitted, 0u);
  kSummary->Add("runs");
  kSummary->Add("txns_submitted", submitted);
  kSummary->Add("txns_refused_as_modelled", refused + follow_refused_);
  kSummary->Add("follow_ups_from_callbacks", follow_ups_);
  kSummary->Add("racing_closes", racing_closes);
  kSummary->Add("submits_refused_as_closed", closed);
  kSummary->Add("exact_reads", total.exact_reads);
  kSummary->Add("moving_reads", total.moving_reads);
  kSummary->Add("entries_read_moving", total.entries);
  kSummary->Add("reads_refused_as_closed", total.refused_closed);
  kSummary->Add("entries_checked", checked);
  ASSERT_OK(store_->Close());
  store_.reset();
}

INSTANTIATE_TEST_SUITE_P(
    Campaign, DeviceConcurrencyTest,
    ::testing::Combine(kAllStoreModes,
                       ::testing::Values(DurabilityMode::kSyncEach, DurabilityMode::kGroupCommit,
                                         DurabilityMode::kUnsynced)),
    [](const ::testing::TestParamInfo<std::tuple<StoreMode, DurabilityMode>>& i) {
      return StoreModeName(std::get<0>(i.param)) + "_" + ModeName(std::get<1>(i.param));
    });

}  // namespace
}  // namespace pgring::testing
