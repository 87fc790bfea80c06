// make_seeds.cc — writes the seed corpus of the fuzz targets: real encodings
// made by pgring's own encoders (and the worked examples of docs/FORMAT.md),
// so each fuzzer starts from valid inputs and mutates from there.
//
//   fuzz_make_seeds DIR            write DIR/<target>/<name> (DIR is usually
//                                  tests/fuzz/corpus; commit what it writes)
//   fuzz_make_seeds --check DIR    exit 1 unless every seed is in DIR, same
//                                  bytes (the ctest fuzz_seeds_current)
//
// The ceph target's seeds are Ceph's own encodings, the first three files
// (by name) of each release and type of the decoder tests' copy of Ceph's
// object corpus (tests/tool/ceph_corpus/, PGRING_CEPH_CORPUS_DIR).
//
// Everything is deterministic: run it again and nothing changes. Seeds only;
// inputs the fuzzers find go to build/fuzz-corpus (run_fuzzers.sh), crashes
// to tests/fuzz/regressions.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "format/label.h"
#include "format/record.h"
#include "format/metadata_keys.h"
#include "tool/export_file.h"
#include "util/coding.h"

namespace {

using namespace pgring;
namespace fs = std::filesystem;

// target -> name -> bytes
using Seeds = std::map<std::string, std::map<std::string, std::string>>;

std::string Unhex(const char* h) {
  std::string out;
  for (size_t i = 0; h[i] && h[i + 1]; i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(h + i, 2), nullptr, 16)));
  }
  return out;
}

Uuid ExampleUuid() {
  Uuid u;
  for (int i = 0; i < 16; ++i) u.bytes[i] = static_cast<uint8_t>(i * 0x11);
  return u;
}

void RecordSeeds(Seeds* s) {
  auto& r = (*s)["record"];
  // docs/FORMAT.md, "Worked example: records".
  r["format-example-1"] = Unhex(
      "d823bded01180000070000000000000001000000000000000111030000002a0000000000000068656c6c6f02"
      "03696e66");
  r["format-example-2"] = Unhex(
      "280e807201130000070000000000000002000000000000000111030000002b00000000000000776f726c64");
  {
    RecordBodyBuilder b;
    b.AddEntry({3, 42}, "hello");
    b.AddInfo("inf");
    b.AddPad(4045 + 3);  // the kNeverRewrite example: padded to its block's end
    std::string rec;
    AppendRecord(&rec, kRecordTxn, 7, 0, 1, b.body());
    r["padded-to-block"] = rec;
  }
  {
    RecordBodyBuilder b;
    b.AddRewind({3, 40});
    b.AddEntry({3, 41}, "a");
    b.AddEntry({4, 0}, std::string(200, 'x'));  // a two-byte varint
    b.AddDup({2, 9}, "dup");
    b.AddReset();
    b.AddEntry({0, 1}, "");
    b.AddInfo("");
    b.AddPad(130);
    std::string rec;
    AppendRecord(&rec, kRecordTxn, 0xfffffffe, 0xffffffff, 1ull << 40, b.body());
    r["every-item-kind"] = rec;
  }
  {
    // Unknown skippable item (0x81) and unknown skippable record kind (0x82).
    RecordBodyBuilder b;
    b.AddEntry({1, 1}, "e");
    std::string body = b.body();
    body += std::string("\x81\x03" "abc", 5);  // an item kind a newer writer might add
    b.Clear();
    b.AddPad(2);
    body += b.body();
    std::string rec;
    AppendRecord(&rec, 0x82, 1, 2, 3, body);
    r["unknown-skippable"] = rec;
  }
  {
    std::string rec;
    AppendRecord(&rec, kRecordTxn, 1, 0, 1, "");
    r["empty-body"] = rec;
  }
}

