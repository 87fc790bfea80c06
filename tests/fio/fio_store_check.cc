// fio_store_check.cc — checks, after a fio run through the pgring engine, that
// fio, the engine's report and the store agree. Independent of the engine's
// code: it only uses pgring's public API, RocksDB and the two JSON files.
//
// Usage: fio_store_check --backend ring|rocksdb --log-dev PATH --db PATH
//                        --report REPORT.json --fio-json FIO.json [--verify-reads]
//
// Checks (any failure: a line on stderr and exit status 1):
//   fio      every job error=0; its writes (and, with --verify-reads, the
//            verify reads) reached the engine
//   report   backend; writes submitted = committed = fio's writes, none
//            failed; latency percentiles ordered; RocksDB and device bytes
//            counted; one per_pg row per PG; the engine's own log check ok
//   store    opens (read-only); holds the report's PGs; per PG the entries
//            have consecutive versions, sizes within [entry_min, entry_max],
//            the count and last version of the report; dups are consecutive
//            57-byte payloads below the first entry; the info has the size
//            of a fastinfo or a full info
//   RocksDB  the onode.<object> keys exist and have the onode size
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "pgring/store.h"

namespace {

using nlohmann::json;

int g_failures = 0;

void Fail(const std::string& what) {
  std::fprintf(stderr, "fio_store_check: FAIL: %s\n", what.c_str());
  ++g_failures;
}

#define CHECK(cond, msg)         \
  do {                           \
    if (!(cond)) Fail(msg);      \
  } while (0)

json Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    Fail("cannot read " + path);
    return json();
  }
  try {
    return json::parse(in);
  } catch (const std::exception& e) {
    Fail(path + ": " + e.what());
    return json();
  }
}

