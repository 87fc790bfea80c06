// CheckOptions and CheckMkfsOptions (store/options_check.h): every rule on
// Options, StreamOptions and Limits, and on MkfsOptions' RocksDB fields. For
// each rule a bad value is refused with kInvalidArgument and a message that
// names the field and its range, and the values at the range's ends pass;
// the defaults pass. Then through the public Mkfs and Store::Open, each
// backend: a bad value is refused before anything is written, and the same
// store opens once it is mended.
#include <gmock/gmock.h>
#include <rocksdb/env.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pgring/device.h"
#include "pgring/store.h"
#include "store/options_check.h"
#include "util/embedder_db.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxStreamBytes = 256 << 20;

OptionsContext Ring(uint32_t chunk_size = 1 << 20) {
  return OptionsContext{.backend = Backend::kRing, .chunk_size = chunk_size};
}
OptionsContext RocksDb() {
  return OptionsContext{.backend = Backend::kRocksDb, .chunk_size = 1 << 20};
}

// The status's code is kInvalidArgument and its message holds `what`.
#define EXPECT_REFUSED(expr, what)                                                   \
  do {                                                                              \
    const ::absl::Status _r = ::pgring::testing::ToStatus(expr);                    \
    EXPECT_EQ(_r.code(), ::absl::StatusCode::kInvalidArgument) << #expr << ": " << _r; \
    EXPECT_THAT(std::string(_r.message()), HasSubstr(what)) << #expr;               \
  } while (0)

TEST(CheckOptionsTest, TheDefaultsPass) {
  const Options o;
  EXPECT_OK(CheckOptions(o, Ring()));
  EXPECT_OK(CheckOptions(o, Ring(64 << 10)));
  EXPECT_OK(CheckOptions(o, RocksDb()));
  EXPECT_OK(CheckOptions(o, OptionsContext{.backend = Backend::kRing,
                                           .chunk_size = 1 << 20,
                                           .embedder_db = true}));
  EXPECT_OK(CheckMkfsOptions(MkfsOptions{}, false));
  EXPECT_OK(CheckMkfsOptions(MkfsOptions{}, true));
}

// A number that must lie in [lo, hi] (or be 0, where 0 means something):
// one case per field.
struct RangeCase {
  const char* name;
  std::function<void(Options*, uint64_t)> set;
  uint64_t lo, hi;
  uint64_t type_max;      // hi == type_max: no bound but the type
  const char* zero = "";  // the message's words for 0, where 0 is allowed
};

std::vector<RangeCase> RangeCases() {
  auto u32 = [](uint32_t Options::*f) {
    return [f](Options* o, uint64_t v) { o->*f = static_cast<uint32_t>(v); };
  };
  auto stream32 = [](uint32_t StreamOptions::*f) {
    return [f](Options* o, uint64_t v) { o->stream.*f = static_cast<uint32_t>(v); };
  };
  auto stream64 = [](uint64_t StreamOptions::*f) {
    return [f](Options* o, uint64_t v) { o->stream.*f = v; };
  };
  auto limit32 = [](uint32_t Limits::*f) {
    return [f](Options* o, uint64_t v) { o->limits.*f = static_cast<uint32_t>(v); };
  };
  auto limit64 = [](uint64_t Limits::*f) {
    return [f](Options* o, uint64_t v) { o->limits.*f = v; };
  };
  return {
      {"stream.max_chunks", stream32(&StreamOptions::max_chunks), 2, 4096, kU32Max,
       "0 (three quarters of the partition) or "},
      {"stream.home_bytes", stream64(&StreamOptions::home_bytes), 512, kMaxStreamBytes, kU64Max,
       "0 (never home by count) or "},
      {"stream.resident_bytes", stream64(&StreamOptions::resident_bytes), 512, kMaxStreamBytes,
       kU64Max},
      {"stream.force_home_percent", stream32(&StreamOptions::force_home_percent), 1, 100,
       kU32Max},
      {"stream.max_forced_homes", stream32(&StreamOptions::max_forced_homes), 1, 1024, kU32Max},
      {"stream.forced_home_bytes", stream64(&StreamOptions::forced_home_bytes), 512,
       kMaxStreamBytes, kU64Max},
      {"max_group_size", u32(&Options::max_group_size), 1, kU32Max, kU32Max},
      {"io_queue_depth", u32(&Options::io_queue_depth), 1, 4096, kU32Max},
      {"limits.max_entries_per_pg", limit64(&Limits::max_entries_per_pg), 1, kU64Max, kU64Max},
      {"limits.max_dups_per_pg", limit64(&Limits::max_dups_per_pg), 1, kU64Max, kU64Max},
      // The RocksDB backend: on the ring the chunk size bounds it (below).
      {"limits.max_chunks_per_pg", limit32(&Limits::max_chunks_per_pg), 1, kU32Max, kU32Max},
      {"limits.max_total_entries", limit64(&Limits::max_total_entries), 1, kU64Max, kU64Max},
      {"limits.max_payload_bytes", limit32(&Limits::max_payload_bytes), 1, kU32Max, kU32Max},
      {"limits.max_pgs", limit64(&Limits::max_pgs), 1, kU64Max, kU64Max},
      {"limits.max_transactions_in_flight", limit64(&Limits::max_transactions_in_flight), 1,
       kU32Max, kU64Max},
      {"limits.max_stream_records_per_pg", limit64(&Limits::max_stream_records_per_pg), 1,
       kU32Max, kU64Max},
  };
}

