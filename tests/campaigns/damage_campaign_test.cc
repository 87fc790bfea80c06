// Campaign 4 (issue 6): random damage. See docs/RELIABILITY.md, "4. Damage".
//
// A ring store is built with a known random workload (every operation, trims
// so chunks hold stale records, removed PGs so free chunks do too) and
// closed, in each log layout (issue 13): per-PG rings, and the log stream
// (every transaction joins it, home_bytes four blocks, so at close PGs have
// bytes only in the stream: asserted, from the store's stats and from the
// closed image). Then, for PGRING_DAMAGE_ITERATIONS iterations per case (default
// 15: four cases now where there were two, same total), one piece of damage
// is made on a copy: a random byte flipped or a whole 512-byte sector
// overwritten (random bytes, zeros or bit flips) somewhere in the partition
// — the label, a committed record range, stale space in an owned chunk, a
// free chunk; in the stream layout half of them in the stream: a committed
// stream record that some PG's unhomed bytes are read through
// (stream_unhomed), a committed record no PG needs any more (stream_homed),
// stale stream space (stream_stale) — or a random byte of a pgring RocksDB
// value (pgring.ptr.*, pgring.chunks.*, pgring.meta, pgring.stream.ptr,
// pgring.stream.chunks) flipped through the RocksDB API on a copy of the DB
// directory, or (stream layout) the stream pointer replaced by an older one,
// correctly sealed (its tail at an earlier record past every record a PG's
// pointer does not count, or its head moved back): a pointer older than the
// stream's contents. Each damaged copy is checked
// by the library's Verify (deep fsck) and opened under both recovery policies.
// The rule: either open succeeds and every read returns exactly the model's
// entries, dups and info, or kDataLoss for the damaged PG; or open (and
// fsck) report the damage — kDataLoss naming the PG and position. Damage in
// the stream may cost only the PGs whose unhomed bytes are read through the
// damaged record or what the pass skips after it, and those with no record
// past where the pass resumes, whose pointers may lag records that lay there
// (named, with the stream lpos); damage where no PG needs the stream none;
// an older stream pointer only the PGs with bytes past its tail. Never a wrong entry, never a crash or a hang (a watchdog aborts an
// iteration that takes over 120 s). Outcomes are tallied per region; one
// line "CAMPAIGN damage: ..." at the end.
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
#include <thread>

#include "campaigns/campaign_util.h"
#include "device/memory_block_device.h"
#include "format/compressed_stream_record.h"
#include "format/label.h"
#include "log/ring_layout.h"
#include "log/ring_reader.h"
#include "format/metadata_keys.h"
#include "format/record.h"
#include "pgring/verify.h"
#include "store/open_store.h"
#include "util/log_model.h"
#include "util/random_workload.h"
#include "util/rocksdb_keys.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

CampaignSummary* const kSummary = RegisterCampaignSummary("damage");

constexpr uint64_t kDeviceSize = 4ull << 20;
constexpr uint32_t kChunkSize = 64 << 10;

