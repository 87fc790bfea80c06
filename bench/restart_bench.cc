// restart_bench — how long an OSD restart takes to open a store and load
// every PG log, and what the loaded logs cost in memory, for either backend.
//
//   restart_bench --backend=ring|rocksdb --pgs=N --entries=E --dir=WORK
//                 [--entry-min=180 --entry-max=220] [--dups=0] [--chunk-size=1M]
//                 [--log-size=BYTES] [--in-flight=64] [--batch=50] [--keep]
//                 [--cache=drop|fadvise|none] [--layout=perpg|stream] [--stream-chunks=0]
//                 [--home-bytes=0] [--resident-bytes=64K] [--compression=none|lz4]
//                 [--verify-on-open=off|shallow|deep]
//                 [--peering-reads=N (16, at most --pgs)]
//
// 1. populate (this process): a file-backed log partition WORK/log.part
//    (fallocated) and RocksDB WORK/db; mkfs (force), N PGs in pool 1, then E
//    entries per PG (uniform entry_min..entry_max payload bytes, ~200 like a
//    Ceph pg_log_entry_t), a PG info, and optionally D dups per PG. Batched:
//    each transaction appends `batch` entries to one PG, `in-flight`
//    transactions are outstanding, durability = group commit. Then Close.
// 2. cache (--cache=drop, the default): sync(), then echo 3 >
//    /proc/sys/vm/drop_caches if permitted (the whole machine's cache);
//    otherwise, or with --cache=fadvise, posix_fadvise(DONTNEED) on the partition and every RocksDB
//    file, which evicts their (clean) pages without privileges. The ring
//    backend reads its partition with O_DIRECT anyway; RocksDB reads through
//    the page cache, so this matters for the RocksDB backend.
// 3. open (a fresh child process, /proc/self/exe --phase=open, so the heap
//    holds nothing from populate): Store::Open (which recovers/loads every PG
//    log) timed with a steady clock; heap in use (mallinfo2: uordblks +
//    hblkhd) and VmRSS before and after; StoreStats (live entries, dups,
//    the unhomed bytes kept in memory and the stream's live bytes,
//    mapping_table_bytes); a check that every PG has E entries. With
//    --verify-on-open, Store::Open checks the store first
//    (Options::verify_on_open), and the time includes the check.
// 4. peering reads (the same child, after the measurements above): the
//    whole log of --peering-reads PGs spread over the store, one after
//    another, as a primary reads a PG's log to peer: ReadEntries of every
//    version, ReadDups and ReadInfo, each PG timed; the ring backend reads
//    its records wherever they are (ring or stream), the RocksDB backend
//    iterates the PG's keys. Each read is checked (E entries, D dups).
//
// To time open alone again and again on one populated store (the partition
// is read with O_DIRECT, so only RocksDB's files stay cached): --keep, then
// --phase=open with the same arguments, which prints the open phase's JSON.
//
// Prints one JSON object on stdout (progress on stderr):
//   {"backend", "pgs", "entries_per_pg", "populate": {seconds, entries, ...},
//    "cache_drop": {"method", "drop_caches_permitted"},
//    "open": {"seconds", "rss_before", "rss_after", "rss_peak", "heap_before", "heap_after",
//             "heap_growth_bytes", "rss_growth_bytes", "live_entries",
//             "live_dups", "mapping_table_bytes",
//             "heap_bytes_per_live_entry", "rss_bytes_per_live_entry",
//             "mapping_table_bytes_per_live_entry", "close_seconds", "check_ok",
//             "peering_read": {"pgs", "seconds_median", "seconds_max",
//                              "seconds_total", "entries", "dups", "payload_bytes"}}}
// "live entry" = entries + dups (the items the in-memory indexes hold).
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pgring/log_sink.h"
#include "pgring/store.h"
#ifdef PGRING_RESTART_CEPH_PAYLOADS
#include "ceph_payload.h"  // the fio engine's (tools/fio_engine/)
#endif

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Args {
  std::string phase = "all";  // all | populate | open
  std::string backend = "ring";
  std::string layout = "perpg";  // the ring's log layout, populating and opening
  // StreamOptions' defaults: stream_chunks 0 is three quarters of the
  // partition, home_bytes 0 homes only when the stream needs the room.
  uint32_t stream_chunks = pgring::StreamOptions{}.max_chunks;
  uint64_t home_bytes = pgring::StreamOptions{}.home_bytes;
  uint64_t resident_bytes = pgring::StreamOptions{}.resident_bytes;
  // What the entries, dups and infos hold: filler ('x', entry_min to
  // entry_max bytes), or Ceph's encodings as the fio engine's
  // pgring_payload=ceph writes them (pg_log_entry_t ~175-260 bytes,
  // pg_log_dup_t, pg_info_t last and pg_fast_info_t before; built with the
  // fio engine only).
  std::string payload = "filler";
  // The stream's compression. Filler payloads shrink to almost nothing,
  // far below Ceph's encodings (about half): compare layouts with none,
  // or with ceph payloads.
  std::string compression =
      pgring::StreamOptions{}.compression == pgring::StreamCompression::kLz4 ? "lz4" : "none";
  uint32_t pgs = 128;
  uint64_t entries = 3000;
  uint32_t entry_min = 180, entry_max = 220;
  uint64_t dups = 0;
  uint32_t chunk_size = 1 << 20;
  uint64_t log_size = 0;  // 0 = computed
  uint32_t in_flight = 64;
  uint32_t batch = 50;
  std::string dir;
  bool keep = false;
  std::string cache = "drop";  // drop | fadvise | none
  std::string verify_on_open = "off";  // off | shallow | deep (the open phase only)
  // PGs whose whole log the open phase reads; unset: 16, or every PG when
  // there are fewer.
  uint32_t peering_reads = UINT32_MAX;
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "restart_bench: %s\n", msg.c_str());
  std::exit(1);
}

