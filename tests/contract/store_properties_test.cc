// Store::GetProperty and GetMapProperty (pgring/store.h) on both backends:
// the store's counters under "pgring.*" against known counts, RocksDB's
// tickers against the keys a transaction is known to write, RocksDB's own
// properties passed through on the column family that holds pgring's keys
// (in pgring's own RocksDB and in an embedder's), and false for every name
// or form the store does not have; Store::GetMetrics against the same
// counts and the commit path's distributions.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pgring/device.h"
#include "pgring/metrics.h"
#include "pgring/store.h"
#include "store/store_core.h"
#include "util/embedder_db.h"
#include "util/histogram.h"
#include "util/sync.h"
#include "util/store_fixture.h"

namespace pgring::testing {
namespace {

using Map = std::map<std::string, std::string>;

class StorePropertiesTest : public StoreFixture, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    MkfsAndOpen(GetParam());
  }
  std::string Property(const std::string& name) {
    std::string v;
    EXPECT_TRUE(store_->GetProperty(name, &v)) << name;
    return v;
  }
  Map MapProperty(const std::string& name) {
    Map m;
    EXPECT_TRUE(store_->GetMapProperty(name, &m)) << name;
    return m;
  }
  uint64_t KeysWritten() {
    Map t = MapProperty("pgring.rocksdb_tickers");
    EXPECT_TRUE(t.count("rocksdb.number.keys.written")) << "no NUMBER_KEYS_WRITTEN ticker";
    return std::stoull(t["rocksdb.number.keys.written"]);
  }
};

TEST_P(StorePropertiesTest, StoreCountersHaveTheirKnownValues) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Append(Pg(1), 1, 5));
  ASSERT_OK(Append(Pg(2), 1, 3));
  ASSERT_OK(Do([](Transaction* t) { t->AppendDup(Pg(2), V(1, 1), "dup"); }));
  // Five commits since open, each its own group (Commit waits for each).
  EXPECT_EQ(Property("pgring.transactions_committed"), "5");
  EXPECT_EQ(Property("pgring.commit_groups"), "5");
  EXPECT_EQ(Property("pgring.pgs"), "2");
  EXPECT_EQ(Property("pgring.live_entries"), "8");
  EXPECT_EQ(Property("pgring.live_dups"), "1");

  // The map has every StoreStats counter, each what GetStoreStats says.
  const StoreStats st = store_->GetStoreStats();
  const Map m = MapProperty("pgring.stats");
  const std::map<std::string, uint64_t> want = {
      {"pgs", st.pgs},
      {"total_chunks", st.total_chunks},
      {"free_chunks", st.free_chunks},
      {"chunk_size", st.chunk_size},
      {"live_entries", st.live_entries},
      {"live_dups", st.live_dups},
      {"transactions_committed", st.transactions_committed},
      {"commit_groups", st.commit_groups},
      {"superseded_key_writes", st.superseded_key_writes},
      {"record_bytes_appended", st.record_bytes_appended},
      {"payload_bytes_appended", st.payload_bytes_appended},
      {"device_bytes_written", st.device_bytes_written},
      {"device_flushes", st.device_flushes},
      {"mapping_table_bytes", st.mapping_table_bytes},
      {"device_writes", st.device_writes},
      {"device_seeks", st.device_seeks},
      {"stream_chunks", st.stream_chunks},
      {"stream_max_chunks", st.stream_max_chunks},
      {"stream_bytes_used", st.stream_bytes_used},
      {"stream_records", st.stream_records},
      {"stream_writes", st.stream_writes},
      {"stream_bytes_written", st.stream_bytes_written},
      {"home_writes", st.home_writes},
      {"home_bytes_written", st.home_bytes_written},
      {"forced_homes", st.forced_homes},
      {"stream_full_fallbacks", st.stream_full_fallbacks},
      {"stream_restates", st.stream_restates},
      {"stream_restated_bytes", st.stream_restated_bytes},
      {"stream_compressed_records", st.stream_compressed_records},
      {"stream_compression_saved_bytes", st.stream_compression_saved_bytes},
      {"stream_reads", st.stream_reads},
      {"stream_bytes_read", st.stream_bytes_read},
      {"unhomed_resident_bytes", st.unhomed_resident_bytes},
      {"stream_index_bytes", st.stream_index_bytes},
  };
  ASSERT_EQ(m.size(), want.size());
  for (const auto& [name, value] : want) {
    ASSERT_TRUE(m.count(name)) << name;
    EXPECT_EQ(m.at(name), std::to_string(value)) << name;
    EXPECT_EQ(Property("pgring." + name), std::to_string(value)) << name;
  }
  EXPECT_EQ(m.at("transactions_committed"), "5");
  // The string form: one "name: value" line per counter.
  const std::string text = Property("pgring.stats");
  EXPECT_NE(text.find("pgs: 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("transactions_committed: 5\n"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(want.size())) << text;
}

// One small append to a PG with room writes one RocksDB key on either
// backend (the ring: the PG's pointer; the RocksDB backend: the entry), and
// an embedder key in the batch is one more.
TEST_P(StorePropertiesTest, TickersCountTheKeysATransactionWrites) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 2));
  uint64_t before = KeysWritten();
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 3), TestPayload(3)); }));
  EXPECT_EQ(KeysWritten() - before, 1u);
  before = KeysWritten();
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(1), V(1, 4), TestPayload(4));
    ASSERT_TRUE(t->batch()->Put("osd.onode", "v").ok());
  }));
  EXPECT_EQ(KeysWritten() - before, 2u);
  const Map t = MapProperty("pgring.rocksdb_tickers");
  EXPECT_GT(std::stoull(t.at("rocksdb.wal.bytes")), 0u);
}

