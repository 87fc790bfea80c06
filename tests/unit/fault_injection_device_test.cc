// fault_injection_device_test.cc — power loss at chosen ops, crash images,
// torn writes and injected failures, checked block by block.
#include "device/fault_injection_device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/memory_block_device.h"
#include "util/test_util.h"

namespace pgring {
namespace {

using CrashImage = FaultInjectionDevice::CrashImage;
using OpKind = FaultInjectionDevice::OpKind;

constexpr uint32_t kBlock = 4096;

std::string Blocks(char c, size_t n = 1) { return std::string(n * kBlock, c); }

// `n` blocks, each a different pattern, so a torn result is visible.
std::string Distinct(char base, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += std::string(kBlock, char(base + i));
  return s;
}

class FaultInjectionDeviceTest : public ::testing::Test {
 protected:
  FaultInjectionDeviceTest()
      : mem_(std::make_shared<MemoryBlockDevice>(64 * kBlock)),
        dev_(std::make_shared<FaultInjectionDevice>(mem_)) {}

  std::string Raw(uint64_t block, size_t n = 1) {
    return mem_->ReadRaw(block * kBlock, n * kBlock);
  }
  absl::Status WriteBlocks(uint64_t block, const std::string& data) {
    return dev_->Write(block * kBlock, data);
  }

  // A small fixed workload: 6 writes and 3 flushes (9 ops), returning the
  // status of each op in order.
  std::vector<absl::Status> Workload() {
    std::vector<absl::Status> out;
    out.push_back(WriteBlocks(0, Blocks('a', 2)));
    out.push_back(WriteBlocks(2, Blocks('b')));
    out.push_back(dev_->Flush());
    out.push_back(WriteBlocks(1, Blocks('c', 3)));
    out.push_back(WriteBlocks(8, Blocks('d')));
    out.push_back(dev_->Flush());
    out.push_back(WriteBlocks(0, Blocks('e')));
    out.push_back(WriteBlocks(9, Blocks('f', 2)));
    out.push_back(dev_->Flush());
    return out;
  }

  std::shared_ptr<MemoryBlockDevice> mem_;
  std::shared_ptr<FaultInjectionDevice> dev_;
};

TEST_F(FaultInjectionDeviceTest, PassesThrough) {
  EXPECT_EQ(dev_->size(), mem_->size());
  EXPECT_EQ(dev_->logical_block_size(), kBlock);
  ASSERT_OK(WriteBlocks(3, Blocks('x', 2)));
  AlignedBuffer buf(2 * kBlock);
  ASSERT_OK(dev_->Read(3 * kBlock, buf.span()));
  EXPECT_EQ(std::string(buf.data(), buf.size()), Blocks('x', 2));
  EXPECT_EQ(Raw(3, 2), Blocks('x', 2));
  ASSERT_OK(dev_->Flush());
  EXPECT_EQ(dev_->bytes_written(), 2u * kBlock);
  EXPECT_EQ(dev_->writes(), 1u);
  EXPECT_EQ(dev_->flushes(), 1u);
  EXPECT_EQ(dev_->op_count(), 2u);
  EXPECT_FALSE(dev_->crashed());
  // Same argument checks as every device.
  EXPECT_CODE(dev_->Write(100, Blocks('x')), kInvalidArgument);
  EXPECT_CODE(dev_->Write(64 * kBlock, Blocks('x')), kOutOfRange);
  EXPECT_CODE(dev_->Read(0, absl::MakeSpan(buf.data() + 1, kBlock)),
              kInvalidArgument);
}

TEST_F(FaultInjectionDeviceTest, CrashAtOpFailsItAndEverythingAfter) {
  int hook_calls = 0;
  dev_->SetOnCrash([&] {
    ++hook_calls;
    EXPECT_TRUE(dev_->crashed());  // the hook may call back into the device
  });
  dev_->SetCrashAfterOps(4);
  std::vector<absl::Status> st = Workload();
  ASSERT_EQ(st.size(), 9u);
  for (int i = 0; i < 3; ++i) EXPECT_OK(st[i]);
  for (int i = 3; i < 9; ++i) {
    SCOPED_TRACE(i);
    EXPECT_CODE(st[i], kUnavailable);
    EXPECT_NE(st[i].message().find("power lost (simulated)"), std::string::npos)
        << st[i];
  }
  EXPECT_EQ(hook_calls, 1);
  EXPECT_TRUE(dev_->crashed());
  EXPECT_EQ(dev_->op_count(), 9u);
  // The crashed op (write 'c' to blocks 1..3) did not happen.
  EXPECT_EQ(Raw(0, 3), Blocks('a', 2) + Blocks('b'));
  AlignedBuffer buf(kBlock);
  EXPECT_CODE(dev_->Read(0, buf.span()), kUnavailable);
  EXPECT_EQ(dev_->flushes(), 1u);
}

TEST_F(FaultInjectionDeviceTest, CrashAtEveryOpOfAWorkload) {
  // First count the workload's ops, then crash at each one in turn.
  for (const absl::Status& s : Workload()) ASSERT_OK(s);
  const uint64_t ops = dev_->op_count();
  ASSERT_EQ(ops, 9u);
  for (uint64_t k = 1; k <= ops; ++k) {
    mem_ = std::make_shared<MemoryBlockDevice>(64 * kBlock);
    dev_ = std::make_shared<FaultInjectionDevice>(mem_);
    dev_->SetCrashAfterOps(k);
    std::vector<absl::Status> st = Workload();
    for (uint64_t i = 0; i < st.size(); ++i) {
      SCOPED_TRACE(absl::StrCat("crash at op ", k, ", op ", i + 1));
      if (i + 1 < k) {
        EXPECT_OK(st[i]);
      } else {
        EXPECT_CODE(st[i], kUnavailable);
      }
    }
  }
}

TEST_F(FaultInjectionDeviceTest, CrashIsRelativeToNowAndCanBeCancelled) {
  ASSERT_OK(WriteBlocks(0, Blocks('a')));
  ASSERT_OK(WriteBlocks(1, Blocks('a')));
  dev_->SetCrashAfterOps(2);
  EXPECT_OK(WriteBlocks(2, Blocks('a')));
  EXPECT_CODE(dev_->Flush(), kUnavailable);

  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kKeepAll, 0));
  dev_->SetCrashAfterOps(1);
  dev_->SetCrashAfterOps(0);  // cancelled
  EXPECT_OK(WriteBlocks(3, Blocks('a')));
  EXPECT_FALSE(dev_->crashed());
}

