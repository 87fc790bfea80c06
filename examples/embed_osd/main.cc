// examples/embed_osd/main.cc — how an OSD embeds pgring, and the install test.
//
// The "OSD" owns a RocksDB with two column families of its own making:
// "onodes" (its object metadata) and "pgring" (handed to pgring, which keeps
// its pointers there), and a data partition for its objects' bytes. Every
// client write is one pgring::Transaction that appends a PG log entry,
// rewrites the PG's info, and puts the object's onode into txn.batch():
// pgring commits the log pointers and the onode in the same RocksDB write
// batch, so the object and its log entry exist together or not at all. The
// object's data is written in parallel, through a pgring::Device, and the
// transaction waits for it (a CommitGate).
//
// Before opening the store the OSD asks pgring/flush_domain.h whether it
// may promise what two options need: one disk cache behind the data and the
// log partition (Options::gated_writes_share_flush: the store's partition
// flush then makes the data durable too, and a data write opens its gate as
// soon as it completes), and RocksDB's WAL on the partition's disk
// (Options::metadata_sync_flushes_partition). It sets each only when proven,
// and prints the verdict with its reason.
//
// At every mount but the first the OSD checks the store before it opens it,
// as BlueStore does with bluestore_fsck_on_mount: pgring::Verify
// (pgring/verify.h) reads the store through the OSD's own RocksDB handle,
// every problem is logged, and a store with errors is not mounted.
//
// The program makes a fresh partition file (64 MiB), a data file (16 MiB),
// both written with zeros as a raw partition is, and a fresh RocksDB, runs
// Mkfs, writes, closes everything, checks it (deep), reopens it, and checks
// that every onode, every object's data and every log entry is still there. Exit 0 = all good;
// exit 1 with a message on stderr otherwise. Only pgring's public headers are
// used.
//
// Usage: embed_osd <partition-file> <data-file> <rocksdb-dir>
//        (none may exist yet)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/device.h"
#include "pgring/flush_domain.h"
#include "pgring/log_sink.h"
#include "pgring/options.h"
#include "pgring/store.h"
#include "pgring/version.h"
#include "pgring/transaction.h"
#include "pgring/types.h"
#include "pgring/verify.h"
#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace {

constexpr uint64_t kPartitionBytes = 64ull << 20;
constexpr uint64_t kDataBytes = 16ull << 20;
constexpr uint64_t kObjectBytes = 4096;  // one block of the data partition each
constexpr int kClientWrites = 30;
constexpr uint32_t kEpoch = 7;

#define RETURN_IF_ERROR(expr)              \
  do {                                     \
    absl::Status _st = (expr);             \
    if (!_st.ok()) return _st;             \
  } while (0)

absl::Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  return absl::InternalError(what + ": RocksDB: " + s.ToString());
}

absl::Status Errno(const std::string& what) {
  return absl::InternalError(what + ": " + std::strerror(errno));
}

// A partition file, as an OSD would be given a raw partition: every block
// written (zeros), so that writing it later changes no file-system metadata
// (what pgring/flush_domain.h checks before a flush may be shared).
absl::Status CreatePartitionFile(const std::string& path, uint64_t bytes) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create partition file " + path);
  const std::string zeros(1 << 20, '\0');
  absl::Status st;
  for (uint64_t done = 0; done < bytes && st.ok(); done += zeros.size()) {
    if (::write(fd, zeros.data(), zeros.size()) != static_cast<ssize_t>(zeros.size())) {
      st = Errno("write " + path);
    }
  }
  if (st.ok() && ::fsync(fd) != 0) st = Errno("fsync " + path);
  ::close(fd);
  return st;
}

// Which flushes the OSD may share, proven for these paths (or not, and why).
struct FlushPlan {
  pgring::FlushDomainCheck data_and_log;  // Options::gated_writes_share_flush
  pgring::FlushDomainCheck wal_and_log;   // Options::metadata_sync_flushes_partition
};

FlushPlan PlanFlushes(const std::string& partition, const std::string& data,
                      const std::string& db_path) {
  FlushPlan plan{pgring::CheckSharedFlush(data, partition),
                 pgring::CheckSyncCoversPartition(db_path, partition)};
  std::printf("embed_osd: one flush for data and log: %s (%s)\n",
              plan.data_and_log.shared ? "yes" : "no", plan.data_and_log.why.c_str());
  std::printf("embed_osd: RocksDB's sync flushes the log partition: %s (%s)\n",
              plan.wal_and_log.shared ? "yes" : "no", plan.wal_and_log.why.c_str());
  return plan;
}