uint64_t ParseSize(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suf(end);
  uint64_t mul = 1;
  if (suf == "K" || suf == "k") mul = 1ull << 10;
  else if (suf == "M" || suf == "m") mul = 1ull << 20;
  else if (suf == "G" || suf == "g") mul = 1ull << 30;
  else if (!suf.empty()) Die("bad size: " + s);
  return static_cast<uint64_t>(v * mul);
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto eq = arg.find('=');
    std::string key = arg.substr(0, eq), val = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "--phase") a.phase = val;
    else if (key == "--backend") a.backend = val;
    else if (key == "--pgs") a.pgs = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--entries") a.entries = std::stoull(val);
    else if (key == "--entry-min") a.entry_min = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--entry-max") a.entry_max = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--dups") a.dups = std::stoull(val);
    else if (key == "--chunk-size") a.chunk_size = static_cast<uint32_t>(ParseSize(val));
    else if (key == "--log-size") a.log_size = ParseSize(val);
    else if (key == "--in-flight") a.in_flight = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--batch") a.batch = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--dir") a.dir = val;
    else if (key == "--keep") a.keep = true;
    else if (key == "--cache") a.cache = val;
    else if (key == "--layout") a.layout = val;
    else if (key == "--stream-chunks") a.stream_chunks = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--home-bytes") a.home_bytes = ParseSize(val);
    else if (key == "--resident-bytes") a.resident_bytes = ParseSize(val);
    else if (key == "--compression") a.compression = val;
    else if (key == "--payload") a.payload = val;
    else if (key == "--verify-on-open") a.verify_on_open = val;
    else if (key == "--peering-reads") a.peering_reads = static_cast<uint32_t>(std::stoul(val));
    else if (key == "--help" || key == "-h") {
      std::puts("restart_bench --backend=ring|rocksdb --pgs=N --entries=E --dir=WORK "
                "[--entry-min=180] [--entry-max=220] [--dups=0] [--chunk-size=1M] "
                "[--log-size=BYTES] [--in-flight=64] [--batch=50] [--keep] [--cache=drop|fadvise|none] "
                "[--phase=all|populate|open] [--layout=perpg|stream] [--stream-chunks=0] "
                "[--home-bytes=0] [--resident-bytes=64K] [--compression=none|lz4] "
#ifdef PGRING_RESTART_CEPH_PAYLOADS
                "[--payload=filler|ceph] "  // bench/report.sh looks for "ceph" here
#else
                "[--payload=filler] "
#endif
                "[--verify-on-open=off|shallow|deep] "
                "[--peering-reads=16]");
      std::exit(0);
    } else {
      Die("unknown argument: " + arg);
    }
  }
  if (a.dir.empty()) Die("--dir is required");
  if (a.backend != "ring" && a.backend != "rocksdb") Die("--backend must be ring or rocksdb");
  if (a.entry_min == 0 || a.entry_max < a.entry_min) Die("bad entry size range");
  if (a.cache != "drop" && a.cache != "fadvise" && a.cache != "none") Die("--cache must be drop, fadvise or none");
  if (a.layout != "perpg" && a.layout != "stream") Die("--layout must be perpg or stream");
  if (a.compression != "none" && a.compression != "lz4") Die("--compression must be none or lz4");
  if (a.payload != "filler" && a.payload != "ceph") Die("--payload must be filler or ceph");
