// crc32c_bench — CRC32C throughput (ISA-L's crc32_iscsi behind
// pgring::crc32c) across buffer sizes from a record header to a chunk, and
// the two-part CRC a record seal computes (20 header bytes, then the body).
// Counter: bytes/s (binary GiB/s in the console).
#include <benchmark/benchmark.h>

#include <string>

#include "device/aligned_buffer.h"
#include "util/crc32c.h"

namespace pgring {
namespace {

void BM_Crc32cValue(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  AlignedBuffer buf(n);
  for (size_t i = 0; i < n; ++i) buf.data()[i] = static_cast<char>(i * 131 + 7);
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = crc32c::Value(buf.data(), n);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

// Unaligned start (a record body begins anywhere in a block).
void BM_Crc32cUnaligned(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  AlignedBuffer buf(n + 64);
  for (size_t i = 0; i < n + 64; ++i) buf.data()[i] = static_cast<char>(i * 131 + 7);
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = crc32c::Value(buf.data() + 3, n);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

// A record seal: Value over the 20 header bytes after the CRC, Extend over
// the body, Mask (as AppendRecord does).
void BM_Crc32cRecordSeal(benchmark::State& state) {
  const size_t body = static_cast<size_t>(state.range(0));
  std::string rec(24 + body, 'r');
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = crc32c::Value(rec.data() + 4, 20);
    crc = crc32c::Extend(crc, rec.data() + 24, body);
    crc = crc32c::Mask(crc);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(20 + body));
}

BENCHMARK(BM_Crc32cValue)->ArgName("bytes")->Arg(24)->Arg(64)->Arg(256)->Arg(1024)->Arg(4096)
    ->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_Crc32cUnaligned)->ArgName("bytes")->Arg(200)->Arg(4096);
BENCHMARK(BM_Crc32cRecordSeal)->ArgName("body")->Arg(80)->Arg(215)->Arg(4111);

}  // namespace
}  // namespace pgring

BENCHMARK_MAIN();
