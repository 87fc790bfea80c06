// open_fuzzer.cc — a whole store (a partition file and its RocksDB) whose
// RocksDB values are rewritten at the structure level, always with valid
// encodings and CRCs, then checked by fsck --deep, opened with Store::Open,
// repaired, or given a mutated export to import.
//
// The ring fuzzer keeps the chunk list valid and nudges one PG's pointer;
// this one starts from a real store of several PGs (per-PG rings, the log
// stream, or the RocksDB backend), built once per process through the
// public API while a model records every entry, dup and info ever written
// to each PG. Each input picks one of those stores, copies it, and then
// either
//  - rewrites its metadata: chunk lists with a chunk duplicated, two
//    swapped, one out of range, one another PG's (or the stream's) or a
//    free one, one dropped or added, the base moved; pointers with the head
//    or tail shifted, tail_seq moved, stamps swapped between PGs or never
//    issued, trim points moved (past the last entry too), the unhomed count
//    and stream position moved; a key deleted, a PG's keys copied under a
//    new PG id; the stream's pointer and chunk list; pgring.meta's next
//    stamp lowered; on the RocksDB backend, the _state values (trim points,
//    last versions), keys deleted, entry keys added or malformed;
//  - or imports an export of one of its PGs whose structure was altered
//    (entries duplicated, swapped, their versions or the trim points moved,
//    the info dropped or changed, a record larger than a chunk), under a new
//    PG id or an existing one.
//
// Checked, for every input (no crash, no hang, no leak):
//  - fsck --deep and Store::Open (RecoveryPolicy::kRefuse) agree: fsck
//    finds no error exactly when the store opens (chunk-beyond-tail aside,
//    see kOpenAccepts), and a refusal is kDataLoss;
//  - once open, every PG, entry, dup and info read is one that was written
//    to that PG at that version (or injected by the input at that key, on
//    the RocksDB backend): never another PG's, never a stale one under a
//    wrong version; versions strictly increase; with the metadata as
//    written, exactly the model's store;
//  - repair: when it says the store is clean, fsck --deep is clean and the
//    store opens and reads as above; whatever it says, fsck and open agree
//    afterwards;
//  - import: a file DecodeExport refuses, or a PG that exists, is refused
//    and the store is unchanged; a file it accepts is imported and reads
//    back exactly as the file holds it (entries, dups, info), fsck stays
//    clean and the store opens; a refused import leaves no trace.
//
// Not in scope, by design of the format: a PG's whole identity moved (its
// pointer and chunk list together under another PG's key), and a RocksDB
// backend value replaced (the value is the opaque payload): nothing on disk
// can tell those from the truth.
#include <fuzzer/FuzzedDataProvider.h>
#include <rocksdb/write_batch.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "format/metadata_keys.h"
#include "format/rocksdb_backend_keys.h"
#include "fuzz_common.h"
#include "pgring/store.h"
#include "pgring/tool.h"
#include "pgring/verify.h"
#include "store/metadata_db.h"
#include "tool/export_file.h"

namespace pgring::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kChunkSize = 64 << 10;
constexpr uint64_t kPartitionSize = 2ull << 20;  // 31 chunks after the label

// fsck errors the store opens with: chunks a list holds past its tail's
// chunk cost space, not data (repair gives them back), and Store::Open
// takes them as the ring's room to grow.
bool OpenAccepts(const VerifyProblem& p) { return p.kind == "chunk-beyond-tail"; }

const PgId kPgA{1, 0x0, -1};   // entries, dups, info; trimmed
const PgId kPgB{1, 0x1, -1};   // several chunks, the ring turned
const PgId kPgC{2, 0x1f, -1};  // created, empty
const PgId kPgD{1, 0x2, -1};   // rewound, appended again
const PgId kNewPg{3, 0x0, -1}; // import target, copied keys

enum class Kind { kPerPgRings = 0, kStream = 1, kRocksDb = 2 };
constexpr int kKinds = 3;

// What was ever written to one PG, and what it holds now.
struct PgModel {
  std::vector<LogEntry> entries, dups;
  std::optional<std::string> info;
  std::map<Version, std::set<std::string>> entry_history, dup_history;
  std::set<std::string> info_history;
  Version entries_trimmed_to, dups_trimmed_to;
};
using StoreModel = std::map<PgId, PgModel>;

std::string Payload(const PgId& pg, const Version& v, const char* kind, size_t size) {
  std::string p = absl::StrFormat("%s %s %s|", pg.ToString(), kind, v.ToString());
  p.resize(std::max(size, p.size()), static_cast<char>('a' + (v.version + v.epoch) % 26));
  return p;
}