// Against the RocksDB backend, which has no chunk size to bound
// limits.max_chunks_per_pg by; with no reserve, which it bounds.
TEST(CheckOptionsTest, EachNumberOutsideItsRangeIsRefusedByName) {
  Options base;
  base.reserve_chunks_per_pg = 0;
  for (const RangeCase& c : RangeCases()) {
    SCOPED_TRACE(c.name);
    const std::string range = c.hi == c.type_max ? absl::StrCat("at least ", c.lo)
                                                 : absl::StrCat("in [", c.lo, ", ", c.hi, "]");
    std::vector<uint64_t> bad;
    if (c.lo > 0 && !(c.lo == 1 && *c.zero != '\0')) bad.push_back(c.lo - 1);
    if (c.hi < c.type_max) bad.push_back(c.hi + 1);
    if (c.type_max == kU64Max && c.hi < kU64Max) bad.push_back(kU64Max);
    // 64-bit values are judged whole, never by their low 32 bits.
    if (c.type_max == kU64Max && c.hi < kU64Max) bad.push_back((uint64_t{1} << 32) + 4096);
    ASSERT_FALSE(bad.empty());
    for (uint64_t b : bad) {
      Options o = base;
      c.set(&o, b);
      EXPECT_REFUSED(CheckOptions(o, RocksDb()),
                     absl::StrCat(c.name, " is ", b, "; it must be ", c.zero, range));
    }
    std::vector<uint64_t> good = {c.lo, c.hi};
    if (*c.zero != '\0') good.push_back(0);
    for (uint64_t g : good) {
      Options o = base;
      c.set(&o, g);
      EXPECT_EQ(CheckOptions(o, RocksDb()), absl::OkStatus()) << c.name << " = " << g;
    }
  }
}

// An enum's values are 0, 1, ...; one past the last is refused with the
// allowed values named.
TEST(CheckOptionsTest, EachEnumOutsideItsValuesIsRefusedByName) {
  struct EnumCase {
    std::function<void(Options*, unsigned)> set;
    unsigned count;
    const char* message;  // for the value `count`
  };
  for (const EnumCase& c : std::vector<EnumCase>{
           {[](Options* o, unsigned v) { o->durability = static_cast<DurabilityMode>(v); }, 3,
            "durability is 3; it must be 0 (kSyncEach), 1 (kGroupCommit) or 2 (kUnsynced)"},
           {[](Options* o, unsigned v) {
              o->tail_block_policy = static_cast<TailBlockPolicy>(v);
            },
            2, "tail_block_policy is 2; it must be 0 (kRewriteTailBlock) or 1 (kNeverRewrite)"},
           {[](Options* o, unsigned v) { o->log_layout = static_cast<LogLayout>(v); }, 2,
            "log_layout is 2; it must be 0 (kPerPgRings) or 1 (kStream)"},
           {[](Options* o, unsigned v) { o->recovery_policy = static_cast<RecoveryPolicy>(v); },
            2, "recovery_policy is 2; it must be 0 (kRefuse) or 1 (kMarkDamaged)"},
           {[](Options* o, unsigned v) { o->io_engine = static_cast<IoEngine>(v); }, 2,
            "io_engine is 2; it must be 0 (kIoUring) or 1 (kPsync)"},
           {[](Options* o, unsigned v) { o->verify_on_open = static_cast<VerifyOnOpen>(v); }, 3,
            "verify_on_open is 3; it must be 0 (kOff), 1 (kShallow) or 2 (kDeep)"},
       }) {
    Options o;
    c.set(&o, c.count);
    EXPECT_REFUSED(CheckOptions(o, Ring()), c.message);
    c.set(&o, 255);
    EXPECT_CODE(CheckOptions(o, Ring()), kInvalidArgument);
    for (unsigned v = 0; v < c.count; ++v) {
      c.set(&o, v);
      EXPECT_EQ(CheckOptions(o, Ring()), absl::OkStatus()) << c.message << ": " << v;
    }
  }
}

