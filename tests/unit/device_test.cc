// device_test.cc — the public Device (pgring/device.h): bytes from any
// buffer written and read back at block offsets with both I/O engines,
// writes under a plug sent at the unplug, the counters, the lock, the
// argument errors, and a store made and opened on a Device (in memory or a
// file) that writes its records through it.
#include "pgring/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pgring/store.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 1 << 20;

// Waits for write callbacks; shared with them, so it outlives one that is
// still returning on a device thread.
struct Writes {
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  absl::Status first_error;

  static std::function<void(absl::Status)> Callback(const std::shared_ptr<Writes>& w) {
    return [w](absl::Status s) {
      std::lock_guard<std::mutex> l(w->mu);
      if (!s.ok() && w->first_error.ok()) w->first_error = s;
      ++w->done;
      w->cv.notify_all();
    };
  }
  absl::Status Wait(int n) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return done >= n; });
    return first_error;
  }
  int Done() {
    std::lock_guard<std::mutex> l(mu);
    return done;
  }
};

// `n` bytes that differ with `seed`.
std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + seed * 13) & 0xff);
  return s;
}

class DeviceEngineTest : public ::testing::TestWithParam<IoEngine> {
 protected:
  void SetUp() override { MakeFile(path_, kSize); }
  absl::StatusOr<std::shared_ptr<Device>> OpenDevice(bool lock = true) {
    DeviceOptions o;
    o.io_engine = GetParam();
    o.exclusive_lock = lock;
    return Device::Open(path_, o);
  }
  TempDir dir_;
  const std::string path_ = dir_.Join("data");
};

TEST_P(DeviceEngineTest, WritesAndReadsAnyBuffer) {
  auto dev = OpenDevice();
  ASSERT_OK(dev);
  EXPECT_EQ((*dev)->size(), kSize);
  EXPECT_EQ((*dev)->block_size(), 4096u);
  // A string's bytes (no alignment promised) at two block offsets.
  const std::string a = Bytes(8192, 1), b = Bytes(4096, 2);
  auto w = std::make_shared<Writes>();
  (*dev)->WriteAsync(0, a, Writes::Callback(w));
  (*dev)->WriteAsync(16384, b, Writes::Callback(w));
  ASSERT_OK(w->Wait(2));
  EXPECT_EQ((*dev)->bytes_written(), a.size() + b.size());
  EXPECT_EQ((*dev)->writes(), 2u);  // one each, whatever its length
  ASSERT_OK((*dev)->Flush());
  EXPECT_EQ((*dev)->flushes(), 1u);
  // Read into a buffer one byte off any alignment: bounced.
  std::vector<char> mem(8192 + 1);
  absl::Span<char> out(mem.data() + 1, 8192);
  ASSERT_OK((*dev)->Read(0, out));
  EXPECT_EQ(std::string(out.data(), out.size()), a);
  ASSERT_OK((*dev)->Read(16384, out.subspan(0, 4096)));
  EXPECT_EQ(std::string(out.data(), 4096), b);
  // Reopened: the bytes were written to the file.
  dev->reset();
  auto again = OpenDevice();
  ASSERT_OK(again);
  std::string back(4096, '\0');
  ASSERT_OK((*again)->Read(16384, absl::Span<char>(back.data(), back.size())));
  EXPECT_EQ(back, b);
}

TEST_P(DeviceEngineTest, PluggedWritesCompleteAfterTheUnplug) {
  auto dev = OpenDevice();
  ASSERT_OK(dev);
  auto w = std::make_shared<Writes>();
  (*dev)->Plug();
  for (int i = 0; i < 8; ++i) (*dev)->WriteAsync(i * 4096, Bytes(4096, i), Writes::Callback(w));
  // io_uring holds plugged writes back from the kernel, so none can have
  // completed yet (psync ignores the plug).
  if (GetParam() == IoEngine::kIoUring) EXPECT_EQ(w->Done(), 0);
  (*dev)->Unplug();
  ASSERT_OK(w->Wait(8));
  EXPECT_EQ((*dev)->bytes_written(), 8u * 4096);
  EXPECT_EQ((*dev)->writes(), 8u);  // one system call, eight writes
  std::string back(4096, '\0');
  ASSERT_OK((*dev)->Read(7 * 4096, absl::Span<char>(back.data(), back.size())));
  EXPECT_EQ(back, Bytes(4096, 7));
}

TEST_P(DeviceEngineTest, RefusesUnalignedAndOutOfRangeWrites) {
  auto dev = OpenDevice();
  ASSERT_OK(dev);
  auto w = std::make_shared<Writes>();
  (*dev)->WriteAsync(100, Bytes(4096, 1), Writes::Callback(w));
  EXPECT_CODE(w->Wait(1), kInvalidArgument);
  w = std::make_shared<Writes>();
  (*dev)->WriteAsync(0, Bytes(100, 1), Writes::Callback(w));
  EXPECT_CODE(w->Wait(1), kInvalidArgument);
  w = std::make_shared<Writes>();
  (*dev)->WriteAsync(kSize, Bytes(4096, 1), Writes::Callback(w));
  EXPECT_CODE(w->Wait(1), kOutOfRange);
  EXPECT_EQ((*dev)->bytes_written(), 0u);
  EXPECT_EQ((*dev)->writes(), 0u);
}

