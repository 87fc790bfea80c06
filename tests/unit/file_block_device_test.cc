// file_block_device_test.cc — the real device on files (both write engines)
// and on loop block devices: round trips, concurrency, draining, and each
// refusal with its exact code.
#include "device/file_block_device.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "util/test_util.h"

namespace pgring {
namespace {

using ::pgring::testing::MakeFile;
using ::pgring::testing::TempDir;

constexpr uint32_t kBlock = 4096;

std::shared_ptr<AlignedBuffer> Pattern(size_t size, uint32_t seed) {
  auto buf = std::make_shared<AlignedBuffer>(size);
  for (size_t i = 0; i < size; ++i) {
    buf->data()[i] =
        static_cast<char>((i * 31 + seed * 131 + (i >> 12)) & 0xff);
  }
  return buf;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Counts callbacks and lets a test wait for all of them. The state is shared
// with the callbacks, so it outlives one that is still returning on a device
// thread when the test moves on. (std::mutex: TSan cannot see Debian's
// uninstrumented absl::Mutex.)
class CallbackCounter {
 public:
  IoCallback Make() {
    return [state = state_](absl::Status s) {
      std::lock_guard<std::mutex> lock(state->mu);
      if (!s.ok()) state->errors.push_back(s);
      ++state->done;
      state->cv.notify_all();
    };
  }
  void WaitFor(int n) {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->done >= n; });
  }
  // false after `limit` (a write that never completes fails the test
  // instead of hanging it).
  bool WaitFor(int n, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(state_->mu);
    return state_->cv.wait_for(lock, limit, [&] { return state_->done >= n; });
  }
  int done() {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->done;
  }
  std::vector<absl::Status> errors() {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->errors;
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int done = 0;
    std::vector<absl::Status> errors;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

enum class Engine { kIoUring, kPsync };

class FileBlockDeviceEngineTest : public ::testing::TestWithParam<Engine> {
 protected:
  FileBlockDeviceOptions Options(uint32_t queue_depth = 32) const {
    FileBlockDeviceOptions o;
    o.use_io_uring = GetParam() == Engine::kIoUring;
    o.queue_depth = queue_depth;
    return o;
  }

  // Opens `path` with the engine under test; skips (never passes silently)
  // if io_uring was asked for but is not available here.
  std::unique_ptr<FileBlockDevice> OpenOrSkip(const std::string& path,
                                              uint32_t queue_depth = 32) {
    auto dev = FileBlockDevice::Open(path, Options(queue_depth));
    EXPECT_OK(dev);
    if (!dev.ok()) return nullptr;
    if (GetParam() == Engine::kIoUring && !(*dev)->using_io_uring()) {
      skip_reason_ = (*dev)->io_uring_fallback_reason();
      return nullptr;
    }
    EXPECT_EQ((*dev)->using_io_uring(), GetParam() == Engine::kIoUring);
    return *std::move(dev);
  }

  TempDir dir_;
  std::string skip_reason_;
};

#define OPEN_OR_SKIP(var, ...)                                   \
  auto var = OpenOrSkip(__VA_ARGS__);                            \
  if (var == nullptr && !skip_reason_.empty()) {                 \
    GTEST_SKIP() << "io_uring unavailable, fell back to psync: " \
                 << skip_reason_;                                \
  }                                                              \
  ASSERT_NE(var, nullptr)

TEST_P(FileBlockDeviceEngineTest, RoundTripAndPersistence) {
  const std::string path = dir_.Join("dev");
  MakeFile(path, 1 << 20);
  std::shared_ptr<AlignedBuffer> a = Pattern(3 * kBlock, 1);
  std::shared_ptr<AlignedBuffer> b = Pattern(kBlock, 2);
  {
    OPEN_OR_SKIP(dev, path);
    EXPECT_EQ(dev->size(), 1u << 20);
    EXPECT_EQ(dev->logical_block_size(), kBlock);
    EXPECT_FALSE(dev->is_block_device());
    EXPECT_EQ(dev->path(), path);

    ASSERT_OK(dev->Write(8 * kBlock, a->span()));
    CallbackCounter cb;
    dev->WriteAsync((1 << 20) - kBlock, b, cb.Make());  // the last block
    cb.WaitFor(1);
    EXPECT_TRUE(cb.errors().empty());
    ASSERT_OK(dev->Flush());
    EXPECT_EQ(dev->bytes_written(), 4u * kBlock);
    EXPECT_EQ(dev->writes(), 2u);  // a 3-block write and a 1-block one
    EXPECT_EQ(dev->flushes(), 1u);

    AlignedBuffer back(3 * kBlock);
    ASSERT_OK(dev->Read(8 * kBlock, back.span()));
    EXPECT_EQ(std::memcmp(back.data(), a->data(), back.size()), 0);
  }
  // Through the file system, behind the device's back: the bytes are there.
  const std::string file = ReadWholeFile(path);
  ASSERT_EQ(file.size(), 1u << 20);
  EXPECT_EQ(file.substr(8 * kBlock, 3 * kBlock),
            std::string(a->data(), a->size()));
  EXPECT_EQ(file.substr((1 << 20) - kBlock), std::string(b->data(), kBlock));
  EXPECT_EQ(file.substr(0, 8 * kBlock), std::string(8 * kBlock, '\0'));

  // Reopened (the lock was released on close): the same contents.
  OPEN_OR_SKIP(dev, path);
  AlignedBuffer back(kBlock);
  ASSERT_OK(dev->Read((1 << 20) - kBlock, back.span()));
  EXPECT_EQ(std::memcmp(back.data(), b->data(), kBlock), 0);
}

// The names of this process's threads (/proc/self/task/*/comm).
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(absl::StrCat("/proc/self/task/", e->d_name, "/comm"));
    std::string name;
    std::getline(in, name);
    names.push_back(name);
  }
  closedir(dir);
  return names;
}


// A device's threads say which file they serve ("io:" + its name for
// io_uring's completion thread, "iow:" for psync's workers), so top -H,
// perf and the fio engine's report can tell the log partition's from the
// data file's.
TEST_P(FileBlockDeviceEngineTest, ThreadsAreNamedForTheirFile) {
  const std::string path = dir_.Join("logpart");
  MakeFile(path, 1 << 20);
  OPEN_OR_SKIP(dev, path);
  const std::string want = GetParam() == Engine::kIoUring ? "io:logpart" : "iow:logpart";
  // A thread names itself when it starts.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  size_t named = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto names = ThreadNames();
    named = std::count(names.begin(), names.end(), want);
    if (named > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(named, 1u) << "no thread named " << want;
}

TEST_P(FileBlockDeviceEngineTest, LargeWrite) {
  const std::string path = dir_.Join("dev");
  MakeFile(path, 16 << 20);
  OPEN_OR_SKIP(dev, path);
  std::shared_ptr<AlignedBuffer> big = Pattern(8 << 20, 9);
  ASSERT_OK(dev->Write(4 << 20, big->span()));
  AlignedBuffer back(8 << 20);
  ASSERT_OK(dev->Read(4 << 20, back.span()));
  EXPECT_EQ(std::memcmp(back.data(), big->data(), back.size()), 0);
}

TEST_P(FileBlockDeviceEngineTest, ConcurrentAsyncWritesFromManyThreads) {
  constexpr int kThreads = 8;
  constexpr int kWritesPerThread = 64;
  constexpr int kMaxBlocks = 4;
  const std::string path = dir_.Join("dev");
  const uint64_t slot = kMaxBlocks * kBlock;
  MakeFile(path, uint64_t{kThreads} * kWritesPerThread * slot);
  // A small queue, so writers really wait for slots.
  OPEN_OR_SKIP(dev, path, 4);

  CallbackCounter cb;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWritesPerThread; ++i) {
        const int n = t * kWritesPerThread + i;
        dev->WriteAsync(n * slot, Pattern((n % kMaxBlocks + 1) * kBlock, n),
                        cb.Make());
      }
    });
  }
  for (auto& th : threads) th.join();
  cb.WaitFor(kThreads * kWritesPerThread);
  EXPECT_TRUE(cb.errors().empty()) << cb.errors()[0];
  ASSERT_OK(dev->Flush());

  AlignedBuffer back(slot);
  uint64_t expect_bytes = 0;
  for (int n = 0; n < kThreads * kWritesPerThread; ++n) {
    const size_t len = (n % kMaxBlocks + 1) * kBlock;
    expect_bytes += len;
    ASSERT_OK(dev->Read(n * slot, back.span()));
    auto expect = Pattern(len, n);
    ASSERT_EQ(std::memcmp(back.data(), expect->data(), len), 0) << n;
    EXPECT_EQ(std::string(back.data() + len, slot - len),
              std::string(slot - len, '\0'));
  }
  EXPECT_EQ(dev->bytes_written(), expect_bytes);
  EXPECT_EQ(dev->writes(), uint64_t{kThreads} * kWritesPerThread);
}