// A transaction and the model's view of it, side by side.
class Writer {
 public:
  Writer(Store* store, StoreModel* model) : store_(store), model_(model) {}
  void Create(const PgId& pg) {
    txn_.CreatePg(pg);
    (*model_)[pg];
  }
  void Entry(const PgId& pg, Version v, size_t size) {
    const std::string p = Payload(pg, v, "entry", size);
    txn_.AppendEntry(pg, v, p);
    PgModel& m = (*model_)[pg];
    m.entries.push_back({v, p});
    m.entry_history[v].insert(p);
  }
  void Dup(const PgId& pg, Version v) {
    const std::string p = Payload(pg, v, "dup", 30);
    txn_.AppendDup(pg, v, p);
    PgModel& m = (*model_)[pg];
    m.dups.push_back({v, p});
    m.dup_history[v].insert(p);
  }
  void Info(const PgId& pg, const std::string& info) {
    txn_.SetInfo(pg, info);
    (*model_)[pg].info = info;
    (*model_)[pg].info_history.insert(info);
  }
  void Trim(const PgId& pg, Version to) {
    txn_.Trim(pg, to);
    PgModel& m = (*model_)[pg];
    std::erase_if(m.entries, [&](const LogEntry& e) { return e.version <= to; });
    m.entries_trimmed_to = std::max(m.entries_trimmed_to, to);
  }
  void TrimDups(const PgId& pg, Version to) {
    txn_.TrimDups(pg, to);
    PgModel& m = (*model_)[pg];
    std::erase_if(m.dups, [&](const LogEntry& e) { return e.version <= to; });
    m.dups_trimmed_to = std::max(m.dups_trimmed_to, to);
  }
  void Rewind(const PgId& pg, Version to) {
    txn_.Rewind(pg, to);
    std::erase_if((*model_)[pg].entries, [&](const LogEntry& e) { return e.version > to; });
  }
  void Commit() {
    const absl::Status s = store_->Commit(std::move(txn_));
    FUZZ_CHECK(s.ok(), absl::StrCat("building the base store: ", s.ToString()));
    txn_ = Transaction();
  }

 private:
  Store* store_;
  StoreModel* model_;
  Transaction txn_;
};

Options OpenOptions(Kind kind, RecoveryPolicy policy) {
  Options o;
  o.log_sink = NullLogSink();
  o.io_engine = IoEngine::kPsync;
  o.io_queue_depth = 4;
  o.recovery_policy = policy;
  if (kind == Kind::kStream) {
    o.log_layout = LogLayout::kStream;
    o.stream.max_chunks = 2;
    o.stream.home_bytes = 4096;  // one block of the partition file
    o.stream.bypass_when_idle = false;
  } else {
    o.log_layout = LogLayout::kPerPgRings;
  }
  return o;
}

// The paths of one store: a partition file and a RocksDB directory.
struct StorePaths {
  std::string dir, dev, db;
  explicit StorePaths(std::string d) : dir(std::move(d)), dev(dir + "/partition"), db(dir + "/db") {}
};

// The directory this process works in (tmpfs when there is one: every
// input copies a store and opens its RocksDB several times), removed at
// exit.
const std::string& ProcessDir() {
  static const std::string* dir = [] {
    std::string base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
    std::string tmpl = base + "/pgring-open-fuzz-XXXXXX";
    FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    auto* d = new std::string(tmpl);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(ProcessDir(), ec);
    });
    return d;
  }();
  return *dir;
}

// Builds the base store of `kind` (once per process) and returns its model.
const StoreModel& BaseStore(Kind kind) {
  static std::optional<StoreModel> models[kKinds];
  std::optional<StoreModel>& model = models[static_cast<int>(kind)];
  if (model) return *model;
  model.emplace();
  const StorePaths p(absl::StrCat(ProcessDir(), "/base", static_cast<int>(kind)));
  fs::create_directories(p.dir);
  {
    std::string zeros(kPartitionSize, '\0');
    FILE* f = std::fopen(p.dev.c_str(), "wb");
    FUZZ_CHECK(f != nullptr && std::fwrite(zeros.data(), 1, zeros.size(), f) == zeros.size() &&
                   std::fclose(f) == 0,
               "cannot write the partition file");
  }
  MkfsOptions m;
  m.chunk_size = kChunkSize;
  m.backend = kind == Kind::kRocksDb ? Backend::kRocksDb : Backend::kRing;
  absl::Status s = Mkfs(p.dev, MetadataLocation::OwnDb(p.db), m);
  FUZZ_CHECK(s.ok(), s.ToString());
  auto store = Store::Open(p.dev, MetadataLocation::OwnDb(p.db),
                           OpenOptions(kind, RecoveryPolicy::kRefuse));
  FUZZ_CHECK(store.ok(), store.status().ToString());
  Writer w(store->get(), &*model);
  for (const PgId& pg : {kPgA, kPgB, kPgC, kPgD}) w.Create(pg);
  w.Commit();
  // D: rewound, then appended at a new epoch.
  for (uint64_t v = 1; v <= 10; ++v) w.Entry(kPgD, {1, v}, 20 + 13 * v);
  w.Dup(kPgD, {1, 5});
  w.Dup(kPgD, {1, 6});
  w.Commit();
  w.Rewind(kPgD, {1, 7});
  w.Entry(kPgD, {2, 8}, 50);
  w.Entry(kPgD, {2, 9}, 70);
  w.TrimDups(kPgD, {1, 5});
  w.Info(kPgD, "info-D");
  w.Commit();
  // B: about three chunks' worth, trimmed to the newest 150 entries, so its
  // head is past its first chunk and the ring has turned.
  for (uint64_t batch = 0; batch < 12; ++batch) {
    for (uint64_t v = batch * 50 + 1; v <= batch * 50 + 50; ++v) w.Entry(kPgB, {2, v}, 300);
    if (batch * 50 + 50 > 150) w.Trim(kPgB, {2, batch * 50 + 50 - 150});
    if (batch % 4 == 0) w.Info(kPgB, absl::StrCat("info-B-", batch));
    w.Commit();
  }
  // A last (in the stream layout, its newest bytes stay in the stream).
  for (uint64_t v = 1; v <= 20; ++v) w.Entry(kPgA, {1, v}, 40 + 7 * v);
  w.Info(kPgA, "info-A-1");
  w.Commit();
  for (uint64_t v = 21; v <= 40; ++v) w.Entry(kPgA, {1, v}, 40 + 7 * v);
  for (uint64_t v = 1; v <= 3; ++v) w.Dup(kPgA, {1, v});
  w.Trim(kPgA, {1, 8});
  w.TrimDups(kPgA, {1, 1});
  w.Info(kPgA, "info-A-2");
  w.Commit();
  s = (*store)->Close();
  FUZZ_CHECK(s.ok(), s.ToString());
  return *model;
}