// The OSD's own RocksDB: "default", "onodes" and "pgring".
class OsdDb {
 public:
  static absl::StatusOr<std::unique_ptr<OsdDb>> Open(const std::string& path,
                                                     bool create) {
    rocksdb::DBOptions db_options;
    db_options.create_if_missing = create;
    db_options.error_if_exists = create;
    db_options.create_missing_column_families = create;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {"onodes", rocksdb::ColumnFamilyOptions()},
        {"pgring", rocksdb::ColumnFamilyOptions()},
    };
    auto osd = std::unique_ptr<OsdDb>(new OsdDb());
    rocksdb::DB* db = nullptr;
    RETURN_IF_ERROR(FromRocks(
        rocksdb::DB::Open(db_options, path, cfs, &osd->handles_, &db),
        "open OSD RocksDB " + path));
    osd->db_.reset(db);
    return osd;
  }

  ~OsdDb() { (void)Close(); }

  absl::Status Close() {
    if (!db_) return absl::OkStatus();
    for (rocksdb::ColumnFamilyHandle* h : handles_) {
      (void)db_->DestroyColumnFamilyHandle(h);
    }
    handles_.clear();
    absl::Status st = FromRocks(db_->Close(), "close OSD RocksDB");
    db_.reset();
    return st;
  }

  rocksdb::DB* db() const { return db_.get(); }
  rocksdb::ColumnFamilyHandle* default_cf() const { return handles_[0]; }
  rocksdb::ColumnFamilyHandle* onodes() const { return handles_[1]; }
  rocksdb::ColumnFamilyHandle* pgring_cf() const { return handles_[2]; }

  // Every key/value of a column family, in key order.
  absl::StatusOr<std::map<std::string, std::string>> Dump(
      rocksdb::ColumnFamilyHandle* cf) const {
    std::map<std::string, std::string> out;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), cf));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out.emplace(it->key().ToString(), it->value().ToString());
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "iterate " + cf->GetName()));
    return out;
  }

 private:
  OsdDb() = default;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// What the OSD believes it has committed.
struct Model {
  std::vector<pgring::PgId> pgs;
  std::map<pgring::PgId, std::vector<pgring::LogEntry>> entries;
  std::map<pgring::PgId, std::string> info;
  std::map<std::string, std::string> onodes;
  std::map<int, std::string> data;  // object -> its block on the data partition
};

// The OSD's data partition and how its writes become durable.
struct DataPartition {
  std::shared_ptr<pgring::Device> device;
  // The store's partition flush covers the data (gated_writes_share_flush):
  // a write's gate opens when it completes. Otherwise the write is flushed
  // on its own first.
  bool shared_flush = false;

  // Writes `bytes` at `offset` and opens `gate` once the write is durable
  // (or covered by the store's flush).
  void Write(uint64_t offset, const std::string& bytes,
             std::shared_ptr<pgring::CommitGate> gate) const {
    pgring::Device* dev = device.get();  // the callback must not own it
    const bool shared = shared_flush;
    dev->WriteAsync(offset, bytes, [dev, shared, gate](absl::Status s) {
      if (s.ok() && !shared) s = dev->Flush();
      gate->Open(s);
    });
  }
};

pgring::MetadataLocation Meta(const OsdDb& osd) {
  return pgring::MetadataLocation::SharedDb(osd.db(), osd.pgring_cf());
}

absl::StatusOr<std::unique_ptr<pgring::Store>> OpenStore(
    const std::string& partition, const OsdDb& osd, const FlushPlan& plan) {
  pgring::Options options;  // group commit: a commit is durable when it returns
  options.log_sink = pgring::StderrLogSink(pgring::LogLevel::kWarning);
  // Promised only where pgring/flush_domain.h proved it: otherwise a crash
  // could keep a commit whose data or records are gone.
  options.gated_writes_share_flush = plan.data_and_log.shared;
  options.metadata_sync_flushes_partition = plan.wal_and_log.shared;
  return pgring::Store::Open(partition, Meta(osd), options);
}

// The fsck at mount: the store must be closed (Verify refuses a partition a
// Store holds). Deep reads every committed record; an OSD that mounts often
// may run it shallow (keys only) and deep now and then.
absl::Status FsckAtMount(const std::string& partition, const OsdDb& osd, bool deep) {
  pgring::VerifyOptions vo;
  vo.deep = deep;
  absl::StatusOr<pgring::VerifyReport> r = pgring::Verify(partition, Meta(osd), vo);
  if (!r.ok()) return r.status();  // cannot be read at all: no store to mount
  for (const pgring::VerifyProblem& p : r->problems) {
    std::fprintf(stderr, "embed_osd: fsck: %s\n", p.ToString().c_str());
  }
  std::printf("embed_osd: fsck%s at mount: %llu PGs, %llu records, %llu live entries: %s\n",
              deep ? " (deep)" : "", static_cast<unsigned long long>(r->pgs),
              static_cast<unsigned long long>(r->records),
              static_cast<unsigned long long>(r->entries),
              r->clean() ? "clean" : "ERRORS");
  if (!r->clean()) {
    return absl::DataLossError("fsck at mount found " + std::to_string(r->errors) +
                               " error(s) in the PG log store; not mounting");
  }
  return absl::OkStatus();
}