TEST_P(FileBlockDeviceEngineTest, DestructorDrainsInFlightWrites) {
  constexpr int kWrites = 256;
  const std::string path = dir_.Join("dev");
  MakeFile(path, kWrites * kBlock);
  CallbackCounter cb;
  {
    OPEN_OR_SKIP(dev, path, 8);
    for (int i = 0; i < kWrites; ++i) {
      dev->WriteAsync(i * kBlock, Pattern(kBlock, i), cb.Make());
    }
  }  // destroyed with writes in flight
  EXPECT_EQ(cb.done(), kWrites);
  EXPECT_TRUE(cb.errors().empty());
  const std::string file = ReadWholeFile(path);
  for (int i = 0; i < kWrites; ++i) {
    auto expect = Pattern(kBlock, i);
    ASSERT_EQ(file.substr(i * kBlock, kBlock),
              std::string(expect->data(), kBlock))
        << i;
  }
}

// Two devices opened and closed by threads that never synchronize with each
// other (fio's job threads each open their own data file): the second ring
// is usually mapped where the first one was. liburing maps rings with raw
// system calls, so without the ordering at ring set-up and tear-down
// (RingMappingMutex) the tsan preset reports the second reaper's CQ reads as
// racing with the first reaper's writes. The threads hand over through a
// relaxed atomic, which gives TSan no happens-before edge on purpose.
TEST_P(FileBlockDeviceEngineTest, RingsReusedByUnrelatedThreadsAreNotRaces) {
  constexpr int kRounds = 4;
  const std::string path_a = dir_.Join("a"), path_b = dir_.Join("b");
  MakeFile(path_a, 64 * kBlock);
  MakeFile(path_b, 64 * kBlock);
  const FileBlockDeviceOptions options = Options(8);
  std::atomic<int> turn{0};  // relaxed only: no synchronization for TSan
  std::atomic<int> fallbacks{0};
  auto user = [&](const std::string& path, int me) {
    for (int round = 0; round < kRounds; ++round) {
      while (turn.load(std::memory_order_relaxed) != 2 * round + me) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      {
        auto dev = FileBlockDevice::Open(path, options);
        EXPECT_OK(dev);
        if (dev.ok()) {
          if (GetParam() == Engine::kIoUring && !(*dev)->using_io_uring()) fallbacks++;
          CallbackCounter cb;
          for (int i = 0; i < 16; ++i) (*dev)->WriteAsync(i * kBlock, Pattern(kBlock, i), cb.Make());
          EXPECT_TRUE(cb.WaitFor(16, std::chrono::seconds(30)));
          EXPECT_TRUE(cb.errors().empty());
        }
      }
      turn.store(2 * round + me + 1, std::memory_order_relaxed);
    }
  };
  std::thread a(user, path_a, 0), b(user, path_b, 1);
  a.join();
  b.join();
  if (fallbacks > 0) GTEST_SKIP() << "io_uring unavailable, fell back to psync";
}

