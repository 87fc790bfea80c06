// payload_compression_bench — would compressing log records pay? lz4 and
// zstd (levels 1 and 3) on the payloads a PG log holds, per record (each
// payload compressed on its own, as a per-record option would) and per
// stream batch (the records of one commit group compressed together, as a
// per-batch option would), on:
//   ceph     what pgring_payload=ceph writes: Ceph 19's pg_log_entry_t plus
//            the pg_fast_info_t of the same write (one OSD write's records),
//            and the full pg_info_t and dups of a trimming write
//            (tools/fio_engine/ceph_payload.h)
//   corpus   Ceph's own encodings (tests/tool/ceph_corpus/, all releases)
//   random   what pgring_payload=random writes (the floor: incompressible)
// Counters: ratio = compressed / original bytes (lower is better; 1.0 saves
// nothing), and the bytes/second of compressing and of decompressing (the
// CPU each byte costs is 1 / that).
#include <benchmark/benchmark.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ceph_payload.h"
#include "engine_config.h"
#include "osd_model.h"

namespace {

using pgring::fio::EngineConfig;

enum class Codec { kLz4, kZstd1, kZstd3 };

const char* CodecName(Codec c) {
  switch (c) {
    case Codec::kLz4:
      return "lz4";
    case Codec::kZstd1:
      return "zstd1";
    case Codec::kZstd3:
      return "zstd3";
  }
  return "?";
}

// Compresses `in` into `out` (sized to the bound); returns the size.
size_t Compress(Codec c, const std::string& in, std::string* out) {
  if (c == Codec::kLz4) {
    out->resize(LZ4_compressBound(static_cast<int>(in.size())));
    return LZ4_compress_default(in.data(), out->data(), static_cast<int>(in.size()),
                                static_cast<int>(out->size()));
  }
  out->resize(ZSTD_compressBound(in.size()));
  return ZSTD_compress(out->data(), out->size(), in.data(), in.size(), c == Codec::kZstd1 ? 1 : 3);
}

size_t Decompress(Codec c, const char* in, size_t n, size_t original, std::string* out) {
  out->resize(original);
  if (c == Codec::kLz4) {
    return LZ4_decompress_safe(in, out->data(), static_cast<int>(n), static_cast<int>(original));
  }
  return ZSTD_decompress(out->data(), original, in, n);
}

// One OSD write's records under pgring_payload=ceph, over `pgs` PGs in
// turn, as a steady-state OSD writes them: entry + fast info; every 100th
// write of a PG trims, adding 100 dups... approximated by one dup per write
// and a full info every 100th.
std::vector<std::string> CephRecords(size_t n) {
  EngineConfig c;
  std::vector<std::string> out;
  const uint32_t pgs = 64;
  for (uint64_t w = 0; out.size() < n; ++w) {
    const uint32_t pg = static_cast<uint32_t>(w % pgs);
    const uint64_t v = 5000 + w / pgs;
    out.push_back(pgring::fio::CephLogEntry(c, pg, v));
    out.push_back(v % 100 == 0 ? pgring::fio::CephPgInfo(c, pg, v)
                               : pgring::fio::CephPgFastInfo(c, pg, v));
    out.push_back(pgring::fio::CephLogDup(c, pg, v - 3000));
  }
  out.resize(n);
  return out;
}

std::vector<std::string> RandomRecords(size_t n) {
  EngineConfig c;
  std::vector<std::string> out;
  for (uint64_t w = 0; out.size() < n; ++w) {
    const uint32_t pg = static_cast<uint32_t>(w % 64);
    const uint64_t v = 5000 + w / 64;
    out.push_back(pgring::fio::EntryPayload(c, pg, v));
    out.push_back(pgring::fio::InfoPayload(c, pg, v, v % 100 == 0));
    out.push_back(pgring::fio::DupPayload(c, pg, v - 3000));
  }
  out.resize(n);
  return out;
}

std::vector<std::string> CorpusRecords() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(PGRING_CEPH_CORPUS_DIR)) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && p.find("README") == std::string::npos) paths.push_back(p);
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (p.find("/pg_log_entry_t/") == std::string::npos &&
        p.find("/pg_log_dup_t/") == std::string::npos &&
        p.find("/pg_info_t/") == std::string::npos) {
      continue;
    }
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

const std::vector<std::string>& Records(const std::string& set) {
  static const std::vector<std::string> ceph = CephRecords(3 * 1024);
  static const std::vector<std::string> random = RandomRecords(3 * 1024);
  static const std::vector<std::string> corpus = CorpusRecords();
  return set == "ceph" ? ceph : set == "random" ? random : corpus;
}

// The units compressed: single records (batch 1) or `batch` consecutive
// records concatenated.
std::vector<std::string> Units(const std::vector<std::string>& records, size_t batch) {
  std::vector<std::string> units;
  for (size_t i = 0; i < records.size(); i += batch) {
    std::string u;
    for (size_t j = i; j < std::min(records.size(), i + batch); ++j) u += records[j];
    units.push_back(std::move(u));
  }
  return units;
}

void BM_Compress(benchmark::State& state, Codec codec, std::string set, size_t batch) {
  const std::vector<std::string> units = Units(Records(set), batch);
  std::string out;
  uint64_t in_bytes = 0, out_bytes = 0;
  for (const std::string& u : units) {
    in_bytes += u.size();
    out_bytes += Compress(codec, u, &out);
  }
  for (auto _ : state) {
    for (const std::string& u : units) {
      benchmark::DoNotOptimize(Compress(codec, u, &out));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in_bytes));
  state.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(in_bytes);
  state.counters["unit_bytes"] = static_cast<double>(in_bytes) / units.size();
  state.counters["ns_per_byte"] = benchmark::Counter(
      static_cast<double>(in_bytes),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Decompress(benchmark::State& state, Codec codec, std::string set, size_t batch) {
  const std::vector<std::string> units = Units(Records(set), batch);
  std::vector<std::string> packed;
  uint64_t in_bytes = 0;
  for (const std::string& u : units) {
    std::string out;
    out.resize(Compress(codec, u, &out));
    packed.push_back(std::move(out));
    in_bytes += u.size();
  }
  std::string back;
  for (size_t i = 0; i < units.size(); ++i) {
    if (Decompress(codec, packed[i].data(), packed[i].size(), units[i].size(), &back) !=
            units[i].size() ||
        back != units[i]) {
      state.SkipWithError("round trip differs");
      return;
    }
  }
  for (auto _ : state) {
    for (size_t i = 0; i < units.size(); ++i) {
      benchmark::DoNotOptimize(
          Decompress(codec, packed[i].data(), packed[i].size(), units[i].size(), &back));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in_bytes));
  state.counters["ns_per_byte"] = benchmark::Counter(
      static_cast<double>(in_bytes),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

const int kRegistered = [] {
  for (Codec c : {Codec::kLz4, Codec::kZstd1, Codec::kZstd3}) {
    for (const char* set : {"ceph", "corpus", "random"}) {
      for (size_t batch : {1, 8, 64}) {
        const std::string suffix = std::string("codec:") + CodecName(c) + "/set:" + set +
                                   "/batch:" + std::to_string(batch);
        benchmark::RegisterBenchmark(("BM_Compress/" + suffix).c_str(), BM_Compress, c, set, batch);
        benchmark::RegisterBenchmark(("BM_Decompress/" + suffix).c_str(), BM_Decompress, c, set,
                                     batch);
      }
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
