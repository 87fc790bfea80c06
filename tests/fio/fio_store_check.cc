// fio_store_check.cc — checks, after a fio run through the pgring engine, that
// fio, the engine's report and the store agree. Independent of the engine's
// code: it only uses pgring's public API, RocksDB and the two JSON files.
//
// Usage: fio_store_check --backend ring|rocksdb --log-dev PATH --db PATH
//                        --report REPORT.json --fio-json FIO.json [--verify-reads]
//                        [--floor]
//
// --floor: the run had pgring_no_pg_log=1 (the OSD write with no PG log):
// the model appended no entries and trimmed nothing, and the store wrote
// nothing to the log partition.
//
// Checks (any failure: a line on stderr and exit status 1):
//   fio      every job error=0; its writes (and, with --verify-reads, the
//            verify reads) reached the engine
//   report   backend; writes submitted = committed = fio's writes, none
//            failed; latency percentiles ordered; RocksDB and device bytes
//            counted; one per_pg row per PG; the engine's own log check ok;
//            the run's CPU time and per-write figures (run.cpu_us,
//            run.per_write) agree with the counters they divide; the ring
//            made log-partition writes, the RocksDB backend and the floor
//            none
//   pools    one per fio job (or one, pgring_single_pool_mode), each with
//            pgring_pgs PGs in the report, and each took exactly its own
//            job's writes
//   store    opens (read-only); holds the report's PGs; per PG the entries
//            have consecutive versions, sizes within [entry_min, entry_max],
//            the count and last version of the report; dups are consecutive
//            pgring_dup_size-byte payloads below the first entry; the info has the size
//            of a fastinfo or a full info (the sizes with pgring_payload=random
//            only: Ceph's encodings have sizes of their own, and the engine's
//            pgring_verify_log checks their every byte against its model)
//   RocksDB  the onode.<object> keys exist and have the onode size (plus
//            pgring_oi_attr_len)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
  bool verify_reads = false, floor = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify-reads") {
      verify_reads = true;
    } else if (a == "--floor") {
      floor = true;
    } else if (a.rfind("--", 0) == 0 && i + 1 < argc) {
      args[a.substr(2)] = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s --backend B --log-dev P --db D --report R --fio-json F "
                           "[--verify-reads] [--floor]\n", argv[0]);
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
  std::vector<uint64_t> job_writes;  // in fio's order: a section's jobs by their number
  if (fio.contains("jobs")) {
    for (const json& job : fio["jobs"]) {
      CHECK(job.value("error", -1) == 0, "fio job " + job.value("jobname", std::string("?")) +
                                              " error=" + std::to_string(job.value("error", -1)));
      job_writes.push_back(job["write"].value("total_ios", uint64_t{0}));
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
  // PGs per pool, times the pools: one per job unless pgring_single_pool_mode.
  const uint32_t pools = cfg.value("pools", 1u);
  const uint32_t pgs = cfg.value("pgring_pgs", 0u) * pools;
  CHECK(cfg.value("pgring_single_pool_mode", false) ? pools == 1 : pools == job_writes.size(),
        "report: " + S(pools) + " pool(s) for " + S(job_writes.size()) + " fio job(s), single pool mode " +
            S(cfg.value("pgring_single_pool_mode", false)));
  const uint32_t entry_min = cfg.value("pgring_entry_min", 0u), entry_max = cfg.value("pgring_entry_max", 0u);
  const uint32_t fastinfo = cfg.value("pgring_fastinfo_size", 0u), info = cfg.value("pgring_info_size", 0u);
  // The onode value holds the object-info attr too (pgring_oi_attr_len).
  const uint32_t onode_size = cfg.value("pgring_onode_size", 0u) + cfg.value("pgring_oi_attr_len", 0u);
  const uint32_t dup_size = cfg.value("pgring_dup_size", 0u);
  // pgring_payload=ceph: the size options are unused (tools/fio_engine/README.md).
  const bool sized = cfg.value("pgring_payload", std::string("random")) != "ceph";
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
  const json& st_run = r["store"]["run"];
  const uint64_t device_bytes = st_run.value("device_bytes_written", uint64_t{1});
  const uint64_t device_writes = st_run.value("device_writes", uint64_t{1});
  CHECK(st_run.contains("device_writes") && r["store"]["at_end"].contains("device_writes"),
        "report: no device_writes in store.run and store.at_end");
  CHECK(r["store"]["at_end"].value("device_writes", uint64_t{0}) >= device_writes,
        "report: store.run.device_writes above store.at_end's");
  if (floor) {
    CHECK(device_bytes == 0, "report: the floor wrote " + S(device_bytes) + " bytes to the log partition");
    CHECK(device_writes == 0, "report: the floor made " + S(device_writes) + " log-partition writes");
  } else if (args["backend"] == "ring") {
    CHECK(device_bytes > 0, "report: no ring device bytes");
    CHECK(device_writes > 0, "report: no ring device writes");
    CHECK(device_writes <= device_bytes / 512, "report: " + S(device_writes) + " ring device writes of " +
                                                   S(device_bytes) + " bytes (under a block each)");
  } else {
    // A store opened by path on the RocksDB backend never writes its
    // partition (mkfs wrote the label through a device of its own).
    CHECK(device_bytes == 0, "report: the RocksDB backend wrote " + S(device_bytes) + " partition bytes");
    CHECK(device_writes == 0, "report: the RocksDB backend made " + S(device_writes) + " partition writes");
    CHECK(r["store"]["at_end"].value("device_writes", uint64_t{1}) == 0,
          "report: the RocksDB backend's store.at_end.device_writes");
  }

  // What the run cost per client write: each figure its counter over the
  // writes committed.
  const json& run = r["run"];
  const uint64_t cpu_user = run["cpu_us"].value("user", uint64_t{0});
  const uint64_t cpu_sys = run["cpu_us"].value("sys", uint64_t{0});
  const uint64_t cpu_total = run["cpu_us"].value("total", uint64_t{0});
  CHECK(cpu_total > 0 && cpu_user + cpu_sys == cpu_total,
        "report: run.cpu_us user " + S(cpu_user) + " + sys " + S(cpu_sys) + " != total " + S(cpu_total));
  const json& pw = run["per_write"];
  if (!pw.is_object()) {
    Fail("report: no run.per_write");
  } else {
    const double n = static_cast<double>(fio_writes);
    auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(b), 1.0); };
    const uint64_t rdb_bytes = r["rocksdb"]["run"]["bytes_written"].value("total", uint64_t{0});
    CHECK(pw.value("cpu_us", 0.0) > 0, "report: no CPU time per write");
    CHECK(near(pw.value("cpu_us", 0.0) * n, static_cast<double>(cpu_total)),
          "report: run.per_write.cpu_us x writes != run.cpu_us.total");
    CHECK(near(pw.value("cpu_user_us", -1.0) + pw.value("cpu_sys_us", -1.0), pw.value("cpu_us", 0.0)),
          "report: run.per_write.cpu_user_us + cpu_sys_us != cpu_us");
    CHECK(near(pw.value("log_partition_writes", -1.0) * n, static_cast<double>(device_writes)),
          "report: run.per_write.log_partition_writes x writes != store.run.device_writes");
    CHECK(near(pw.value("log_partition_bytes", -1.0) * n, static_cast<double>(device_bytes)),
          "report: run.per_write.log_partition_bytes x writes != store.run.device_bytes_written");
    CHECK(near(pw.value("rocksdb_bytes", -1.0) * n, static_cast<double>(rdb_bytes)),
          "report: run.per_write.rocksdb_bytes x writes != rocksdb.run's total");
    CHECK(pw.value("rocksdb_bytes", 0.0) > 0, "report: no RocksDB bytes per write");
    CHECK(near(pw.value("metadata_bytes", -1.0),
               pw.value("log_partition_bytes", 0.0) + pw.value("rocksdb_bytes", 0.0)),
          "report: run.per_write.metadata_bytes != log_partition_bytes + rocksdb_bytes");
    // The HDD model's counts: every client write is one data write
    // request; a device's noncontiguous requests are some of its requests.
    const json& df = r["data_file"];
    const uint64_t data_requests = df.value("write_requests", uint64_t{0});
    const uint64_t rdb_requests = r["rocksdb"]["run"].value("write_requests", uint64_t{0});
    CHECK(data_requests == fio_writes,
          "report: " + S(data_requests) + " data write requests for " + S(fio_writes) + " writes");
    CHECK(df.value("noncontiguous_write_requests", data_requests + 1) <= data_requests &&
              df.value("noncontiguous_write_requests", uint64_t{0}) >= 1,
          "report: data_file.noncontiguous_write_requests out of [1, write_requests]");
    CHECK(near(pw.value("data_writes", -1.0) * n, static_cast<double>(data_requests)) &&
              near(pw.value("data_seeks", -1.0) * n,
                   static_cast<double>(df.value("noncontiguous_write_requests", uint64_t{0}))),
          "report: run.per_write.data_writes/data_seeks x writes != data_file's requests");
    CHECK(rdb_requests > 0 &&
              near(pw.value("rocksdb_writes", -1.0) * n, static_cast<double>(rdb_requests)) &&
              near(pw.value("rocksdb_seeks", -1.0) * n,
                   static_cast<double>(r["rocksdb"]["run"].value("noncontiguous_write_requests",
                                                                 rdb_requests + 1))) &&
              pw.value("rocksdb_seeks", 2.0) <= pw.value("rocksdb_writes", 0.0),
          "report: run.per_write.rocksdb_writes/rocksdb_seeks against rocksdb.run's requests");
    CHECK(pw.value("log_partition_seeks", 2.0) <= pw.value("log_partition_writes", 0.0) + 1e-9,
          "report: more log-partition seeks than writes");
    std::printf("fio_store_check: per client write: %.1f CPU us, %.3f log-partition writes, "
                "%.0f log-partition + %.0f RocksDB bytes\n",
                pw.value("cpu_us", 0.0), pw.value("log_partition_writes", 0.0),
                pw.value("log_partition_bytes", 0.0), pw.value("rocksdb_bytes", 0.0));
    std::printf("fio_store_check: write requests (noncontiguous) per client write: data %.3f (%.3f), "
                "log partition %.3f (%.3f), RocksDB %.3f (%.3f)\n",
                pw.value("data_writes", 0.0), pw.value("data_seeks", 0.0),
                pw.value("log_partition_writes", 0.0), pw.value("log_partition_seeks", 0.0),
                pw.value("rocksdb_writes", 0.0), pw.value("rocksdb_seeks", 0.0));
  }
  CHECK(r["data_file"].value("bytes_written", uint64_t{0}) >= fio_writes * 512, "report: data bytes");
  if (floor) {
    CHECK(cfg.value("pgring_no_pg_log", false), "report: the floor's run without pgring_no_pg_log");
    CHECK(r["osd_model"].value("entries", uint64_t{1}) == 0, "report: the floor appended entries");
    CHECK(r["osd_model"].value("trims", uint64_t{1}) == 0, "report: the floor trimmed");
  } else {
    CHECK(r["osd_model"].value("entries", uint64_t{0}) == fio_writes, "report: model entries");
    CHECK(r["osd_model"].value("trims", uint64_t{0}) > 0, "report: the logs never trimmed");
  }
  CHECK(r["pgs"]["per_pg"].size() == pgs, "report: per_pg rows");
  // Each pool holds pgring_pgs PGs, and took the writes of its own job
  // alone (job i: pool i + 1); in single-pool mode, pool 1 took them all.
  {
    std::map<int64_t, uint64_t> pool_pgs, pool_writes;
    for (const json& row : r["pgs"]["per_pg"]) {
      pgring::PgId id;
      if (!pgring::PgId::Parse(row.value("pg", std::string()), &id)) continue;  // failed below
      ++pool_pgs[id.pool];
      pool_writes[id.pool] += row.value("writes", uint64_t{0});
    }
    CHECK(pool_pgs.size() == pools, "report: PGs in " + S(pool_pgs.size()) + " pools, not " + S(pools));
    for (uint32_t p = 0; p < pools; ++p) {
      const uint64_t want = pools == 1 ? fio_writes : job_writes[p];
      CHECK(pool_pgs[p + 1] == pgs / pools, "report: pool " + S(p + 1) + " has " + S(pool_pgs[p + 1]) + " PGs");
      // (The floor writes no PG log: its model counts no writes per PG.)
      CHECK(floor || pool_writes[p + 1] == want, "report: pool " + S(p + 1) + " took " + S(pool_writes[p + 1]) +
                                           " writes, its job(s) made " + S(want));
    }
  }
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
        CHECK(!sized || (e.payload.size() >= entry_min && e.payload.size() <= entry_max),
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
        CHECK(!sized || d.payload.size() == dup_size, "PG " + name + ": dup of " + S(d.payload.size()) + " bytes");
        if (i > 0) {
          CHECK(d.version.version == (*dups)[i - 1].version.version + 1, "PG " + name + ": dup gap");
        }
        if (!entries->empty()) CHECK(d.version < entries->front().version, "PG " + name + ": dup above the log");
      }
      CHECK(!sized || pinfo->size() == fastinfo || pinfo->size() == info,
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