absl::StatusOr<DataPartition> OpenData(const std::string& path, const FlushPlan& plan) {
  absl::StatusOr<std::shared_ptr<pgring::Device>> dev =
      pgring::Device::Open(path, pgring::DeviceOptions());
  RETURN_IF_ERROR(dev.status());
  return DataPartition{*dev, plan.data_and_log.shared};
}

std::string ObjectData(int obj) {
  std::string bytes(kObjectBytes, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>('a' + (obj + i) % 26);
  }
  return bytes;
}

// One client write to object `obj` in `pg`: log entry + PG info + onode, all
// in one transaction that also waits for the object's data write.
pgring::Transaction ClientWrite(const OsdDb& osd, const DataPartition& data,
                                Model& model, const pgring::PgId& pg, int obj) {
  const pgring::Version v{kEpoch, static_cast<uint64_t>(obj)};
  const std::string entry = "modify " + pg.ToString() + "/obj_" +
                            std::to_string(obj) + " at " + v.ToString();
  const std::string info = "pg_info " + pg.ToString() + " last_update " +
                           v.ToString();
  const std::string onode_key = "onode/" + pg.ToString() + "/obj_" +
                                std::to_string(obj);
  const std::string onode_value = "size=4096 version=" + v.ToString();

  pgring::Transaction txn;
  txn.AppendEntry(pg, v, entry);
  txn.SetInfo(pg, info);
  txn.batch()->Put(osd.onodes(), onode_key, onode_value);
  // The data goes to the data partition beside the log records; the commit
  // waits for it.
  auto gate = std::make_shared<pgring::CommitGate>();
  txn.WaitFor(gate);
  data.Write(static_cast<uint64_t>(obj) * kObjectBytes, ObjectData(obj), gate);

  model.entries[pg].push_back(pgring::LogEntry{v, entry});
  model.info[pg] = info;
  model.onodes[onode_key] = onode_value;
  model.data[obj] = ObjectData(obj);
  return txn;
}

absl::Status Populate(pgring::Store& store, const OsdDb& osd,
                      const DataPartition& data, Model& model) {
  model.pgs = {pgring::PgId{1, 0x0, -1}, pgring::PgId{1, 0x2a, -1},
               pgring::PgId{3, 0x7, 2}};

  // Create the PGs, together with an OSD key of its own ("superblock").
  {
    pgring::Transaction txn;
    for (const pgring::PgId& pg : model.pgs) txn.CreatePg(pg);
    txn.batch()->Put(osd.onodes(), "osd_superblock", "epoch=7");
    model.onodes["osd_superblock"] = "epoch=7";
    RETURN_IF_ERROR(store.Commit(std::move(txn)));
  }

  // Client writes: half of them one at a time (Commit waits for durability),
  // half submitted back to back (Submit + callback), as an OSD's op threads
  // do. The callbacks run on a pgring thread; their state is shared so it
  // outlives this function whatever happens.
  struct Callbacks {
    std::mutex mu;
    int fired = 0;
    absl::Status first_error;
  };
  auto callbacks = std::make_shared<Callbacks>();
  int submitted = 0;
  for (int obj = 1; obj <= kClientWrites; ++obj) {
    const pgring::PgId& pg = model.pgs[obj % model.pgs.size()];
    pgring::Transaction txn = ClientWrite(osd, data, model, pg, obj);
    if (obj % 2 == 0) {
      RETURN_IF_ERROR(store.Commit(std::move(txn)));
      continue;
    }
    RETURN_IF_ERROR(
        store.Submit(std::move(txn), [callbacks](absl::Status s) {
          std::lock_guard<std::mutex> lock(callbacks->mu);
          if (!s.ok() && callbacks->first_error.ok()) callbacks->first_error = s;
          ++callbacks->fired;
        }));
    ++submitted;
  }
  // Sync() waits for every submitted transaction, callbacks included.
  RETURN_IF_ERROR(store.Sync());
  {
    std::lock_guard<std::mutex> lock(callbacks->mu);
    RETURN_IF_ERROR(callbacks->first_error);
    if (callbacks->fired != submitted) {
      return absl::InternalError(
          "when Sync() returned, " + std::to_string(callbacks->fired) +
          " of " + std::to_string(submitted) + " commit callbacks had fired");
    }
  }

  // The log of the first PG passed its limit: trim its two oldest entries.
  const pgring::PgId& pg = model.pgs[0];
  std::vector<pgring::LogEntry>& log = model.entries[pg];
  const pgring::Version trim_to = log[1].version;
  pgring::Transaction txn;
  txn.Trim(pg, trim_to);
  RETURN_IF_ERROR(store.Commit(std::move(txn)));
  log.erase(log.begin(), log.begin() + 2);
  return absl::OkStatus();
}

