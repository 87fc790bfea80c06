// Functional tests of the RocksDB backend (Backend::kRocksDb): the same
// checks as ring_store_test.cc where they apply, plus the key layout (it
// must be BlueStore's), what one client write puts into RocksDB, reads of
// transactions not yet committed, damage at open, and the RocksDB options.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "format/metadata_keys.h"
#include "store/rocksdb/rocksdb_log_store.h"
#include "util/store_fixture.h"
#include "util/sync.h"

namespace pgring::testing {
namespace {

std::string Payload(uint64_t v, size_t n = 200) {
  std::string s = "entry-" + std::to_string(v) + "-";
  while (s.size() < n) s += static_cast<char>('a' + (v + s.size()) % 26);
  return s;
}

// Ceph's eversion_t::get_key_name(), written out independently.
std::string CephKeyName(uint32_t epoch, uint64_t version) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%010u.%020llu", epoch, static_cast<unsigned long long>(version));
  return buf;
}

class RocksDbBackendTest : public StoreFixture {
 protected:
  static MkfsOptions RocksMkfs() {
    MkfsOptions m = DefaultMkfs();
    m.backend = Backend::kRocksDb;
    return m;
  }
  void SetUp() override {
    StoreFixture::SetUp();
    Mkfs(RocksMkfs());
    ASSERT_OK(Open(options_));
    ASSERT_EQ(store_->backend(), Backend::kRocksDb);
  }
  RocksDbLogStore* rdb() { return dynamic_cast<RocksDbLogStore*>(store_.get()); }
  absl::Status Append(const PgId& pg, uint64_t from, uint64_t to, uint32_t epoch = 1,
                      size_t size = 200) {
    Transaction t;
    for (uint64_t v = from; v <= to; ++v) t.AppendEntry(pg, V(epoch, v), Payload(v, size));
    t.SetInfo(pg, "info@" + std::to_string(to));
    return store_->Commit(std::move(t));
  }
  absl::Status Create(const PgId& pg) {
    Transaction t;
    t.CreatePg(pg);
    return store_->Commit(std::move(t));
  }
  absl::Status Do(const std::function<void(Transaction*)>& fill) {
    Transaction t;
    fill(&t);
    return store_->Commit(std::move(t));
  }
  std::vector<uint64_t> Versions(const PgId& pg) {
    auto r = store_->ReadEntries(pg);
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<uint64_t> out;
    if (!r.ok()) return out;
    for (auto& e : *r) {
      EXPECT_EQ(e.payload, Payload(e.version.version));
      out.push_back(e.version.version);
    }
    return out;
  }
  static std::vector<uint64_t> Range(uint64_t a, uint64_t b) {
    std::vector<uint64_t> v;
    for (uint64_t i = a; i <= b; ++i) v.push_back(i);
    return v;
  }
  // Closes the store and lists every key of the DB with its value.
  std::map<std::string, std::string> DumpDb() {
    if (store_) EXPECT_OK(store_->Close());
    store_.reset();
    std::map<std::string, std::string> out;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), db_path_, &raw);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return out;
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) out[it->key().ToString()] = it->value().ToString();
    return out;
  }
  // The keys of one PG, with the prefix taken off.
  static std::map<std::string, std::string> PgKeys(const std::map<std::string, std::string>& all,
                                                   const PgId& pg) {
    const std::string prefix = "pgring.log." + EncodePgKey(pg) + ".";
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : all) {
      if (k.compare(0, prefix.size(), prefix) == 0) out[k.substr(prefix.size())] = v;
    }
    return out;
  }
  // Writes to the DB behind the store's back (the store must be closed).
  void RawWrite(const std::function<void(rocksdb::WriteBatch*)>& fill) {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), db_path_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::WriteBatch b;
    fill(&b);
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ASSERT_TRUE(db->Write(wo, &b).ok());
  }
};