// A fresh copy of the base store of `kind`.
StorePaths CopyOfBase(Kind kind) {
  BaseStore(kind);
  const StorePaths base(absl::StrCat(ProcessDir(), "/base", static_cast<int>(kind)));
  const StorePaths work(absl::StrCat(ProcessDir(), "/work"));
  std::error_code ec;
  fs::remove_all(work.dir, ec);
  fs::create_directories(work.dir);
  fs::copy(base.dir, work.dir, fs::copy_options::recursive, ec);
  FUZZ_CHECK(!ec, absl::StrCat("copying the base store: ", ec.message()));
  return work;
}

// --- the RocksDB's values -----------------------------------------------------

// Every "pgring." key and value.
std::map<std::string, std::string> ReadKeys(const StorePaths& p) {
  auto db = MetadataDb::Open(MetadataLocation::OwnDb(p.db), false, /*read_only=*/true);
  FUZZ_CHECK(db.ok(), db.status().ToString());
  std::map<std::string, std::string> kv;
  const absl::Status s = (*db)->Scan(kKeyPrefix, [&](std::string_view k, std::string_view v) {
    kv.emplace(k, v);
    return absl::OkStatus();
  });
  FUZZ_CHECK(s.ok(), s.ToString());
  return kv;
}

// Makes the RocksDB hold `after` where it held `before`; true if anything
// changed.
bool WriteKeys(const StorePaths& p, const std::map<std::string, std::string>& before,
               const std::map<std::string, std::string>& after) {
  auto db = MetadataDb::Open(MetadataLocation::OwnDb(p.db), false, /*read_only=*/false);
  FUZZ_CHECK(db.ok(), db.status().ToString());
  rocksdb::WriteBatch batch;
  for (const auto& [k, v] : before) {
    if (!after.count(k)) batch.Delete((*db)->cf(), k);
  }
  for (const auto& [k, v] : after) {
    auto it = before.find(k);
    if (it == before.end() || it->second != v) batch.Put((*db)->cf(), k, v);
  }
  if (batch.Count() == 0) return false;
  const absl::Status s = (*db)->WriteSync(&batch);
  FUZZ_CHECK(s.ok(), s.ToString());
  return true;
}

template <typename T>
T Decoded(const absl::StatusOr<T>& v, const std::string& key) {
  FUZZ_CHECK(v.ok(), absl::StrCat("the base store's ", key, " does not decode: ",
                                  v.status().ToString()));
  return *v;
}

// A small or a structural distance: a byte, a block, a chunk, or anything
// up to two chunks; either way.
int64_t Delta(FuzzedDataProvider& fdp) {
  int64_t d = 0;
  switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: d = fdp.ConsumeIntegralInRange<int>(1, 3); break;
    case 1: d = 4096 * fdp.ConsumeIntegralInRange<int>(1, 3); break;
    case 2: d = kChunkSize; break;
    case 3: d = fdp.ConsumeIntegralInRange<int64_t>(1, 2 * kChunkSize); break;
  }
  return fdp.ConsumeBool() ? d : -d;
}

uint64_t Shifted(uint64_t x, int64_t d) { return static_cast<uint64_t>(static_cast<int64_t>(x) + d); }

Version ShiftedVersion(FuzzedDataProvider& fdp, Version v) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: v.version += fdp.ConsumeIntegralInRange<uint64_t>(1, 5); break;
    case 1: v.version -= std::min<uint64_t>(v.version, fdp.ConsumeIntegralInRange<uint64_t>(1, 5)); break;
    case 2: v.version += 1000; break;  // past every entry
    case 3: v.epoch += fdp.ConsumeIntegralInRange<uint32_t>(1, 2); break;
    case 4: v = Version::Min(); break;
  }
  return v;
}

// One structural change to a chunk list. `others` are the other lists'
// chunks (other PGs', the stream's).
void MutateChunkList(FuzzedDataProvider& fdp, uint64_t chunk_count, PgChunkList* c,
                     const std::vector<uint32_t>& others) {
  auto& ch = c->chunks;
  auto pick = [&](size_t n) { return fdp.ConsumeIntegralInRange<size_t>(0, n - 1); };
  switch (fdp.ConsumeIntegralInRange<int>(0, 8)) {
    case 0:  // a chunk twice
      if (!ch.empty()) ch.insert(ch.begin() + static_cast<long>(pick(ch.size() + 1)), ch[pick(ch.size())]);
      break;
    case 1:  // two swapped
      if (ch.size() >= 2) std::swap(ch[pick(ch.size())], ch[pick(ch.size())]);
      break;
    case 2:  // out of range
      if (!ch.empty()) {
        ch[pick(ch.size())] = fdp.ConsumeBool()
                                  ? static_cast<uint32_t>(chunk_count + fdp.ConsumeIntegralInRange<int>(0, 3))
                                  : UINT32_MAX;
      }
      break;
    case 3:  // another list's
      if (!ch.empty() && !others.empty()) ch[pick(ch.size())] = others[pick(others.size())];
      break;
    case 4:  // any chunk in range (often a free one)
      if (!ch.empty()) {
        ch[pick(ch.size())] = static_cast<uint32_t>(fdp.ConsumeIntegralInRange<uint64_t>(0, chunk_count - 1));
      }
      break;
    case 5:  // the last one dropped
      if (!ch.empty()) ch.pop_back();
      break;
    case 6:  // one more
      ch.push_back(static_cast<uint32_t>(fdp.ConsumeIntegralInRange<uint64_t>(0, chunk_count)));
      break;
    case 7:  // the first one dropped, the base advanced past it
      if (!ch.empty()) {
        ch.erase(ch.begin());
        c->base += kChunkSize;
      }
      break;
    case 8:  // the base moved
      c->base = fdp.ConsumeBool() ? Shifted(c->base, kChunkSize * fdp.ConsumeIntegralInRange<int>(-2, 2))
                                  : Shifted(c->base, Delta(fdp));
      break;
  }
}

