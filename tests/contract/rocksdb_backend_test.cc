// Functional tests of what only the RocksDB backend (Backend::kRocksDb) has:
// the key layout (it must be BlueStore's) and its worked example, what one
// client write puts into RocksDB, the RocksDB options, and the damage to its
// keys that open refuses. The checks every backend must pass (operations,
// errors, reopen, bounds, reads of transactions not yet committed, commit
// gates, read-only, damaged PGs under kMarkDamaged, ...) are in
// store_contract_test.cc, run on both backends.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "format/metadata_keys.h"
#include "format/rocksdb_backend_keys.h"
#include "store/store_core.h"
#include "util/rocksdb_keys.h"
#include "util/store_fixture.h"

namespace pgring::testing {
namespace {

class RocksDbBackendTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    MkfsAndOpen(Backend::kRocksDb);
  }
  // RocksDB's count of keys written, through the public property.
  uint64_t KeysWritten() const { return Ticker("rocksdb.number.keys.written"); }
  uint64_t Ticker(const std::string& name) const {
    std::map<std::string, std::string> tickers;
    EXPECT_TRUE(store_->GetMapProperty("pgring.rocksdb_tickers", &tickers));
    auto it = tickers.find(name);
    EXPECT_NE(it, tickers.end()) << name;
    return it == tickers.end() ? 0 : std::stoull(it->second);
  }
};

TEST_F(RocksDbBackendTest, KeyLayoutIsBlueStores) {
  ASSERT_OK(Create(Pg(0x2a, 3)));
  const PgId pg = Pg(0x2a, 3);
  // An OSD's writes: entry + info; past 8 entries each write trims the
  // oldest entry into a dup; past 4 dups the oldest dup is trimmed.
  for (uint64_t v = 1; v <= 20; ++v) {
    Transaction t;
    t.AppendEntry(pg, V(7, v), TestPayload(v));
    t.SetInfo(pg, "info@" + std::to_string(v));
    if (v > 8) {
      t.AppendDup(pg, V(7, v - 8), "dup" + std::to_string(v - 8));
      t.Trim(pg, V(7, v - 8));
    }
    if (v > 12) t.TrimDups(pg, V(7, v - 12));
    ASSERT_OK(store_->Commit(std::move(t)));
  }
  ASSERT_OK(Create(Pg(1, 4)));  // another PG: keys must not mix
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1, 4), V(1, 1), TestPayload(1)); }));
  auto all = DumpDb();
  // Every pgring key is the store's meta key or a log key.
  for (const auto& [k, v] : all) {
    if (k.rfind("pgring.", 0) != 0) continue;
    EXPECT_TRUE(k == "pgring.meta" || k.rfind("pgring.log.", 0) == 0) << k;
  }
  // The exact prefix: "pgring.log." + the 13-byte pgkey + ".".
  std::string expected_prefix = "pgring.log.";
  expected_prefix += std::string("\x80\0\0\0\0\0\0\x03", 8);  // pool 3, sign bit flipped
  expected_prefix += std::string("\0\0\0\x2a", 4);            // seed 0x2a
  expected_prefix += std::string("\0", 1);                     // shard -1 + 1
  expected_prefix += ".";
  EXPECT_EQ(PgLogKeyPrefix(pg), expected_prefix);
  auto keys = PgLogKeysOf(all, pg);
  std::map<std::string, std::string> want;
  for (uint64_t v = 13; v <= 20; ++v) want[CephKeyName(7, v)] = TestPayload(v);
  for (uint64_t v = 9; v <= 12; ++v) want["dup_" + CephKeyName(7, v)] = "dup" + std::to_string(v);
  want["_info"] = "info@20";
  ASSERT_EQ(keys.count("_state"), 1u);
  auto state = PgStateValue::Decode(keys["_state"]);
  ASSERT_OK(state);
  EXPECT_EQ(state->entries_trimmed_to, V(7, 12));
  EXPECT_EQ(state->dups_trimmed_to, V(7, 8));
  EXPECT_LE(keys["_state"].size(), 32u);  // small
  keys.erase("_state");
  EXPECT_EQ(keys, want);  // nothing trimmed is left, nothing else is there
  // The key names sort as Ceph's: entries in version order, then _info,
  // _state, then the dups.
  std::vector<std::string> order;
  for (const auto& [k, v] : PgLogKeysOf(all, pg)) order.push_back(k);
  EXPECT_EQ(order.front(), CephKeyName(7, 13));
  EXPECT_EQ(order[8], "_info");
  EXPECT_EQ(order[9], "_state");
  EXPECT_EQ(order[10], "dup_" + CephKeyName(7, 9));
  EXPECT_EQ(PgLogKeysOf(all, Pg(1, 4)).size(), 2u);  // entry + _state
  EXPECT_EQ(PgLogKeysOf(all, Pg(1, 4)).count(CephKeyName(1, 1)), 1u);
  // Large versions keep the fixed widths.
  EXPECT_EQ(LogKeyName(V(UINT32_MAX, UINT64_MAX)), "4294967295.18446744073709551615");
  Version back;
  ASSERT_TRUE(ParseLogKeyName("4294967295.18446744073709551615", &back));
  EXPECT_EQ(back, V(UINT32_MAX, UINT64_MAX));
  EXPECT_FALSE(ParseLogKeyName("4294967296.00000000000000000001", &back));
  EXPECT_FALSE(ParseLogKeyName("0000000001.18446744073709551616", &back));
}