TEST_F(RocksDbBackendTest, AppendReadReopen) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 10));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 10));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@10");
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 10));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@10");
  auto part = store_->ReadEntries(Pg(1), V(1, 3), V(1, 5));
  ASSERT_OK(part);
  ASSERT_EQ(part->size(), 3u);
  EXPECT_EQ((*part)[0].version, V(1, 3));
  EXPECT_EQ((*part)[2].payload, Payload(5));
  auto st = store_->GetPgStats(Pg(1));
  ASSERT_OK(st);
  EXPECT_EQ(st->entries, 10u);
  EXPECT_EQ(st->entry_bytes, 2000u);
  EXPECT_EQ(st->first_version, V(1, 1));
  EXPECT_EQ(st->last_version, V(1, 10));
  EXPECT_EQ(st->info_bytes, 7u);
  EXPECT_EQ(st->chunks, 0u);
  // A PG without info, and an empty PG, survive a reopen too.
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Create(Pg(3)));
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(2), V(1, 1), Payload(1)); }));
  Reopen();
  EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{Pg(1), Pg(2), Pg(3)}));
  EXPECT_EQ(Versions(Pg(2)), Range(1, 1));
  EXPECT_CODE(store_->ReadInfo(Pg(2)), kNotFound);
  EXPECT_TRUE(store_->ReadEntries(Pg(3))->empty());
}

TEST_F(RocksDbBackendTest, ErrorsChangeNothing) {
  ASSERT_OK(Create(Pg(1)));
  EXPECT_CODE(Create(Pg(1)), kAlreadyExists);
  ASSERT_OK(Append(Pg(1), 1, 5));
  // A later op fails: the whole transaction is refused, earlier ops undone.
  Transaction t;
  t.AppendEntry(Pg(1), V(1, 6), Payload(6));
  t.Trim(Pg(1), V(1, 3));
  t.SetInfo(Pg(1), "refused info");
  t.AppendDup(Pg(1), V(1, 1), "d");
  t.AppendEntry(Pg(1), V(1, 6), Payload(6));  // not increasing
  t.batch()->Put("osd.refused", "x");
  EXPECT_CODE(store_->Commit(std::move(t)), kInvalidArgument);
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@5");
  EXPECT_TRUE(store_->ReadDups(Pg(1))->empty());
  EXPECT_EQ(store_->GetPgStats(Pg(1))->entry_bytes, 1000u);
  EXPECT_CODE(Append(Pg(2), 1, 1), kNotFound);
  EXPECT_CODE(store_->ReadEntries(Pg(2)), kNotFound);
  EXPECT_CODE(store_->ReadInfo(Pg(2)), kNotFound);
  EXPECT_CODE(store_->ReadDups(Pg(2)), kNotFound);
  EXPECT_CODE(store_->GetPgStats(Pg(2)), kNotFound);
  EXPECT_CODE(Do([](Transaction* x) { x->Trim(Pg(1), V(1, 99)); }), kOutOfRange);
  EXPECT_CODE(Do([](Transaction* x) { x->TrimDups(Pg(1), V(1, 1)); }), kOutOfRange);
  EXPECT_CODE(store_->ReadEntries(Pg(1), V(1, 9), V(1, 12)), kOutOfRange);
  EXPECT_CODE(store_->ReadEntries(Pg(1), V(1, 4), V(1, 2)), kInvalidArgument);
  // Create then fail in one transaction: the PG does not exist after.
  EXPECT_CODE(Do([](Transaction* x) {
                x->CreatePg(Pg(7));
                x->AppendEntry(Pg(7), V(1, 1), "a");
                x->RemovePg(Pg(1));
                x->AppendEntry(Pg(7), V(1, 1), "again");
              }),
              kInvalidArgument);
  EXPECT_CODE(store_->ReadEntries(Pg(7)), kNotFound);
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 5));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@5");
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{Pg(1)});
  auto all = DumpDb();
  EXPECT_EQ(all.count("osd.refused"), 0u);
  EXPECT_EQ(PgKeys(all, Pg(1)).size(), 5u + 2u);  // 5 entries, _info, _state
}