// The ring backend's keys, decoded.
struct RingMeta {
  StoreMeta meta;
  std::map<PgId, std::optional<PgPointer>> ptr;  // nullopt: key deleted
  std::map<PgId, std::optional<PgChunkList>> chunks;
  std::optional<StreamPointer> stream_ptr;
  std::optional<PgChunkList> stream_chunks;

  static RingMeta Decode(const std::map<std::string, std::string>& kv) {
    RingMeta r;
    for (const auto& [k, v] : kv) {
      PgId id;
      if (k == kMetaKey) {
        r.meta = Decoded(StoreMeta::Decode(v), k);
      } else if (k.starts_with(kPgPointerPrefix) &&
                 DecodePgKey(std::string_view(k).substr(kPgPointerPrefix.size()), &id)) {
        r.ptr[id] = Decoded(PgPointer::Decode(v), k);
      } else if (k.starts_with(kPgChunksPrefix) &&
                 DecodePgKey(std::string_view(k).substr(kPgChunksPrefix.size()), &id)) {
        r.chunks[id] = Decoded(PgChunkList::Decode(v), k);
      } else if (k == kStreamPointerKey) {
        r.stream_ptr = Decoded(StreamPointer::Decode(v), k);
      } else if (k == kStreamChunksKey) {
        r.stream_chunks = Decoded(PgChunkList::Decode(v), k);
      } else {
        FUZZ_CHECK(false, absl::StrCat("unexpected key in the base store: ", k));
      }
    }
    return r;
  }
  std::map<std::string, std::string> Encode() const {
    std::map<std::string, std::string> kv;
    kv[std::string(kMetaKey)] = meta.Encode();
    for (const auto& [id, p] : ptr) {
      if (p) kv[PgPointerKey(id)] = p->Encode();
    }
    for (const auto& [id, c] : chunks) {
      if (c) kv[PgChunksKey(id)] = c->Encode();
    }
    if (stream_ptr) kv[std::string(kStreamPointerKey)] = stream_ptr->Encode();
    if (stream_chunks) kv[std::string(kStreamChunksKey)] = stream_chunks->Encode();
    return kv;
  }
  // Every chunk some list other than `pg`'s names (the stream's included).
  std::vector<uint32_t> ChunksNotOf(const std::optional<PgId>& pg) const {
    std::vector<uint32_t> out;
    for (const auto& [id, c] : chunks) {
      if (c && (!pg || !(id == *pg))) out.insert(out.end(), c->chunks.begin(), c->chunks.end());
    }
    if (stream_chunks && pg) {
      out.insert(out.end(), stream_chunks->chunks.begin(), stream_chunks->chunks.end());
    }
    return out;
  }
};

// Applies up to `n` changes to the ring backend's keys. `aliases` gets the
// PG ids made by copying another PG's keys (their reads must be the
// source's).
void MutateRing(FuzzedDataProvider& fdp, int n, RingMeta* r, std::map<PgId, PgId>* aliases) {
  std::vector<PgId> pgs;
  for (const auto& [id, p] : r->ptr) pgs.push_back(id);
  for (int i = 0; i < n && fdp.remaining_bytes() > 0; ++i) {
    const PgId id = pgs[fdp.ConsumeIntegralInRange<size_t>(0, pgs.size() - 1)];
    const PgId other = pgs[fdp.ConsumeIntegralInRange<size_t>(0, pgs.size() - 1)];
    std::optional<PgPointer>& p = r->ptr[id];
    std::optional<PgChunkList>& c = r->chunks[id];
    switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
      case 0: case 1: case 2:
        if (c) MutateChunkList(fdp, r->meta.chunk_count, &*c, r->ChunksNotOf(id));
        break;
      case 3:  // the head shifted
        if (p) p->head = Shifted(p->head, Delta(fdp));
        break;
      case 4:  // the tail shifted
        if (p) p->tail = Shifted(p->tail, Delta(fdp));
        break;
      case 5:  // head and tail together (tail_seq too, now and then)
        if (p) {
          const int64_t d = Delta(fdp);
          p->head = Shifted(p->head, d);
          p->tail = Shifted(p->tail, d);
          if (fdp.ConsumeBool()) p->tail_seq += fdp.ConsumeIntegralInRange<int>(-3, 3);
        }
        break;
      case 6:
        if (p) p->tail_seq += fdp.ConsumeIntegralInRange<int>(-3, 3);
        break;
      case 7:  // stamps
        if (p) {
          switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
            case 0:
              if (r->ptr[other]) std::swap(p->stamp, r->ptr[other]->stamp);
              break;
            case 1: p->stamp = r->meta.next_pg_stamp + fdp.ConsumeIntegralInRange<uint32_t>(0, 2); break;
            case 2: p->stamp = 0; break;
            case 3: p->stamp += fdp.ConsumeIntegralInRange<int>(-1, 1); break;
          }
        }
        break;
      case 8:  // trim points (past the end too)
        if (p) {
          if (fdp.ConsumeBool()) {
            p->entries_trimmed_to = ShiftedVersion(fdp, p->entries_trimmed_to);
          } else {
            p->dups_trimmed_to = ShiftedVersion(fdp, p->dups_trimmed_to);
          }
        }
        break;
      case 9:  // what is in the stream
        if (p) {
          if (fdp.ConsumeBool()) {
            p->unhomed = Shifted(p->unhomed, Delta(fdp));
          } else {
            p->stream_pos = Shifted(p->stream_pos, Delta(fdp));
          }
        }
        break;
      case 10:  // an empty range
        if (p) {
          if (fdp.ConsumeBool()) {
            p->head = p->tail;
          } else {
            p->tail = p->head;
          }
          p->unhomed = std::min(p->unhomed, p->tail - std::min(p->tail, p->head));
        }
        break;
      case 11:  // a key deleted
        if (fdp.ConsumeBool()) {
          p.reset();
        } else {
          c.reset();
        }
        break;
      case 12:  // a PG's keys copied under a new PG id
        if (!r->ptr.count(kNewPg) && p && c) {
          r->ptr[kNewPg] = p;
          r->chunks[kNewPg] = c;
          (*aliases)[kNewPg] = id;
        }
        break;
      case 13:  // the stream's pointer
        if (r->stream_ptr) {
          switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
            case 0: r->stream_ptr->head = Shifted(r->stream_ptr->head, Delta(fdp)); break;
            case 1: r->stream_ptr->tail = Shifted(r->stream_ptr->tail, Delta(fdp)); break;
            case 2: r->stream_ptr->tail_seq += fdp.ConsumeIntegralInRange<int>(-3, 3); break;
          }
        }
        break;
      case 14:  // the stream's chunk list
        if (r->stream_chunks) {
          MutateChunkList(fdp, r->meta.chunk_count, &*r->stream_chunks, r->ChunksNotOf(std::nullopt));
        }
        break;
      case 15:  // stamps issued forgotten
        r->meta.next_pg_stamp = fdp.ConsumeIntegralInRange<uint32_t>(1, r->meta.next_pg_stamp);
        break;
    }
  }
}