// Plug()/Unplug(): with io_uring the plugging thread's writes wait for
// Unplug() (nothing completes before it); a write from another thread goes
// at once and takes them along; more writes than the queue holds do not
// deadlock the plugging thread (it sends what it queued to make room); a
// device destroyed while plugged still writes everything. psync ignores it.
TEST_P(FileBlockDeviceEngineTest, PluggedWritesGoTogetherAtUnplug) {
  constexpr int kWrites = 6;
  const std::string path = dir_.Join("dev");
  MakeFile(path, 64 * kBlock);
  OPEN_OR_SKIP(dev, path, 32);
  CallbackCounter cb;
  dev->Plug();
  for (int i = 0; i < kWrites; ++i) dev->WriteAsync(i * kBlock, Pattern(kBlock, i), cb.Make());
  if (GetParam() == Engine::kIoUring) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(cb.done(), 0) << "a plugged write was sent before Unplug()";
  }
  dev->Unplug();
  ASSERT_TRUE(cb.WaitFor(kWrites, std::chrono::seconds(30))) << "plugged writes never completed";
  EXPECT_TRUE(cb.errors().empty());

  // Another thread's write is not held by this thread's plug, and takes the
  // queued ones with it.
  CallbackCounter other;
  dev->Plug();
  dev->WriteAsync(10 * kBlock, Pattern(kBlock, 10), other.Make());
  std::thread([&] { dev->WriteAsync(11 * kBlock, Pattern(kBlock, 11), other.Make()); }).join();
  const bool both = other.WaitFor(2, std::chrono::seconds(30));
  dev->Unplug();
  ASSERT_TRUE(both) << "another thread's write waited for this thread's plug";
  EXPECT_TRUE(other.errors().empty());

  // Two threads plugged at once: each one's Unplug sends its writes,
  // whatever the other does.
  CallbackCounter mine, theirs;
  dev->Plug();
  dev->WriteAsync(12 * kBlock, Pattern(kBlock, 12), mine.Make());
  std::thread([&] {
    dev->Plug();
    dev->WriteAsync(13 * kBlock, Pattern(kBlock, 13), theirs.Make());
    dev->Unplug();
  }).join();
  const bool theirs_done = theirs.WaitFor(1, std::chrono::seconds(30));
  dev->Unplug();
  ASSERT_TRUE(theirs_done) << "a thread's Unplug did not send its write while another was plugged";
  ASSERT_TRUE(mine.WaitFor(1, std::chrono::seconds(30)));

  const std::string file = ReadWholeFile(path);
  for (int i : {0, 1, 2, 3, 4, 5, 10, 11, 12, 13}) {
    auto expect = Pattern(kBlock, i);
    ASSERT_EQ(file.substr(i * kBlock, kBlock), std::string(expect->data(), kBlock)) << i;
  }
}

TEST_P(FileBlockDeviceEngineTest, APlugNeverDeadlocksAFullQueue) {
  constexpr int kWrites = 40;  // ten times the queue
  const std::string path = dir_.Join("dev");
  MakeFile(path, kWrites * kBlock);
  CallbackCounter cb;
  {
    OPEN_OR_SKIP(dev, path, 4);
    dev->Plug();
    for (int i = 0; i < kWrites; ++i) dev->WriteAsync(i * kBlock, Pattern(kBlock, i), cb.Make());
    dev->Plug();  // nested, and never unplugged: the destructor sends them
  }
  EXPECT_EQ(cb.done(), kWrites);
  EXPECT_TRUE(cb.errors().empty());
  const std::string file = ReadWholeFile(path);
  for (int i = 0; i < kWrites; ++i) {
    auto expect = Pattern(kBlock, i);
    ASSERT_EQ(file.substr(i * kBlock, kBlock), std::string(expect->data(), kBlock)) << i;
  }
}