TEST_F(RocksDbBackendTest, TrimRewindReset) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 20));
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 5)); }));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 20));
  // Trimming again to an older point is a no-op.
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 3)); }));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 20));
  // Divergent tail: rewind to 15 and append replacements in a new epoch.
  ASSERT_OK(Do([](Transaction* r) {
    r->Rewind(Pg(1), V(1, 15));
    r->AppendEntry(Pg(1), V(2, 16), Payload(16));
    r->AppendEntry(Pg(1), V(2, 17), Payload(17));
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(6, 17));
  EXPECT_EQ((*store_->ReadEntries(Pg(1))).back().version, V(2, 17));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(6, 17));
  EXPECT_EQ((*store_->ReadEntries(Pg(1))).back().version, V(2, 17));
  EXPECT_CODE(Do([](Transaction* t) { t->Rewind(Pg(1), V(1, 2)); }), kOutOfRange);
  // The trim point survives the reopen: appends at or below it are refused.
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(2, 17)); }));
  Reopen();
  EXPECT_TRUE(store_->ReadEntries(Pg(1))->empty());
  EXPECT_CODE(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 17), "x"); }), kInvalidArgument);
  EXPECT_CODE(Do([](Transaction* t) { t->Rewind(Pg(1), V(2, 16)); }), kOutOfRange);
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 18), Payload(18)); }));
  // A rewind below every entry keeps its version after a reopen.
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(1), V(2, 30), Payload(30));
    t->Rewind(Pg(1), V(2, 25));
  }));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(18, 18));
  EXPECT_CODE(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 25), "x"); }), kInvalidArgument);
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(2, 26), Payload(26)); }));
  // Replace the whole log.
  ASSERT_OK(Do([](Transaction* x) {
    x->AppendDup(Pg(1), V(1, 1), "dup");
    x->ResetLog(Pg(1));
    x->AppendEntry(Pg(1), V(3, 1), Payload(1));
    x->AppendEntry(Pg(1), V(3, 2), Payload(2));
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(1, 2));
  EXPECT_TRUE(store_->ReadDups(Pg(1))->empty());
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 2));
  EXPECT_TRUE(store_->ReadDups(Pg(1))->empty());
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "info@20");
  auto keys = PgKeys(DumpDb(), Pg(1));
  EXPECT_EQ(keys.size(), 2u + 2u);
  EXPECT_EQ(keys.count(CephKeyName(3, 1)), 1u);
  EXPECT_EQ(keys.count(CephKeyName(3, 2)), 1u);
}

TEST_F(RocksDbBackendTest, Dups) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  for (uint64_t v = 1; v <= 10; ++v) t.AppendDup(Pg(1), V(1, v), "dup" + std::to_string(v));
  ASSERT_OK(store_->Commit(std::move(t)));
  ASSERT_OK(Do([](Transaction* x) { x->TrimDups(Pg(1), V(1, 4)); }));
  EXPECT_CODE(Do([](Transaction* x) { x->AppendDup(Pg(1), V(1, 10), "again"); }), kInvalidArgument);
  for (int pass = 0; pass < 2; ++pass) {
    auto d = store_->ReadDups(Pg(1));
    ASSERT_OK(d);
    ASSERT_EQ(d->size(), 6u);
    EXPECT_EQ(d->front().version, V(1, 5));
    EXPECT_EQ(d->front().payload, "dup5");
    EXPECT_EQ(d->back().payload, "dup10");
    EXPECT_EQ(store_->GetPgStats(Pg(1))->dups, 6u);
    Reopen();
  }
  // The dup trim point survives too.
  EXPECT_CODE(Do([](Transaction* x) { x->AppendDup(Pg(1), V(1, 3), "x"); }), kInvalidArgument);
}