std::string Describe(const std::vector<pgring::LogEntry>& log) {
  std::string s = std::to_string(log.size()) + " entries";
  if (!log.empty()) {
    s += " [" + log.front().version.ToString() + " .. " +
         log.back().version.ToString() + "]";
  }
  return s;
}

absl::Status Verify(const pgring::Store& store, const OsdDb& osd,
                    const DataPartition& data, const Model& model,
                    const std::string& when) {
  auto fail = [&](const std::string& what) {
    return absl::DataLossError(when + ": " + what);
  };

  // PG logs and infos.
  absl::StatusOr<std::vector<pgring::PgId>> pgs = store.ListPgs();
  if (!pgs.ok()) return fail("ListPgs: " + pgs.status().ToString());
  std::vector<pgring::PgId> got_pgs = *pgs, want_pgs = model.pgs;
  std::sort(got_pgs.begin(), got_pgs.end());
  std::sort(want_pgs.begin(), want_pgs.end());
  if (got_pgs != want_pgs) {
    return fail("ListPgs returned " + std::to_string(got_pgs.size()) +
                " PGs, expected " + std::to_string(want_pgs.size()));
  }
  for (const pgring::PgId& pg : model.pgs) {
    const std::vector<pgring::LogEntry>& want = model.entries.at(pg);
    absl::StatusOr<std::vector<pgring::LogEntry>> got = store.ReadEntries(pg);
    if (!got.ok()) {
      return fail("ReadEntries(" + pg.ToString() + "): " +
                  got.status().ToString());
    }
    if (*got != want) {
      std::string detail;
      for (size_t i = 0; i < std::min(got->size(), want.size()); ++i) {
        if ((*got)[i] != want[i]) {
          detail = "; first difference at index " + std::to_string(i) +
                   ": got " + (*got)[i].version.ToString() + " '" +
                   (*got)[i].payload + "', want " + want[i].version.ToString() +
                   " '" + want[i].payload + "'";
          break;
        }
      }
      return fail("log of PG " + pg.ToString() + ": got " + Describe(*got) +
                  ", want " + Describe(want) + detail);
    }
    absl::StatusOr<std::string> info = store.ReadInfo(pg);
    if (!info.ok()) {
      return fail("ReadInfo(" + pg.ToString() + "): " + info.status().ToString());
    }
    if (*info != model.info.at(pg)) {
      return fail("info of PG " + pg.ToString() + ": got '" + *info +
                  "', want '" + model.info.at(pg) + "'");
    }
    absl::StatusOr<pgring::PgStats> stats = store.GetPgStats(pg);
    if (!stats.ok()) {
      return fail("GetPgStats(" + pg.ToString() + "): " +
                  stats.status().ToString());
    }
    if (stats->entries != want.size()) {
      return fail("GetPgStats(" + pg.ToString() + ").entries = " +
                  std::to_string(stats->entries) + ", want " +
                  std::to_string(want.size()));
    }
  }

  // The OSD's own keys: exactly the onodes it wrote, nothing more.
  absl::StatusOr<std::map<std::string, std::string>> onodes =
      osd.Dump(osd.onodes());
  if (!onodes.ok()) return fail(std::string(onodes.status().message()));
  for (const auto& [key, value] : model.onodes) {
    auto it = onodes->find(key);
    if (it == onodes->end()) return fail("onode '" + key + "' is missing");
    if (it->second != value) {
      return fail("onode '" + key + "' = '" + it->second + "', want '" +
                  value + "'");
    }
  }
  if (onodes->size() != model.onodes.size()) {
    return fail("the onodes column family has " +
                std::to_string(onodes->size()) + " keys, the OSD wrote " +
                std::to_string(model.onodes.size()));
  }

  // Every object's data, on the data partition.
  for (const auto& [obj, bytes] : model.data) {
    std::string got(bytes.size(), '\0');
    absl::Status st = data.device->Read(static_cast<uint64_t>(obj) * kObjectBytes,
                                        absl::Span<char>(got.data(), got.size()));
    if (!st.ok()) return fail("reading object " + std::to_string(obj) + ": " + st.ToString());
    if (got != bytes) return fail("the data of object " + std::to_string(obj) + " differs");
  }

  // pgring keeps its metadata in the column family it was given, and only
  // there.
  absl::StatusOr<std::map<std::string, std::string>> pgring_keys =
      osd.Dump(osd.pgring_cf());
  if (!pgring_keys.ok()) return fail(std::string(pgring_keys.status().message()));
  if (pgring_keys->empty()) return fail("the pgring column family is empty");
  absl::StatusOr<std::map<std::string, std::string>> default_keys =
      osd.Dump(osd.default_cf());
  if (!default_keys.ok()) {
    return fail(std::string(default_keys.status().message()));
  }
  if (!default_keys->empty()) {
    return fail("pgring wrote " + std::to_string(default_keys->size()) +
                " key(s) outside its column family (first: '" +
                default_keys->begin()->first + "' in the default CF)");
  }
  return absl::OkStatus();
}