// What a byte of the partition holds.
// The stream regions (LogLayout::kStream) split the stream's chunks:
// kStreamUnhomed are the committed stream records that reading some PG's
// unhomed bytes goes through (from the PG's stream_pos to the last record
// holding its bytes: damage there may cost that PG, never another);
// kStreamHomed the committed records [head, tail) no PG needs any more
// (damage there costs nobody); kStreamStale the rest of the stream's
// chunks (never read).
enum class Region {
  kLabel,
  kLabelPad,
  kCommitted,
  kStale,
  kFree,
  kBeyondChunks,
  kStreamUnhomed,
  kStreamHomed,
  kStreamStale
};
const char* RegionName(Region r) {
  switch (r) {
    case Region::kLabel: return "label";
    case Region::kLabelPad: return "label_pad";
    case Region::kCommitted: return "committed";
    case Region::kStale: return "owned_stale";
    case Region::kFree: return "free_chunk";
    case Region::kBeyondChunks: return "beyond_chunks";
    case Region::kStreamUnhomed: return "stream_unhomed";
    case Region::kStreamHomed: return "stream_homed";
    case Region::kStreamStale: return "stream_stale";
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

// The layout (StoreMode::kRing: per-PG rings; kRingStream: the log
// stream, which every transaction joins), the tail-block policy, the seed.
using DamageParam = std::tuple<StoreMode, TailBlockPolicy, uint64_t>;

class DamageCampaignTest : public ::testing::TestWithParam<DamageParam> {
 protected:
  bool stream() const { return std::get<0>(GetParam()) == StoreMode::kRingStream; }

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
    RandomWorkload work(std::get<2>(GetParam()), wp);
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
    if (stream()) {
      // The campaign must damage a stream that holds something: records,
      // and PGs whose last bytes are only there.
      ASSERT_GT(store->GetStoreStats().stream_records, 0u);
      uint64_t unhomed = 0;
      for (const auto& [id, pg] : model_.pgs()) {
        auto st = store->GetPgStats(id);
        ASSERT_OK(st);
        unhomed += st->unhomed_bytes;
      }
      ASSERT_GT(unhomed, 0u) << "no PG has bytes only in the log stream at close";
    }
    ASSERT_OK(store->Close());
    store.reset();
    image_ = dev->ReadRaw(0, kDeviceSize);
    BuildRegionMap();
    if (stream()) {
      ASSERT_GT(region_bytes_[Region::kStreamUnhomed], 0u)
          << "the closed store has no unhomed bytes in its log stream";
      // The default compresses them: the flips land in lz4 blocks too.
      ASSERT_GT(compressed_records_, 0u) << "no compressed record in the log stream";
    }
  }

  Options BaseOptions(RecoveryPolicy p) const {
    Options o;
    o.log_sink = NullLogSink();
    o.reserve_chunks_per_pg = 1;
    SetLayout(std::get<0>(GetParam()), &o);
    // Records go home four blocks at a time (the default, 0, homes only for
    // room), so the rings hold homed records to damage as well as the
    // stream, and at close most PGs still have several records only in the
    // stream.
    o.stream.home_bytes = 4 * 4096;
    o.stream.resident_bytes = 4096;  // homes read bytes back from the stream
    o.tail_block_policy = std::get<1>(GetParam());
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
        // Bytes [homed, tail) are not on the ring (they are in the log
        // stream): the ring's chunks hold stale bytes there.
        std::vector<Extent> ex;
        const uint64_t homed = ptr->homed();
        if (homed > ptr->head) MapRange(*chunks, geo_, ptr->head, homed - ptr->head, &ex);
        if (ptr->unhomed > 0) {
          unhomed_.push_back(Unhomed{idx, ptr->stamp, homed, ptr->tail, ptr->stream_pos});
        }
        for (const Extent& e : ex) {
          for (uint64_t i = e.device_offset; i < e.device_offset + e.length; ++i) {
            region_[i] = Region::kCommitted;
          }
        }
      }
      if (key.rfind("pgring.", 0) == 0) db_keys_.push_back(key);
    }
    if (kv.count(std::string(kStreamPointerKey))) {
      ASSERT_NO_FATAL_FAILURE(MapStream(kv));
    } else {
      ASSERT_FALSE(stream()) << "a store in the stream layout has no log stream keys";
    }
    for (Region r : region_) ++region_bytes_[r];
  }

  // The log stream's regions: its records [head, tail), read with the
  // reader recovery uses, and which PGs' unhomed bytes each holds.
  void MapStream(const std::map<std::string, std::string>& kv) {
    auto sp = StreamPointer::Decode(kv.at(std::string(kStreamPointerKey)));
    ASSERT_OK(sp);
    auto sc = PgChunkList::Decode(kv.at(std::string(kStreamChunksKey)));
    ASSERT_OK(sc);
    stream_ptr_ = *sp;
    stream_chunks_ = *sc;
    for (uint32_t c : sc->chunks) {
      for (uint64_t i = geo_.ChunkOffset(c); i < geo_.ChunkOffset(c) + kChunkSize; ++i) {
        region_[i] = Region::kStreamStale;
      }
    }
    MemoryBlockDevice dev(kDeviceSize);
    dev.WriteRaw(0, image_);
    RingReader reader(&dev, geo_, *sc, "log stream", kStreamStamp, sp->head, sp->tail);
    RingRecord rec;
    absl::Status s;
    // For each PG with unhomed bytes, the end of the last record holding
    // some of them, and the records that do.
    std::vector<uint64_t> last_end(unhomed_.size(), 0);
    std::vector<std::vector<uint64_t>> records_of(unhomed_.size());
    std::string scratch;
    while ((s = reader.Next(&rec)).ok()) {
      stream_records_.push_back(StreamRecord{rec.lpos, rec.size(), rec.header.seq});
      compressed_records_ += (rec.header.type & ~kSkippableBit) == kRecordStreamLz4;
      auto items = StreamRecordItems(rec.header.type, rec.body, &scratch);
      ASSERT_OK(items.status());
      ASSERT_OK(ForEachItem(*items, [&](const Item& item) {
        for (size_t u = 0; u < unhomed_.size(); ++u) {
          const Unhomed& w = unhomed_[u];
          if (item.pg_stamp == w.stamp && rec.lpos >= w.stream_pos &&
              item.lpos + item.payload.size() > w.homed) {
            last_end[u] = rec.lpos + rec.size();
            if (records_of[u].empty() || records_of[u].back() != rec.lpos) {
              records_of[u].push_back(rec.lpos);
            }
            // Records its pointer does not count (it lags them).
            if (item.lpos + item.payload.size() > w.tail) {
              uncounted_end_ = std::max(uncounted_end_, rec.lpos + rec.size());
            }
          }
        }
        return absl::OkStatus();
      }));
    }
    ASSERT_TRUE(absl::IsOutOfRange(s)) << "the pristine stream does not read back: " << s;
    for (size_t u = 0; u < unhomed_.size(); ++u) {
      ASSERT_GT(last_end[u], unhomed_[u].stream_pos)
          << "PG " << pgs_[unhomed_[u].owner].ToString() << ": unhomed bytes not in the stream";
      unhomed_[u].last_end = last_end[u];
    }
    for (size_t ri = 0; ri < stream_records_.size(); ++ri) {
      const StreamRecord& r = stream_records_[ri];
      // Past damage in r the pass resumes at the next record a pointer's
      // stream_pos names. It costs the PGs whose bytes are read from r on:
      // those with a record in [r, resume), and those with none from
      // resume on (their pointers may lag their newest records, which
      // could have lain in what was skipped).
      uint64_t resume = stream_ptr_.tail;
      for (const Unhomed& w : unhomed_) {
        if (w.stream_pos > r.lpos) resume = std::min(resume, w.stream_pos);
      }
      std::vector<int> cost;
      for (size_t u = 0; u < unhomed_.size(); ++u) {
        const Unhomed& w = unhomed_[u];
        if (r.lpos < w.stream_pos) continue;
        bool skipped = false, after = false;
        for (uint64_t at : records_of[u]) {
          skipped |= at >= r.lpos && at < resume;
          after |= at >= resume;
        }
        if (skipped || !after) cost.push_back(w.owner);
      }
      std::vector<Extent> ex;
      MapRange(*sc, geo_, r.lpos, r.size, &ex);
      for (const Extent& e : ex) {
        for (uint64_t i = e.device_offset; i < e.device_offset + e.length; ++i) {
          region_[i] = cost.empty() ? Region::kStreamHomed : Region::kStreamUnhomed;
        }
        stream_extents_[e.device_offset] = {e.length, ri};
      }
      record_cost_.push_back(std::move(cost));
    }
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
        case Region::kLabel: return 7;
        case Region::kCommitted: return 6;
        case Region::kStreamUnhomed: return 5;
        case Region::kStreamHomed: return 4;
        case Region::kStale: return 3;
        case Region::kStreamStale: return 3;
        case Region::kFree: return 2;
        case Region::kLabelPad: return 1;
        default: return 0;
      }
    };
    for (uint64_t i = off; i < off + len; ++i) {
      if (rank(region_[i]) > rank(worst)) worst = region_[i];
      if (region_[i] == Region::kCommitted) pgs->insert(owner_[i]);
      if (region_[i] == Region::kStreamUnhomed) {
        auto it = stream_extents_.upper_bound(i);
        if (it == stream_extents_.begin()) std::abort();  // the map covers every such byte
        --it;
        const std::vector<int>& cost = record_cost_[it->second.second];
        pgs->insert(cost.begin(), cost.end());
      }
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
  // Stream mode: the PGs with unhomed bytes, the stream's committed records,
  // and per device byte of them the PGs that damage there may cost.
  struct Unhomed {
    int owner;
    uint32_t stamp;
    uint64_t homed, tail, stream_pos;
    uint64_t last_end = 0;  // just past the last stream record holding its bytes
  };
  struct StreamRecord {
    uint64_t lpos, size, seq;
  };
  std::vector<Unhomed> unhomed_;
  std::vector<StreamRecord> stream_records_;
  uint64_t compressed_records_ = 0;  // of them, kRecordStreamLz4
  std::vector<std::vector<int>> record_cost_;  // per stream record
  // device offset -> (length, stream record) of each extent of a record
  std::map<uint64_t, std::pair<uint64_t, size_t>> stream_extents_;
  StreamPointer stream_ptr_;
  PgChunkList stream_chunks_;
  // Just past the last stream record holding bytes a PG's pointer does not
  // count.
  uint64_t uncounted_end_ = 0;
};