TEST_F(RocksDbBackendTest, KeyLayoutIsBlueStores) {
  ASSERT_OK(Create(Pg(0x2a, 3)));
  const PgId pg = Pg(0x2a, 3);
  // An OSD's writes: entry + info; past 8 entries each write trims the
  // oldest entry into a dup; past 4 dups the oldest dup is trimmed.
  for (uint64_t v = 1; v <= 20; ++v) {
    Transaction t;
    t.AppendEntry(pg, V(7, v), Payload(v));
    t.SetInfo(pg, "info@" + std::to_string(v));
    if (v > 8) {
      t.AppendDup(pg, V(7, v - 8), "dup" + std::to_string(v - 8));
      t.Trim(pg, V(7, v - 8));
    }
    if (v > 12) t.TrimDups(pg, V(7, v - 12));
    ASSERT_OK(store_->Commit(std::move(t)));
  }
  ASSERT_OK(Create(Pg(1, 4)));  // another PG: keys must not mix
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(1, 4), V(1, 1), Payload(1)); }));
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
  auto keys = PgKeys(all, pg);
  std::map<std::string, std::string> want;
  for (uint64_t v = 13; v <= 20; ++v) want[CephKeyName(7, v)] = Payload(v);
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
  for (const auto& [k, v] : PgKeys(all, pg)) order.push_back(k);
  EXPECT_EQ(order.front(), CephKeyName(7, 13));
  EXPECT_EQ(order[8], "_info");
  EXPECT_EQ(order[9], "_state");
  EXPECT_EQ(order[10], "dup_" + CephKeyName(7, 9));
  EXPECT_EQ(PgKeys(all, Pg(1, 4)).size(), 2u);  // entry + _state
  EXPECT_EQ(PgKeys(all, Pg(1, 4)).count(CephKeyName(1, 1)), 1u);
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
  auto stats = rdb()->metadata_db()->statistics();
  ASSERT_NE(stats, nullptr);
  auto keys_written = [&] { return stats->getTickerCount(rocksdb::NUMBER_KEYS_WRITTEN); };
  // Append + info: two Puts; _state is not rewritten by appends.
  uint64_t before = keys_written();
  ASSERT_OK(Append(Pg(1), 11, 11));
  EXPECT_EQ(keys_written() - before, 2u);
  // The steady state of an OSD: entry, info, the trimmed entry's delete, its
  // dup, the oldest dup's delete, and _state (the trim points moved).
  before = keys_written();
  uint64_t value_bytes = store_->GetStoreStats().record_bytes_appended;
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(1), V(1, 12), Payload(12));
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
  EXPECT_GT(stats->getTickerCount(rocksdb::WAL_FILE_BYTES), 0u);
  // The partition is not written after mkfs.
  EXPECT_EQ(store_->GetStoreStats().device_bytes_written, device_bytes);
  EXPECT_EQ(store_->GetStoreStats().total_chunks, 0u);
}

TEST_F(RocksDbBackendTest, RocksDbIsConfiguredAsBlueStore) {
  rocksdb::DB* db = rdb()->metadata_db()->db();
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

TEST_F(RocksDbBackendTest, RemovePgDeletesEveryKey) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Append(Pg(1), 1, 30));
  ASSERT_OK(Append(Pg(2), 1, 3));
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendDup(Pg(1), V(1, 1), "d");
    t->Trim(Pg(1), V(1, 10));
  }));
  ASSERT_OK(Do([](Transaction* t) { t->RemovePg(Pg(1)); }));
  EXPECT_CODE(store_->ReadEntries(Pg(1)), kNotFound);
  EXPECT_CODE(Append(Pg(1), 31, 31), kNotFound);
  EXPECT_EQ(store_->GetStoreStats().live_entries, 3u);
  Reopen();
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{Pg(2)});
  EXPECT_TRUE(PgKeys(DumpDb(), Pg(1)).empty());
  // Recreate with the same id, in one transaction with a removal: the new
  // PG starts empty and its keys survive the range delete before them.
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 5));
  ASSERT_OK(Do([](Transaction* t) {
    t->RemovePg(Pg(1));
    t->CreatePg(Pg(1));
    t->AppendEntry(Pg(1), V(2, 3), Payload(3));
    t->SetInfo(Pg(1), "new");
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(3, 3));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(3, 3));
  EXPECT_EQ(*store_->ReadInfo(Pg(1)), "new");
  EXPECT_EQ(store_->GetPgStats(Pg(1))->first_version, V(2, 3));
  EXPECT_EQ(Versions(Pg(2)), Range(1, 3));
  EXPECT_EQ(PgKeys(DumpDb(), Pg(1)).size(), 3u);
}

