// Campaign 4 (issue 6): random damage. See docs/RELIABILITY.md, "4. Damage".
//
// A ring store is built with a known random workload (every operation, trims
// so chunks hold stale records, removed PGs so free chunks do too) and
// closed. Then, for PGRING_DAMAGE_ITERATIONS iterations (default 30), one
// piece of damage is made on a copy: a random byte flipped or a whole
// 512-byte sector overwritten (random bytes, zeros or bit flips) somewhere
// in the partition — the label, a committed record range, stale space in an
// owned chunk, a free chunk — or a random byte of a pgring RocksDB value
// (pgring.ptr.*, pgring.chunks.*, pgring.meta) flipped through the RocksDB
// API on a copy of the DB directory. Each damaged copy is checked by fsck
// (the tool library, deep) and opened under both recovery policies. The
// rule: either open succeeds and every read returns exactly the model's
// entries, dups and info, or kDataLoss for the damaged PG; or open (and
// fsck) report the damage — kDataLoss naming the PG and position. Never a
// wrong entry, never a crash or a hang (a watchdog aborts an iteration that
// takes over 120 s). Outcomes are tallied per region; one line
// "CAMPAIGN damage: ..." at the end.
#include <gmock/gmock.h>
#include <rocksdb/db.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "campaigns/campaign_util.h"
#include "device/memory_block_device.h"
#include "format/label.h"
#include "log/ring_layout.h"
#include "format/metadata_keys.h"
#include "store/open_store.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/rocksdb_keys.h"
#include "util/test_util.h"

#ifdef PGRING_CAMPAIGN_WITH_FSCK
#include "tool/fsck.h"
#include "tool/offline_store.h"
#endif

namespace pgring::testing {
namespace {

CampaignSummary* const kSummary = RegisterCampaignSummary("damage");

constexpr uint64_t kDeviceSize = 4ull << 20;
constexpr uint32_t kChunkSize = 64 << 10;

// What a byte of the partition holds.
enum class Region { kLabel, kLabelPad, kCommitted, kStale, kFree, kBeyondChunks };
const char* RegionName(Region r) {
  switch (r) {
    case Region::kLabel: return "label";
    case Region::kLabelPad: return "label_pad";
    case Region::kCommitted: return "committed";
    case Region::kStale: return "owned_stale";
    case Region::kFree: return "free_chunk";
    case Region::kBeyondChunks: return "beyond_chunks";
  }
  return "?";
}

namespace fs = std::filesystem;

void CopyDir(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
}

void DbPut(const std::string& path, const std::string& key, const std::string& value) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocksdb::Options(), path, &raw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  s = db->Put(wo, key, value);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(db->Close().ok());
}

// Aborts the process if Kick() is not called within `limit`: a hang.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { Run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Kick(std::string what) {
    std::lock_guard<std::mutex> l(mu_);
    what_ = std::move(what);
    deadline_ = std::chrono::steady_clock::now() + limit_;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> l(mu_);
    deadline_ = std::chrono::steady_clock::now() + limit_;
    while (!stop_) {
      cv_.wait_for(l, std::chrono::seconds(1));
      if (!stop_ && std::chrono::steady_clock::now() > deadline_) {
        std::fprintf(stderr, "damage campaign: HANG in %s\n", what_.c_str());
        std::abort();
      }
    }
  }
  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string what_ = "setup";
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