#ifndef PGRING_RESTART_CEPH_PAYLOADS
  if (a.payload == "ceph") {
    Die("--payload=ceph needs the fio engine's build (PGRING_BUILD_FIO_ENGINE)");
  }
#endif
  if (a.batch == 0 || a.in_flight == 0) Die("--batch and --in-flight must be > 0");
  if (a.verify_on_open != "off" && a.verify_on_open != "shallow" && a.verify_on_open != "deep") {
    Die("--verify-on-open must be off, shallow or deep");
  }
  if (a.peering_reads == UINT32_MAX) a.peering_reads = std::min<uint32_t>(16, a.pgs);
  if (a.peering_reads > a.pgs) Die("--peering-reads must be at most --pgs");
  return a;
}

std::string LogPath(const Args& a) { return a.dir + "/log.part"; }
std::string DbPath(const Args& a) { return a.dir + "/db"; }
pgring::PgId Pg(uint32_t i) { return pgring::PgId{1, i, -1}; }

uint64_t RssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

uint64_t HeapBytes() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;  // in use: arena chunks + mmapped chunks
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The stream layout populates with the stream as full of unhomed records as
// its forced homes let it be, and opens with it.
pgring::Options OpenOptions(const Args& a) {
  pgring::Options o;
  o.durability = pgring::DurabilityMode::kGroupCommit;
  o.log_sink = pgring::NullLogSink();
  o.log_layout = pgring::LogLayout::kPerPgRings;
  if (a.layout == "stream") {
    o.log_layout = pgring::LogLayout::kStream;
    o.stream.max_chunks = a.stream_chunks;
    o.stream.home_bytes = a.home_bytes;
    o.stream.resident_bytes = a.resident_bytes;
    o.stream.compression = a.compression == "lz4" ? pgring::StreamCompression::kLz4
                                                  : pgring::StreamCompression::kNone;
  }
  return o;
}

// Ring space a PG needs: records (payload + ~40 bytes of framing, generous)
// rounded up to chunks, plus the reserve and slack.
uint64_t DefaultLogSize(const Args& a) {
  if (a.backend == "rocksdb") return 64ull << 20;  // holds only the label
  const uint64_t per_pg = (a.entries * (a.entry_max + 64) + a.dups * (57 + 64) + 4096);
  const uint64_t chunks = (per_pg + a.chunk_size - 1) / a.chunk_size + 3;
  const uint64_t rings = a.pgs * chunks * a.chunk_size + (64ull << 20);
  uint64_t size = rings;
  if (a.layout == "stream") {
    // The stream's own chunks, or with the bound 0 (three quarters of the
    // partition) a partition a third larger than the rings need: the
    // stream may then hold as much as the rings would.
    size = a.stream_chunks != 0 ? rings + uint64_t{a.stream_chunks} * a.chunk_size
                                : (rings / 3 * 4 + a.chunk_size - 1) / a.chunk_size * a.chunk_size;
  }
  return std::max<uint64_t>(256ull << 20, size);
}

// Bounded number of outstanding Submits.
class InFlight {
 public:
  explicit InFlight(uint32_t limit) : limit_(limit) {}
  void Acquire() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return n_ < limit_; });
    ++n_;
  }
  void Release(const absl::Status& s) {
    std::lock_guard<std::mutex> l(mu_);
    --n_;
    if (!s.ok() && error_.ok()) error_ = s;
    cv_.notify_all();
  }
  absl::Status WaitAll() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return n_ == 0; });
    return error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint32_t limit_, n_ = 0;
  absl::Status error_;
};