TEST_P(FileBlockDeviceEngineTest, CallbacksMayChainWrites) {
  // With queue_depth 1 every chained write is issued while the only slot is
  // held: the device must queue it rather than deadlock its own thread.
  constexpr int kChain = 200;
  const std::string path = dir_.Join("dev");
  MakeFile(path, kChain * kBlock);
  OPEN_OR_SKIP(dev, path, 1);
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0;
  std::function<void(int)> issue = [&](int i) {
    dev->WriteAsync(i * kBlock, Pattern(kBlock, i), [&, i](absl::Status s) {
      EXPECT_OK(s);
      if (i + 1 < kChain) issue(i + 1);
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      cv.notify_all();
    });
  };
  // Two chains at once, from the test thread.
  issue(0);
  issue(kChain / 2);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return finished == kChain + kChain / 2; });
  }
  EXPECT_OK(dev->Flush());
  dev.reset();  // joins the device threads before `mu` and `issue` go away
}

TEST_P(FileBlockDeviceEngineTest, RefusesUnalignedAndOutOfRangeIo) {
  const std::string path = dir_.Join("dev");
  MakeFile(path, 64 * kBlock);
  OPEN_OR_SKIP(dev, path);
  AlignedBuffer buf(2 * kBlock);
  absl::Status s = dev->Read(100, absl::MakeSpan(buf.data(), kBlock));
  EXPECT_CODE(s, kInvalidArgument);
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  EXPECT_NE(s.message().find("offset 100"), std::string::npos) << s;
  EXPECT_CODE(dev->Read(0, absl::MakeSpan(buf.data(), 1000)), kInvalidArgument);
  EXPECT_CODE(dev->Read(0, absl::MakeSpan(buf.data() + 512, kBlock)),
              kInvalidArgument);
  EXPECT_CODE(dev->Read(64 * kBlock, absl::MakeSpan(buf.data(), kBlock)),
              kOutOfRange);
  EXPECT_CODE(dev->Write(63 * kBlock, std::string(2 * kBlock, 'x')),
              kOutOfRange);
  EXPECT_CODE(dev->Write(kBlock + 1, std::string(kBlock, 'x')),
              kInvalidArgument);
  EXPECT_CODE(dev->Write(kBlock, std::string(kBlock - 1, 'x')),
              kInvalidArgument);
  EXPECT_EQ(dev->bytes_written(), 0u);
  EXPECT_EQ(dev->writes(), 0u);
}

// ReadMany: scattered reads, more than one ring holds (64), of one to three
// blocks each, land in their own buffers with the file's bytes; a few reads
// (no ring) too; a bad request fails the call before any read, naming it.
TEST_P(FileBlockDeviceEngineTest, ReadManyReadsEveryRequest) {
  const std::string path = dir_.Join("dev");
  constexpr uint64_t kBlocks = 256;
  MakeFile(path, kBlocks * kBlock);
  OPEN_OR_SKIP(dev, path);
  std::shared_ptr<AlignedBuffer> all = Pattern(kBlocks * kBlock, 7);
  ASSERT_OK(dev->Write(0, all->span()));
  for (size_t n : {size_t{1}, size_t{3}, size_t{150}}) {
    std::vector<uint64_t> offsets;
    std::vector<uint64_t> lengths;
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t blocks = 1 + i % 3;
      offsets.push_back(((i * 97) % (kBlocks - 3)) * kBlock);  // scattered, some overlapping
      lengths.push_back(blocks * kBlock);
      total += blocks * kBlock;
    }
    AlignedBuffer buf(total);
    std::vector<BlockDevice::ReadRequest> reads;
    uint64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      reads.push_back({offsets[i], absl::MakeSpan(buf.data() + at, lengths[i])});
      at += lengths[i];
    }
    const absl::Status read = dev->ReadMany(reads);
    ASSERT_TRUE(read.ok()) << n << " reads: " << read;
    at = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(buf.data() + at, all->data() + offsets[i], lengths[i]), 0)
          << "read " << i << " of " << n << " at offset " << offsets[i];
      at += lengths[i];
    }
  }
  // One request past the end among good ones: kOutOfRange naming it, and
  // the good ones' buffers untouched (nothing was read).
  AlignedBuffer buf(8 * kBlock);
  std::vector<BlockDevice::ReadRequest> reads;
  for (int i = 0; i < 7; ++i) reads.push_back({i * kBlock, absl::MakeSpan(buf.data() + i * kBlock, kBlock)});
  reads.push_back({kBlocks * kBlock, absl::MakeSpan(buf.data() + 7 * kBlock, kBlock)});
  absl::Status s = dev->ReadMany(reads);
  EXPECT_CODE(s, kOutOfRange);
  EXPECT_NE(s.message().find(absl::StrCat("offset ", kBlocks * kBlock)), std::string::npos) << s;
  EXPECT_EQ(std::string(buf.data(), 7 * kBlock), std::string(7 * kBlock, '\0'));
  reads.back() = {kBlock + 512, absl::MakeSpan(buf.data() + 7 * kBlock, kBlock)};
  EXPECT_CODE(dev->ReadMany(reads), kInvalidArgument);
  EXPECT_OK(dev->ReadMany({}));
}