TEST_F(FaultInjectionDeviceTest, CrashNow) {
  int hook_calls = 0;
  dev_->SetOnCrash([&] { ++hook_calls; });
  dev_->CrashNow();
  dev_->CrashNow();  // already crashed: no second hook call
  EXPECT_EQ(hook_calls, 1);
  EXPECT_CODE(WriteBlocks(0, Blocks('a')), kUnavailable);
  EXPECT_CODE(dev_->Flush(), kUnavailable);
}

TEST_F(FaultInjectionDeviceTest, DropUnflushedRestoresDurableContent) {
  ASSERT_OK(WriteBlocks(0, Blocks('A', 4)));
  ASSERT_OK(dev_->Flush());
  ASSERT_OK(WriteBlocks(2, Blocks('B', 4)));  // blocks 2..5, unflushed
  ASSERT_OK(WriteBlocks(3, Blocks('C')));
  EXPECT_EQ(dev_->unflushed_blocks(), 4u);
  dev_->SetCrashAfterOps(1);
  EXPECT_CODE(WriteBlocks(7, Blocks('D')), kUnavailable);

  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 1));
  EXPECT_FALSE(dev_->crashed());
  EXPECT_EQ(dev_->unflushed_blocks(), 0u);
  EXPECT_EQ(Raw(0, 4), Blocks('A', 4));
  EXPECT_EQ(Raw(4, 4), std::string(4 * kBlock, '\0'));
  // Revived: I/O works again.
  ASSERT_OK(WriteBlocks(7, Blocks('E')));
  AlignedBuffer buf(kBlock);
  ASSERT_OK(dev_->Read(7 * kBlock, buf.span()));
  EXPECT_EQ(buf.data()[0], 'E');
}

TEST_F(FaultInjectionDeviceTest, KeepAllKeepsLatestContent) {
  ASSERT_OK(WriteBlocks(0, Blocks('A', 4)));
  ASSERT_OK(dev_->Flush());
  ASSERT_OK(WriteBlocks(2, Blocks('B', 4)));
  ASSERT_OK(WriteBlocks(3, Blocks('C')));
  dev_->CrashNow();
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kKeepAll, 1));
  EXPECT_EQ(Raw(0, 6),
            Blocks('A', 2) + Blocks('B') + Blocks('C') + Blocks('B', 2));
}