void LabelSeeds(Seeds* s) {
  auto& l = (*s)["label"];
  Label a;  // docs/FORMAT.md, "Worked example: a label"
  a.uuid = ExampleUuid();
  a.block_size = 4096;
  a.chunk_size = 1 << 20;
  a.partition_size = (16u << 20) + 4096;
  a.chunk_count = 16;
  a.backend = Backend::kRing;
  l["format-example"] = a.Encode();
  std::string region = a.Encode();
  region.resize(kLabelRegionSize, '\0');  // the whole label region, as read
  l["label-region"] = region;
  Label b = a;
  b.block_size = 512;
  b.chunk_size = 64 << 10;
  b.partition_size = (1ull << 40) + 4096 + 12345;
  b.chunk_count = (1ull << 40) / (64 << 10);
  b.backend = Backend::kRocksDb;
  l["small-chunks-rocksdb"] = b.Encode();
  Label c = a;
  c.chunk_size = 256u << 20;
  c.partition_size = ~0ull;
  c.chunk_count = (~0ull - 4096) / (256u << 20);
  l["largest"] = c.Encode();
  Label d = a;
  d.partition_size = 4096;
  d.chunk_count = 0;
  l["no-chunks"] = d.Encode();

  // The CRC-sealed RocksDB values (docs/FORMAT.md examples).
  StoreMeta m;
  m.uuid = ExampleUuid();
  m.block_size = 4096;
  m.chunk_size = 1 << 20;
  m.partition_size = (16u << 20) + 4096;
  m.chunk_count = 16;
  m.next_pg_stamp = 9;
  l["store-meta"] = m.Encode();
  PgPointer p;
  p.stamp = 7;
  p.head = 4096;
  p.tail = 12288;
  p.tail_seq = 5;
  p.entries_trimmed_to = {3, 40};
  p.dups_trimmed_to = {2, 10};
  l["pg-pointer"] = p.Encode();  // the format pgring writes now
  // The same pointer in value format 1 (fixed-width fields, 57 bytes), as
  // the first FORMAT.md gave it: still read.
  l["pg-pointer-format1"] = Unhex(
      "0107000000001000000000000000300000000000000500000000000000030000002800000000000000020000"
      "000a00000000000000c38f4d28");
  PgChunkList cl;
  cl.base = 1 << 20;
  cl.chunks = {5, 2, 9};
  l["pg-chunk-list"] = cl.Encode();
  cl.chunks.clear();
  l["pg-chunk-list-empty"] = cl.Encode();
}

void ExportSeeds(Seeds* s) {
  auto& e = (*s)["export"];
  tool::ExportedPg pg;
  pg.pg = PgId{1, 0x2a, -1};
  pg.source_uuid = ExampleUuid();
  e["empty-pg"] = tool::EncodeExport(pg);
  pg.entries_trimmed_to = {3, 40};
  pg.dups_trimmed_to = {2, 10};
  pg.dups = {{{2, 11}, "dup-a"}, {{3, 1}, ""}};
  pg.entries = {{{3, 41}, "hello"}, {{3, 42}, std::string(300, 'w')}, {{4, 0}, ""}};
  pg.info = "info";
  e["full-pg"] = tool::EncodeExport(pg);
  pg.pg = PgId{-5, 0xffffffff, 3};
  pg.source_backend = Backend::kRocksDb;
  pg.dups.clear();
  pg.info.reset();
  e["sharded-rocksdb-source"] = tool::EncodeExport(pg);
  pg.info = "";
  pg.entries = {{{0, 1}, "x"}};
  pg.entries_trimmed_to = {};
  pg.dups_trimmed_to = {};
  e["empty-info"] = tool::EncodeExport(pg);
}

// The ring target reads its input through FuzzedDataProvider: any bytes make
// a valid log. Its last byte says how much damage (byte % 4; 0: none), so
// half of these are clean logs and half damaged ones.
void RingSeeds(Seeds* s) {
  auto& r = (*s)["ring"];
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&]() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<char>(x >> 24);
  };
  const size_t sizes[] = {8, 32, 96, 256, 700, 1500, 3000, 6000};
  int i = 0;
  for (size_t n : sizes) {
    for (int damage = 0; damage < 2; ++damage) {
      std::string b(n, '\0');
      for (char& c : b) c = next();
      b.back() = static_cast<char>(damage == 0 ? 0 : 1 + (i % 3));
      char name[64];
      std::snprintf(name, sizeof(name), "%s-%04zu-%02d", damage == 0 ? "clean" : "damaged", n, i);
      r[name] = b;
      ++i;
    }
  }
  r["all-zero"] = std::string(512, '\0');
  r["all-ff"] = std::string(512, '\xff');
}

// The stream target reads its input the same way (its last byte: how much
// damage, byte % 4): random inputs of growing size, clean and damaged.
void StreamSeeds(Seeds* s) {
  auto& r = (*s)["stream"];
  uint64_t x = 0x2545f4914f6cdd1dull;
  auto next = [&]() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<char>(x >> 24);
  };
  const size_t sizes[] = {16, 64, 200, 500, 1000, 2000, 4000, 8000};
  int i = 0;
  for (size_t n : sizes) {
    for (int damage = 0; damage < 2; ++damage) {
      std::string b(n, '\0');
      for (char& c : b) c = next();
      b.back() = static_cast<char>(damage == 0 ? 0 : 1 + (i % 3));
      char name[64];
      std::snprintf(name, sizeof(name), "%s-%04zu-%02d", damage == 0 ? "clean" : "damaged", n, i);
      r[name] = b;
      ++i;
    }
  }
  r["all-zero"] = std::string(512, '\0');
  r["all-ff"] = std::string(512, '\xff');
}