// CallerWrites: writes the calling thread starts and reaps itself. They
// land where they were aimed, count like any write, report a bad argument
// at Wait (and only once), and wake no thread of the device: the device's
// own threads switch no more while 40 of them run than while none do.
TEST_P(FileBlockDeviceEngineTest, CallerWritesAreReapedByTheirCaller) {
  const std::string path = dir_.Join("callerdev");
  MakeFile(path, 1 << 20);
  OPEN_OR_SKIP(dev, path);
  std::unique_ptr<CallerWrites> w = dev->NewCallerWrites();
  std::shared_ptr<AlignedBuffer> a = Pattern(2 * kBlock, 5);
  std::shared_ptr<AlignedBuffer> b = Pattern(kBlock, 6);
  w->Start(0, a);
  w->Start(8 * kBlock, b);
  ASSERT_OK(w->Wait());
  AlignedBuffer back(2 * kBlock);
  ASSERT_OK(dev->Read(0, back.span()));
  EXPECT_EQ(std::memcmp(back.data(), a->data(), a->size()), 0);
  ASSERT_OK(dev->Read(8 * kBlock, absl::MakeSpan(back.data(), kBlock)));
  EXPECT_EQ(std::memcmp(back.data(), b->data(), kBlock), 0);
  EXPECT_EQ(dev->writes(), 2u);
  EXPECT_EQ(dev->bytes_written(), 3 * kBlock);

  w->Start(kBlock + 1, Pattern(kBlock, 7));
  w->Start(1 << 20, Pattern(kBlock, 7));
  EXPECT_CODE(w->Wait(), kInvalidArgument);
  EXPECT_OK(w->Wait());  // told once
  w->Start(1 << 20, Pattern(kBlock, 7));
  EXPECT_CODE(w->Wait(), kOutOfRange);
  EXPECT_EQ(dev->writes(), 2u);

  // The device's threads: io:<file> (io_uring's reaper) or iow:<file>.
  auto device_switches = [&] {
    uint64_t n = 0;
    for (const auto& [name, switches] : testing::ThreadSwitches()) {
      if (name.find(":callerdev") != std::string::npos) n += switches;
    }
    return n;
  };
  // Once the device's threads have settled (psync's workers start and
  // wait for work when the device opens).
  uint64_t before = device_switches();
  for (int settle = 0; settle < 100; ++settle) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const uint64_t now = device_switches();
    if (now == before) break;
    before = now;
  }
  for (int i = 0; i < 40; ++i) {
    w->Start(static_cast<uint64_t>(i % 16) * kBlock, Pattern(kBlock, i));
    ASSERT_OK(w->Wait());
  }
  EXPECT_LE(device_switches(), before + 2) << "the device's threads woke for the caller's writes";
  EXPECT_EQ(dev->writes(), 42u);
}

// Durable CallerWrites (the commit thread's in the log stream): each
// write is durable when Wait reports it. On io_uring the write itself is
// write-through (RWF_DSYNC) and the device's own flush is not called; with
// psync the writes are pwrites, and Wait flushes the device once, before
// any callback runs.
TEST_P(FileBlockDeviceEngineTest, DurableCallerWritesAreWriteThrough) {
  const std::string path = dir_.Join("durabledev");
  MakeFile(path, 1 << 20);
  OPEN_OR_SKIP(dev, path);
  std::unique_ptr<CallerWrites> w = dev->NewCallerWrites(/*durable=*/true);
  std::vector<uint64_t> flushes_seen;
  for (int i = 0; i < 3; ++i) {
    w->Start(static_cast<uint64_t>(i) * kBlock, Pattern(kBlock, 10 + i),
             [&](absl::Status s) {
               EXPECT_OK(s);
               flushes_seen.push_back(dev->flushes());
             });
  }
  ASSERT_OK(w->Wait());
  const uint64_t want = GetParam() == Engine::kIoUring ? 0u : 1u;
  EXPECT_EQ(dev->flushes(), want);
  EXPECT_EQ(flushes_seen, std::vector<uint64_t>(3, want)) << "a callback ran before the flush";
  for (int i = 0; i < 3; ++i) {
    AlignedBuffer back(kBlock);
    ASSERT_OK(dev->Read(static_cast<uint64_t>(i) * kBlock, back.span()));
    std::shared_ptr<AlignedBuffer> want_bytes = Pattern(kBlock, 10 + i);
    EXPECT_EQ(std::memcmp(back.data(), want_bytes->data(), kBlock), 0) << "block " << i;
  }
  EXPECT_EQ(dev->writes(), 3u);
  // Not durable: no flush of the device's at all.
  std::unique_ptr<CallerWrites> plain = dev->NewCallerWrites();
  plain->Start(8 * kBlock, Pattern(kBlock, 20));
  ASSERT_OK(plain->Wait());
  EXPECT_EQ(dev->flushes(), want);
}