TEST_F(FaultInjectionDeviceTest, FlushMakesWritesDurable) {
  ASSERT_OK(WriteBlocks(0, Blocks('A', 2)));
  ASSERT_OK(dev_->Flush());
  EXPECT_EQ(dev_->unflushed_blocks(), 0u);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  EXPECT_EQ(Raw(0, 2), Blocks('A', 2));
}

TEST_F(FaultInjectionDeviceTest, RandomPerBlockPicksOnlyWrittenVersions) {
  // Block 0..15 hold a durable pattern; then several overlapping unflushed
  // multi-block writes give each block 1..4 candidate versions.
  ASSERT_OK(WriteBlocks(0, Distinct('a', 16)));
  ASSERT_OK(dev_->Flush());
  const std::string durable = Raw(0, 16);
  bool saw_torn_write = false;
  bool saw_mixed_image = false;
  std::set<std::string> images;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    ASSERT_OK(WriteBlocks(2, Distinct('A', 8)));   // blocks 2..9
    ASSERT_OK(WriteBlocks(6, Distinct('K', 8)));   // blocks 6..13
    ASSERT_OK(WriteBlocks(8, Distinct('k', 2)));   // blocks 8..9
    ASSERT_OK(WriteBlocks(20, Distinct('0', 4)));  // never-written blocks
    std::vector<std::vector<std::string>> candidates;
    for (uint64_t b = 0; b < 24; ++b) {
      candidates.push_back(dev_->BlockCandidates(b * kBlock));
    }
    EXPECT_EQ(candidates[2].size(), 2u);  // durable + 'A'-write
    EXPECT_EQ(candidates[8].size(), 4u);  // durable + three writes
    EXPECT_TRUE(candidates[0].empty());
    ASSERT_OK(dev_->MakeCrashImage(CrashImage::kRandomPerBlock, seed));

    std::string image = Raw(0, 24);
    images.insert(image);
    for (uint64_t b = 0; b < 24; ++b) {
      const std::string got = image.substr(b * kBlock, kBlock);
      if (candidates[b].empty()) {
        // Untouched since the flush: unchanged.
        const std::string expect =
            b < 16 ? durable.substr(b * kBlock, kBlock) : Blocks('\0');
        EXPECT_EQ(got, expect) << "block " << b << " seed " << seed;
        continue;
      }
      bool found = false;
      for (const std::string& c : candidates[b]) found |= (c == got);
      EXPECT_TRUE(found) << "block " << b << " seed " << seed
                         << " holds a version that was never written";
    }
    // The 8-block 'A' write, torn: some of its blocks that no later write
    // covers (2..5) survived and some did not.
    int new_blocks = 0;
    for (uint64_t b = 2; b < 6; ++b) {
      new_blocks += image[b * kBlock] == char('A' + b - 2);
    }
    saw_torn_write |= new_blocks > 0 && new_blocks < 4;
    // Writes reordered: block 8 holds the last write's version while block
    // 9, written by that same write, holds an older one.
    saw_mixed_image |= (image[9 * kBlock] == char('A' + 7) ||
                        image[9 * kBlock] == char('K' + 3)) &&
                       image[8 * kBlock] == 'k';

    // Restore the durable layout for the next seed.
    ASSERT_OK(WriteBlocks(0, Distinct('a', 16)));
    ASSERT_OK(WriteBlocks(16, std::string(8 * kBlock, '\0')));
    ASSERT_OK(dev_->Flush());
  }
  EXPECT_TRUE(saw_torn_write);
  EXPECT_TRUE(saw_mixed_image);
  EXPECT_GT(images.size(), 32u);  // seeds really choose differently
}