std::string S(uint64_t v) { return std::to_string(v); }

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  bool verify_reads = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify-reads") {
      verify_reads = true;
    } else if (a.rfind("--", 0) == 0 && i + 1 < argc) {
      args[a.substr(2)] = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s --backend B --log-dev P --db D --report R --fio-json F "
                           "[--verify-reads]\n", argv[0]);
      return 2;
    }
  }
  for (const char* k : {"backend", "log-dev", "db", "report", "fio-json"}) {
    if (!args.count(k)) {
      std::fprintf(stderr, "fio_store_check: --%s is required\n", k);
      return 2;
    }
  }

  // --- fio's own view -------------------------------------------------------
  const json fio = Load(args["fio-json"]);
  uint64_t fio_writes = 0, fio_reads = 0;
  if (fio.contains("jobs")) {
    for (const json& job : fio["jobs"]) {
      CHECK(job.value("error", -1) == 0, "fio job " + job.value("jobname", std::string("?")) +
                                              " error=" + std::to_string(job.value("error", -1)));
      fio_writes += job["write"].value("total_ios", uint64_t{0});
      fio_reads += job["read"].value("total_ios", uint64_t{0});
    }
  } else {
    Fail("fio's JSON output has no jobs");
  }
  CHECK(fio_writes > 0, "fio made no writes");
  if (verify_reads) CHECK(fio_reads >= fio_writes / 2, "fio's verify read back " + S(fio_reads) + " blocks");

  // --- the engine's report --------------------------------------------------
  const json r = Load(args["report"]);
  if (r.is_null()) return 1;
  const json& cfg = r["config"];
  const uint32_t pgs = cfg.value("pgring_pgs", 0u);
  const uint32_t entry_min = cfg.value("pgring_entry_min", 0u), entry_max = cfg.value("pgring_entry_max", 0u);
  const uint32_t fastinfo = cfg.value("pgring_fastinfo_size", 0u), info = cfg.value("pgring_info_size", 0u);
  const uint32_t onode_size = cfg.value("pgring_onode_size", 0u);
  CHECK(r.value("backend", std::string()) == args["backend"], "report backend " + r.value("backend", std::string()));
  const json& w = r["writes"];
  CHECK(w.value("submitted", uint64_t{0}) == fio_writes,
        "report: " + S(w.value("submitted", uint64_t{0})) + " writes submitted, fio made " + S(fio_writes));
  CHECK(w.value("committed", uint64_t{0}) == fio_writes, "report: not every write committed");
  CHECK(w.value("failed", uint64_t{1}) == 0, "report: failed writes");
  CHECK(w.value("iops", 0.0) > 0, "report: no IOPS");
  if (verify_reads) CHECK(r["reads"].value("count", uint64_t{0}) == fio_reads, "report: reads differ from fio's");
  const json& lat = r["commit_latency_us"];
  CHECK(lat.value("count", uint64_t{0}) == fio_writes, "report: latency count");
  CHECK(lat.value("p50", 0.0) > 0 && lat.value("p50", 0.0) <= lat.value("p99", 0.0) &&
            lat.value("p99", 0.0) <= lat.value("max", 0.0) * 1.04,
        "report: latency percentiles out of order");
  CHECK(r["rocksdb"]["run"]["bytes_written"].value("total", uint64_t{0}) > 0, "report: no RocksDB bytes");
  CHECK(r["rocksdb"]["run"]["bytes_written"].value("wal", uint64_t{0}) > 0, "report: no RocksDB WAL bytes");
  CHECK(r["store"]["run"].value("transactions_committed", uint64_t{0}) == fio_writes,
        "report: store committed " + S(r["store"]["run"].value("transactions_committed", uint64_t{0})) +
            " transactions during the run");
  if (args["backend"] == "ring") {
    CHECK(r["store"]["run"].value("device_bytes_written", uint64_t{0}) > 0, "report: no ring device bytes");
  }
  CHECK(r["data_file"].value("bytes_written", uint64_t{0}) >= fio_writes * 512, "report: data bytes");
  CHECK(r["osd_model"].value("entries", uint64_t{0}) == fio_writes, "report: model entries");
  CHECK(r["osd_model"].value("trims", uint64_t{0}) > 0, "report: the logs never trimmed");
  CHECK(r["pgs"]["per_pg"].size() == pgs, "report: per_pg rows");
  if (cfg.value("pgring_verify_log", false)) {
    CHECK(r["verify"].value("ok", false), "report: the engine's log check failed: " + r["verify"].dump());
  }

  // --- the store ------------------------------------------------------------
  pgring::Options o;
  o.read_only = true;
  {
    auto store = pgring::Store::Open(args["log-dev"], pgring::MetadataLocation::OwnDb(args["db"]), o);
    if (!store.ok()) {
      Fail("opening the store: " + store.status().ToString());
      return 1;
    }
    const char* backend = (*store)->backend() == pgring::Backend::kRing ? "ring" : "rocksdb";
    CHECK(backend == args["backend"], std::string("store backend ") + backend);
    uint64_t total_entries = 0;
    for (const json& row : r["pgs"]["per_pg"]) {
      pgring::PgId id;
      if (!pgring::PgId::Parse(row.value("pg", std::string()), &id)) {
        Fail("report: bad PG id " + row.value("pg", std::string()));
        continue;
      }
      const std::string name = id.ToString();
      auto entries = (*store)->ReadEntries(id);
      auto dups = (*store)->ReadDups(id);
      auto pinfo = (*store)->ReadInfo(id);
      if (!entries.ok() || !dups.ok() || !pinfo.ok()) {
        Fail("PG " + name + ": reading: " + entries.status().ToString() + " / " +
             dups.status().ToString() + " / " + pinfo.status().ToString());
        continue;
      }
      CHECK(entries->size() == row.value("entries", uint64_t{0}),
            "PG " + name + ": " + S(entries->size()) + " entries, report says " + S(row.value("entries", uint64_t{0})));
      for (size_t i = 0; i < entries->size(); ++i) {
        const auto& e = (*entries)[i];
        CHECK(e.payload.size() >= entry_min && e.payload.size() <= entry_max,
              "PG " + name + ": entry " + e.version.ToString() + " has " + S(e.payload.size()) + " bytes");
        if (i > 0) {
          const auto& p = (*entries)[i - 1].version;
          CHECK(e.version.epoch == p.epoch && e.version.version == p.version + 1,
                "PG " + name + ": entries " + p.ToString() + " then " + e.version.ToString());
        }
      }
      if (!entries->empty()) {
        CHECK(entries->back().version.ToString() == row.value("last_version", std::string()),
              "PG " + name + ": last entry " + entries->back().version.ToString());
      }
      for (size_t i = 0; i < dups->size(); ++i) {
        const auto& d = (*dups)[i];
        CHECK(d.payload.size() == 57, "PG " + name + ": dup of " + S(d.payload.size()) + " bytes");
        if (i > 0) {
          CHECK(d.version.version == (*dups)[i - 1].version.version + 1, "PG " + name + ": dup gap");
        }
        if (!entries->empty()) CHECK(d.version < entries->front().version, "PG " + name + ": dup above the log");
      }
      CHECK(pinfo->size() == fastinfo || pinfo->size() == info,
            "PG " + name + ": info of " + S(pinfo->size()) + " bytes");
      total_entries += entries->size();
    }
    CHECK(total_entries == (*store)->GetStoreStats().live_entries, "store: live_entries");
    auto listed = (*store)->ListPgs();
    CHECK(listed.ok() && listed->size() >= pgs, "store: ListPgs");
    absl::Status closed = (*store)->Close();
    CHECK(closed.ok(), "closing the store: " + closed.ToString());
  }

  // --- the onodes in RocksDB -----------------------------------------------
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), args["db"], &raw);
  if (!s.ok()) {
    Fail("opening RocksDB: " + s.ToString());
  } else {
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    uint64_t onodes = 0;
    for (it->Seek("onode."); it->Valid() && it->key().starts_with("onode."); it->Next()) {
      ++onodes;
      CHECK(it->value().size() == onode_size, "onode " + it->key().ToString() + " size");
    }
    CHECK(onode_size == 0 ? onodes == 0 : onodes > 0, "RocksDB holds " + S(onodes) + " onode keys");
    std::printf("fio_store_check: %llu onodes in RocksDB\n", static_cast<unsigned long long>(onodes));
  }

  if (g_failures > 0) {
    std::fprintf(stderr, "fio_store_check: %d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("fio_store_check: OK (%s backend, %llu writes, %u PGs)\n", args["backend"].c_str(),
              static_cast<unsigned long long>(fio_writes), pgs);
  return 0;
}