class DamageCampaignTest : public ::testing::TestWithParam<std::tuple<TailBlockPolicy, uint64_t>> {
 protected:
  void SetUp() override {
    kSummary->Declare("wrong_entries");
    kSummary->Declare("lost");
    pristine_db_ = dir_.Join("pristine-db");
    auto dev = std::make_shared<MemoryBlockDevice>(kDeviceSize);
    MkfsOptions m;
    m.chunk_size = kChunkSize;
    ASSERT_OK(MkfsWithHooks("mem", MetadataLocation::OwnDb(pristine_db_), m, OpenHooks{dev}));
    Options o = BaseOptions(RecoveryPolicy::kRefuse);
    auto s = OpenWithHooks("mem", MetadataLocation::OwnDb(pristine_db_), o, OpenHooks{dev});
    ASSERT_OK(s);
    std::unique_ptr<Store> store = std::move(s).value();
    WorkloadParams wp;
    wp.max_pgs = 8;
    wp.keep_entries = 25;
    wp.keep_dups = 15;
    wp.max_payload = 500;
    wp.large_payload_rate = 0.02;
    RandomWorkload work(std::get<1>(GetParam()), wp);
    int committed = 0;
    for (int i = 0; committed < 400 && i < 2000; ++i) {
      Transaction t = work.Next(model_);
      LogModel next = model_;
      if (next.Apply(t) != absl::StatusCode::kOk) continue;
      absl::Status st = store->Commit(std::move(t));
      if (absl::IsResourceExhausted(st)) continue;  // a full partition: fine
      ASSERT_OK(st);
      model_ = std::move(next);
      ++committed;
    }
    ASSERT_EQ(model_.Diff(*store), "");
    ASSERT_OK(store->Close());
    store.reset();
    image_ = dev->ReadRaw(0, kDeviceSize);
    BuildRegionMap();
  }

  Options BaseOptions(RecoveryPolicy p) const {
    Options o;
    o.log_sink = NullLogSink();
    o.reserve_chunks_per_pg = 1;
    o.tail_block_policy = std::get<0>(GetParam());
    o.recovery_policy = p;
    o.limits.max_payload_bytes = 64 << 10;
    return o;
  }

  // Classifies every byte of the pristine partition; `owner_` names the PG
  // whose chunk holds it (committed and stale bytes).
  void BuildRegionMap() {
    auto label = Label::Decode(image_.substr(0, kLabelEncodedSize));
    ASSERT_OK(label);
    geo_.block_size = label->block_size;
    geo_.chunk_size = label->chunk_size;
    geo_.data_offset = label->data_offset;
    geo_.chunk_count = label->chunk_count;
    region_.assign(kDeviceSize, Region::kBeyondChunks);
    owner_.assign(kDeviceSize, -1);
    for (uint64_t i = 0; i < kLabelRegionSize; ++i) {
      region_[i] = i < kLabelEncodedSize ? Region::kLabel : Region::kLabelPad;
    }
    for (uint64_t c = 0; c < geo_.chunk_count; ++c) {
      for (uint64_t i = geo_.ChunkOffset(c); i < geo_.ChunkOffset(c) + kChunkSize; ++i) {
        region_[i] = Region::kFree;
      }
    }
    auto kv = ReadAllKeys(pristine_db_);
    for (const auto& [key, value] : kv) {
      if (key.rfind(kPgPointerPrefix, 0) == 0) {
        PgId pg;
        ASSERT_TRUE(DecodePgKey(std::string_view(key).substr(kPgPointerPrefix.size()), &pg));
        auto ptr = PgPointer::Decode(value);
        ASSERT_OK(ptr);
        auto chunks = PgChunkList::Decode(kv.at(PgChunksKey(pg)));
        ASSERT_OK(chunks);
        const int idx = static_cast<int>(pgs_.size());
        pgs_.push_back(pg);
        for (uint32_t c : chunks->chunks) {
          for (uint64_t i = geo_.ChunkOffset(c); i < geo_.ChunkOffset(c) + kChunkSize; ++i) {
            region_[i] = Region::kStale;
            owner_[i] = idx;
          }
        }
        std::vector<Extent> ex;
        if (ptr->tail > ptr->head) MapRange(*chunks, geo_, ptr->head, ptr->tail - ptr->head, &ex);
        for (const Extent& e : ex) {
          for (uint64_t i = e.device_offset; i < e.device_offset + e.length; ++i) {
            region_[i] = Region::kCommitted;
          }
        }
      }
      if (key.rfind("pgring.", 0) == 0) db_keys_.push_back(key);
    }
    for (Region r : region_) ++region_bytes_[r];
  }

  // A random offset in `r` (falls back to anywhere if `r` is empty).
  uint64_t OffsetIn(Region r, std::mt19937_64& rng) {
    if (region_bytes_[r] == 0) return rng() % kDeviceSize;
    for (;;) {
      uint64_t off = rng() % kDeviceSize;
      if (region_[off] == r) return off;
    }
  }

