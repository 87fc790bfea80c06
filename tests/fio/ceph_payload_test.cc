// ceph_payload_test.cc — pgring_payload=ceph: the fio engine's Ceph-encoded
// entries, dups and infos (tools/fio_engine/ceph_payload.h) decode whole
// with pgring-tool's decoder (src/tool/ceph/), carry what an OSD's would
// (the version and the PG they were written for, an object that maps to
// that PG, a dup that repeats its entry's request), vary as an OSD's do,
// and go through the OSD model into a store and back unchanged.
#include "ceph_payload.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <random>
#include <set>

#include "absl/strings/str_format.h"
#include "osd_model.h"
#include "small_osd_config.h"
#include "tool/ceph/ceph_decode.h"
#include "util/store_fixture.h"

namespace pgring::fio {
namespace {

using pgring::testing::StoreFixture;
using tool::Json;
using tool::ceph::CephType;
using tool::ceph::DecodeCeph;

EngineConfig CephConfig() {
  EngineConfig c = SmallConfig();
  c.payload = EngineConfig::Payload::kCeph;
  return c;
}

// Decodes `bytes` as one whole `type`, with nothing skipped.
Json Decode(CephType type, const std::string& bytes) {
  auto d = DecodeCeph(type, bytes);
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return Json();
  EXPECT_TRUE(d->notes.empty());
  return d->fields;
}

TEST(CephPayloadTest, EveryKindDecodesWholeAndSaysWhatWasWritten) {
  const EngineConfig c = CephConfig();
  for (uint32_t pg : {0u, 5u, 15u}) {
    for (uint64_t v : {1ull, 2ull, 100ull, 5000ull}) {
      SCOPED_TRACE(absl::StrFormat("PG %u version %u", pg, v));
      const std::string version = absl::StrFormat("1'%u", v);
      const Json e = Decode(CephType::kLogEntry, CephLogEntry(c, pg, v));
      ASSERT_FALSE(e.is_null());
      EXPECT_EQ(e["op"], "modify");
      EXPECT_EQ(e["version"], version);
      EXPECT_EQ(e["struct_v"], 14);
      EXPECT_EQ(e["object"]["pool"], kFirstPool);
      const uint32_t hash =
          static_cast<uint32_t>(std::stoul(e["object"]["hash"].get<std::string>(), nullptr, 16));
      EXPECT_EQ(CephStableMod(hash, c.pgs), pg);  // the object belongs to this PG
      if (v == 1) EXPECT_EQ(e["prior_version"], "0'0");
      const Json d = Decode(CephType::kLogDup, CephLogDup(c, pg, v));
      EXPECT_EQ(d["reqid"], e["reqid"]);
      EXPECT_EQ(d["version"], version);
      const Json i = Decode(CephType::kPgInfo, CephPgInfo(c, pg, v));
      EXPECT_EQ(i["pgid"], absl::StrFormat("1.%x", pg));
      EXPECT_EQ(i["last_update"], version);
      EXPECT_EQ(i["struct_v"], 32);
      EXPECT_EQ(i["stats"]["struct_v"], 29);
      const Json f = Decode(CephType::kPgFastInfo, CephPgFastInfo(c, pg, v));
      EXPECT_EQ(f["last_update"], version);
      EXPECT_EQ(f["stats"]["log_size"], i["stats"]["log_size"]);
    }
  }
}

TEST(CephPayloadTest, FieldsVaryAsAnOsdsDo) {
  const EngineConfig c = CephConfig();
  std::set<std::string> objects, reqids, mtimes, sizes;
  for (uint64_t v = 1000; v < 1200; ++v) {
    const std::string bytes = CephLogEntry(c, 3, v);
    const Json e = Decode(CephType::kLogEntry, bytes);
    objects.insert(e["object"]["oid"].get<std::string>());
    reqids.insert(e["reqid"].get<std::string>());
    mtimes.insert(e["mtime"].get<std::string>());
    sizes.insert(std::to_string(bytes.size()));
    const std::string prior = e["prior_version"].get<std::string>();
    EXPECT_LT(std::stoull(prior.substr(prior.find('\'') + 1)), v);  // an older version of it
  }
  EXPECT_GT(objects.size(), 150u);
  EXPECT_EQ(reqids.size(), 200u);  // every write its own request
  EXPECT_GT(mtimes.size(), 190u);
  EXPECT_GE(sizes.size(), 2u);  // new objects' entries are smaller (no clean regions)
}

class CephPayloadStoreTest : public StoreFixture, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    MkfsAndOpen(GetParam());
  }
};

TEST_P(CephPayloadStoreTest, ModelWritesThemAndTheyReadBackDecodable) {
  const EngineConfig c = CephConfig();
  OsdModel model(c);
  ASSERT_OK(model.Setup(store_.get()));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 600; ++i) {
    auto gate = std::make_shared<CommitGate>();
    gate->Open();
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    absl::Status result;
    auto op = model.SubmitWrite(store_.get(), rng() % 1024, gate,
                                [&](OsdModel::WriteOp, absl::Status s) {
                                  std::lock_guard<std::mutex> lk(mu);
                                  result = s;
                                  done = true;
                                  cv.notify_all();
                                });
    ASSERT_OK(op.status());
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return done; });
    ASSERT_OK(result);
  }
  const CheckResult r = model.CheckStore(*store_);
  EXPECT_EQ(r.error_count, 0u) << (r.errors.empty() ? "" : r.errors.front());
  for (uint32_t pg = 0; pg < c.pgs; ++pg) {
    const PgId id = model.PgIdOf(pg);
    auto entries = store_->ReadEntries(id, Version::Min(), Version::Max());
    ASSERT_OK(entries.status());
    ASSERT_FALSE(entries->empty());
    for (const LogEntry& e : *entries) {
      EXPECT_EQ(Decode(CephType::kLogEntry, e.payload)["version"], e.version.ToString());
    }
    auto dups = store_->ReadDups(id);
    ASSERT_OK(dups.status());
    for (const LogEntry& d : *dups) {
      EXPECT_EQ(Decode(CephType::kLogDup, d.payload)["version"], d.version.ToString());
    }
    auto info = store_->ReadInfo(id);
    ASSERT_OK(info.status());
    auto full = DecodeCeph(CephType::kPgInfo, *info);
    auto fast = DecodeCeph(CephType::kPgFastInfo, *info);
    EXPECT_TRUE(full.ok() || fast.ok()) << full.status() << " / " << fast.status();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CephPayloadStoreTest,
                         ::testing::Values(Backend::kRing, Backend::kRocksDb),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return std::string(BackendName(i.param));
                         });

}  // namespace
}  // namespace pgring::fio
