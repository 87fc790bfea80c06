// memory_block_device_test.cc — the in-memory device: contents, argument
// checks (the same as the real device's), inline callbacks, raw helpers.
#include "device/memory_block_device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "util/test_util.h"

namespace pgring {
namespace {

std::shared_ptr<AlignedBuffer> Filled(size_t size, char c) {
  auto buf = std::make_shared<AlignedBuffer>(size);
  std::memset(buf->data(), c, size);
  return buf;
}

absl::Status WriteSync(BlockDevice& dev, uint64_t offset,
                       std::shared_ptr<AlignedBuffer> buf) {
  absl::Status result = absl::UnknownError("callback not called");
  dev.WriteAsync(offset, std::move(buf),
                 [&](absl::Status s) { result = std::move(s); });
  return result;  // inline callback: already set
}

TEST(MemoryBlockDevice, Geometry) {
  MemoryBlockDevice dev(1 << 20);
  EXPECT_EQ(dev.size(), 1u << 20);
  EXPECT_EQ(dev.logical_block_size(), 4096u);
  MemoryBlockDevice small(64 * 512, 512);
  EXPECT_EQ(small.logical_block_size(), 512u);
}

TEST(MemoryBlockDevice, NeverWrittenReadsZero) {
  MemoryBlockDevice dev(8 << 20);
  AlignedBuffer buf(3 * 4096);
  std::memset(buf.data(), 0x5a, buf.size());
  ASSERT_OK(dev.Read(4 << 20, buf.span()));
  EXPECT_EQ(std::string(buf.data(), buf.size()), std::string(3 * 4096, '\0'));
}

TEST(MemoryBlockDevice, RoundTripAcrossExtents) {
  MemoryBlockDevice dev(4 << 20);
  // 3 blocks straddling the 1 MiB extent boundary.
  const uint64_t offset = (1 << 20) - 4096;
  auto data = std::make_shared<AlignedBuffer>(3 * 4096);
  for (size_t i = 0; i < data->size(); ++i) data->data()[i] = char(i * 7);
  ASSERT_OK(WriteSync(dev, offset, data));
  AlignedBuffer back(3 * 4096);
  ASSERT_OK(dev.Read(offset, back.span()));
  EXPECT_EQ(std::memcmp(back.data(), data->data(), back.size()), 0);
  EXPECT_EQ(dev.bytes_written(), 3u * 4096);
  EXPECT_EQ(dev.writes(), 1u);
  // The synchronous helper takes unaligned memory (it copies).
  std::string s(4096, 'q');
  ASSERT_OK(dev.Write(0, s));
  EXPECT_EQ(dev.ReadRaw(0, 4096), s);
}

TEST(MemoryBlockDevice, CallbackRunsInlineOnCallingThread) {
  MemoryBlockDevice dev(1 << 20);
  bool called = false;
  std::thread::id where;
  dev.WriteAsync(0, Filled(4096, 'a'), [&](absl::Status s) {
    EXPECT_OK(s);
    called = true;
    where = std::this_thread::get_id();
  });
  EXPECT_TRUE(called);  // before WriteAsync returned
  EXPECT_EQ(where, std::this_thread::get_id());
}

TEST(MemoryBlockDevice, RefusesUnalignedOrOutOfRangeIo) {
  MemoryBlockDevice dev(1 << 20);
  AlignedBuffer buf(2 * 4096);
  EXPECT_CODE(dev.Read(100, absl::MakeSpan(buf.data(), 4096)),
              kInvalidArgument);
  EXPECT_CODE(dev.Read(0, absl::MakeSpan(buf.data(), 100)), kInvalidArgument);
  EXPECT_CODE(dev.Read(0, absl::MakeSpan(buf.data() + 8, 4096)),
              kInvalidArgument);
  EXPECT_CODE(dev.Read(1 << 20, absl::MakeSpan(buf.data(), 4096)), kOutOfRange);
  EXPECT_CODE(dev.Read((1 << 20) - 4096, buf.span()), kOutOfRange);
  // offset + length would overflow 64 bits.
  EXPECT_CODE(dev.Read(~uint64_t{4095}, absl::MakeSpan(buf.data(), 8192)),
              kOutOfRange);

  EXPECT_CODE(WriteSync(dev, 512, Filled(4096, 'x')), kInvalidArgument);
  EXPECT_CODE(WriteSync(dev, 0, Filled(4000, 'x')), kInvalidArgument);
  EXPECT_CODE(WriteSync(dev, 1 << 20, Filled(4096, 'x')), kOutOfRange);
  EXPECT_CODE(dev.Write(4096, std::string(10, 'x')), kInvalidArgument);
  absl::Status s = WriteSync(dev, 512, Filled(4096, 'x'));
  EXPECT_NE(s.message().find("offset 512"), std::string::npos) << s;
  // Nothing refused was written.
  EXPECT_EQ(dev.bytes_written(), 0u);
  EXPECT_EQ(dev.writes(), 0u);
  EXPECT_EQ(dev.ReadRaw(0, 8192), std::string(8192, '\0'));
}

TEST(MemoryBlockDevice, ZeroLengthIoIsANoOp) {
  MemoryBlockDevice dev(1 << 20);
  EXPECT_OK(dev.Read(4096, absl::Span<char>()));
  EXPECT_OK(WriteSync(dev, 4096, std::make_shared<AlignedBuffer>(0)));
  EXPECT_EQ(dev.bytes_written(), 0u);
  EXPECT_EQ(dev.writes(), 0u);
}

TEST(MemoryBlockDevice, SmallBlocks) {
  MemoryBlockDevice dev(64 * 512, 512);
  AlignedBuffer buf(4096);
  std::memset(buf.data(), 'm', 512);
  ASSERT_OK(dev.Write(512, absl::MakeConstSpan(buf.data(), 512)));
  // A 512-aligned slice of an aligned buffer is aligned enough here.
  ASSERT_OK(dev.Read(512, absl::MakeSpan(buf.data() + 512, 512)));
  EXPECT_EQ(std::string(buf.data() + 512, 512), std::string(512, 'm'));
  EXPECT_CODE(dev.Read(256, absl::MakeSpan(buf.data(), 512)), kInvalidArgument);
}

TEST(MemoryBlockDevice, RawHelpersBypassChecksAndCounters) {
  MemoryBlockDevice dev(1 << 20);
  ASSERT_OK(dev.Write(4096, std::string(4096, 'a')));
  dev.WriteRaw(4096 + 13, "XYZ");
  EXPECT_EQ(dev.ReadRaw(4096 + 12, 5), "aXYZa");
  AlignedBuffer buf(4096);
  ASSERT_OK(dev.Read(4096, buf.span()));
  EXPECT_EQ(std::string(buf.data() + 13, 3), "XYZ");
  EXPECT_EQ(dev.bytes_written(), 4096u);  // the raw write is not counted
  EXPECT_EQ(dev.writes(), 1u);
}

TEST(MemoryBlockDevice, FlushCounts) {
  MemoryBlockDevice dev(1 << 20);
  EXPECT_EQ(dev.flushes(), 0u);
  ASSERT_OK(dev.Flush());
  ASSERT_OK(dev.Flush());
  EXPECT_EQ(dev.flushes(), 2u);
}

TEST(MemoryBlockDevice, LargeDeviceIsSparse) {
  MemoryBlockDevice dev(uint64_t{64} << 30);  // 64 GiB
  EXPECT_EQ(dev.allocated_bytes(), 0u);
  ASSERT_OK(dev.Write(dev.size() - 4096, std::string(4096, 'e')));
  EXPECT_EQ(dev.allocated_bytes(), 1u << 20);
  EXPECT_EQ(dev.ReadRaw(dev.size() - 4096, 4096), std::string(4096, 'e'));
}

TEST(MemoryBlockDevice, ConcurrentWritersAndReaders) {
  MemoryBlockDevice dev(8 << 20);  // room for every write: no overlaps
  constexpr int kThreads = 8;
  constexpr int kWrites = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&dev, t] {
      AlignedBuffer back(4096);
      for (int i = 0; i < kWrites; ++i) {
        const uint64_t offset = uint64_t(t * kWrites + i) * 4096;
        ASSERT_OK(dev.Write(offset, std::string(4096, char('A' + t))));
        ASSERT_OK(dev.Read(offset, back.span()));
        EXPECT_EQ(back.data()[0], char('A' + t));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(dev.bytes_written(), uint64_t{kThreads} * kWrites * 4096);
  EXPECT_EQ(dev.writes(), uint64_t{kThreads} * kWrites);
}

TEST(MemoryBlockDeviceDeathTest, BadGeometryAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(MemoryBlockDevice(4096 * 3 + 1), "not a positive multiple");
  EXPECT_DEATH(MemoryBlockDevice(0), "not a positive multiple");
  EXPECT_DEATH(MemoryBlockDevice(4096, 1000), "power of two");
  MemoryBlockDevice dev(8192);
  EXPECT_DEATH(dev.ReadRaw(8000, 200), "past the end");
}

}  // namespace
}  // namespace pgring
