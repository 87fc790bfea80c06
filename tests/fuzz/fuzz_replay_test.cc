// fuzz_replay_test.cc — runs every file of tests/fuzz/corpus/<target>/ and
// tests/fuzz/regressions/<target>/ through that target's fuzzer entry point
// (compiled into this test under the name PgringFuzz_<target>), with the
// compiler and sanitizers of the preset being tested. A broken invariant
// aborts the test with the fuzzer's message; the file being run is printed
// first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "device/memory_block_device.h"
#include "format/record.h"
#include "log/ring_pg_log.h"
#include "log/ring_reader.h"
#include "check/pg_scan.h"

extern "C" int PgringFuzz_record(const uint8_t* data, size_t size);
extern "C" int PgringFuzz_ring(const uint8_t* data, size_t size);
extern "C" int PgringFuzz_stream(const uint8_t* data, size_t size);
extern "C" int PgringFuzz_label(const uint8_t* data, size_t size);
extern "C" int PgringFuzz_export(const uint8_t* data, size_t size);
extern "C" int PgringFuzz_open(const uint8_t* data, size_t size);
extern "C" int PgringFuzz_ceph(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

struct Target {
  const char* name;
  int (*entry)(const uint8_t*, size_t);
};
// Names the parameter in test listings (not its bytes: they hold a pointer).
void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

std::vector<fs::path> FilesUnder(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || name == "README.md") continue;
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class FuzzReplay : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzReplay, CorpusAndRegressions) {
  const Target& t = GetParam();
  const fs::path root(PGRING_FUZZ_DIR);
  const std::vector<fs::path> corpus = FilesUnder(root / "corpus" / t.name);
  const std::vector<fs::path> regressions = FilesUnder(root / "regressions" / t.name);
  ASSERT_FALSE(corpus.empty()) << "no seed corpus in " << (root / "corpus" / t.name);
  size_t bytes = 0;
  for (const auto* list : {&corpus, &regressions}) {
    for (const fs::path& p : *list) {
      std::ifstream in(p, std::ios::binary);
      ASSERT_TRUE(in) << p;
      const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // Printed before the run, so an abort names the file.
      std::fprintf(stderr, "fuzz replay %s: %s (%zu bytes)\n", t.name, p.c_str(), data.size());
      EXPECT_EQ(t.entry(reinterpret_cast<const uint8_t*>(data.data()), data.size()), 0) << p;
      bytes += data.size();
    }
  }
  std::fprintf(stderr, "fuzz replay %s: %zu corpus and %zu regression files, %zu bytes: ok\n",
               t.name, corpus.size(), regressions.size(), bytes);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay,
                         ::testing::Values(Target{"record", PgringFuzz_record},
                                           Target{"ring", PgringFuzz_ring},
                                           Target{"stream", PgringFuzz_stream},
                                           Target{"label", PgringFuzz_label},
                                           Target{"export", PgringFuzz_export},
                                           Target{"open", PgringFuzz_open},
                                           Target{"ceph", PgringFuzz_ceph}),
                         [](const ::testing::TestParamInfo<Target>& i) {
                           return std::string(i.param.name);
                         });

// Found by the ring target's invariant "the tool's scan is complete exactly
// when recovery succeeds": a record (CRC intact) whose rewind marker is above
// the last entry, followed by an entry between the two. Recovery sets the
// last version to the marker's (FORMAT.md) and refuses the entry; the tool's
// scan kept min(last, marker) and called the log healthy, so fsck --deep
// passed a PG the store opens as damaged.
TEST(RingScanRegression, ToolScanTakesTheRewindVersionAsRecoveryDoes) {
  using namespace pgring;
  Geometry g;
  g.block_size = 4096;
  g.chunk_size = 64 << 10;
  g.chunk_count = 4;
  MemoryBlockDevice dev(4096 + 4 * (64 << 10), 4096);
  PgChunkList c;
  c.chunks = {0};
  RecordBodyBuilder b;
  b.AddEntry({1, 5}, "a");
  b.AddRewind({1, 9});  // above 1'5: never written by pgring, but CRC-valid
  b.AddEntry({1, 7}, "b");
  std::string rec;
  AppendRecord(&rec, kRecordTxn, 7, 0, 1, b.body());
  dev.WriteRaw(4096, rec);
  PgPointer p;
  p.stamp = 7;
  p.tail = rec.size();
  p.tail_seq = 2;
  const PgId id{1, 0x2a, -1};

  RingPgLog pg(id, 7, 4096);
  pg.LoadPointer(p);
  pg.chunks = c;
  RingReader reader(&dev, g, c, "1.2a", 7, p.head, p.tail);
  RingRecord r;
  ASSERT_TRUE(reader.Next(&r).ok());
  const absl::Status replay = ReplayRecord(r.body, r.lpos, &pg);
  EXPECT_TRUE(absl::IsDataLoss(replay)) << replay;

  const PgScan scan = ScanRingPg(&dev, g, id, p, c, /*unhomed=*/{}, {});
  EXPECT_FALSE(scan.complete);
  ASSERT_TRUE(scan.has_errors());
  bool entry_order = false;
  for (const auto& pr : scan.problems) entry_order |= pr.kind == "entry-order";
  EXPECT_TRUE(entry_order);
}

}  // namespace