// The check at open refuses a damaged store, kMarkDamaged opens one: not
// both. Each with kRefuse, and kMarkDamaged with no check, pass.
TEST(CheckOptionsTest, TheCheckAtOpenNeedsRecoveryPolicyRefuse) {
  Options o;
  o.recovery_policy = RecoveryPolicy::kMarkDamaged;
  EXPECT_OK(CheckOptions(o, Ring()));
  o.verify_on_open = VerifyOnOpen::kShallow;
  EXPECT_REFUSED(CheckOptions(o, Ring()),
                 "verify_on_open is kShallow, which refuses a damaged store, and recovery_policy "
                 "is kMarkDamaged, which opens one and marks its damaged PGs: choose one");
  o.verify_on_open = VerifyOnOpen::kDeep;
  EXPECT_REFUSED(CheckOptions(o, RocksDb()), "verify_on_open is kDeep, which refuses");
  o.recovery_policy = RecoveryPolicy::kRefuse;
  EXPECT_OK(CheckOptions(o, Ring()));
  EXPECT_OK(CheckOptions(o, RocksDb()));
  o.verify_on_open = VerifyOnOpen::kShallow;
  EXPECT_OK(CheckOptions(o, Ring()));
}

TEST(CheckOptionsTest, UnsyncedMaxDelayIsNotNegative) {
  Options o;
  o.unsynced_max_delay = std::chrono::milliseconds(-1);
  EXPECT_REFUSED(CheckOptions(o, Ring()), "unsynced_max_delay is -1 ms; it must be at least 0 ms");
  o.unsynced_max_delay = std::chrono::milliseconds(0);
  EXPECT_OK(CheckOptions(o, Ring()));
  o.unsynced_max_delay = std::chrono::hours(24 * 365);
  EXPECT_OK(CheckOptions(o, Ring()));
}

// The reserve is chunks a ring keeps, so at most what a ring may own.
TEST(CheckOptionsTest, ReserveChunksAreAtMostMaxChunksPerPg) {
  Options o;
  o.limits.max_chunks_per_pg = 8;
  o.reserve_chunks_per_pg = 9;
  EXPECT_REFUSED(CheckOptions(o, Ring()),
                 "reserve_chunks_per_pg is 9; it must be in [0, 8] (limits.max_chunks_per_pg)");
  EXPECT_REFUSED(CheckOptions(o, RocksDb()), "reserve_chunks_per_pg is 9");
  o.reserve_chunks_per_pg = 8;
  EXPECT_OK(CheckOptions(o, Ring()));
  o.reserve_chunks_per_pg = 0;
  EXPECT_OK(CheckOptions(o, Ring()));
  // A limit of 0 is named as itself, not as the reserve it bounds.
  o.limits.max_chunks_per_pg = 0;
  EXPECT_REFUSED(CheckOptions(o, Ring()), "limits.max_chunks_per_pg is 0; it must be at least 1");
}

// On the ring, max_chunks_per_pg x chunk size reaches 4 GiB and not past
// it; the RocksDB backend has no rings.
TEST(CheckOptionsTest, ARingSpansAtMost4GiB) {
  for (uint32_t chunk : {64u << 10, 1u << 20, 256u << 20}) {
    const uint32_t at = static_cast<uint32_t>((uint64_t{1} << 32) / chunk);
    Options o;
    o.reserve_chunks_per_pg = 1;
    o.limits.max_chunks_per_pg = at;
    EXPECT_EQ(CheckOptions(o, Ring(chunk)), absl::OkStatus()) << chunk;
    o.limits.max_chunks_per_pg = at + 1;
    EXPECT_REFUSED(CheckOptions(o, Ring(chunk)),
                   absl::StrCat("limits.max_chunks_per_pg (", at + 1, ") x chunk size (", chunk,
                                ") exceeds the 4 GiB a ring may span"));
    EXPECT_EQ(CheckOptions(o, RocksDb()), absl::OkStatus()) << chunk;
  }
  // The default (4096) fits chunks up to 1 MiB only.
  EXPECT_REFUSED(CheckOptions(Options{}, Ring(2 << 20)), "limits.max_chunks_per_pg (4096)");
}