TEST_F(RocksDbBackendTest, EmbedderKeysCommitWithTheLog) {
  ASSERT_OK(Create(Pg(1)));
  Transaction t;
  t.AppendEntry(Pg(1), V(1, 1), Payload(1));
  t.batch()->Put("osd.onode.obj1", "onode-value");
  ASSERT_OK(store_->Commit(std::move(t)));
  auto all = DumpDb();
  EXPECT_EQ(all["osd.onode.obj1"], "onode-value");
  EXPECT_EQ(PgKeys(all, Pg(1))[CephKeyName(1, 1)], Payload(1));
}

TEST_F(RocksDbBackendTest, BoundsAreHardAndRecoverable) {
  options_.limits.max_entries_per_pg = 50;
  options_.limits.max_dups_per_pg = 5;
  options_.limits.max_total_entries = 60;
  options_.limits.max_payload_bytes = 1000;
  options_.limits.max_pgs = 2;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 50));
  EXPECT_CODE(Append(Pg(1), 51, 51), kResourceExhausted);
  EXPECT_CODE(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 51), std::string(1001, 'x')); }),
              kInvalidArgument);
  EXPECT_CODE(Do([](Transaction* t) { t->SetInfo(Pg(1), std::string(1001, 'x')); }),
              kInvalidArgument);
  EXPECT_CODE(Do([](Transaction* t) {
                for (int i = 1; i <= 6; ++i) t->AppendDup(Pg(1), V(1, i), "d");
              }),
              kResourceExhausted);
  ASSERT_OK(Create(Pg(2)));
  EXPECT_CODE(Create(Pg(3)), kResourceExhausted);
  ASSERT_OK(Append(Pg(2), 1, 10));
  EXPECT_CODE(Append(Pg(2), 11, 11), kResourceExhausted);  // 60 in the store
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 10)); }));
  ASSERT_OK(Append(Pg(1), 51, 60));
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(11, 60));
  EXPECT_EQ(store_->GetStoreStats().live_entries, 60u);
  EXPECT_CODE(Append(Pg(2), 11, 11), kResourceExhausted);
}

TEST_F(RocksDbBackendTest, ManyPgsManyThreads) {
  constexpr int kPgs = 16, kThreads = 4, kPerThread = 100;
  for (int i = 0; i < kPgs; ++i) ASSERT_OK(Create(Pg(i)));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int i = 0; i < kPerThread; ++i) {
        int pg = th + kThreads * (i % (kPgs / kThreads));
        uint64_t v = i / (kPgs / kThreads) + 1;
        EXPECT_OK(Append(Pg(pg), v, v));
        if (v > 10) {
          EXPECT_OK(Do([&](Transaction* t) { t->Trim(Pg(pg), V(1, v - 10)); }));
        }
        auto r = store_->ReadEntries(Pg(pg));
        EXPECT_OK(r);
        if (r.ok()) EXPECT_EQ(r->back().version, V(1, v));
      }
    });
  }
  for (auto& t : threads) t.join();
  Reopen();
  for (int i = 0; i < kPgs; ++i) EXPECT_EQ(Versions(Pg(i)), Range(16, 25)) << i;
}