// Each write's own callback runs in Wait, on the caller's thread, in the
// order the writes were started, with that write's status; Start only
// queues a write on the caller's ring, and Submit (or Wait) sends it.
TEST_P(FileBlockDeviceEngineTest, CallerWritesReportEachWriteInWait) {
  const std::string path = dir_.Join("callerdone");
  MakeFile(path, 1 << 20);
  OPEN_OR_SKIP(dev, path);
  std::unique_ptr<CallerWrites> w = dev->NewCallerWrites();
  std::vector<std::pair<int, absl::StatusCode>> seen;
  const std::thread::id me = std::this_thread::get_id();
  auto note = [&](int i) {
    return [&, i](absl::Status s) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      seen.emplace_back(i, s.code());
    };
  };
  w->Start(0, Pattern(kBlock, 1), note(0));
  w->Start(kBlock + 1, Pattern(kBlock, 2), note(1));  // misaligned
  w->Start(2 * kBlock, Pattern(kBlock, 3));            // no callback
  w->Start(1 << 20, Pattern(kBlock, 4), note(3));      // past the end
  w->Start(4 * kBlock, Pattern(2 * kBlock, 5), note(4));
  w->Submit();
  EXPECT_TRUE(seen.empty()) << "a callback ran before Wait";
  EXPECT_CODE(w->Wait(), kInvalidArgument);  // the first error
  const std::vector<std::pair<int, absl::StatusCode>> want = {
      {0, absl::StatusCode::kOk},
      {1, absl::StatusCode::kInvalidArgument},
      {3, absl::StatusCode::kOutOfRange},
      {4, absl::StatusCode::kOk}};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(dev->writes(), 3u);
  AlignedBuffer back(2 * kBlock);
  ASSERT_OK(dev->Read(4 * kBlock, back.span()));
  EXPECT_EQ(std::memcmp(back.data(), Pattern(2 * kBlock, 5)->data(), 2 * kBlock), 0);
  // More writes than the caller's ring has entries: each still reported.
  seen.clear();
  for (int i = 0; i < 200; ++i) w->Start(static_cast<uint64_t>(i % 64) * kBlock, Pattern(kBlock, i), note(i));
  ASSERT_OK(w->Wait());
  ASSERT_EQ(seen.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[i].first, i);
}

INSTANTIATE_TEST_SUITE_P(Engines, FileBlockDeviceEngineTest,
                         ::testing::Values(Engine::kIoUring, Engine::kPsync),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return info.param == Engine::kIoUring ? "IoUring"
                                                                 : "Psync";
                         });

TEST(FileBlockDevice, PsyncWhenAsked) {
  TempDir dir;
  MakeFile(dir.Join("dev"), 8 * kBlock);
  FileBlockDeviceOptions o;
  o.use_io_uring = false;
  o.queue_depth = 1000;
  auto dev = FileBlockDevice::Open(dir.Join("dev"), o);
  ASSERT_OK(dev);
  EXPECT_FALSE((*dev)->using_io_uring());
  EXPECT_TRUE((*dev)->io_uring_fallback_reason().empty());
  EXPECT_EQ((*dev)->queue_depth(), 16u);  // psync threads are capped
}

TEST(FileBlockDevice, GenericOpenReturnsTheSameDevice) {
  TempDir dir;
  MakeFile(dir.Join("dev"), 8 * kBlock);
  auto dev = OpenFileBlockDevice(dir.Join("dev"), {});
  ASSERT_OK(dev);
  ASSERT_OK((*dev)->Write(0, std::string(kBlock, 'g')));
  EXPECT_NE(dynamic_cast<FileBlockDevice*>(dev->get()), nullptr);
}

TEST(FileBlockDevice, MissingPathIsNotFound) {
  TempDir dir;
  const std::string path = dir.Join("nope");
  auto dev = FileBlockDevice::Open(path, {});
  EXPECT_CODE(dev, kNotFound);
  EXPECT_NE(dev.status().message().find(path), std::string::npos)
      << dev.status();
  EXPECT_CODE(FileBlockDevice::Open(dir.Join("nodir/dev"), {}), kNotFound);
}

TEST(FileBlockDevice, DirectoryIsInvalidArgument) {
  TempDir dir;
  auto dev = FileBlockDevice::Open(dir.path(), {});
  EXPECT_CODE(dev, kInvalidArgument);
  EXPECT_NE(dev.status().message().find("a directory"), std::string::npos)
      << dev.status();
}