absl::Status Run(const std::string& partition, const std::string& data_path,
                 const std::string& db_path, Model& model) {
  // The library linked in must be the one whose headers this was built with.
  if (std::string_view(pgring::LibraryVersion()) != PGRING_VERSION_STRING) {
    return absl::FailedPreconditionError(
        std::string("built against pgring " PGRING_VERSION_STRING ", linked with ") +
        pgring::LibraryVersion());
  }
  RETURN_IF_ERROR(CreatePartitionFile(partition, kPartitionBytes));
  RETURN_IF_ERROR(CreatePartitionFile(data_path, kDataBytes));
  // Once the files are laid out; RocksDB's directory is judged by its
  // parent until mkfs makes it.
  const FlushPlan plan = PlanFlushes(partition, data_path, db_path);

  // First life: make the OSD's DB, mkfs pgring into its "pgring" CF, write.
  {
    absl::StatusOr<std::unique_ptr<OsdDb>> osd = OsdDb::Open(db_path, true);
    RETURN_IF_ERROR(osd.status());
    RETURN_IF_ERROR(pgring::Mkfs(partition, Meta(**osd), pgring::MkfsOptions()));
    absl::StatusOr<DataPartition> data = OpenData(data_path, plan);
    RETURN_IF_ERROR(data.status());
    absl::StatusOr<std::unique_ptr<pgring::Store>> store =
        OpenStore(partition, **osd, plan);
    RETURN_IF_ERROR(store.status());
    RETURN_IF_ERROR(Populate(**store, **osd, *data, model));
    RETURN_IF_ERROR(Verify(**store, **osd, *data, model, "before close"));
    RETURN_IF_ERROR((*store)->Close());
    store->reset();  // the store goes before the DB it lives in
    RETURN_IF_ERROR((*osd)->Close());
  }

  // Second life: reopen both, fsck at mount, and find everything again.
  {
    absl::StatusOr<std::unique_ptr<OsdDb>> osd = OsdDb::Open(db_path, false);
    RETURN_IF_ERROR(osd.status());
    RETURN_IF_ERROR(FsckAtMount(partition, **osd, /*deep=*/true));
    absl::StatusOr<DataPartition> data = OpenData(data_path, plan);
    RETURN_IF_ERROR(data.status());
    absl::StatusOr<std::unique_ptr<pgring::Store>> store =
        OpenStore(partition, **osd, plan);
    RETURN_IF_ERROR(store.status());
    RETURN_IF_ERROR(Verify(**store, **osd, *data, model, "after reopen"));
    RETURN_IF_ERROR((*store)->Close());
    store->reset();
    RETURN_IF_ERROR((*osd)->Close());
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: %s <partition-file> <data-file> <rocksdb-dir>\n"
                 "  All are created and must not exist yet.\n",
                 argv[0]);
    return 2;
  }
  Model model;
  absl::Status st = Run(argv[1], argv[2], argv[3], model);
  if (!st.ok()) {
    std::fprintf(stderr, "embed_osd: FAILED: %s\n", st.ToString().c_str());
    return 1;
  }
  size_t entries = 0;
  for (const auto& [pg, log] : model.entries) entries += log.size();
  std::printf(
      "embed_osd: OK: %zu PGs, %zu log entries, %zu onodes and %zu objects' "
      "data intact after reopen\n",
      model.pgs.size(), entries, model.onodes.size(), model.data.size());
  return 0;
}