// The open target reads its input through FuzzedDataProvider too; its last
// bytes pick the base store (byte % 3: per-PG rings, the log stream, the
// RocksDB backend) and whether to import (byte % 4 == 0) or rewrite the
// metadata (then the byte before says how many changes, % 5; 0: none, the
// store as written). Per store: one as written, rewrites and imports of
// random changes.
void OpenSeeds(Seeds* s) {
  auto& r = (*s)["open"];
  uint64_t x = 0x6a09e667f3bcc909ull;
  auto next = [&]() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<char>(x >> 24);
  };
  const char* kinds[] = {"rings", "stream", "rocksdb"};
  for (int kind = 0; kind < 3; ++kind) {
    r[std::string("written-") + kinds[kind]] = std::string("\x01\x00\x00\x01", 4) +
                                               static_cast<char>(kind);
    const size_t sizes[] = {24, 48, 96, 160};
    for (int action = 0; action < 2; ++action) {
      int i = 0;
      for (size_t n : sizes) {
        std::string b(n, '\0');
        for (char& c : b) c = next();
        b[n - 1] = static_cast<char>(kind);
        b[n - 2] = static_cast<char>(action == 0 ? 4 : 1 + (i % 3));  // 4: import
        if (action == 1) b[n - 3] = static_cast<char>(1 + i);  // changes
        char name[64];
        std::snprintf(name, sizeof(name), "%s-%s-%03zu", action == 0 ? "import" : "rewrite",
                      kinds[kind], n);
        r[name] = b;
        ++i;
      }
    }
  }
}

// Ceph's encodings of the PG-log types, as the decoder's tests have them:
// per release and type, the first three files by name (54 of the 180, about
// 13 KB), named <release>-<type>-<first 8 hex digits of the file's name>.
void CephSeeds(Seeds* s) {
  auto& c = (*s)["ceph"];
  const fs::path root(PGRING_CEPH_CORPUS_DIR);
  std::vector<fs::path> releases;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_directory()) releases.push_back(e.path());
  }
  std::sort(releases.begin(), releases.end());
  for (const fs::path& release : releases) {
    const std::string version = release.filename().string();
    const std::string short_version = version.substr(0, version.find('-'));
    std::vector<fs::path> types;
    for (const auto& e : fs::directory_iterator(release)) {
      if (e.is_directory()) types.push_back(e.path());
    }
    std::sort(types.begin(), types.end());
    for (const fs::path& type : types) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(type)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      files.resize(std::min<size_t>(files.size(), 3));
      for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        c[short_version + "-" + type.filename().string() + "-" +
          f.filename().string().substr(0, 8)] =
            std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      }
    }
  }
}

Seeds AllSeeds() {
  Seeds s;
  RecordSeeds(&s);
  LabelSeeds(&s);
  ExportSeeds(&s);
  RingSeeds(&s);
  StreamSeeds(&s);
  OpenSeeds(&s);
  CephSeeds(&s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (!(argc == 2 || check)) {
    std::fprintf(stderr, "usage: %s [--check] DIR   (DIR: tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const fs::path dir(argv[argc - 1]);
  int bad = 0, n = 0;
  for (const auto& [target, files] : AllSeeds()) {
    for (const auto& [name, bytes] : files) {
      const fs::path p = dir / target / name;
      ++n;
      if (check) {
        if (!fs::is_regular_file(p)) {
          std::fprintf(stderr, "missing seed %s\n", p.c_str());
          ++bad;
          continue;
        }
        std::ifstream in(p, std::ios::binary);
        const std::string have((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        if (have != bytes) {
          std::fprintf(stderr, "seed %s differs from what fuzz_make_seeds writes\n", p.c_str());
          ++bad;
        }
        continue;
      }
      fs::create_directories(p.parent_path());
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", p.c_str());
        return 1;
      }
    }
  }
  if (check) {
    if (bad) {
      std::fprintf(stderr, "%d of %d seeds out of date: regenerate with fuzz_make_seeds %s\n",
                   bad, n, dir.c_str());
      return 1;
    }
    std::printf("%d seeds current\n", n);
  } else {
    std::printf("wrote %d seeds under %s\n", n, dir.c_str());
  }
  return 0;
}