// The worked example of docs/FORMAT.md, "RocksDB backend keys".
TEST(RocksDbBackendFormat, WorkedExample) {
  auto hex = [](const std::string& s) {
    std::string out;
    char b[4];
    for (unsigned char c : s) {
      std::snprintf(b, sizeof(b), "%02x", c);
      out += b;
    }
    return out;
  };
  EXPECT_EQ(hex(PgLogKeyPrefix(PgId{3, 0x2a, -1}) + LogKeyName(V(7, 13))),
            hex("pgring.log.") + "80000000000000030000002a00" + "2e" +
                hex("0000000007.00000000000000000013"));
  PgStateValue st;
  st.entries_trimmed_to = V(7, 12);
  st.dups_trimmed_to = V(7, 8);
  st.last_version = V(7, 20);
  st.last_dup_version = V(7, 12);
  EXPECT_EQ(hex(st.Encode()), "01070c07080714070c3ea5c0c9");
  auto back = PgStateValue::Decode(st.Encode());
  ASSERT_OK(back);
  EXPECT_EQ(*back, st);
  std::string bad = st.Encode();
  bad[3] ^= 1;
  EXPECT_CODE(PgStateValue::Decode(bad), kDataLoss);
  EXPECT_CODE(PgStateValue::Decode("\x01"), kDataLoss);
}

TEST_F(RocksDbBackendTest, OneClientWriteIsTheKeysBlueStoreWrites) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 10));
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendDup(Pg(1), V(1, 1), "d1");
    t->Trim(Pg(1), V(1, 1));
  }));
  const uint64_t device_bytes = store_->GetStoreStats().device_bytes_written;
  const uint64_t device_writes = store_->GetStoreStats().device_writes;
  auto keys_written = [&] { return KeysWritten(); };
  // Append + info: two Puts; _state is not rewritten by appends.
  uint64_t before = keys_written();
  ASSERT_OK(Append(Pg(1), 11, 11));
  EXPECT_EQ(keys_written() - before, 2u);
  // The steady state of an OSD: entry, info, the trimmed entry's delete, its
  // dup, the oldest dup's delete, and _state (the trim points moved).
  before = keys_written();
  uint64_t value_bytes = store_->GetStoreStats().record_bytes_appended;
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(1), V(1, 12), TestPayload(12));
    t->SetInfo(Pg(1), "info@12");
    t->AppendDup(Pg(1), V(1, 2), "d2");
    t->Trim(Pg(1), V(1, 2));
    t->TrimDups(Pg(1), V(1, 1));
  }));
  EXPECT_EQ(keys_written() - before, 6u);
  uint64_t put = store_->GetStoreStats().record_bytes_appended - value_bytes;
  // 200 (entry) + 7 (info) + 2 (dup) + the _state value.
  EXPECT_GT(put, 209u);
  EXPECT_LT(put, 209u + 32u);
  // Setting the info twice in one transaction writes it once.
  before = keys_written();
  ASSERT_OK(Do([](Transaction* t) {
    t->SetInfo(Pg(1), "a");
    t->SetInfo(Pg(1), "b");
  }));
  EXPECT_EQ(keys_written() - before, 1u);
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "b");
  EXPECT_GT(Ticker("rocksdb.wal.bytes"), 0u);
  // The partition is not written after mkfs.
  EXPECT_EQ(store_->GetStoreStats().device_bytes_written, device_bytes);
  EXPECT_EQ(store_->GetStoreStats().device_writes, device_writes);
  EXPECT_EQ(store_->GetStoreStats().total_chunks, 0u);
}