TEST_F(FaultInjectionDeviceTest, RandomPerBlockIsReproducible) {
  auto run = [](uint64_t seed) {
    auto mem = std::make_shared<MemoryBlockDevice>(64 * kBlock);
    FaultInjectionDevice dev(mem);
    EXPECT_OK(dev.Write(0, Distinct('a', 8)));
    EXPECT_OK(dev.Write(kBlock, Distinct('A', 6)));
    EXPECT_OK(dev.Write(3 * kBlock, Distinct('0', 5)));
    EXPECT_OK(dev.MakeCrashImage(CrashImage::kRandomPerBlock, seed));
    return mem->ReadRaw(0, 8 * kBlock);
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_EQ(run(12345), run(12345));
}

TEST_F(FaultInjectionDeviceTest, TearNextWrite) {
  int hook_calls = 0;
  dev_->SetOnCrash([&] { ++hook_calls; });
  ASSERT_OK(WriteBlocks(0, Blocks('o', 8)));
  ASSERT_OK(dev_->Flush());
  dev_->TearNextWrite(2);
  // Not longer than 2 blocks: passes through, tear stays armed.
  ASSERT_OK(WriteBlocks(6, Blocks('s', 2)));
  EXPECT_FALSE(dev_->crashed());
  absl::Status s = WriteBlocks(1, Distinct('A', 4));  // blocks 1..4
  EXPECT_CODE(s, kUnavailable);
  EXPECT_NE(s.message().find("torn after 2 blocks"), std::string::npos) << s;
  EXPECT_TRUE(dev_->crashed());
  EXPECT_EQ(hook_calls, 1);
  // Blocks 1 and 2 reached the disk, 3 and 4 did not.
  EXPECT_EQ(Raw(0, 5), Blocks('o') + Distinct('A', 2) + Blocks('o', 2));
  EXPECT_CODE(WriteBlocks(10, Blocks('z')), kUnavailable);
  // The torn write reached the base once, with its kept blocks.
  EXPECT_EQ(dev_->writes(), 3u);
  EXPECT_EQ(dev_->bytes_written(), 12u * kBlock);

  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kKeepAll, 0));
  EXPECT_EQ(dev_->writes(), 3u);  // the image's rewrites are not counted
  EXPECT_EQ(Raw(0, 8),
            Blocks('o') + Distinct('A', 2) + Blocks('o', 3) + Blocks('s', 2));
  ASSERT_OK(WriteBlocks(0, Blocks('n', 8)));  // revived, tear disarmed
}

TEST_F(FaultInjectionDeviceTest, TearKeepingNothing) {
  ASSERT_OK(WriteBlocks(0, Blocks('o', 4)));
  dev_->TearNextWrite(0);
  EXPECT_CODE(WriteBlocks(0, Blocks('x', 1)), kUnavailable);
  EXPECT_EQ(Raw(0, 4), Blocks('o', 4));
  // The unflushed 'o' write is still tracked.
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  EXPECT_EQ(Raw(0, 4), std::string(4 * kBlock, '\0'));
}

TEST_F(FaultInjectionDeviceTest, FailWrites) {
  dev_->FailOps(OpKind::kWrite, 1, 2, absl::InternalError("injected EIO"));
  EXPECT_OK(WriteBlocks(0, Blocks('a')));
  absl::Status s = WriteBlocks(1, Blocks('b'));
  EXPECT_CODE(s, kInternal);
  EXPECT_EQ(s.message(), "injected EIO");
  EXPECT_CODE(WriteBlocks(2, Blocks('c')), kInternal);
  EXPECT_OK(WriteBlocks(3, Blocks('d')));
  // Failed writes changed nothing, and the device did not crash.
  EXPECT_EQ(Raw(0, 4), Blocks('a') + Blocks('\0', 2) + Blocks('d'));
  EXPECT_EQ(dev_->BlockCandidates(kBlock).size(), 0u);
  EXPECT_FALSE(dev_->crashed());
  EXPECT_EQ(dev_->bytes_written(), 2u * kBlock);
  EXPECT_EQ(dev_->writes(), 2u);  // the failed ones are not counted
  EXPECT_EQ(dev_->op_count(), 4u);
}

TEST_F(FaultInjectionDeviceTest, FailReads) {
  ASSERT_OK(WriteBlocks(0, Blocks('a')));
  dev_->FailOps(OpKind::kRead, 0, 1,
                absl::DataLossError("injected bad sector"));
  AlignedBuffer buf(kBlock);
  EXPECT_CODE(dev_->Read(0, buf.span()), kDataLoss);
  EXPECT_OK(dev_->Read(0, buf.span()));
  EXPECT_EQ(buf.data()[0], 'a');
  EXPECT_EQ(dev_->op_count(), 1u);  // reads are not ops
}