json Populate(const Args& a) {
  const auto t0 = std::chrono::steady_clock::now();
  fs::create_directories(a.dir);
  fs::remove_all(DbPath(a));
  const uint64_t size = a.log_size ? a.log_size : DefaultLogSize(a);
  {
    int fd = ::open(LogPath(a).c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0) Die("open " + LogPath(a) + ": " + std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0) Die("fstat");
    if (static_cast<uint64_t>(st.st_size) < size) {
      int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
      if (rc != 0 && ::ftruncate(fd, static_cast<off_t>(size)) != 0) Die("cannot size the log partition");
    }
    ::close(fd);
  }
  pgring::MkfsOptions m;
  m.backend = a.backend == "ring" ? pgring::Backend::kRing : pgring::Backend::kRocksDb;
  m.chunk_size = a.chunk_size;
  m.size = size;
  m.force = true;
  const auto meta = pgring::MetadataLocation::OwnDb(DbPath(a));
  if (auto s = pgring::Mkfs(LogPath(a), meta, m); !s.ok()) Die("mkfs: " + s.ToString());
  auto opened = pgring::Store::Open(LogPath(a), meta, OpenOptions(a));
  if (!opened.ok()) Die("open after mkfs: " + opened.status().ToString());
  auto store = std::move(opened).value();
  {
    pgring::Transaction t;
    for (uint32_t i = 0; i < a.pgs; ++i) t.CreatePg(Pg(i));
    if (auto s = store->Commit(std::move(t)); !s.ok()) Die("create PGs: " + s.ToString());
  }
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<uint32_t> len(a.entry_min, a.entry_max);
  const std::string filler(std::max<uint32_t>(a.entry_max, 920), 'x');
  // The payloads, filler or Ceph's encodings of PG i's version v.
#ifdef PGRING_RESTART_CEPH_PAYLOADS
  pgring::fio::EngineConfig ceph;
  ceph.pgs = a.pgs;
#endif
  const bool ceph_payloads = a.payload == "ceph";
  auto entry = [&](uint32_t i, uint64_t v) -> std::string {
#ifdef PGRING_RESTART_CEPH_PAYLOADS
    if (ceph_payloads) return pgring::fio::CephLogEntry(ceph, i, v);
#endif
    return std::string(filler.data(), len(rng));
  };
  auto dup = [&](uint32_t i, uint64_t v) -> std::string {
#ifdef PGRING_RESTART_CEPH_PAYLOADS
    if (ceph_payloads) return pgring::fio::CephLogDup(ceph, i, v);
#endif
    return std::string(filler.data(), 57);
  };
  auto info = [&](uint32_t i, uint64_t v, bool full) -> std::string {
#ifdef PGRING_RESTART_CEPH_PAYLOADS
    if (ceph_payloads) {
      return full ? pgring::fio::CephPgInfo(ceph, i, v) : pgring::fio::CephPgFastInfo(ceph, i, v);
    }
#endif
    return std::string(filler.data(), full ? 920 : 190);
  };
  (void)ceph_payloads;
  uint64_t payload = 0, txns = 0;
  InFlight inflight(a.in_flight);
  auto submit = [&](pgring::Transaction t) {
    inflight.Acquire();
    ++txns;
    absl::Status s = store->Submit(std::move(t), [&inflight](absl::Status st) { inflight.Release(st); });
    if (!s.ok()) Die("submit: " + s.ToString());
  };
  // Dups first (versions below the entries'), then entries, PG by PG in
  // rounds so every PG's ring fills evenly as in a running OSD.
  for (uint64_t done = 0; done < a.dups; done += a.batch) {
    for (uint32_t i = 0; i < a.pgs; ++i) {
      pgring::Transaction t;
      for (uint64_t v = done; v < std::min<uint64_t>(a.dups, done + a.batch); ++v) {
        const std::string d = dup(i, v + 1);
        payload += d.size();
        t.AppendDup(Pg(i), pgring::Version{1, v + 1}, d);
      }
      submit(std::move(t));
    }
  }
  for (uint64_t done = 0; done < a.entries; done += a.batch) {
    for (uint32_t i = 0; i < a.pgs; ++i) {
      pgring::Transaction t;
      const uint64_t end = std::min<uint64_t>(a.entries, done + a.batch);
      for (uint64_t v = done; v < end; ++v) {
        const std::string e = entry(i, a.dups + v + 1);
        payload += e.size();
        t.AppendEntry(Pg(i), pgring::Version{1, a.dups + v + 1}, e);
      }
      // The full info last, the fast info before.
      const std::string in = info(i, a.dups + end, end == a.entries);
      payload += in.size();
      t.SetInfo(Pg(i), in);
      submit(std::move(t));
    }
    if (done % (a.batch * 20) == 0) {
      std::fprintf(stderr, "restart_bench: populate %s: %llu/%llu entries per PG\n", a.backend.c_str(),
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(a.entries));
    }
  }
  if (auto s = inflight.WaitAll(); !s.ok()) Die("commit: " + s.ToString());
  if (auto s = store->Sync(); !s.ok()) Die("sync: " + s.ToString());
  const pgring::StoreStats st = store->GetStoreStats();
  if (auto s = store->Close(); !s.ok()) Die("close: " + s.ToString());
  store.reset();
  uint64_t db_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(DbPath(a))) {
    if (e.is_regular_file()) db_bytes += e.file_size();
  }
  return json{{"seconds", Since(t0)},
              {"transactions", txns},
              {"stream_bytes_used", st.stream_bytes_used},
              {"stream_chunks", st.stream_chunks},
              {"entries", a.pgs * a.entries},
              {"dups", a.pgs * a.dups},
              {"payload_bytes", payload},
              {"record_bytes_appended", st.record_bytes_appended},
              {"device_bytes_written", st.device_bytes_written},
              {"log_partition_bytes", size},
              {"db_dir_bytes", db_bytes}};
}