// "rocksdb.*" is RocksDB's own answer for pgring's column family.
TEST_P(StorePropertiesTest, RocksDbPropertiesPassThrough) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 4));
  rocksdb::DB* db = CoreOf(*store_).metadata_db().db();
  for (const char* name : {"rocksdb.num-entries-active-mem-table", "rocksdb.estimate-num-keys",
                           "rocksdb.cur-size-active-mem-table"}) {
    std::string direct;
    ASSERT_TRUE(db->GetProperty(name, &direct)) << name;
    EXPECT_EQ(Property(name), direct) << name;
  }
  EXPECT_NE(Property("rocksdb.num-entries-active-mem-table"), "0");
  // The statistics texts (their interval parts change from call to call).
  EXPECT_NE(Property("rocksdb.stats").find("Compaction Stats"), std::string::npos);
  EXPECT_NE(Property("rocksdb.cfstats").find("Compaction Stats"), std::string::npos);
  Map direct;
  ASSERT_TRUE(db->GetMapProperty("rocksdb.cfstats", &direct));
  const Map cfstats = MapProperty("rocksdb.cfstats");
  EXPECT_FALSE(cfstats.empty());
  EXPECT_EQ(cfstats.size(), direct.size());
  for (const auto& [k, v] : direct) EXPECT_TRUE(cfstats.count(k)) << k;
}

TEST_P(StorePropertiesTest, UnknownNamesAndFormsAreFalse) {
  std::string v;
  Map m;
  for (const char* name : {"", "pgring.", "pgring.nope", "pgring.Pgs", "nope", "pgs",
                           "rocksdb.nope", "pgring.rocksdb_tickers"}) {
    EXPECT_FALSE(store_->GetProperty(name, &v)) << name;
  }
  for (const char* name : {"", "pgring.", "pgring.nope", "pgring.pgs", "nope",
                           "rocksdb.nope", "rocksdb.stats"}) {
    EXPECT_FALSE(store_->GetMapProperty(name, &m)) << name;
  }
}

// Store::GetMetrics (pgring/metrics.h): one snapshot with every counter
// under its name and the commit path's distributions, each counting what
// was done: a latency per transaction, a group size per commit group that
// adds up to the transactions, a RocksDB write per group, a partition flush
// per flush the device saw, and a gate wait per gated transaction that
// covers the time its gate was held shut.
TEST_P(StorePropertiesTest, MetricsCountWhatTheCommitPathDid) {
  const StoreMetrics before = store_->GetMetrics();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 4));
  // A gated transaction whose gate opens 20 ms after its own writes can.
  auto gate = std::make_shared<CommitGate>();
  Transaction txn;
  txn.AppendEntry(Pg(1), V(1, 5), TestPayload(5));
  txn.WaitFor(gate);
  Notification committed;
  absl::Status outcome = absl::UnknownError("no callback");
  ASSERT_OK(store_->Submit(std::move(txn), [&](absl::Status st) {
    outcome = st;
    committed.Notify();
  }));
  absl::SleepFor(absl::Milliseconds(20));
  gate->Open();
  committed.WaitForNotification();
  ASSERT_OK(outcome);

  const StoreMetrics m = store_->GetMetrics();
  const uint64_t txns = m.stats.transactions_committed - before.stats.transactions_committed;
  EXPECT_EQ(txns, 3u);  // the create, the append of 1..4, the gated one
  EXPECT_EQ(m.commit_latency_ns.count - before.commit_latency_ns.count, txns);
  EXPECT_GE(m.commit_latency_ns.max, 20'000'000u);
  EXPECT_EQ(m.group_size.count - before.group_size.count,
            m.stats.commit_groups - before.stats.commit_groups);
  EXPECT_EQ(m.group_size.sum - before.group_size.sum, txns);
  EXPECT_EQ(m.rocksdb_write_latency_ns.count - before.rocksdb_write_latency_ns.count,
            m.stats.commit_groups - before.stats.commit_groups);
  EXPECT_EQ(m.flush_latency_ns.count, m.stats.device_flushes - before.stats.device_flushes);
  if (GetParam() == Backend::kRing) EXPECT_GT(m.flush_latency_ns.count, 0u);
  ASSERT_EQ(m.gate_wait_ns.count, 1u);
  EXPECT_GE(m.gate_wait_ns.max, 15'000'000u);
  EXPECT_GT(m.rocksdb_keys_written, before.rocksdb_keys_written);
  EXPECT_GT(m.rocksdb_bytes_written, before.rocksdb_bytes_written);
  EXPECT_GT(m.rocksdb_wal_bytes, before.rocksdb_wal_bytes);
  EXPECT_GE(m.commit_latency_ns.Percentile(0.99), m.commit_latency_ns.Percentile(0.5));

  // Visit names every counter (the StoreStats fields and RocksDB's three)
  // and every distribution once, with the snapshot's values.
  std::map<std::string, uint64_t> counters;
  std::vector<std::string> histograms;
  m.Visit([&](std::string_view n, uint64_t v) { counters[std::string(n)] = v; },
          [&](std::string_view n, const HistogramData& h) {
            histograms.emplace_back(n);
            if (n == "group_size") EXPECT_EQ(h.sum, m.group_size.sum);
          });
  EXPECT_EQ(counters.size(), MapProperty("pgring.stats").size() + 3);
  EXPECT_EQ(counters.at("transactions_committed"), m.stats.transactions_committed);
  EXPECT_EQ(counters.at("rocksdb_keys_written"), m.rocksdb_keys_written);
  EXPECT_EQ(histograms, (std::vector<std::string>{"commit_latency_ns", "flush_latency_ns",
                                                  "rocksdb_write_latency_ns", "gate_wait_ns",
                                                  "group_size"}));
}