TEST_F(FaultInjectionDeviceTest, FailFlushesKeepWritesUnflushed) {
  ASSERT_OK(WriteBlocks(0, Blocks('a')));
  dev_->FailOps(OpKind::kFlush, 0, 1,
                absl::ResourceExhaustedError("injected ENOSPC"));
  EXPECT_CODE(dev_->Flush(), kResourceExhausted);
  EXPECT_EQ(dev_->flushes(), 0u);
  EXPECT_EQ(dev_->unflushed_blocks(), 1u);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  EXPECT_EQ(Raw(0), Blocks('\0'));

  ASSERT_OK(WriteBlocks(0, Blocks('b')));
  ASSERT_OK(dev_->Flush());
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  EXPECT_EQ(Raw(0), Blocks('b'));
}

TEST_F(FaultInjectionDeviceTest, OkErrorBecomesInternal) {
  dev_->FailOps(OpKind::kFlush, 0, 1, absl::OkStatus());
  EXPECT_CODE(dev_->Flush(), kInternal);
}

TEST_F(FaultInjectionDeviceTest, CrashImageClearsInjectedFaults) {
  dev_->FailOps(OpKind::kWrite, 0, 5, absl::InternalError("x"));
  dev_->TearNextWrite(0);
  dev_->SetCrashAfterOps(3);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kKeepAll, 0));
  for (int i = 0; i < 5; ++i) EXPECT_OK(WriteBlocks(i, Blocks('z', 2)));
  EXPECT_FALSE(dev_->crashed());
}

TEST_F(FaultInjectionDeviceTest, ConcurrentWritersSeeOneCrashPoint) {
  std::atomic<int> hook_calls{0};
  dev_->SetOnCrash([&] { hook_calls.fetch_add(1); });
  dev_->SetCrashAfterOps(100);
  constexpr int kThreads = 8;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        absl::Status s = (i % 10 == 9)
                             ? dev_->Flush()
                             : WriteBlocks(t * 8 + i % 8, Blocks('a' + t));
        if (s.ok()) ok.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 99);  // exactly the ops before the 100th
  EXPECT_EQ(hook_calls.load(), 1);
  EXPECT_EQ(dev_->op_count(), uint64_t{kThreads} * 40);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kRandomPerBlock, 3));
}

// ---------------------------------------------------------------------------
// The timed device: writes complete on the completion thread, after a delay,
// out of order; a flush covers only what completed before it began; power
// goes with writes in flight and flushes in progress.

using std::chrono::microseconds;
using std::chrono::milliseconds;

FaultInjectionDevice::Options Timed(microseconds min_delay, microseconds max_delay,
                                    microseconds max_flush = microseconds(0),
                                    uint64_t seed = 1) {
  FaultInjectionDevice::Options o;
  o.timed = true;
  o.min_write_delay = min_delay;
  o.max_write_delay = max_delay;
  o.max_flush_delay = max_flush;
  o.seed = seed;
  return o;
}

std::shared_ptr<AlignedBuffer> BufferOf(const std::string& data) {
  auto b = std::make_shared<AlignedBuffer>(data.size());
  std::memcpy(b->data(), data.data(), data.size());
  return b;
}

// The completions of a batch of WriteAsync calls: status, order, thread.
struct Completions {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> order;
  std::vector<absl::Status> status;
  std::set<std::thread::id> threads;
  explicit Completions(int n) : status(n) {}
  IoCallback For(int i) {
    return [this, i](absl::Status s) {
      std::lock_guard<std::mutex> l(mu);
      order.push_back(i);
      status[i] = std::move(s);
      threads.insert(std::this_thread::get_id());
      cv.notify_all();
    };
  }
  void WaitAll() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return order.size() == status.size(); });
  }
};

class TimedFaultInjectionDeviceTest : public ::testing::Test {
 protected:
  void Make(const FaultInjectionDevice::Options& o, uint32_t block = kBlock) {
    dev_.reset();
    mem_ = std::make_shared<MemoryBlockDevice>(64 * uint64_t{block}, block);
    dev_ = std::make_shared<FaultInjectionDevice>(mem_, o);
  }
  std::string Raw(uint64_t block, size_t n = 1) {
    return mem_->ReadRaw(block * kBlock, n * kBlock);
  }
  std::shared_ptr<MemoryBlockDevice> mem_;
  std::shared_ptr<FaultInjectionDevice> dev_;
};