TEST_F(RocksDbBackendTest, ReadsReflectTransactionsNotYetCommitted) {
  // kUnsynced with a long delay: nothing commits until Sync.
  options_.durability = DurabilityMode::kUnsynced;
  options_.unsynced_max_delay = std::chrono::seconds(30);
  options_.max_group_size = 1 << 20;
  Reopen();
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 10));
  ASSERT_OK(Do([](Transaction* t) {
    t->Trim(Pg(1), V(1, 4));
    t->Rewind(Pg(1), V(1, 8));
    t->AppendEntry(Pg(1), V(2, 9), Payload(9));
    t->AppendDup(Pg(1), V(1, 1), "dup1");
  }));
  EXPECT_EQ(Versions(Pg(1)), Range(5, 9));
  EXPECT_EQ(store_->ReadEntries(Pg(1))->back().version, V(2, 9));
  EXPECT_EQ(store_->ReadDups(Pg(1))->size(), 1u);
  EXPECT_EQ(store_->GetStoreStats().transactions_committed, 0u);
  ASSERT_OK(store_->Sync());
  EXPECT_EQ(store_->GetStoreStats().transactions_committed, 3u);
  // Half committed, half pending: entries 5..9 in RocksDB, 10..12 pending,
  // 5..6 trimmed by a pending transaction.
  ASSERT_OK(Append(Pg(1), 10, 12, 2));
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 6)); }));
  EXPECT_EQ(store_->GetStoreStats().transactions_committed, 3u);
  EXPECT_EQ(Versions(Pg(1)), Range(7, 12));
  auto mid = store_->ReadEntries(Pg(1), V(1, 8), V(2, 11));
  ASSERT_OK(mid);
  ASSERT_EQ(mid->size(), 4u);  // 1'8 and 2'9 from RocksDB, 2'10 and 2'11 pending
  EXPECT_EQ((*mid)[1].version, V(2, 9));
  EXPECT_EQ((*mid)[3].payload, Payload(11));
  Reopen();  // Close commits what was acknowledged
  EXPECT_EQ(Versions(Pg(1)), Range(7, 12));
}

TEST_F(RocksDbBackendTest, ReadOnlyRefusesWrites) {
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Append(Pg(1), 1, 3));
  options_.read_only = true;
  Reopen();
  EXPECT_EQ(Versions(Pg(1)), Range(1, 3));
  EXPECT_CODE(Append(Pg(1), 4, 4), kFailedPrecondition);
}

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
  RawWrite([&](rocksdb::WriteBatch* b) { b->Put(p1 + "_state", st.Encode()); });
  auto s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("PG 1.1: entry 1'1 survived the trim to 1'1"), std::string::npos) << s;
  // Damaged _state value.
  RawWrite([&](rocksdb::WriteBatch* b) { b->Put(p1 + "_state", "garbage"); });
  s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("PG 1.1: _state value is damaged"), std::string::npos) << s;
  // A key that is no key of ours; a PG without _state.
  RawWrite([&](rocksdb::WriteBatch* b) {
    b->Put(p1 + "_state", PgStateValue{}.Encode());
    b->Put(p1 + "_bogus", "x");
  });
  s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("unknown key '_bogus'"), std::string::npos) << s;
  RawWrite([&](rocksdb::WriteBatch* b) {
    b->Delete(p1 + "_bogus");
    b->Delete(p1 + "_state");
  });
  s = Open(options_);
  EXPECT_CODE(s, kDataLoss);
  EXPECT_NE(s.message().find("PG 1.1: has keys but no _state key"), std::string::npos) << s;
  // kMarkDamaged: PG 1 is marked, PG 2 works; PG 1 can only be removed.
  options_.recovery_policy = RecoveryPolicy::kMarkDamaged;
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->GetPgStats(Pg(1))->damaged);
  EXPECT_CODE(store_->ReadEntries(Pg(1)), kDataLoss);
  EXPECT_CODE(store_->ReadInfo(Pg(1)), kDataLoss);
  EXPECT_CODE(Append(Pg(1), 4, 4), kDataLoss);
  EXPECT_EQ(Versions(Pg(2)), Range(1, 3));
  ASSERT_OK(Append(Pg(2), 4, 4));
  ASSERT_OK(Do([](Transaction* t) { t->RemovePg(Pg(1)); }));
  options_.recovery_policy = RecoveryPolicy::kRefuse;
  Reopen();
  EXPECT_EQ(*store_->ListPgs(), std::vector<PgId>{Pg(2)});
  EXPECT_EQ(Versions(Pg(2)), Range(1, 4));
}

}  // namespace
}  // namespace pgring::testing