// The shared-flush settings need a partition flush; the RocksDB backend has
// none, and a read-only open commits nothing.
TEST(CheckOptionsTest, TheSharedFlushSettingsNeedTheRingBackend) {
  for (auto set : {+[](Options* o) { o->gated_writes_share_flush = true; },
                   +[](Options* o) { o->metadata_sync_flushes_partition = true; }}) {
    Options o;
    set(&o);
    EXPECT_OK(CheckOptions(o, Ring()));
    o.read_only = true;
    EXPECT_OK(CheckOptions(o, RocksDb()));
  }
  Options o;
  o.gated_writes_share_flush = true;
  EXPECT_REFUSED(CheckOptions(o, RocksDb()), "gated_writes_share_flush needs the ring backend");
  o = Options();
  o.metadata_sync_flushes_partition = true;
  EXPECT_REFUSED(CheckOptions(o, RocksDb()),
                 "metadata_sync_flushes_partition needs the ring backend");
}

// rocksdb_env and rocksdb_options are for the RocksDB pgring opens itself.
TEST(CheckOptionsTest, TheRocksDbSettingsAreRefusedWithAnEmbeddersDb) {
  const OptionsContext embedder{.backend = Backend::kRing, .chunk_size = 1 << 20,
                                .embedder_db = true};
  std::shared_ptr<rocksdb::Env> env(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  Options o;
  o.rocksdb_env = env;
  EXPECT_OK(CheckOptions(o, Ring()));
  EXPECT_REFUSED(CheckOptions(o, embedder), "rocksdb_env is for the RocksDB pgring opens itself");
  o = Options();
  o.rocksdb_options = "";
  EXPECT_OK(CheckOptions(o, Ring()));
  EXPECT_REFUSED(CheckOptions(o, embedder),
                 "rocksdb_options are for the RocksDB pgring opens itself");

  MkfsOptions m;
  m.rocksdb_env = env;
  EXPECT_OK(CheckMkfsOptions(m, false));
  EXPECT_REFUSED(CheckMkfsOptions(m, true), "rocksdb_env is for the RocksDB pgring opens itself");
  m = MkfsOptions();
  m.rocksdb_options = "write_buffer_size=1048576";
  EXPECT_OK(CheckMkfsOptions(m, false));
  EXPECT_REFUSED(CheckMkfsOptions(m, true),
                 "rocksdb_options are for the RocksDB pgring opens itself");
}

// Through the public API, each backend: Store::Open refuses a bad setting,
// writing nothing, and the same store opens once it is mended.
class OpenChecksOptionsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    auto dev = Device::InMemory(16 << 20);
    ASSERT_OK(dev);
    device_ = *dev;
    MkfsOptions m;
    m.backend = GetParam();
    m.chunk_size = 64 << 10;
    ASSERT_OK(Mkfs(device_, Meta(), m));
    options_.log_sink = NullLogSink();
  }
  MetadataLocation Meta() const { return MetadataLocation::OwnDb(dir_.Join("db")); }
  absl::Status Open(const Options& o) { return ToStatus(Store::Open(device_, Meta(), o)); }

  TempDir dir_;
  std::shared_ptr<Device> device_;
  Options options_;
};