// Applies up to `n` changes to the RocksDB backend's keys; `injected`
// records the entries and dups added (key -> payload) that a read may
// return.
void MutateRocksDbBackend(FuzzedDataProvider& fdp, int n, std::map<std::string, std::string>* kv,
                          std::set<std::pair<PgId, std::string>>* injected) {
  std::vector<PgId> pgs;
  for (const auto& [k, v] : *kv) {
    PgId id;
    std::string_view name;
    if (SplitPgLogKey(k, &id, &name) && name == kStateKeyName) pgs.push_back(id);
  }
  for (int i = 0; i < n && fdp.remaining_bytes() > 0 && !pgs.empty(); ++i) {
    const PgId id = pgs[fdp.ConsumeIntegralInRange<size_t>(0, pgs.size() - 1)];
    const std::string prefix = PgLogKeyPrefix(id);
    std::vector<std::string> keys;
    for (auto it = kv->lower_bound(prefix); it != kv->end() && it->first.starts_with(prefix); ++it) {
      keys.push_back(it->first);
    }
    const std::string state_key = prefix + std::string(kStateKeyName);
    switch (fdp.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: {  // _state's versions
        auto it = kv->find(state_key);
        if (it == kv->end()) break;
        PgStateValue st = Decoded(PgStateValue::Decode(it->second), state_key);
        switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
          case 0: st.entries_trimmed_to = ShiftedVersion(fdp, st.entries_trimmed_to); break;
          case 1: st.dups_trimmed_to = ShiftedVersion(fdp, st.dups_trimmed_to); break;
          case 2: st.last_version = ShiftedVersion(fdp, st.last_version); break;
          case 3: st.last_dup_version = ShiftedVersion(fdp, st.last_dup_version); break;
        }
        it->second = st.Encode();
        break;
      }
      case 1:  // a key deleted (_state, _info, an entry, a dup)
        if (!keys.empty()) kv->erase(keys[fdp.ConsumeIntegralInRange<size_t>(0, keys.size() - 1)]);
        break;
      case 2: {  // an entry or dup added, below, among or past the live ones
        Version v{fdp.ConsumeIntegralInRange<uint32_t>(0, 3),
                  fdp.ConsumeIntegralInRange<uint64_t>(0, 700)};
        const bool dup = fdp.ConsumeBool();
        const std::string name = dup ? std::string(kDupKeyNamePrefix) + LogKeyName(v) : LogKeyName(v);
        const std::string payload = absl::StrCat("injected ", name);
        (*kv)[prefix + name] = payload;
        injected->insert({id, payload});
        break;
      }
      case 3: {  // a name that is not one
        static const char* kNames[] = {"0000000001.0000000001", "dup_1", "zz", "dup_", "_inf"};
        (*kv)[prefix + kNames[fdp.ConsumeIntegralInRange<int>(0, 4)]] = "x";
        break;
      }
      case 4:  // _info's value (opaque: any value is an info)
        if (kv->count(prefix + std::string(kInfoKeyName))) {
          (*kv)[prefix + std::string(kInfoKeyName)] = fdp.ConsumeRandomLengthString(40);
          injected->insert({id, "info:" + (*kv)[prefix + std::string(kInfoKeyName)]});
        }
        break;
    }
  }
}

// --- the checks -----------------------------------------------------------------