namespace pgring::testing {
namespace {

class RocksDbCommitGateTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    MkfsOptions m = DefaultMkfs();
    m.backend = Backend::kRocksDb;
    Mkfs(m);
    ASSERT_OK(Open(options_));
    Transaction t;
    t.CreatePg(Pg(1));
    ASSERT_OK(store_->Commit(std::move(t)));
  }
};

TEST_F(RocksDbCommitGateTest, CommitWaitsForTheEmbeddersWrite) {
  auto gate = std::make_shared<CommitGate>();
  std::atomic<int> committed{0};
  pgring::Notification second_done;
  Transaction t1;
  t1.AppendEntry(Pg(1), V(1, 1), "one");
  t1.WaitFor(gate);
  ASSERT_OK(store_->Submit(std::move(t1), [&](absl::Status s) {
    EXPECT_OK(s);
    EXPECT_EQ(committed.fetch_add(1), 0);  // in submission order
  }));
  Transaction t2;
  t2.AppendEntry(Pg(1), V(1, 2), "two");
  ASSERT_OK(store_->Submit(std::move(t2), [&](absl::Status s) {
    EXPECT_OK(s);
    EXPECT_EQ(committed.fetch_add(1), 1);
    second_done.Notify();
  }));
  // Neither may commit while the gate is closed (t2 is behind t1); reads
  // already see both.
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(committed.load(), 0);
  auto r = store_->ReadEntries(Pg(1));
  ASSERT_OK(r);
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].payload, "one");
  EXPECT_EQ((*r)[1].payload, "two");
  gate->Open();
  second_done.WaitForNotification();
  Reopen();
  EXPECT_EQ(store_->ReadEntries(Pg(1))->size(), 2u);
}

TEST_F(RocksDbCommitGateTest, AFailedEmbedderWriteFailsTheTransactionAndTheStore) {
  auto gate = std::make_shared<CommitGate>();
  Transaction t1;
  t1.AppendEntry(Pg(1), V(1, 1), "one");
  t1.WaitFor(gate);
  pgring::Notification done;
  absl::Status result;
  ASSERT_OK(store_->Submit(std::move(t1), [&](absl::Status s) {
    result = s;
    done.Notify();
  }));
  gate->Open(absl::InternalError("data write failed"));
  done.WaitForNotification();
  EXPECT_EQ(result.code(), absl::StatusCode::kInternal);
  Transaction t2;
  t2.AppendEntry(Pg(1), V(1, 2), "two");
  EXPECT_CODE(store_->Commit(std::move(t2)), kFailedPrecondition);
  EXPECT_CODE(store_->Close(), kInternal);  // Close reports the failure
  ASSERT_OK(Open(options_));
  EXPECT_TRUE(store_->ReadEntries(Pg(1))->empty());
  ASSERT_OK(store_->Commit([] {
    Transaction t;
    t.AppendEntry(Pg(1), V(1, 1), "again");
    return t;
  }()));
}

}  // namespace
}  // namespace pgring::testing