TEST_F(TimedFaultInjectionDeviceTest, WritesCompleteLaterOnAnotherThreadOutOfOrder) {
  Make(Timed(microseconds(100), microseconds(3000)));
  constexpr int kWrites = 24;
  Completions c(kWrites);
  for (int i = 0; i < kWrites; ++i) {
    dev_->WriteAsync(uint64_t(i) * kBlock, BufferOf(Blocks(char('A' + i))), c.For(i));
  }
  {
    // None completed inline: still in flight, and not readable yet.
    std::lock_guard<std::mutex> l(c.mu);
    EXPECT_LT(c.order.size(), size_t{kWrites});
  }
  c.WaitAll();
  for (int i = 0; i < kWrites; ++i) EXPECT_TRUE(c.status[i].ok()) << i << ": " << c.status[i];
  EXPECT_EQ(c.threads.size(), 1u);
  EXPECT_EQ(c.threads.count(std::this_thread::get_id()), 0u);
  std::vector<int> in_order(kWrites);
  for (int i = 0; i < kWrites; ++i) in_order[i] = i;
  EXPECT_NE(c.order, in_order) << "the writes completed in the order they were issued";
  EXPECT_EQ(Raw(0, 2), Blocks('A') + Blocks('B'));
  EXPECT_EQ(dev_->writes(), uint64_t{kWrites});
  EXPECT_EQ(dev_->model_stats().writes_in_flight, 0u);
}

TEST_F(TimedFaultInjectionDeviceTest, AWriteIsReadableOnlyOnceItCompleted) {
  Make(Timed(milliseconds(30), milliseconds(30)));
  Completions c(1);
  dev_->WriteAsync(0, BufferOf(Blocks('n')), c.For(0));
  AlignedBuffer buf(kBlock);
  ASSERT_OK(dev_->Read(0, buf.span()));
  EXPECT_EQ(std::string(buf.data(), kBlock), Blocks('\0'));
  EXPECT_EQ(dev_->model_stats().writes_in_flight, 1u);
  c.WaitAll();
  ASSERT_OK(c.status[0]);
  ASSERT_OK(dev_->Read(0, buf.span()));
  EXPECT_EQ(std::string(buf.data(), kBlock), Blocks('n'));
}

TEST_F(TimedFaultInjectionDeviceTest, AFlushDoesNotCoverAWriteInFlight) {
  Make(Timed(milliseconds(40), milliseconds(40)));
  ASSERT_OK(dev_->Write(0, Blocks('a')));  // completed, then flushed
  Completions c(1);
  dev_->WriteAsync(kBlock, BufferOf(Blocks('b')), c.For(0));
  ASSERT_OK(dev_->Flush());  // began with 'b' in flight
  c.WaitAll();
  ASSERT_OK(c.status[0]);
  // 'b' completed after the flush began: still volatile.
  EXPECT_EQ(dev_->unflushed_blocks(), 1u);
  EXPECT_EQ(dev_->BlockCandidates(kBlock).size(), 2u);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  EXPECT_EQ(Raw(0, 2), Blocks('a') + Blocks('\0'));
}

TEST_F(TimedFaultInjectionDeviceTest, AFlushDoesNotCoverAWriteCompletingWhileItRuns) {
  // Writes take 10 ms; the flush up to 60 ms, and with this seed more than
  // 10: 'b' completes inside the flush.
  Make(Timed(milliseconds(10), milliseconds(10), milliseconds(60), /*seed=*/2));
  ASSERT_OK(dev_->Write(0, Blocks('a')));
  Completions c(1);
  dev_->WriteAsync(kBlock, BufferOf(Blocks('b')), c.For(0));
  ASSERT_OK(dev_->Flush());
  {
    std::lock_guard<std::mutex> l(c.mu);
    ASSERT_EQ(c.order.size(), 1u) << "'b' did not complete while the flush ran";
  }
  ASSERT_OK(c.status[0]);
  EXPECT_EQ(dev_->BlockCandidates(0).size(), 0u) << "'a' completed before: durable";
  EXPECT_EQ(dev_->BlockCandidates(kBlock).size(), 2u)
      << "'b' completed after the flush began: volatile";
  // A flush that begins after 'b' completed covers it.
  ASSERT_OK(dev_->Flush());
  EXPECT_EQ(dev_->unflushed_blocks(), 0u);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  EXPECT_EQ(Raw(0, 2), Blocks('a') + Blocks('b'));
}

