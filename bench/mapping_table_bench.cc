// mapping_table_bench — the per-PG version index: lookups (LowerBound, the
// binary search behind every ranged read), slot access, the append+trim
// steady state of a bounded log, and rewind (pop from the back, re-append).
// Tables of `items` entries with `epochs` epoch runs (1: a quiet PG; 64: a
// PG that went through many peering intervals within its log).
// Counters: ns per operation (the time column), bytes_per_item.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_util.h"
#include "log/mapping_table.h"

namespace pgring {
namespace {

// Versions 1..items (step 1); epoch changes `epochs - 1` times evenly.
void Fill(MappingTable* t, uint64_t items, uint64_t epochs) {
  const uint64_t per_epoch = (items + epochs - 1) / epochs;
  for (uint64_t i = 0; i < items; ++i) {
    t->Append(Version{static_cast<uint32_t>(10 + i / per_epoch), i + 1}, 4096 + i * 240, 200);
  }
}

Version VersionAt(uint64_t i, uint64_t items, uint64_t epochs) {
  const uint64_t per_epoch = (items + epochs - 1) / epochs;
  return Version{static_cast<uint32_t>(10 + i / per_epoch), i + 1};
}

void BM_MappingLowerBound(benchmark::State& state) {
  const uint64_t items = static_cast<uint64_t>(state.range(0));
  const uint64_t epochs = static_cast<uint64_t>(state.range(1));
  MappingTable t;
  Fill(&t, items, epochs);
  // Precomputed random keys, so the loop times the search only.
  std::vector<Version> keys(4096);
  bench::FastRng rng(1);
  for (auto& k : keys) k = VersionAt(rng.Uniform(items), items, epochs);
  size_t i = 0, sum = 0;
  for (auto _ : state) {
    sum += t.LowerBound(keys[i++ & 4095]);
  }
  benchmark::DoNotOptimize(sum);
  state.counters["bytes_per_item"] = static_cast<double>(t.MemoryBytes()) / items;
}

void BM_MappingAt(benchmark::State& state) {
  const uint64_t items = static_cast<uint64_t>(state.range(0));
  const uint64_t epochs = static_cast<uint64_t>(state.range(1));
  MappingTable t;
  Fill(&t, items, epochs);
  std::vector<uint32_t> idx(4096);
  bench::FastRng rng(2);
  for (auto& k : idx) k = static_cast<uint32_t>(rng.Uniform(items));
  size_t i = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    MappingTable::Slot s = t.at(idx[i++ & 4095]);
    sum += s.version + s.epoch + s.locator;
  }
  benchmark::DoNotOptimize(sum);
}

// A bounded log in steady state: append one, trim one (PushBack + PopFront),
// an epoch change every `items / epochs` appends.
void BM_MappingAppendTrim(benchmark::State& state) {
  const uint64_t items = static_cast<uint64_t>(state.range(0));
  const uint64_t epochs = static_cast<uint64_t>(state.range(1));
  const uint64_t per_epoch = (items + epochs - 1) / epochs;
  MappingTable t;
  Fill(&t, items, epochs);
  uint64_t next = items + 1;
  for (auto _ : state) {
    t.Append(Version{static_cast<uint32_t>(10 + (next - 1) / per_epoch), next}, next * 240, 200);
    ++next;
    benchmark::DoNotOptimize(t.PopFront());
  }
  state.counters["bytes_per_item"] = static_cast<double>(t.MemoryBytes()) / t.size();
}

// Rewind `depth` entries (PopBack, as a divergent tail is dropped) and
// append `depth` new ones in their place. Time per popped+pushed entry.
void BM_MappingRewind(benchmark::State& state) {
  const uint64_t items = static_cast<uint64_t>(state.range(0));
  const uint64_t depth = static_cast<uint64_t>(state.range(1));
  MappingTable t;
  Fill(&t, items, 1);
  uint32_t epoch = 10;
  for (auto _ : state) {
    uint64_t last = 0;
    for (uint64_t i = 0; i < depth; ++i) last = t.PopBack().version;
    ++epoch;  // the new interval's entries
    for (uint64_t i = 0; i < depth; ++i) t.Append(Version{epoch, last + i}, (last + i) * 240, 200);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * depth));
}

// Building a table at open (recovery appends every live entry).
void BM_MappingBuild(benchmark::State& state) {
  const uint64_t items = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    MappingTable t;
    Fill(&t, items, 1);
    benchmark::DoNotOptimize(t.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * items));
}

BENCHMARK(BM_MappingLowerBound)->ArgNames({"items", "epochs"})
    ->ArgsProduct({{256, 4096, 65536, 1 << 20}, {1, 64}});
BENCHMARK(BM_MappingAt)->ArgNames({"items", "epochs"})->ArgsProduct({{4096, 1 << 20}, {1, 64}});
BENCHMARK(BM_MappingAppendTrim)->ArgNames({"items", "epochs"})->ArgsProduct({{256, 65536}, {1, 64}});
BENCHMARK(BM_MappingRewind)->ArgNames({"items", "depth"})->ArgsProduct({{4096}, {1, 32}});
BENCHMARK(BM_MappingBuild)->ArgName("items")->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pgring

BENCHMARK_MAIN();