// What the inputs led to, printed at exit when PGRING_OPEN_FUZZ_TALLY is set
// (docs/RELIABILITY.md, section 5, quotes a long run's).
struct Tally {
  uint64_t inputs = 0, unchanged = 0, opened = 0, refused = 0, marked_opened = 0,
           marked_pgs = 0, repairs_clean = 0, repairs_refused = 0, imports = 0,
           imports_refused = 0, entries_read = 0;
};
Tally& Tallies() {
  static Tally* t = [] {
    auto* t = new Tally;
    if (std::getenv("PGRING_OPEN_FUZZ_TALLY") != nullptr) {
      std::atexit([] {
        const Tally& x = Tallies();
        std::fprintf(stderr,
                     "open_fuzzer tally: %llu inputs (%llu with the values as written); "
                     "Store::Open: %llu opened, %llu refused (kMarkDamaged: %llu opened, %llu "
                     "PGs marked); repair: %llu clean, %llu refused; import: %llu imported, %llu "
                     "refused; %llu entries read and checked\n",
                     (unsigned long long)x.inputs, (unsigned long long)x.unchanged,
                     (unsigned long long)x.opened, (unsigned long long)x.refused,
                     (unsigned long long)x.marked_opened, (unsigned long long)x.marked_pgs,
                     (unsigned long long)x.repairs_clean, (unsigned long long)x.repairs_refused,
                     (unsigned long long)x.imports, (unsigned long long)x.imports_refused,
                     (unsigned long long)x.entries_read);
      });
    }
    return t;
  }();
  return *t;
}

struct FsckOutcome {
  bool ran = false;
  std::vector<VerifyProblem> errors;  // what Store::Open must refuse
  std::string text;
  bool clean() const { return errors.empty(); }
};

FsckOutcome DeepFsck(const StorePaths& p) {
  FsckOutcome out;
  VerifyOptions vo;
  vo.deep = true;
  auto r = Verify(p.dev, MetadataLocation::OwnDb(p.db), vo);
  if (!r.ok()) {
    // Verify's "cannot be read at all" (e.g. pgring.meta deleted): not a
    // store.
    VerifyProblem pr;
    pr.kind = "cannot-open";
    pr.message = r.status().ToString();
    out.errors.push_back(pr);
    out.text = r.status().ToString();
    return out;
  }
  out.ran = true;
  for (const VerifyProblem& pr : r->problems) {
    if (pr.severity != VerifyProblem::Severity::kError) continue;
    absl::StrAppend(&out.text, pr.ToString(), "; ");
    if (!OpenAccepts(pr)) out.errors.push_back(pr);
  }
  return out;
}

// What the store may return: the model's PGs (and the aliases of copied
// keys), each item one written to that PG at that version, or injected.
struct Allowed {
  const StoreModel* model;
  std::map<PgId, PgId> aliases;
  std::set<std::pair<PgId, std::string>> injected;

  const PgModel* Of(const PgId& pg) const {
    auto a = aliases.find(pg);
    auto it = model->find(a == aliases.end() ? pg : a->second);
    return it == model->end() ? nullptr : &it->second;
  }
};

void CheckItems(const PgId& pg, const char* what, const std::vector<LogEntry>& got,
                const std::map<Version, std::set<std::string>>& history, const Allowed& a) {
  for (size_t i = 0; i < got.size(); ++i) {
    const LogEntry& e = got[i];
    FUZZ_CHECK(i == 0 || got[i - 1].version < e.version,
               absl::StrFormat("PG %s: %s versions not increasing: %s then %s", pg.ToString(), what,
                               got[i - 1].version.ToString(), e.version.ToString()));
    auto h = history.find(e.version);
    const bool written = h != history.end() && h->second.count(e.payload);
    FUZZ_CHECK(written || a.injected.count({pg, e.payload}),
               absl::StrFormat("PG %s: %s %s was never written there: payload '%s'", pg.ToString(),
                               what, e.version.ToString(), e.payload.substr(0, 60)));
  }
}

// Reads every PG of an open store. `exact`: the metadata is as written, so
// the store must be exactly the model's. `damaged`: the PGs fsck found
// errors in; with RecoveryPolicy::kMarkDamaged, exactly those are marked
// damaged (and refuse reads with kDataLoss).
void CheckReads(Store* store, const Allowed& a, bool exact,
                const std::set<std::string>* damaged = nullptr) {
  auto pgs = store->ListPgs();
  FUZZ_CHECK(pgs.ok(), pgs.status().ToString());
  if (exact) {
    FUZZ_CHECK(pgs->size() == a.model->size(),
               absl::StrFormat("%u PGs, %u written", pgs->size(), a.model->size()));
  }
  for (const PgId& pg : *pgs) {
    const PgModel* m = a.Of(pg);
    FUZZ_CHECK(m != nullptr, absl::StrCat("PG ", pg.ToString(), " was never created"));
    auto entries = store->ReadEntries(pg);
    auto dups = store->ReadDups(pg);
    auto info = store->ReadInfo(pg);
    if (damaged) {
      auto stats = store->GetPgStats(pg);
      FUZZ_CHECK(stats.ok(), stats.status().ToString());
      const bool fsck_says = damaged->count(pg.ToString()) > 0;
      FUZZ_CHECK(stats->damaged == fsck_says,
                 absl::StrCat("PG ", pg.ToString(), ": fsck --deep finds it ",
                              fsck_says ? "damaged" : "sound", " but Store::Open (kMarkDamaged) ",
                              stats->damaged ? "marks it damaged" : "does not"));
      if (stats->damaged) {
        ++Tallies().marked_pgs;
        FUZZ_CHECK(absl::IsDataLoss(entries.status()) && absl::IsDataLoss(dups.status()),
                   absl::StrCat("PG ", pg.ToString(), " is marked damaged but reads: ",
                                entries.status().ToString()));
        continue;
      }
    }
    FUZZ_CHECK(entries.ok() && dups.ok() && (info.ok() || absl::IsNotFound(info.status())),
               absl::StrCat("PG ", pg.ToString(), " opened but does not read: ",
                            entries.status().ToString(), " / ", dups.status().ToString(), " / ",
                            info.status().ToString()));
    CheckItems(pg, "entry", *entries, m->entry_history, a);
    CheckItems(pg, "dup", *dups, m->dup_history, a);
    Tallies().entries_read += entries->size();
    if (info.ok()) {
      FUZZ_CHECK(m->info_history.count(*info) || a.injected.count({pg, "info:" + *info}),
                 absl::StrCat("PG ", pg.ToString(), ": info '", info->substr(0, 60),
                              "' was never set there"));
    }
    if (exact) {
      FUZZ_CHECK(*entries == m->entries && *dups == m->dups,
                 absl::StrFormat("PG %s: %u entries and %u dups read, %u and %u written",
                                 pg.ToString(), entries->size(), dups->size(), m->entries.size(),
                                 m->dups.size()));
      FUZZ_CHECK(info.ok() == m->info.has_value() && (!info.ok() || *info == *m->info),
                 absl::StrCat("PG ", pg.ToString(), ": the info read is not the one written"));
    }
  }
}