TEST(FileBlockDevice, FifoIsInvalidArgumentAndDoesNotBlock) {
  TempDir dir;
  const std::string path = dir.Join("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_CODE(FileBlockDevice::Open(path, {}), kInvalidArgument);
}

TEST(FileBlockDevice, EmptyFileIsInvalidArgument) {
  TempDir dir;
  MakeFile(dir.Join("dev"), 0);
  auto dev = FileBlockDevice::Open(dir.Join("dev"), {});
  EXPECT_CODE(dev, kInvalidArgument);
  EXPECT_NE(dev.status().message().find("empty"), std::string::npos)
      << dev.status();
}

TEST(FileBlockDevice, UnalignedSizeIsInvalidArgument) {
  TempDir dir;
  const std::string path = dir.Join("dev");
  MakeFile(path, 3 * kBlock + 100);
  auto dev = FileBlockDevice::Open(path, {});
  EXPECT_CODE(dev, kInvalidArgument);
  EXPECT_EQ(dev.status().message(),
            absl::StrCat("device ", path,
                         " is 12388 bytes, not a multiple of the 4096-byte "
                         "logical block"));
}

TEST(FileBlockDevice, SecondOpenerIsRefusedWhileLocked) {
  TempDir dir;
  const std::string path = dir.Join("dev");
  MakeFile(path, 8 * kBlock);
  {
    auto first = FileBlockDevice::Open(path, {});
    ASSERT_OK(first);
    auto second = FileBlockDevice::Open(path, {});
    EXPECT_CODE(second, kUnavailable);
    EXPECT_NE(second.status().message().find("is in use by another process"),
              std::string::npos)
        << second.status();
    EXPECT_NE(second.status().message().find(path), std::string::npos);
    // A reader is refused too while a writer holds the device.
    FileBlockDeviceOptions ro;
    ro.read_only = true;
    EXPECT_CODE(FileBlockDevice::Open(path, ro), kUnavailable);
    // Without locking, nothing stops a second opener.
    FileBlockDeviceOptions unlocked;
    unlocked.exclusive_lock = false;
    EXPECT_OK(FileBlockDevice::Open(path, unlocked));
  }
  // Closed: the lock is gone.
  EXPECT_OK(FileBlockDevice::Open(path, {}));
}

TEST(FileBlockDevice, ReadersShareButExcludeWriters) {
  TempDir dir;
  const std::string path = dir.Join("dev");
  MakeFile(path, 8 * kBlock);
  FileBlockDeviceOptions ro;
  ro.read_only = true;
  auto r1 = FileBlockDevice::Open(path, ro);
  ASSERT_OK(r1);
  EXPECT_OK(FileBlockDevice::Open(path, ro));
  EXPECT_CODE(FileBlockDevice::Open(path, {}), kUnavailable);
}

TEST(FileBlockDevice, ReadOnlyRefusesWrites) {
  TempDir dir;
  const std::string path = dir.Join("dev");
  MakeFile(path, 8 * kBlock);
  {
    auto rw = FileBlockDevice::Open(path, {});
    ASSERT_OK(rw);
    ASSERT_OK((*rw)->Write(kBlock, std::string(kBlock, 'r')));
  }
  FileBlockDeviceOptions ro;
  ro.read_only = true;
  auto dev = FileBlockDevice::Open(path, ro);
  ASSERT_OK(dev);
  EXPECT_TRUE((*dev)->read_only());
  absl::Status s = (*dev)->Write(0, std::string(kBlock, 'x'));
  EXPECT_CODE(s, kFailedPrecondition);
  EXPECT_NE(s.message().find("read-only"), std::string::npos) << s;
  AlignedBuffer buf(kBlock);
  ASSERT_OK((*dev)->Read(kBlock, buf.span()));
  EXPECT_EQ(std::string(buf.data(), kBlock), std::string(kBlock, 'r'));
  EXPECT_OK((*dev)->Flush());
  EXPECT_EQ((*dev)->bytes_written(), 0u);
  EXPECT_EQ((*dev)->writes(), 0u);
  EXPECT_EQ(ReadWholeFile(path).substr(0, kBlock), std::string(kBlock, '\0'));
}

TEST(FileBlockDevice, FollowsSymlinks) {
  TempDir dir;
  MakeFile(dir.Join("dev"), 8 * kBlock);
  ASSERT_EQ(::symlink(dir.Join("dev").c_str(), dir.Join("link").c_str()), 0);
  auto dev = FileBlockDevice::Open(dir.Join("link"), {});
  ASSERT_OK(dev);
  EXPECT_EQ((*dev)->size(), 8u * kBlock);
}

// --- Loop block devices ------------------------------------------------------

// Runs a shell command; returns its exit status and fills `output`.
int RunShell(const std::string& command, std::string* output) {
  output->clear();
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) output->append(buf, n);
  return ::pclose(p);
}

