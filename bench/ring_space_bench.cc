// ring_space_bench — what the ring costs in space and device writes for an
// OSD-like workload: per client write one log entry (170-260 bytes), a
// fastinfo-sized info (190 bytes, the full 920-byte info every 16th), and,
// once a PG's log passes its maximum, the trimmed entries become 57-byte dups.
// Counters (per payload byte): ring bytes consumed, bytes written to the
// partition; and mapping-table bytes per live entry. For each tail-block
// policy. On the in-memory device: this measures the format, not a disk.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "device/memory_block_device.h"
#include "pgring/store.h"
#include "store/open_store.h"

namespace pgring {
namespace {

void BM_OsdWrites(benchmark::State& state) {
  const auto policy = static_cast<TailBlockPolicy>(state.range(0));
  const int pgs = static_cast<int>(state.range(1));
  const std::string dir = std::filesystem::temp_directory_path() / ("pgring-space-bench-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto dev = std::make_shared<MemoryBlockDevice>(2ull << 30);
  MkfsOptions m;
  OpenHooks h;
  h.device = dev;
  if (!MkfsWithHooks("mem", MetadataLocation::OwnDb(dir), m, h).ok()) {
    state.SkipWithError("mkfs failed");
    return;
  }
  Options o;
  o.tail_block_policy = policy;
  o.durability = DurabilityMode::kUnsynced;
  o.log_sink = NullLogSink();
  auto store = std::move(OpenWithHooks("mem", MetadataLocation::OwnDb(dir), o, h)).value();
  {
    Transaction t;
    for (int i = 0; i < pgs; ++i) t.CreatePg(PgId{1, static_cast<uint32_t>(i), -1});
    (void)store->Commit(std::move(t));
  }
  std::mt19937_64 rng(42);
  std::vector<uint64_t> next(pgs, 1), entries(pgs, 0);
  const uint64_t max_entries = 3000, min_entries = 2500;  // Ceph-like trim band, scaled
  uint64_t writes = 0, payload = 0;
  uint64_t dev_before = dev->bytes_written();
  for (auto _ : state) {
    int pg = static_cast<int>(rng() % pgs);
    PgId id{1, static_cast<uint32_t>(pg), -1};
    Transaction t;
    std::string entry(170 + rng() % 91, 'e');
    std::string info(++writes % 16 == 0 ? 920 : 190, 'i');
    t.AppendEntry(id, Version{1, next[pg]}, entry);
    t.SetInfo(id, info);
    payload += entry.size() + info.size();
    ++next[pg];
    if (++entries[pg] > max_entries) {
      uint64_t first = next[pg] - entries[pg];
      uint64_t n = entries[pg] - min_entries;
      for (uint64_t v = first; v < first + n; ++v) t.AppendDup(id, Version{1, v}, std::string(57, 'd'));
      payload += n * 57;
      t.Trim(id, Version{1, first + n - 1});
      if (first + n > 3000) t.TrimDups(id, Version{1, first + n - 3000});
      entries[pg] -= n;
    }
    if (!store->Submit(std::move(t), nullptr).ok()) {
      state.SkipWithError("submit failed");
      break;
    }
  }
  (void)store->Sync();
  StoreStats st = store->GetStoreStats();
  state.counters["ring_bytes_per_payload"] = static_cast<double>(st.record_bytes_appended) / payload;
  state.counters["device_bytes_per_payload"] =
      static_cast<double>(dev->bytes_written() - dev_before) / payload;
  state.counters["mapping_bytes_per_entry"] =
      static_cast<double>(st.mapping_table_bytes) / std::max<uint64_t>(1, st.live_entries + st.live_dups);
  state.counters["writes"] = static_cast<double>(writes);
  (void)store->Close();
  store.reset();
  std::filesystem::remove_all(dir);
}

BENCHMARK(BM_OsdWrites)
    ->ArgNames({"never_rewrite", "pgs"})
    ->Args({0, 128})
    ->Args({1, 128})
    ->Iterations(400000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pgring

BENCHMARK_MAIN();