  // What a range of damaged bytes hit: the "worst" region in it, and the
  // PGs whose committed bytes it touches.
  Region Classify(uint64_t off, uint64_t len, std::set<int>* pgs) const {
    Region worst = Region::kBeyondChunks;
    auto rank = [](Region r) {
      switch (r) {
        case Region::kLabel: return 5;
        case Region::kCommitted: return 4;
        case Region::kStale: return 3;
        case Region::kFree: return 2;
        case Region::kLabelPad: return 1;
        default: return 0;
      }
    };
    for (uint64_t i = off; i < off + len; ++i) {
      if (rank(region_[i]) > rank(worst)) worst = region_[i];
      if (region_[i] == Region::kCommitted) pgs->insert(owner_[i]);
    }
    return worst;
  }

  // Checks an opened store against the model: every read exact or
  // kDataLoss. Returns the number of PGs that answered kDataLoss.
  int CheckReads(const Store& store, const std::string& what) {
    int damaged = 0;
    auto list = store.ListPgs();
    EXPECT_OK(list);
    std::vector<PgId> want;
    for (const auto& [id, pg] : model_.pgs()) want.push_back(id);
    if (list.ok()) EXPECT_EQ(*list, want) << what;
    for (const auto& [id, pg] : model_.pgs()) {
      bool pg_damaged = false;
      auto bad = [&](const absl::Status& s, const char* op) {
        if (s.code() == absl::StatusCode::kDataLoss) {
          pg_damaged = true;
          EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(id.ToString()))
              << what << " " << op;
          return;
        }
        ADD_FAILURE() << what << ": PG " << id.ToString() << " " << op << ": " << s;
      };
      auto e = store.ReadEntries(id);
      if (e.ok()) {
        std::vector<LogEntry> m;
        for (const auto& [v, p] : pg.entries) m.push_back(LogEntry{v, p});
        if (*e != m) {
          kSummary->Add("wrong_entries");
          ADD_FAILURE() << what << ": PG " << id.ToString() << " returned wrong entries";
        } else {
          kSummary->Add("entries_checked", m.size());
        }
      } else {
        bad(e.status(), "ReadEntries");
      }
      auto d = store.ReadDups(id);
      if (d.ok()) {
        std::vector<LogEntry> m;
        for (const auto& [v, p] : pg.dups) m.push_back(LogEntry{v, p});
        if (*d != m) {
          kSummary->Add("wrong_entries");
          ADD_FAILURE() << what << ": PG " << id.ToString() << " returned wrong dups";
        } else {
          kSummary->Add("entries_checked", m.size());
        }
      } else {
        bad(d.status(), "ReadDups");
      }
      auto info = store.ReadInfo(id);
      if (info.ok()) {
        if (!pg.info || *info != *pg.info) {
          kSummary->Add("wrong_entries");
          ADD_FAILURE() << what << ": PG " << id.ToString() << " returned a wrong info";
        }
      } else if (absl::IsNotFound(info.status())) {
        if (pg.info) {
          kSummary->Add("wrong_entries");
          ADD_FAILURE() << what << ": PG " << id.ToString() << " lost its info without an error";
        }
      } else {
        bad(info.status(), "ReadInfo");
      }
      auto st = store.GetPgStats(id);
      if (st.ok() && st->damaged) pg_damaged = true;
      damaged += pg_damaged;
    }
    return damaged;
  }

  TempDir dir_;
  std::string pristine_db_;
  std::string image_;
  LogModel model_{Limits()};
  Geometry geo_;
  std::vector<Region> region_;
  std::vector<int> owner_;
  std::map<Region, uint64_t> region_bytes_;
  std::vector<PgId> pgs_;  // by owner index
  std::vector<std::string> db_keys_;
};