// The histogram's percentiles are within its 3% bucket width of the truth.
TEST(HistogramTest, PercentilesAreWithinTheBucketWidth) {
  Histogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.Record(v * 1000);
  const HistogramData d = h.Snapshot();
  EXPECT_EQ(d.count, 100000u);
  EXPECT_EQ(d.max, 100000u * 1000);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double truth = q * 100000 * 1000;
    EXPECT_GE(static_cast<double>(d.Percentile(q)), truth * 0.999) << q;
    EXPECT_LE(static_cast<double>(d.Percentile(q)), truth * 1.04) << q;
  }
  EXPECT_EQ(HistogramData().Percentile(0.5), 0u);
  // Small values are exact.
  Histogram small;
  for (uint64_t v : {0, 1, 2, 31}) small.Record(v);
  EXPECT_EQ(small.Snapshot().Percentile(1.0), 31u);
  EXPECT_EQ(small.Snapshot().Percentile(0.25), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StorePropertiesTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb), BackendName);

// In an embedder's RocksDB the properties describe pgring's column family,
// and the tickers are there exactly when the embedder's DB collects them.
class EmbedderDbPropertiesTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    rocksdb::DBOptions o;
    if (GetParam()) o.statistics = rocksdb::CreateDBStatistics();
    embedder_ =
        std::make_unique<EmbedderDb>(dir_.Join("db"), std::vector<std::string>{"pgring"}, o);
    ASSERT_NE(embedder_->db(), nullptr);
    db_ = embedder_->db();
    auto dev = Device::InMemory(16 << 20);
    ASSERT_OK(dev);
    device_ = *dev;
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    const MetadataLocation meta = embedder_->location(1);
    ASSERT_OK(Mkfs(device_, meta, m));
    Options opts;
    opts.log_sink = NullLogSink();
    auto store = Store::Open(device_, meta, opts);
    ASSERT_OK(store);
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    embedder_.reset();
  }
  TempDir dir_;
  std::unique_ptr<EmbedderDb> embedder_;
  rocksdb::DB* db_ = nullptr;  // embedder_'s
  std::shared_ptr<Device> device_;
  std::unique_ptr<Store> store_;
};

TEST_P(EmbedderDbPropertiesTest, PropertiesAreOfPgringsColumnFamily) {
  Transaction t;
  t.CreatePg(PgId{1, 1, -1});
  ASSERT_OK(store_->Commit(std::move(t)));
  // The embedder's own keys, in its default column family.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), "k" + std::to_string(i), "v").ok());
  }
  const char* kName = "rocksdb.num-entries-active-mem-table";
  std::string pgring_cf, default_cf, got;
  ASSERT_TRUE(db_->GetProperty(embedder_->handle(1), kName, &pgring_cf));
  ASSERT_TRUE(db_->GetProperty(embedder_->handle(0), kName, &default_cf));
  ASSERT_NE(pgring_cf, default_cf);
  ASSERT_TRUE(store_->GetProperty(kName, &got));
  EXPECT_EQ(got, pgring_cf);

  std::map<std::string, std::string> tickers;
  EXPECT_EQ(store_->GetMapProperty("pgring.rocksdb_tickers", &tickers), GetParam());
  if (GetParam()) {
    // Mkfs's and the new PG's keys, and the embedder's ten: one statistics
    // object counts the whole DB.
    EXPECT_GE(std::stoull(tickers.at("rocksdb.number.keys.written")), 11u);
  }
}

INSTANTIATE_TEST_SUITE_P(Statistics, EmbedderDbPropertiesTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "On" : "Off";
                         });

}  // namespace
}  // namespace pgring::testing