// fsck --deep and Store::Open agree, and an open store reads as allowed.
// Returns whether fsck was clean. With `mark_damaged`, also opens under
// RecoveryPolicy::kMarkDamaged: when that opens, the PGs it marks are the
// ones fsck found errors in.
bool CheckFsckAgreesWithOpen(const StorePaths& p, Kind kind, const Allowed& a, bool exact,
                             const char* when, bool mark_damaged = false) {
  const FsckOutcome f = DeepFsck(p);
  auto store = Store::Open(p.dev, MetadataLocation::OwnDb(p.db),
                           OpenOptions(kind, RecoveryPolicy::kRefuse));
  FUZZ_CHECK(f.clean() == store.ok(),
             absl::StrFormat("%s: fsck --deep is %s but Store::Open %s; fsck: %s",
                             when, f.clean() ? "clean" : "not clean",
                             store.ok() ? "succeeds" : store.status().ToString(), f.text));
  if (exact) FUZZ_CHECK(f.clean(), absl::StrCat(when, ": the store as written fails fsck: ", f.text));
  ++(store.ok() ? Tallies().opened : Tallies().refused);
  if (!store.ok()) {
    // A store pgring-tool cannot open at all is not a store Store::Open
    // refuses for damage: any code then.
    if (f.ran) {
      FUZZ_CHECK(absl::IsDataLoss(store.status()),
                 absl::StrCat(when, ": Store::Open refuses with the wrong code: ",
                              store.status().ToString()));
    }
    if (mark_damaged && f.ran) {
      // Store-wide errors (the log stream's records, say) make the PGs
      // they touch fail, which fsck reports against each of them too.
      std::set<std::string> damaged;
      for (const VerifyProblem& pr : f.errors) {
        if (pr.pg) damaged.insert(pr.pg->ToString());
      }
      auto marked = Store::Open(p.dev, MetadataLocation::OwnDb(p.db),
                                OpenOptions(kind, RecoveryPolicy::kMarkDamaged));
      if (marked.ok()) {
        ++Tallies().marked_opened;
        CheckReads(marked->get(), a, false, &damaged);
        const absl::Status s = (*marked)->Close();
        FUZZ_CHECK(s.ok(), absl::StrCat(when, ": closing: ", s.ToString()));
      } else {
        FUZZ_CHECK(absl::IsDataLoss(marked.status()),
                   absl::StrCat(when, ": Store::Open (kMarkDamaged) refuses with the wrong code: ",
                                marked.status().ToString()));
      }
    }
    return false;
  }
  CheckReads(store->get(), a, exact);
  const absl::Status s = (*store)->Close();
  FUZZ_CHECK(s.ok(), absl::StrCat(when, ": closing: ", s.ToString()));
  return true;
}

int RunToolInProcess(const StorePaths& p, std::vector<std::string> args, std::string* output) {
  std::vector<std::string> argv = {"pgring-tool", "--dev", p.dev, "--db", p.db};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<const char*> c;
  for (const std::string& s : argv) c.push_back(s.c_str());
  std::ostringstream out, err;
  const int rc = RunTool(static_cast<int>(c.size()), c.data(), out, err, false);
  *output = out.str() + err.str();
  return rc;
}

void CheckRepair(const StorePaths& p, Kind kind, const Allowed& a) {
  std::string output;
  const int rc = RunToolInProcess(p, {"repair"}, &output);
  FUZZ_CHECK(rc == 0 || rc == 1 || rc == 2, absl::StrCat("repair exits ", rc, ": ", output));
  const bool clean = CheckFsckAgreesWithOpen(p, kind, a, false, "after repair");
  ++(rc == 0 ? Tallies().repairs_clean : Tallies().repairs_refused);
  if (rc == 0) {
    FUZZ_CHECK(clean, absl::StrCat("repair says the store is clean, but it is not: ", output));
  }
}

// --- import -------------------------------------------------------------------

tool::ExportedPg ExportOf(const PgId& pg, const PgModel& m, Backend backend) {
  tool::ExportedPg e;
  e.pg = pg;
  e.source_backend = backend;
  e.entries_trimmed_to = m.entries_trimmed_to;
  e.dups_trimmed_to = m.dups_trimmed_to;
  e.entries = m.entries;
  e.dups = m.dups;
  e.info = m.info;
  return e;
}