TEST_P(DamageCampaignTest, RandomFlipsAreDetectedOrHarmless) {
  const uint64_t iterations = EnvKnob("PGRING_DAMAGE_ITERATIONS", 15);
  std::mt19937_64 rng(std::get<2>(GetParam()) * 1000003);
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
    // Stream mode: the stream pointer replaced by an older one, correctly
    // sealed (its tail at an earlier record, with that record's sequence,
    // or its head moved back): the stream holds more than it says.
    bool old_stream_ptr = in_db && stream() && rng() % 3 == 0;
    if (old_stream_ptr) {
      StreamPointer p = stream_ptr_;
      if (rng() % 2 == 0 && !stream_records_.empty()) {
        const StreamRecord& r = stream_records_[rng() % stream_records_.size()];
        // Not before a record that some PG's pointer does not count: the
        // records past an older tail would read as uncommitted, as those of
        // a batch that never reached RocksDB, and no reader can tell (nor
        // would the OSD's keys, rolled back with them). Counted ones are
        // missed, by name.
        p.tail = std::max(r.lpos, std::min(uncounted_end_, stream_ptr_.tail));
        for (const StreamRecord& q : stream_records_) {
          if (q.lpos == p.tail) p.tail_seq = q.seq;
        }
        if (p.tail == stream_ptr_.tail) p.tail_seq = stream_ptr_.tail_seq;
        p.head = std::min(p.head, p.tail);
        // The PGs with bytes at or past the new tail lose them.
        for (const Unhomed& w : unhomed_) {
          if (w.last_end > p.tail) hit_pgs.insert(w.owner);
        }
      } else {
        p.head = stream_chunks_.base + rng() % (p.head - stream_chunks_.base + 1);
      }
      hit_key = std::string(kStreamPointerKey);
      DbPut(db, hit_key, p.Encode());
      flipped = 1;
      region_name = "db_stream_ptr_old";
      what = "stream pointer head " + std::to_string(stream_ptr_.head) + " tail " +
             std::to_string(stream_ptr_.tail) + " seq " + std::to_string(stream_ptr_.tail_seq) +
             " replaced by head " + std::to_string(p.head) + " tail " + std::to_string(p.tail) +
             " seq " + std::to_string(p.tail_seq);
    } else if (in_db) {
      auto kv = ReadAllKeys(db);
      hit_key = db_keys_[rng() % db_keys_.size()];
      std::string v = kv.at(hit_key);
      size_t pos = rng() % v.size();
      v[pos] = static_cast<char>(v[pos] ^ (1 + rng() % 255));
      DbPut(db, hit_key, v);
      flipped = 1;
      region_name = hit_key.rfind(kPgPointerPrefix, 0) == 0  ? "db_ptr"
                    : hit_key.rfind(kPgChunksPrefix, 0) == 0 ? "db_chunks"
                    : hit_key == kStreamPointerKey           ? "db_stream_ptr"
                    : hit_key == kStreamChunksKey            ? "db_stream_chunks"
                                                              : "db_meta";
      what = "flip of byte " + std::to_string(pos) + " of RocksDB value " + region_name;
    } else {
      // Pick the region first, so rare regions get hit too.
      static const Region kPick[] = {Region::kLabel,     Region::kLabelPad, Region::kCommitted,
                                     Region::kCommitted, Region::kCommitted, Region::kStale,
                                     Region::kStale,     Region::kFree};
      // Stream mode: half of the partition damage goes to the stream.
      static const Region kPickStream[] = {Region::kStreamUnhomed, Region::kStreamUnhomed,
                                           Region::kStreamUnhomed, Region::kStreamHomed,
                                           Region::kStreamStale};
      Region want = stream() && rng() % 2 == 0
                        ? kPickStream[rng() % (sizeof(kPickStream) / sizeof(kPickStream[0]))]
                        : kPick[rng() % (sizeof(kPick) / sizeof(kPick[0]))];
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
    if (!hit_key.empty() && hit_key != kMetaKey && hit_key.rfind("pgring.stream.", 0) != 0) {
      PgId pg;
      std::string_view k(hit_key);
      k.remove_prefix(hit_key.rfind(kPgPointerPrefix, 0) == 0 ? kPgPointerPrefix.size()
                                                               : kPgChunksPrefix.size());
      if (DecodePgKey(k, &pg)) names += pg.ToString() + " ";
    }

    // --- fsck (deep) on the damaged copy.
    int fsck_errors = -1;
    {
      const std::string part = dir_.Join("part-" + std::to_string(it));
      {
        std::ofstream f(part, std::ios::binary | std::ios::trunc);
        f.write(image.data(), static_cast<std::streamsize>(image.size()));
      }
      VerifyOptions vo;
      vo.deep = true;
      auto r = Verify(part, MetadataLocation::OwnDb(db), vo);
      if (!r.ok()) {
        kSummary->Add("fsck_cannot_open");
        fsck_errors = 1;
      } else {
        fsck_errors = static_cast<int>(r->errors);
        kSummary->Add(fsck_errors > 0 ? "fsck_found_errors" : "fsck_clean");
      }
      fs::remove(part);
    }

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
          // What no reader interprets may not refuse the store.
          EXPECT_FALSE(!in_db && (region == Region::kStreamStale ||
                                  region == Region::kStreamHomed))
              << "damage where no PG needs the stream refused the open: " << e;
          if (label) {
            EXPECT_THAT(msg, ::testing::HasSubstr("label")) << e;
          } else if (hit_key == kMetaKey) {
            EXPECT_THAT(msg, ::testing::HasSubstr("pgring.meta")) << e;
          } else if (hit_key.rfind("pgring.stream.", 0) == 0 && !old_stream_ptr) {
            EXPECT_THAT(msg, ::testing::HasSubstr("log stream")) << e;
          } else if (old_stream_ptr ||
                     (!in_db && region == Region::kStreamUnhomed)) {
            // A PG whose unhomed bytes the damage (or the older pointer)
            // made unreadable, named with the stream position.
            EXPECT_THAT(msg, ::testing::HasSubstr("stream lpos")) << e;
            bool names_hit = false;
            for (int i : hit_pgs) names_hit |= msg.find("PG " + pgs_[i].ToString() + ":") != std::string::npos;
            EXPECT_TRUE(names_hit) << "damage costs at most " << names << "but: " << e;
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
      if (!in_db && (region == Region::kStreamStale || region == Region::kStreamHomed)) {
        EXPECT_EQ(damaged, 0) << "damage where no PG needs the stream cost a PG";
      }
      if (damaged > 0 && (old_stream_ptr || (!in_db && region == Region::kStreamUnhomed))) {
        // Only the PGs whose bytes the damage made unreadable are marked.
        for (const auto& [id, pg] : model_.pgs()) {
          auto st = store->GetPgStats(id);
          if (!st.ok() || !st->damaged) continue;
          bool hit = false;
          for (int i : hit_pgs) hit |= pgs_[i] == id;
          EXPECT_TRUE(hit) << "PG " << id.ToString() << " marked damaged; damage costs at most "
                           << names;
        }
      }
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
                         ::testing::Combine(::testing::Values(StoreMode::kRing,
                                                              StoreMode::kRingStream),
                                            ::testing::Values(TailBlockPolicy::kRewriteTailBlock,
                                                              TailBlockPolicy::kNeverRewrite),
                                            ::testing::Values(1)),
                         [](const auto& i) {
                           return StoreModeName(std::get<0>(i.param)) + "_" +
                                  (std::get<1>(i.param) == TailBlockPolicy::kRewriteTailBlock
                                       ? "Rewrite_"
                                       : "NeverRewrite_") +
                                  std::to_string(std::get<2>(i.param));
                         });

}  // namespace
}  // namespace pgring::testing
