// record_bench — the record format's CPU cost: building a record body item
// by item and sealing it (header + CRC32C), and the reader's side: header
// decode, CRC check and item walk. One record holds `batch` entries of
// `entry` payload bytes each (what one transaction writes to one PG).
// Counters: entries/s, record bytes/s.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "format/record.h"

namespace pgring {
namespace {

const std::vector<int64_t> kEntrySizes = {64, 200, 1024, 4096};
const std::vector<int64_t> kBatches = {1, 8, 32};

std::string MakeRecord(size_t entry, int batch) {
  const std::string payload(entry, 'p');
  RecordBodyBuilder b;
  for (int i = 0; i < batch; ++i) b.AddEntry(Version{7, 1000u + i}, payload);
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 42, 3, 99, b.body());
  return rec;
}

void SetCounters(benchmark::State& state, int batch, size_t record_bytes) {
  state.counters["entries_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * batch, benchmark::Counter::kIsRate);
  state.counters["bytes_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * record_bytes, benchmark::Counter::kIsRate,
      benchmark::Counter::kIs1024);
  state.counters["record_bytes"] = static_cast<double>(record_bytes);
}

// Encode: the body builder and AppendRecord, both buffers reused (no
// allocation once warm): the format's own cost.
void BM_RecordEncode(benchmark::State& state) {
  const size_t entry = static_cast<size_t>(state.range(0));
  const int batch = static_cast<int>(state.range(1));
  const std::string payload(entry, 'p');
  RecordBodyBuilder b;
  std::string rec;
  uint64_t v = 1;
  for (auto _ : state) {
    b.Clear();
    for (int i = 0; i < batch; ++i) b.AddEntry(Version{7, v++}, payload);
    rec.clear();
    AppendRecord(&rec, kRecordTxn, 42, 3, v, b.body());
    benchmark::DoNotOptimize(rec.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, batch, rec.size());
}

// Encode as RingStore::Submit does today: a fresh body builder and a fresh
// record string per transaction and PG (the buffers grow as items arrive).
void BM_RecordEncodeFresh(benchmark::State& state) {
  const size_t entry = static_cast<size_t>(state.range(0));
  const int batch = static_cast<int>(state.range(1));
  const std::string payload(entry, 'p');
  uint64_t v = 1;
  size_t size = 0;
  for (auto _ : state) {
    RecordBodyBuilder b;
    for (int i = 0; i < batch; ++i) b.AddEntry(Version{7, v++}, payload);
    std::string rec;
    AppendRecord(&rec, kRecordTxn, 42, 3, v, b.body());
    benchmark::DoNotOptimize(rec.data());
    size = rec.size();
  }
  SetCounters(state, batch, size);
}

// Decode: what recovery and reads do per record: header, CRC, items.
void BM_RecordDecode(benchmark::State& state) {
  const size_t entry = static_cast<size_t>(state.range(0));
  const int batch = static_cast<int>(state.range(1));
  const std::string rec = MakeRecord(entry, batch);
  for (auto _ : state) {
    RecordHeader h = DecodeRecordHeader(rec.data());
    std::string_view r(rec.data(), kRecordHeaderSize + h.length);
    if (!RecordCrcMatches(r)) {
      state.SkipWithError("crc mismatch");
      break;
    }
    uint64_t sum = 0;
    absl::Status s = ForEachItem(r.substr(kRecordHeaderSize), [&](const Item& it) {
      sum += it.version.version + it.payload.size();
      return absl::OkStatus();
    });
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(sum);
  }
  SetCounters(state, batch, rec.size());
}

// The item walk alone (no CRC): what ForEachItem's std::function and the
// varint parsing cost per entry.
void BM_RecordItemWalk(benchmark::State& state) {
  const size_t entry = static_cast<size_t>(state.range(0));
  const int batch = static_cast<int>(state.range(1));
  const std::string rec = MakeRecord(entry, batch);
  const std::string_view body = std::string_view(rec).substr(kRecordHeaderSize);
  for (auto _ : state) {
    uint64_t sum = 0;
    absl::Status s = ForEachItem(body, [&](const Item& it) {
      sum += it.version.version + it.payload.size();
      return absl::OkStatus();
    });
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(sum);
  }
  SetCounters(state, batch, rec.size());
}

BENCHMARK(BM_RecordEncode)->ArgNames({"entry", "batch"})->ArgsProduct({kEntrySizes, kBatches});
BENCHMARK(BM_RecordEncodeFresh)->ArgNames({"entry", "batch"})->ArgsProduct({{200, 4096}, kBatches});
BENCHMARK(BM_RecordDecode)->ArgNames({"entry", "batch"})->ArgsProduct({kEntrySizes, kBatches});
BENCHMARK(BM_RecordItemWalk)->ArgNames({"entry", "batch"})->ArgsProduct({{200}, kBatches});

}  // namespace
}  // namespace pgring

BENCHMARK_MAIN();