void MutateExport(FuzzedDataProvider& fdp, int n, tool::ExportedPg* e) {
  for (int i = 0; i < n && fdp.remaining_bytes() > 0; ++i) {
    std::vector<LogEntry>& list = fdp.ConsumeBool() ? e->entries : e->dups;
    auto pick = [&] { return fdp.ConsumeIntegralInRange<size_t>(0, list.size() - 1); };
    switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:  // an item twice
        if (!list.empty()) {
          const size_t k = pick();
          list.insert(list.begin() + static_cast<long>(k), list[k]);
        }
        break;
      case 1:  // two swapped
        if (list.size() >= 2) std::swap(list[pick()], list[pick()]);
        break;
      case 2:  // a version moved
        if (!list.empty()) {
          LogEntry& x = list[pick()];
          x.version = ShiftedVersion(fdp, x.version);
        }
        break;
      case 3:  // the entries' trim point moved (into the list, past its end)
        e->entries_trimmed_to = ShiftedVersion(fdp, e->entries_trimmed_to);
        break;
      case 4:
        e->dups_trimmed_to = ShiftedVersion(fdp, e->dups_trimmed_to);
        break;
      case 5:  // the info
        if (fdp.ConsumeBool()) {
          e->info.reset();
        } else {
          e->info = fdp.ConsumeRandomLengthString(100);
        }
        break;
      case 6:  // items dropped from the end or the front
        if (!list.empty()) {
          const size_t k = pick();
          if (fdp.ConsumeBool()) {
            list.resize(k);
          } else {
            list.erase(list.begin(), list.begin() + static_cast<long>(k));
          }
        }
        break;
      case 7:  // a payload larger than a chunk, or empty
        if (!list.empty()) {
          list[pick()].payload = std::string(fdp.ConsumeBool() ? kChunkSize + 100 : 0, 'L');
        }
        break;
    }
  }
}

void CheckImport(FuzzedDataProvider& fdp, const StorePaths& p, Kind kind, const StoreModel& model) {
  static const PgId kSources[] = {kPgA, kPgB, kPgC, kPgD};
  const PgId source = kSources[fdp.ConsumeIntegralInRange<int>(0, 3)];
  tool::ExportedPg e = ExportOf(source, model.at(source),
                                kind == Kind::kRocksDb ? Backend::kRocksDb : Backend::kRing);
  MutateExport(fdp, fdp.ConsumeIntegralInRange<int>(0, 4), &e);
  const PgId target = fdp.ConsumeIntegralInRange<int>(0, 3) == 0 ? source : kNewPg;
  const std::string file = p.dir + "/export";
  {
    const std::string bytes = tool::EncodeExport(e);
    FILE* f = std::fopen(file.c_str(), "wb");
    FUZZ_CHECK(f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                   std::fclose(f) == 0,
               "cannot write the export file");
  }
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const absl::StatusOr<tool::ExportedPg> decoded = tool::DecodeExport(bytes);
  std::string output;
  const int rc = RunToolInProcess(p, {"import", "--file", file, "--pg", target.ToString()}, &output);
  FUZZ_CHECK(rc == 0 || rc == 1, absl::StrCat("import exits ", rc, ": ", output));
  if (!decoded.ok() || target == source) {
    FUZZ_CHECK(rc == 1, absl::StrCat("import of a file the decoder refuses (",
                                     decoded.status().ToString(), ") or into an existing PG "
                                     "succeeds: ", output));
  }
  ++(rc == 0 ? Tallies().imports : Tallies().imports_refused);
  // The store afterwards: the model, plus the imported PG when it was.
  StoreModel after = model;
  if (rc == 0) {
    PgModel& m = after[target];
    m.entries = decoded->entries;
    m.dups = decoded->dups;
    m.info = decoded->info;
    for (const LogEntry& x : m.entries) m.entry_history[x.version].insert(x.payload);
    for (const LogEntry& x : m.dups) m.dup_history[x.version].insert(x.payload);
    if (m.info) m.info_history.insert(*m.info);
  }
  Allowed a{&after, {}, {}};
  CheckFsckAgreesWithOpen(p, kind, a, /*exact=*/true,
                          rc == 0 ? "after an import" : "after a refused import");
}

}  // namespace
}  // namespace pgring::fuzz

extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size) {
  using namespace pgring;
  using namespace pgring::fuzz;
  FuzzedDataProvider fdp(data, size);
  ++Tallies().inputs;
  const Kind kind = static_cast<Kind>(fdp.ConsumeIntegralInRange<int>(0, kKinds - 1));
  const bool import = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  const StoreModel& model = BaseStore(kind);
  const StorePaths p = CopyOfBase(kind);
  if (import) {
    CheckImport(fdp, p, kind, model);
    return 0;
  }
  const std::map<std::string, std::string> before = ReadKeys(p);
  std::map<std::string, std::string> after = before;
  Allowed a{&model, {}, {}};
  const int n = fdp.ConsumeIntegralInRange<int>(0, 4);
  if (kind == Kind::kRocksDb) {
    MutateRocksDbBackend(fdp, n, &after, &a.injected);
  } else {
    RingMeta r = RingMeta::Decode(before);
    MutateRing(fdp, n, &r, &a.aliases);
    after = r.Encode();
  }
  const bool changed = WriteKeys(p, before, after);
  if (!changed) ++Tallies().unchanged;
  const bool repair = fdp.ConsumeBool();
  CheckFsckAgreesWithOpen(p, kind, a, /*exact=*/!changed, "after the rewrite",
                          /*mark_damaged=*/true);
  if (repair) CheckRepair(p, kind, a);
  return 0;
}