// The lock refuses a second opener; without it, writers of one process may
// share a file (fio's jobs share a data file).
TEST_P(DeviceEngineTest, TheLockIsTheCallersChoice) {
  auto first = OpenDevice();
  ASSERT_OK(first);
  EXPECT_CODE(OpenDevice(), kUnavailable);
  first->reset();
  auto a = OpenDevice(/*lock=*/false);
  auto b = OpenDevice(/*lock=*/false);
  ASSERT_OK(a);
  ASSERT_OK(b);
}

// A store on a Device owns it, as the exclusive flock makes a path's store
// the only writer: a second store or mkfs on it, and the embedder's own
// writes, are refused until the store is gone.
TEST_P(DeviceEngineTest, AStoreOnADeviceIsItsOnlyWriter) {
  auto dev = OpenDevice();
  ASSERT_OK(dev);
  TempDir db;
  MkfsOptions mo;
  mo.chunk_size = 64 << 10;
  ASSERT_OK(Mkfs(*dev, MetadataLocation::OwnDb(db.Join("a")), mo));
  auto store = Store::Open(*dev, MetadataLocation::OwnDb(db.Join("a")), Options());
  ASSERT_OK(store);
  EXPECT_CODE(Store::Open(*dev, MetadataLocation::OwnDb(db.Join("a")), Options()), kUnavailable);
  mo.force = true;
  EXPECT_CODE(Mkfs(*dev, MetadataLocation::OwnDb(db.Join("b")), mo), kUnavailable);
  auto w = std::make_shared<Writes>();
  (*dev)->WriteAsync(0, Bytes(4096, 1), Writes::Callback(w));
  EXPECT_CODE(w->Wait(1), kFailedPrecondition);
  store->reset();
  // Released with the store: the device is the caller's again.
  w = std::make_shared<Writes>();
  (*dev)->WriteAsync(kSize - 4096, Bytes(4096, 1), Writes::Callback(w));
  ASSERT_OK(w->Wait(1));
  (*dev)->WriteAsync(kSize - 4096, Bytes(4096, 2), nullptr);  // no callback: allowed
  ASSERT_OK((*dev)->Flush());
}

// A write of the embedder's counts as in flight until its callback has
// returned; no store takes the device before then, so none of the
// embedder's writes can land on a store's label or records.
TEST_P(DeviceEngineTest, NoStoreTakesADeviceWithEmbedderWritesInFlight) {
  auto dev = OpenDevice();
  ASSERT_OK(dev);
  TempDir db;
  MkfsOptions mo;
  mo.chunk_size = 64 << 10;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<absl::Status> finished;
  (*dev)->WriteAsync(0, Bytes(4096, 1), [&](absl::Status s) {
    released.wait();
    finished.set_value(s);
  });
  absl::Status refused = Mkfs(*dev, MetadataLocation::OwnDb(db.Join("a")), mo);
  EXPECT_CODE(refused, kUnavailable);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("1 write(s) of the embedder's in flight"));
  EXPECT_CODE(Store::Open(*dev, MetadataLocation::OwnDb(db.Join("a")), Options()), kUnavailable);
  release.set_value();
  ASSERT_OK(finished.get_future().get());
  // `finished` is set just before the callback returns: retry the claim
  // until it has (no time limit but the test's own).
  absl::Status made;
  do {
    std::this_thread::yield();
    made = Mkfs(*dev, MetadataLocation::OwnDb(db.Join("a")), mo);
  } while (made.code() == absl::StatusCode::kUnavailable);
  ASSERT_OK(made);
}

TEST_P(DeviceEngineTest, AReadOnlyDeviceTakesOnlyAReadOnlyStore) {
  TempDir db;
  DeviceOptions o;
  o.io_engine = GetParam();
  o.read_only = true;
  auto ro = Device::Open(path_, o);
  ASSERT_OK(ro);
  MkfsOptions mo;
  mo.chunk_size = 64 << 10;
  EXPECT_CODE(Mkfs(*ro, MetadataLocation::OwnDb(db.Join("a")), mo), kFailedPrecondition);
  EXPECT_CODE(Store::Open(*ro, MetadataLocation::OwnDb(db.Join("a")), Options()),
              kFailedPrecondition);
}

TEST(Device, InMemorySizeIsBounded) {
  EXPECT_CODE(Device::InMemory(0), kInvalidArgument);
  EXPECT_CODE(Device::InMemory(4095), kInvalidArgument);
  EXPECT_CODE(Device::InMemory(uint64_t{1} << 62), kInvalidArgument);
  ASSERT_OK(Device::InMemory(uint64_t{1} << 30));
}