TEST_F(TimedFaultInjectionDeviceTest, PowerLossWithWritesInFlight) {
  Make(Timed(milliseconds(20), milliseconds(40)));
  ASSERT_OK(dev_->Write(0, Blocks('o', 8)));
  ASSERT_OK(dev_->Flush());
  constexpr int kWrites = 4;
  Completions c(kWrites);
  // Writes 0..3: two blocks each, 'A'+2i and 'A'+2i+1.
  for (int i = 0; i < kWrites; ++i) {
    dev_->WriteAsync(2 * uint64_t(i) * kBlock, BufferOf(Distinct(char('A' + 2 * i), 2)),
                     c.For(i));
  }
  dev_->CrashNow();
  EXPECT_EQ(dev_->model_stats().writes_in_flight_at_crash, uint64_t{kWrites});
  EXPECT_EQ(dev_->model_stats().flushes_in_progress_at_crash, 0u);
  c.WaitAll();
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_CODE(c.status[i], kUnavailable);
    EXPECT_NE(c.status[i].message().find("was in flight"), std::string::npos) << c.status[i];
  }
  // Never completed: not in the base, not kept by kKeepAll...
  EXPECT_EQ(Raw(0, 8), Blocks('o', 8));
  EXPECT_EQ(dev_->BlockCandidates(0).size(), 2u);
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kKeepAll, 0));
  EXPECT_EQ(Raw(0, 8), Blocks('o', 8));
}

TEST_F(TimedFaultInjectionDeviceTest, WritesInFlightLandPerBlockOrNot) {
  std::set<std::string> images;
  bool saw_half = false;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Make(Timed(milliseconds(3), milliseconds(3)));
    ASSERT_OK(dev_->Write(0, Blocks('o', 4)));
    ASSERT_OK(dev_->Flush());
    Completions c(1);
    dev_->WriteAsync(0, BufferOf(Distinct('A', 4)), c.For(0));
    dev_->CrashNow();
    ASSERT_OK(dev_->MakeCrashImage(CrashImage::kRandomPerBlock, seed));
    ASSERT_EQ(c.order.size(), 1u) << "MakeCrashImage returned before the completion ran";
    const std::string image = Raw(0, 4);
    int landed = 0;
    for (int b = 0; b < 4; ++b) {
      const std::string got = image.substr(b * kBlock, kBlock);
      ASSERT_TRUE(got == Blocks('o') || got == Blocks(char('A' + b))) << "block " << b;
      landed += got != Blocks('o');
    }
    saw_half |= landed > 0 && landed < 4;
    images.insert(image);
  }
  EXPECT_TRUE(saw_half);
  EXPECT_GT(images.size(), 4u);
}

TEST_F(TimedFaultInjectionDeviceTest, PowerLossWithAFlushInProgress) {
  Make(Timed(microseconds(0), microseconds(0), milliseconds(200), /*seed=*/3));
  ASSERT_OK(dev_->Write(0, Blocks('a')));
  absl::Status flushed;
  std::thread flusher([&] { flushed = dev_->Flush(); });
  // The power goes once the flush has begun (a loaded machine may start
  // the thread late), well before its delay (drawn from seed 3) runs out.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (dev_->model_stats().flushes_in_progress == 0 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(microseconds(100));
  }
  dev_->CrashNow();
  // The power comes back (the crash image) before the flush would have
  // finished: it must fail all the same.
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kDropUnflushed, 0));
  flusher.join();
  ASSERT_EQ(dev_->model_stats().flushes_in_progress_at_crash, 1u)
      << "the flush (its delay drawn from seed 3) ended before the power went";
  EXPECT_CODE(flushed, kUnavailable);
  EXPECT_NE(flushed.message().find("in progress"), std::string::npos) << flushed;
  EXPECT_EQ(dev_->flushes(), 0u);
  // The flush never finished: 'a' was as volatile as before it.
  EXPECT_EQ(Raw(0), Blocks('\0'));
  EXPECT_EQ(dev_->unflushed_blocks(), 0u);
}