// A loop device over a file, detached on destruction. `error()` says why
// there is none (no losetup, no permission, no loop support).
class LoopDevice {
 public:
  LoopDevice(const std::string& file, uint32_t sector_size) {
    std::string out;
    if (RunShell("command -v losetup", &out) != 0) {
      error_ = "losetup is not installed";
      return;
    }
    const std::string cmd = absl::StrCat("losetup --find --show --sector-size ",
                                         sector_size, " '", file, "'");
    if (RunShell(cmd, &out) != 0) {
      error_ = absl::StrCat("`", cmd, "` failed: ", out);
      return;
    }
    path_ = std::string(absl::StripTrailingAsciiWhitespace(out));
  }
  ~LoopDevice() {
    if (!path_.empty()) {
      std::string out;
      if (RunShell("losetup -d " + path_, &out) != 0) {
        ADD_FAILURE() << "losetup -d " << path_ << ": " << out;
      }
    }
  }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

class LoopBlockDeviceTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(LoopBlockDeviceTest, DetectsGeometryAndRoundTrips) {
  const uint32_t sector = GetParam();
  TempDir dir;
  const std::string file = dir.Join("backing");
  constexpr uint64_t kSize = 8 << 20;
  MakeFile(file, kSize);
  LoopDevice loop(file, sector);
  if (loop.path().empty()) {
    GTEST_SKIP() << "no loop device: " << loop.error();
  }
  for (bool uring : {true, false}) {
    SCOPED_TRACE(uring ? "io_uring" : "psync");
    FileBlockDeviceOptions o;
    o.use_io_uring = uring;
    auto dev = FileBlockDevice::Open(loop.path(), o);
    ASSERT_OK(dev);
    EXPECT_TRUE((*dev)->is_block_device());
    EXPECT_EQ((*dev)->logical_block_size(), sector);
    EXPECT_EQ((*dev)->size(), kSize);

    // One logical block, then a multi-block write, at the smallest
    // alignment the device accepts.
    const uint64_t off = uring ? sector : 3 * sector;
    ASSERT_OK((*dev)->Write(off, std::string(sector, 'L')));
    std::shared_ptr<AlignedBuffer> multi = Pattern(5 * sector, sector);
    ASSERT_OK((*dev)->Write(kSize - 5 * sector, multi->span()));
    ASSERT_OK((*dev)->Flush());
    AlignedBuffer back(5 * sector);
    ASSERT_OK((*dev)->Read(off, absl::MakeSpan(back.data(), sector)));
    EXPECT_EQ(std::string(back.data(), sector), std::string(sector, 'L'));
    ASSERT_OK((*dev)->Read(kSize - 5 * sector, back.span()));
    EXPECT_EQ(std::memcmp(back.data(), multi->data(), back.size()), 0);
    if (sector < kBlock) {
      // Aligned to the device's block, which is all O_DIRECT asks.
      EXPECT_OK(
          (*dev)->Read(off, absl::MakeSpan(back.data() + sector, sector)));
    } else {
      EXPECT_CODE((*dev)->Read(512, absl::MakeSpan(back.data(), sector)),
                  kInvalidArgument);
    }
    // The lock works on device nodes as on files.
    EXPECT_CODE(FileBlockDevice::Open(loop.path(), o), kUnavailable);
  }
}

INSTANTIATE_TEST_SUITE_P(SectorSizes, LoopBlockDeviceTest,
                         ::testing::Values(512u, 4096u));

// A file system that fills up: a 1 MiB tmpfs holding a sparse 8 MiB file.
// ENOSPC must come back as kResourceExhausted from both engines.
TEST(FileBlockDevice, FullFileSystemIsResourceExhausted) {
  TempDir dir;
  const std::string mnt = dir.Join("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0700), 0);
  std::string out;
  if (RunShell("mount -t tmpfs -o size=1m pgring-test '" + mnt + "'", &out) !=
      0) {
    GTEST_SKIP() << "cannot mount a small tmpfs (needs CAP_SYS_ADMIN): " << out;
  }
  struct Unmount {
    std::string mnt;
    ~Unmount() {
      std::string out;
      EXPECT_EQ(RunShell("umount '" + mnt + "'", &out), 0) << out;
    }
  } unmount{mnt};
  const std::string path = mnt + "/dev";
  MakeFile(path, 8 << 20);
  for (bool uring : {true, false}) {
    SCOPED_TRACE(uring ? "io_uring" : "psync");
    FileBlockDeviceOptions o;
    o.use_io_uring = uring;
    auto dev = FileBlockDevice::Open(path, o);
    if (!dev.ok() &&
        dev.status().code() == absl::StatusCode::kInvalidArgument) {
      GTEST_SKIP() << "tmpfs without O_DIRECT (kernel < 6.6): " << dev.status();
    }
    ASSERT_OK(dev);
    // More than the file system holds: fails part way, whatever fit first.
    std::shared_ptr<AlignedBuffer> big = Pattern(4 << 20, 1);
    absl::Status s = (*dev)->Write(2 << 20, big->span());
    EXPECT_CODE(s, kResourceExhausted);
    EXPECT_NE(s.message().find("offset 2097152"), std::string::npos) << s;
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
  }
}

// A device-mapper "error" target fails every I/O with EIO: the one way to see
// a real I/O error. EIO must be kInternal (not kDataLoss) and name the op,
// path and offset.
TEST(FileBlockDevice, IoErrorsAreInternalAndNameTheOffset) {
  std::string out;
  if (RunShell("command -v dmsetup", &out) != 0) {
    GTEST_SKIP() << "dmsetup is not installed";
  }
  const std::string name = absl::StrCat("pgring-eio-", ::getpid());
  if (RunShell(absl::StrCat("dmsetup create ", name, " --table '0 2048 error'"),
               &out) != 0) {
    GTEST_SKIP() << "cannot create a dm error target (no device-mapper "
                    "support or no permission): "
                 << out;
  }
  const std::string path = "/dev/mapper/" + name;
  for (bool uring : {true, false}) {
    SCOPED_TRACE(uring ? "io_uring" : "psync");
    FileBlockDeviceOptions o;
    o.use_io_uring = uring;
    auto dev = FileBlockDevice::Open(path, o);
    ASSERT_OK(dev);
    AlignedBuffer buf(4096);
    absl::Status s = (*dev)->Read(8192, buf.span());
    EXPECT_CODE(s, kInternal);
    EXPECT_NE(s.message().find("offset 8192"), std::string::npos) << s;
    s = (*dev)->Write(4096, std::string(4096, 'x'));
    EXPECT_CODE(s, kInternal);
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
  }
  EXPECT_EQ(RunShell("dmsetup remove " + name, &out), 0) << out;
}

}  // namespace
}  // namespace pgring
