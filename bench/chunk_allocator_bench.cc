// chunk_allocator_bench — the free map: a steady allocate + release pair at
// a given fill (next-fit scan over the bitmap, one mutex round trip each),
// and the rebuild at open (MarkOwned for every owned chunk). Partitions of
// 4,096 chunks (4 GiB of 1 MiB chunks) and 1,048,576 (1 TiB).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "alloc/chunk_allocator.h"
#include "bench_util.h"

namespace pgring {
namespace {

// Allocate a chunk and release a random owned one: the fill stays at
// `fill_pct` percent and the free chunks stay scattered, as trims leave them.
void BM_ChunkAllocRelease(benchmark::State& state) {
  const uint64_t chunks = static_cast<uint64_t>(state.range(0));
  const uint64_t fill_pct = static_cast<uint64_t>(state.range(1));
  ChunkAllocator a(chunks);
  // Own a random `fill_pct`% (at least one chunk, so there is one to release).
  std::vector<uint32_t> all(chunks);
  std::iota(all.begin(), all.end(), 0u);
  bench::FastRng rng(3);
  for (uint64_t i = chunks - 1; i > 0; --i) std::swap(all[i], all[rng.Uniform(i + 1)]);
  const uint64_t owned_n = std::max<uint64_t>(1, chunks * fill_pct / 100);
  std::vector<uint32_t> owned(all.begin(), all.begin() + static_cast<ptrdiff_t>(owned_n));
  for (uint32_t c : owned) {
    if (!a.MarkOwned(c)) {
      state.SkipWithError("MarkOwned failed");
      return;
    }
  }
  for (auto _ : state) {
    std::optional<uint32_t> c = a.Allocate();
    if (!c) {
      state.SkipWithError("allocator full");
      break;
    }
    uint32_t& victim = owned[rng.Uniform(owned.size())];
    a.Release(victim);
    victim = *c;
  }
  state.counters["free_chunks"] = static_cast<double>(a.free_count());
}

// Allocation alone, from empty until full (a fresh store's PGs growing),
// then everything released outside the timer.
void BM_ChunkAllocateUntilFull(benchmark::State& state) {
  const uint64_t chunks = static_cast<uint64_t>(state.range(0));
  ChunkAllocator a(chunks);
  uint64_t allocated = 0;
  for (auto _ : state) {
    std::optional<uint32_t> c = a.Allocate();
    if (!c) {
      state.PauseTiming();
      for (uint64_t i = 0; i < chunks; ++i) a.Release(static_cast<uint32_t>(i));
      state.ResumeTiming();
      c = a.Allocate();
    }
    benchmark::DoNotOptimize(c);
    ++allocated;
  }
  state.SetItemsProcessed(static_cast<int64_t>(allocated));
}

// Open: mark every owned chunk (80% of the partition, in PG order).
void BM_ChunkMarkOwned(benchmark::State& state) {
  const uint64_t chunks = static_cast<uint64_t>(state.range(0));
  const uint64_t owned = chunks * 8 / 10;
  for (auto _ : state) {
    ChunkAllocator a(chunks);
    for (uint64_t c = 0; c < owned; ++c) benchmark::DoNotOptimize(a.MarkOwned(static_cast<uint32_t>(c)));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * owned));
}

BENCHMARK(BM_ChunkAllocRelease)->ArgNames({"chunks", "fill_pct"})
    ->ArgsProduct({{4096, 1 << 20}, {0, 50, 90, 99}});
BENCHMARK(BM_ChunkAllocateUntilFull)->ArgName("chunks")->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_ChunkMarkOwned)->ArgName("chunks")->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pgring

BENCHMARK_MAIN();