INSTANTIATE_TEST_SUITE_P(Engines, DeviceEngineTest,
                         ::testing::Values(IoEngine::kIoUring, IoEngine::kPsync),
                         [](const ::testing::TestParamInfo<IoEngine>& i) {
                           return i.param == IoEngine::kIoUring ? "IoUring" : "Psync";
                         });

TEST(Device, OpenErrorsNameThePath) {
  TempDir dir;
  auto dev = Device::Open(dir.Join("missing"), DeviceOptions());
  EXPECT_CODE(dev, kNotFound);
  EXPECT_NE(dev.status().message().find("missing"), std::string::npos) << dev.status();
  DeviceOptions ro;
  ro.read_only = true;
  MakeFile(dir.Join("ro"), kSize);
  auto r = Device::Open(dir.Join("ro"), ro);
  ASSERT_OK(r);
  auto w = std::make_shared<Writes>();
  (*r)->WriteAsync(0, Bytes(4096, 1), Writes::Callback(w));
  EXPECT_CODE(w->Wait(1), kFailedPrecondition);
}

TEST(Device, InMemory) {
  EXPECT_CODE(Device::InMemory(0), kInvalidArgument);
  EXPECT_CODE(Device::InMemory(4096 + 512), kInvalidArgument);
  auto dev = Device::InMemory(kSize);
  ASSERT_OK(dev);
  EXPECT_EQ((*dev)->size(), kSize);
  EXPECT_EQ((*dev)->block_size(), 4096u);
  std::string back(4096, 'x');
  ASSERT_OK((*dev)->Read(4096, absl::Span<char>(back.data(), back.size())));
  EXPECT_EQ(back, std::string(4096, '\0'));  // never written: zeros
  auto w = std::make_shared<Writes>();
  (*dev)->WriteAsync(4096, Bytes(4096, 3), Writes::Callback(w));
  EXPECT_EQ(w->Done(), 1);  // inline
  ASSERT_OK((*dev)->Read(4096, absl::Span<char>(back.data(), back.size())));
  EXPECT_EQ(back, Bytes(4096, 3));
}

// A store on a Device writes its records through it: the device's counters
// are the store's, in memory and on a file.
TEST(Device, AStoreOnADeviceWritesThroughIt) {
  TempDir dir;
  MakeFile(dir.Join("partition"), 16 << 20);
  DeviceOptions file_options;
  file_options.io_engine = IoEngine::kPsync;
  for (bool in_memory : {true, false}) {
    SCOPED_TRACE(in_memory ? "in memory" : "file");
    auto dev = in_memory ? Device::InMemory(16 << 20)
                         : Device::Open(dir.Join("partition"), file_options);
    ASSERT_OK(dev);
    const MetadataLocation meta = MetadataLocation::OwnDb(dir.Join(in_memory ? "db-mem" : "db"));
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    ASSERT_OK(Mkfs(*dev, meta, m));
    const uint64_t label_bytes = (*dev)->bytes_written();
    const uint64_t label_writes = (*dev)->writes();
    EXPECT_GT(label_bytes, 0u);
    EXPECT_GT(label_writes, 0u);
    Options o;
    o.log_sink = NullLogSink();
    auto store = Store::Open(*dev, meta, o);
    ASSERT_OK(store);
    Transaction t;
    t.CreatePg(PgId{1, 1, -1});
    t.AppendEntry(PgId{1, 1, -1}, Version{1, 1}, std::string(300, 'e'));
    ASSERT_OK((*store)->Commit(std::move(t)));
    // The store counts the device's writes and flushes since it was opened:
    // the label and its flush, then the record and the commit's flush.
    const StoreStats st = (*store)->GetStoreStats();
    EXPECT_GT(st.device_bytes_written, label_bytes);
    EXPECT_EQ((*dev)->bytes_written(), st.device_bytes_written);
    EXPECT_GE(st.device_flushes, 2u);
    EXPECT_EQ((*dev)->flushes(), st.device_flushes);
    EXPECT_GT(st.device_writes, label_writes);
    EXPECT_EQ((*dev)->writes(), st.device_writes);
    // The store keeps the device: the caller may let go of it.
    std::shared_ptr<Device> keep = *dev;
    dev->reset();
    ASSERT_OK((*store)->Close());
    store->reset();
    // And reopens from it.
    auto reopened = Store::Open(keep, meta, o);
    ASSERT_OK(reopened);
    auto entries = (*reopened)->ReadEntries(PgId{1, 1, -1});
    ASSERT_OK(entries);
    EXPECT_EQ(entries->size(), 1u);
  }
  EXPECT_CODE(Mkfs(std::shared_ptr<Device>(), MetadataLocation::OwnDb(dir.Join("x")), MkfsOptions()),
              kInvalidArgument);
  EXPECT_CODE(Store::Open(std::shared_ptr<Device>(), MetadataLocation::OwnDb(dir.Join("x")), Options()),
              kInvalidArgument);
}

}  // namespace
}  // namespace pgring::testing