json DropCaches(const Args& a) {
  ::sync();
  bool permitted = false;
  if (a.cache == "none") return json{{"drop_caches_permitted", false}, {"method", "none"}, {"files_advised", 0}};
  if (a.cache == "drop") {
    int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd >= 0) {
      permitted = ::write(fd, "3\n", 2) == 2;
      ::close(fd);
    }
  }
  uint64_t advised = 0;
  if (!permitted) {
    std::vector<std::string> files{LogPath(a)};
    for (const auto& e : fs::recursive_directory_iterator(DbPath(a))) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
    for (const auto& f : files) {
      int fd = ::open(f.c_str(), O_RDONLY);
      if (fd < 0) continue;
      ::fdatasync(fd);
      if (::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) ++advised;
      ::close(fd);
    }
  }
  return json{{"drop_caches_permitted", permitted},
              {"method", permitted ? "drop_caches" : (advised ? "fadvise_dontneed" : "none")},
              {"files_advised", advised}};
}

// Reads the whole log of `a.peering_reads` PGs spread evenly over the
// store, timing each; *ok becomes false if a PG's log is not what populate
// wrote (its entry and dup counts, an info).
json PeeringReads(const Args& a, const pgring::Store& store, bool* ok) {
  std::vector<double> seconds;
  uint64_t entries = 0, dups = 0, bytes = 0;
  for (uint32_t k = 0; k < a.peering_reads; ++k) {
    const pgring::PgId pg = Pg(static_cast<uint32_t>(uint64_t{k} * a.pgs / a.peering_reads));
    const auto t0 = std::chrono::steady_clock::now();
    auto e = store.ReadEntries(pg);
    auto d = store.ReadDups(pg);
    auto info = store.ReadInfo(pg);
    seconds.push_back(Since(t0));
    if (!e.ok() || !d.ok() || !info.ok() || e->size() != a.entries || d->size() != a.dups) {
      *ok = false;
      continue;
    }
    entries += e->size();
    dups += d->size();
    for (const auto& x : *e) bytes += x.payload.size();
    for (const auto& x : *d) bytes += x.payload.size();
    bytes += info->size();
  }
  double total = 0, median = 0, max = 0;
  if (!seconds.empty()) {
    for (double s : seconds) total += s;
    std::sort(seconds.begin(), seconds.end());
    median = seconds[seconds.size() / 2];
    max = seconds.back();
  }
  return json{{"pgs", a.peering_reads},   {"seconds_median", median}, {"seconds_max", max},
              {"seconds_total", total},   {"entries", entries},       {"dups", dups},
              {"payload_bytes", bytes}};
}