TEST_F(RocksDbBackendTest, RocksDbIsConfiguredAsBlueStore) {
  rocksdb::DB* db = CoreOf(*store_).metadata_db().db();
  rocksdb::Options o = db->GetOptions();
  EXPECT_EQ(o.compression, rocksdb::kNoCompression);
  EXPECT_EQ(o.max_write_buffer_number, 64);
  EXPECT_EQ(o.min_write_buffer_number_to_merge, 32);  // the pgmeta CF's override
  EXPECT_EQ(o.compaction_style, rocksdb::kCompactionStyleLevel);
  EXPECT_EQ(o.write_buffer_size, 16u << 20);
  EXPECT_EQ(o.max_background_jobs, 4);
  EXPECT_EQ(o.level0_file_num_compaction_trigger, 8);
  EXPECT_EQ(o.max_bytes_for_level_base, 1ull << 30);
  EXPECT_EQ(o.max_bytes_for_level_multiplier, 8);
  EXPECT_EQ(o.compaction_readahead_size, 2u << 20);
  EXPECT_EQ(o.max_total_wal_size, 1ull << 30);
  EXPECT_EQ(o.writable_file_max_buffer_size, 0u);
  EXPECT_EQ(o.wal_recovery_mode, rocksdb::WALRecoveryMode::kPointInTimeRecovery);
  EXPECT_NE(o.statistics, nullptr);
}

// Each kind of damage to a PG's keys, refused at open (kRefuse) with a
// message naming the PG and the damage. What kMarkDamaged does with a damaged
// PG is in store_contract_test.cc (DamagedPgIsRefusedOrIsolated).
TEST_F(RocksDbBackendTest, DamageAtOpen) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Append(Pg(1), 1, 3));
  ASSERT_OK(Append(Pg(2), 1, 3));
  ASSERT_OK(store_->Close());
  store_.reset();
  const std::string p1 = PgLogKeyPrefix(Pg(1));
  // A trimmed entry that came back, below the trim point in _state.
  PgStateValue st;
  st.entries_trimmed_to = V(1, 1);
  st.last_version = V(1, 3);
  RawDbWrite([&](rocksdb::WriteBatch* b) { b->Put(p1 + "_state", st.Encode()); });
  auto s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("PG 1.1: entry 1'1 survived the trim to 1'1"), std::string::npos) << s;
  // Damaged _state value.
  RawDbWrite([&](rocksdb::WriteBatch* b) { b->Put(p1 + "_state", "garbage"); });
  s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("PG 1.1: _state value is damaged"), std::string::npos) << s;
  // A key that is no key of ours; a PG without _state.
  RawDbWrite([&](rocksdb::WriteBatch* b) {
    b->Put(p1 + "_state", PgStateValue{}.Encode());
    b->Put(p1 + "_bogus", "x");
  });
  s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("unknown key '_bogus'"), std::string::npos) << s;
  RawDbWrite([&](rocksdb::WriteBatch* b) {
    b->Delete(p1 + "_bogus");
    b->Delete(p1 + "_state");
  });
  s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("PG 1.1: has keys but no _state key"), std::string::npos) << s;
}

}  // namespace
}  // namespace pgring::testing