TEST_F(TimedFaultInjectionDeviceTest, CrashAtAnOpFailsLaterWritesOnTheCompletionThread) {
  Make(Timed(microseconds(0), microseconds(500)));
  dev_->SetCrashAfterOps(3);
  Completions c(5);
  for (int i = 0; i < 5; ++i) dev_->WriteAsync(uint64_t(i) * kBlock, BufferOf(Blocks('w')), c.For(i));
  c.WaitAll();
  EXPECT_EQ(c.threads.count(std::this_thread::get_id()), 0u);
  for (int i = 2; i < 5; ++i) EXPECT_EQ(c.status[i].code(), absl::StatusCode::kUnavailable) << i;
  // Argument errors stay inline.
  bool inline_done = false;
  dev_->WriteAsync(100, BufferOf(Blocks('x')), [&](absl::Status s) {
    inline_done = true;
    EXPECT_CODE(s, kUnavailable);  // the power is gone first
  });
  EXPECT_TRUE(inline_done || dev_->crashed());
  ASSERT_OK(dev_->MakeCrashImage(CrashImage::kRandomPerBlock, 1));
  bool arg_inline = false;
  dev_->WriteAsync(100, BufferOf(Blocks('x')), [&](absl::Status s) {
    arg_inline = true;
    EXPECT_CODE(s, kInvalidArgument);
  });
  EXPECT_TRUE(arg_inline);
}

TEST_F(TimedFaultInjectionDeviceTest, DestructionWaitsForWritesInFlight) {
  Make(Timed(milliseconds(5), milliseconds(20)));
  Completions c(3);
  for (int i = 0; i < 3; ++i) dev_->WriteAsync(uint64_t(i) * kBlock, BufferOf(Blocks('d')), c.For(i));
  dev_.reset();
  std::lock_guard<std::mutex> l(c.mu);
  EXPECT_EQ(c.order.size(), 3u);
}

// The sub-block model: a 4096-byte-block device whose writes tear at 512
// bytes, inside the block.
std::string Sectors(char base, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += std::string(512, char(base + i));
  return s;
}

TEST_F(TimedFaultInjectionDeviceTest, SubBlockTearMixesSectorsOfOneBlock) {
  for (uint32_t unit : {0u, 512u}) {
    bool saw_mixed = false;
    for (uint64_t seed = 0; seed < 16; ++seed) {
      FaultInjectionDevice::Options o = Timed(milliseconds(2), milliseconds(2));
      o.tear_unit = unit;
      Make(o);
      ASSERT_OK(dev_->Write(0, Sectors('a', 8)));
      ASSERT_OK(dev_->Flush());
      Completions c(1);
      dev_->WriteAsync(0, BufferOf(Sectors('A', 8)), c.For(0));
      ASSERT_OK(dev_->MakeCrashImage(CrashImage::kRandomPerBlock, seed));
      const std::string image = Raw(0);
      int fresh = 0;
      for (int i = 0; i < 8; ++i) {
        const std::string sector = image.substr(i * 512, 512);
        ASSERT_TRUE(sector == std::string(512, char('a' + i)) ||
                    sector == std::string(512, char('A' + i)))
            << "sector " << i << " holds bytes never written there";
        fresh += sector[0] == char('A' + i);
      }
      saw_mixed |= fresh > 0 && fresh < 8;
      EXPECT_EQ(dev_->model_stats().blocks_torn_inside_by_last_image,
                fresh > 0 && fresh < 8 ? 1u : 0u);
    }
    // Torn inside the block only when the unit is smaller than it.
    EXPECT_EQ(saw_mixed, unit == 512u) << "tear unit " << unit;
  }
}

TEST_F(TimedFaultInjectionDeviceTest, A512ByteBlockIsTheAtomicUnit) {
  bool saw_mixed = false;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Make(Timed(milliseconds(2), milliseconds(2)), 512);
    EXPECT_EQ(dev_->logical_block_size(), 512u);
    ASSERT_OK(dev_->Write(0, Sectors('a', 8)));
    ASSERT_OK(dev_->Flush());
    Completions c(1);
    dev_->WriteAsync(0, BufferOf(Sectors('A', 8)), c.For(0));
    ASSERT_OK(dev_->MakeCrashImage(CrashImage::kRandomPerBlock, seed));
    const std::string image = mem_->ReadRaw(0, 4096);
    int fresh = 0;
    for (int i = 0; i < 8; ++i) fresh += image[i * 512] == char('A' + i);
    saw_mixed |= fresh > 0 && fresh < 8;
  }
  EXPECT_TRUE(saw_mixed);
}

}  // namespace
}  // namespace pgring