json OpenPhase(const Args& a) {
  const auto meta = pgring::MetadataLocation::OwnDb(DbPath(a));
  malloc_trim(0);
  pgring::Options o = OpenOptions(a);
  o.verify_on_open = a.verify_on_open == "deep"      ? pgring::VerifyOnOpen::kDeep
                     : a.verify_on_open == "shallow" ? pgring::VerifyOnOpen::kShallow
                                                     : pgring::VerifyOnOpen::kOff;
  const uint64_t rss0 = RssBytes(), heap0 = HeapBytes();
  const auto t0 = std::chrono::steady_clock::now();
  auto opened = pgring::Store::Open(LogPath(a), meta, o);
  const double open_s = Since(t0);
  if (!opened.ok()) Die("open: " + opened.status().ToString());
  auto store = std::move(opened).value();
  const uint64_t rss1 = RssBytes(), heap1 = HeapBytes();
  // The most this process ever held: open's peak (it does nothing else).
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const uint64_t rss_peak = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  const pgring::StoreStats st = store->GetStoreStats();
  // Check: every PG is there with its entries (reading stats only, so the
  // measurement above is not disturbed by reads).
  bool ok = true;
  auto pgs = store->ListPgs();
  if (!pgs.ok() || pgs->size() != a.pgs) ok = false;
  if (ok) {
    for (const auto& pg : *pgs) {
      auto ps = store->GetPgStats(pg);
      if (!ps.ok() || ps->entries != a.entries || ps->dups != a.dups) {
        ok = false;
        break;
      }
    }
  }
  json peering = PeeringReads(a, *store, &ok);
  const auto t1 = std::chrono::steady_clock::now();
  absl::Status cs = store->Close();
  store.reset();
  const double close_s = Since(t1);
  if (!cs.ok()) ok = false;
  const double live = static_cast<double>(std::max<uint64_t>(1, st.live_entries + st.live_dups));
  const double heap_growth = static_cast<double>(heap1) - static_cast<double>(heap0);
  const double rss_growth = static_cast<double>(rss1) - static_cast<double>(rss0);
  return json{{"seconds", open_s},
              {"verify_on_open", a.verify_on_open},
              {"close_seconds", close_s},
              {"rss_before", rss0},
              {"rss_after", rss1},
              {"heap_before", heap0},
              {"heap_after", heap1},
              {"heap_growth_bytes", heap_growth},
              {"rss_growth_bytes", rss_growth},
              {"rss_peak", rss_peak},
              {"live_entries", st.live_entries},
              {"live_dups", st.live_dups},
              {"pgs", st.pgs},
              {"mapping_table_bytes", st.mapping_table_bytes},
              {"unhomed_resident_bytes", st.unhomed_resident_bytes},
              {"stream_index_bytes", st.stream_index_bytes},
              {"stream_bytes_used", st.stream_bytes_used},
              {"heap_bytes_per_live_entry", heap_growth / live},
              {"rss_bytes_per_live_entry", rss_growth / live},
              {"mapping_table_bytes_per_live_entry", st.mapping_table_bytes / live},
              {"peering_read", peering},
              {"check_ok", ok}};
}

// Runs this program again with --phase=open and returns its JSON.
json OpenInChild(int argc, char** argv) {
  std::vector<std::string> args{"/proc/self/exe"};
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--phase", 7) != 0) args.push_back(argv[i]);
  }
  args.push_back("--phase=open");
  std::vector<char*> cargs;
  for (auto& s : args) cargs.push_back(s.data());
  cargs.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) Die("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, cargs.data(), environ) != 0) Die("posix_spawn");
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("the open phase failed");
  return json::parse(out);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = ParseArgs(argc, argv);
  if (a.phase == "open") {
    std::cout << OpenPhase(a).dump() << std::endl;
    return 0;
  }
  json r{{"backend", a.backend},
         {"layout", a.layout},
         {"stream_chunks", a.stream_chunks},
         {"home_bytes", a.home_bytes},
         {"resident_bytes", a.resident_bytes},
         {"compression", a.compression},
         {"payload", a.payload},
         {"pgs", a.pgs},
         {"entries_per_pg", a.entries},
         {"dups_per_pg", a.dups},
         {"entry_bytes", json{{"min", a.entry_min}, {"max", a.entry_max}}},
         {"chunk_size", a.chunk_size}};
  r["populate"] = Populate(a);
  if (a.phase == "populate") {
    std::cout << r.dump(2) << std::endl;
    return 0;
  }
  if (a.phase != "all") Die("--phase must be all, populate or open");
  r["cache_drop"] = DropCaches(a);
  std::fprintf(stderr, "restart_bench: opening %s (%u PGs x %llu entries), cache: %s\n", a.backend.c_str(),
               a.pgs, static_cast<unsigned long long>(a.entries), r["cache_drop"]["method"].get<std::string>().c_str());
  r["open"] = OpenInChild(argc, argv);
  if (!a.keep) {
    fs::remove_all(DbPath(a));
    fs::remove(LogPath(a));
  }
  std::cout << r.dump(2) << std::endl;
  return r["open"]["check_ok"].get<bool>() ? 0 : 2;
}