TEST_P(DamageCampaignTest, RandomFlipsAreDetectedOrHarmless) {
  const uint64_t iterations = EnvKnob("PGRING_DAMAGE_ITERATIONS", 30);
  std::mt19937_64 rng(std::get<1>(GetParam()) * 1000003);
  Watchdog watchdog(std::chrono::seconds(120));
  ASSERT_FALSE(db_keys_.empty());
  for (uint64_t it = 0; it < iterations; ++it) {
    std::string image = image_;
    const std::string db = dir_.Join("db-" + std::to_string(it));
    CopyDir(pristine_db_, db);
    // --- Make the damage.
    std::string what;
    std::string region_name;
    std::set<int> hit_pgs;
    std::string hit_key;
    Region region = Region::kFree;
    bool in_db = rng() % 10 < 3;
    uint64_t flipped = 0;
    if (in_db) {
      auto kv = ReadAllKeys(db);
      hit_key = db_keys_[rng() % db_keys_.size()];
      std::string v = kv.at(hit_key);
      size_t pos = rng() % v.size();
      v[pos] = static_cast<char>(v[pos] ^ (1 + rng() % 255));
      DbPut(db, hit_key, v);
      flipped = 1;
      region_name = hit_key.rfind(kPgPointerPrefix, 0) == 0  ? "db_ptr"
                    : hit_key.rfind(kPgChunksPrefix, 0) == 0 ? "db_chunks"
                                                              : "db_meta";
      what = "flip of byte " + std::to_string(pos) + " of RocksDB value " + region_name;
    } else {
      // Pick the region first, so rare regions get hit too.
      static const Region kPick[] = {Region::kLabel,     Region::kLabelPad, Region::kCommitted,
                                     Region::kCommitted, Region::kCommitted, Region::kStale,
                                     Region::kStale,     Region::kFree};
      Region want = kPick[rng() % (sizeof(kPick) / sizeof(kPick[0]))];
      uint64_t off = OffsetIn(want, rng);
      uint64_t len = 1;
      std::string kind;
      if (rng() % 2 == 0) {
        image[off] = static_cast<char>(image[off] ^ (1 + rng() % 255));
        kind = "byte";
      } else {
        off -= off % 512;
        len = 512;
        int how = static_cast<int>(rng() % 3);
        for (uint64_t i = off; i < off + len; ++i) {
          char c = how == 0 ? static_cast<char>(rng()) : how == 1 ? '\0'
                                                                   : static_cast<char>(image[i] ^ (1 << (rng() % 8)));
          image[i] = c;
        }
        kind = how == 0 ? "sector-random" : how == 1 ? "sector-zero" : "sector-bitflips";
      }
      for (uint64_t i = off; i < off + len; ++i) flipped += image[i] != image_[i];
      if (flipped == 0) {  // e.g. zeroing a zero sector: no damage at all
        kSummary->Add("no_op_flips");
        continue;
      }
      region = Classify(off, len, &hit_pgs);
      region_name = RegionName(region);
      what = kind + " at partition offset " + std::to_string(off) + " (" + region_name + ")";
    }
    what = "iteration " + std::to_string(it) + ": " + what;
    SCOPED_TRACE(what);
    watchdog.Kick(what);
    kSummary->Add("iterations");
    kSummary->Add("bytes_flipped", flipped);
    kSummary->Add("hit_" + region_name);
    std::string names;
    for (int i : hit_pgs) names += pgs_[i].ToString() + " ";
    if (!hit_key.empty() && hit_key != kMetaKey) {
      PgId pg;
      std::string_view k(hit_key);
      k.remove_prefix(hit_key.rfind(kPgPointerPrefix, 0) == 0 ? kPgPointerPrefix.size()
                                                               : kPgChunksPrefix.size());
      if (DecodePgKey(k, &pg)) names += pg.ToString() + " ";
    }

    // --- fsck (deep) on the damaged copy.
    int fsck_errors = -1;
#ifdef PGRING_CAMPAIGN_WITH_FSCK
    {
      const std::string part = dir_.Join("part-" + std::to_string(it));
      {
        std::ofstream f(part, std::ios::binary | std::ios::trunc);
        f.write(image.data(), static_cast<std::streamsize>(image.size()));
      }
      auto off = tool::OfflineStore::Open(part, db, false);
      if (!off.ok()) {
        kSummary->Add("fsck_cannot_open");
        fsck_errors = 1;
      } else {
        std::ostringstream out, err;
        tool::ToolContext ctx;
        ctx.dev = part;
        ctx.db = db;
        ctx.out = &out;
        ctx.err = &err;
        tool::FsckOptions fo;
        fo.deep = true;
        auto r = tool::RunFsck(**off, fo, ctx);
        ASSERT_OK(r);
        fsck_errors = static_cast<int>(r->errors());
        kSummary->Add(fsck_errors > 0 ? "fsck_found_errors" : "fsck_clean");
        (*off)->Release();
      }
      fs::remove(part);
    }
#endif

    // --- Open under both policies, each on its own copy.
    bool refused_under_refuse = false;
    for (RecoveryPolicy policy : {RecoveryPolicy::kRefuse, RecoveryPolicy::kMarkDamaged}) {
      const std::string pname = policy == RecoveryPolicy::kRefuse ? "refuse" : "mark";
      const std::string pdb = db + "-" + pname;
      CopyDir(db, pdb);
      auto dev = std::make_shared<MemoryBlockDevice>(kDeviceSize);
      dev->WriteRaw(0, image);
      auto s = OpenWithHooks("mem", MetadataLocation::OwnDb(pdb), BaseOptions(policy),
                             OpenHooks{dev});
      if (!s.ok()) {
        const absl::Status& e = s.status();
        const std::string msg(e.message());
        const bool label = region == Region::kLabel && !in_db;
        if (e.code() == absl::StatusCode::kDataLoss ||
            (label && e.code() == absl::StatusCode::kFailedPrecondition)) {
          kSummary->Add(pname + "_open_refused");
          if (policy == RecoveryPolicy::kRefuse) refused_under_refuse = true;
          // Named: the PG (and the position, for record damage), the label,
          // or the store metadata.
          if (label) {
            EXPECT_THAT(msg, ::testing::HasSubstr("label")) << e;
          } else if (hit_key == kMetaKey) {
            EXPECT_THAT(msg, ::testing::HasSubstr("pgring.meta")) << e;
          } else {
            bool named = false;
            for (const auto& [id, pg] : model_.pgs()) named |= msg.find("PG " + id.ToString()) != std::string::npos;
            named |= msg.find("chunk") != std::string::npos;
            EXPECT_TRUE(named) << "the error names no PG or chunk: " << e;
            if (region == Region::kCommitted && !in_db) {
              EXPECT_THAT(msg, ::testing::HasSubstr("lpos")) << e;
              bool names_hit = false;
              for (int i : hit_pgs) names_hit |= msg.find("PG " + pgs_[i].ToString()) != std::string::npos;
              EXPECT_TRUE(names_hit) << "damage in " << names << "but: " << e;
            }
          }
        } else {
          ADD_FAILURE() << pname << ": open failed with an unexpected code: " << e;
        }
        continue;
      }
      std::unique_ptr<Store> store = std::move(s).value();
      int damaged = CheckReads(*store, what + " (" + pname + ")");
      kSummary->Add(pname + "_open_ok");
      if (damaged > 0) {
        kSummary->Add(pname + "_pgs_reporting_dataloss", damaged);
      } else {
        kSummary->Add(pname + "_all_reads_exact");
      }
      // Under kMarkDamaged the healthy PGs must be writable and the damaged
      // ones removable.
      if (policy == RecoveryPolicy::kMarkDamaged && damaged > 0) {
        for (const auto& [id, pg] : model_.pgs()) {
          auto st = store->GetPgStats(id);
          if (st.ok() && st->damaged) {
            Transaction rm;
            rm.RemovePg(id);
            EXPECT_OK(store->Commit(std::move(rm)));
            kSummary->Add("damaged_pgs_removed");
          }
        }
      }
      EXPECT_OK(store->Close());
      store.reset();
    }
    // fsck and open agree: what open refuses, fsck reports.
    if (refused_under_refuse && fsck_errors == 0) {
      ADD_FAILURE() << "open refused the store but deep fsck found nothing";
    }
    kSummary->Add("outcome_" + region_name + (refused_under_refuse ? "_detected" : "_opened"));
    fs::remove_all(db);
    fs::remove_all(db + "-refuse");
    fs::remove_all(db + "-mark");
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Campaign, DamageCampaignTest,
                         ::testing::Combine(::testing::Values(TailBlockPolicy::kRewriteTailBlock,
                                                              TailBlockPolicy::kNeverRewrite),
                                            ::testing::Values(1)),
                         [](const auto& i) {
                           return std::string(std::get<0>(i.param) ==
                                                      TailBlockPolicy::kRewriteTailBlock
                                                  ? "Rewrite_"
                                                  : "NeverRewrite_") +
                                  std::to_string(std::get<1>(i.param));
                         });

}  // namespace
}  // namespace pgring::testing