TEST_P(OpenChecksOptionsTest, ABadSettingIsRefusedAndTheStoreStillOpens) {
  ASSERT_OK(Open(options_));
  for (const auto& [set, message] :
       std::vector<std::pair<std::function<void(Options*)>, std::string>>{
           {[](Options* o) { o->stream.home_bytes = 3; },
            "stream.home_bytes is 3; it must be 0 (never home by count) or in [512, 268435456]"},
           {[](Options* o) { o->limits.max_pgs = 0; }, "limits.max_pgs is 0; it must be at least 1"},
           {[](Options* o) { o->max_group_size = 0; }, "max_group_size is 0; it must be at least 1"},
           {[](Options* o) { o->io_queue_depth = 0; }, "io_queue_depth is 0; it must be in [1, 4096]"},
           {[](Options* o) { o->durability = static_cast<DurabilityMode>(9); }, "durability is 9"},
           {[](Options* o) { o->unsynced_max_delay = std::chrono::milliseconds(-5); },
            "unsynced_max_delay is -5 ms"},
           {[](Options* o) {
              o->verify_on_open = VerifyOnOpen::kDeep;
              o->recovery_policy = RecoveryPolicy::kMarkDamaged;
            },
            "verify_on_open is kDeep, which refuses a damaged store"},
       }) {
    Options o = options_;
    set(&o);
    EXPECT_REFUSED(Open(o), message);
  }
  // The ring's span rule needs the label's chunk size: 65536 chunks of 64 KiB
  // are 4 GiB.
  Options o = options_;
  o.limits.max_chunks_per_pg = 65537;
  if (GetParam() == Backend::kRing) {
    EXPECT_REFUSED(Open(o), "limits.max_chunks_per_pg (65537) x chunk size (65536)");
  } else {
    EXPECT_OK(Open(o));
  }
  o.limits.max_chunks_per_pg = 65536;
  EXPECT_OK(Open(o));
  // What a backend refuses.
  o = options_;
  o.gated_writes_share_flush = true;
  if (GetParam() == Backend::kRocksDb) {
    EXPECT_REFUSED(Open(o), "gated_writes_share_flush needs the ring backend");
  } else {
    EXPECT_OK(Open(o));
  }
  // The refusals left the store as it was: it opens and takes a write.
  auto store = Store::Open(device_, Meta(), options_);
  ASSERT_OK(store);
  Transaction t;
  t.CreatePg(PgId{1, 1, -1});
  t.AppendEntry(PgId{1, 1, -1}, Version{1, 1}, "entry");
  ASSERT_OK((*store)->Commit(std::move(t)));
  auto entries = (*store)->ReadEntries(PgId{1, 1, -1});
  ASSERT_OK(entries);
  EXPECT_EQ(entries->size(), 1u);
}

// The check at open (either depth) passes a healthy store of each backend,
// opened through the public API on a Device, and the store works after it.
TEST_P(OpenChecksOptionsTest, TheCheckAtOpenPassesAHealthyStore) {
  const PgId pg{1, 1, -1};
  {
    auto store = Store::Open(device_, Meta(), options_);
    ASSERT_OK(store);
    Transaction t;
    t.CreatePg(pg);
    for (uint64_t v = 1; v <= 20; ++v) t.AppendEntry(pg, Version{1, v}, "entry");
    t.SetInfo(pg, "info");
    ASSERT_OK((*store)->Commit(std::move(t)));
    ASSERT_OK((*store)->Close());
  }
  uint64_t last = 20;
  for (VerifyOnOpen v : {VerifyOnOpen::kShallow, VerifyOnOpen::kDeep}) {
    SCOPED_TRACE(static_cast<int>(v));
    Options o = options_;
    o.verify_on_open = v;
    auto store = Store::Open(device_, Meta(), o);
    ASSERT_OK(store);
    auto entries = (*store)->ReadEntries(pg);
    ASSERT_OK(entries);
    EXPECT_EQ(entries->size(), last);
    Transaction t;
    t.AppendEntry(pg, Version{1, ++last}, "entry");
    ASSERT_OK((*store)->Commit(std::move(t)));
    ASSERT_OK((*store)->Close());
  }
}

// An embedder's RocksDB: Mkfs and Open refuse the RocksDB settings before
// they write anything.
TEST_P(OpenChecksOptionsTest, AnEmbeddersDbRefusesTheRocksDbSettings) {
  auto other = Device::InMemory(16 << 20);
  ASSERT_OK(other);
  EmbedderDb embedder(dir_.Join("embedder"), {});
  ASSERT_NE(embedder.db(), nullptr);
  const MetadataLocation shared = embedder.location(0);
  MkfsOptions m;
  m.backend = GetParam();
  m.chunk_size = 64 << 10;
  m.rocksdb_options = "write_buffer_size=1048576";
  EXPECT_REFUSED(Mkfs(*other, shared, m), "rocksdb_options are for the RocksDB pgring opens");
  m.rocksdb_options = kBlueStoreRocksDbOptions;
  ASSERT_OK(Mkfs(*other, shared, m));
  Options o = options_;
  o.rocksdb_env.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  EXPECT_REFUSED(Store::Open(*other, shared, o), "rocksdb_env is for the RocksDB pgring opens");
  EXPECT_OK(Store::Open(*other, shared, options_));
}

INSTANTIATE_TEST_SUITE_P(Backends, OpenChecksOptionsTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb), BackendName);

}  // namespace
}  // namespace pgring::testing
