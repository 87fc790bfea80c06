#include "store/ring/ring_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "log/pg_log_state.h"
#include "log/ring_reader.h"
#include "store/group_batch.h"
#include "util/status_macros.h"

namespace pgring {

namespace {
// PGs recovered at once at open: enough reads in flight to keep an SSD busy
// (measured in docs/BENCHMARKS.md, restart), few enough to cost nothing.
constexpr size_t kRecoveryThreads = 8;

}  // namespace

// What one transaction does to one PG, and how to undo it.
struct RingStore::PgChange {
  std::shared_ptr<RingPg> pg;
  RingPgLogUndo undo;
  RecordBodyBuilder body;
  uint64_t record_pos;
  bool created = false;
  bool removed = false;
  bool trims = false;        // trimmed entries or dups, rewound, or reset
  bool info_set = false;
  uint64_t payload = 0;
  std::vector<uint32_t> allocated;  // chunks taken for this PG (back on rollback)

  explicit PgChange(std::shared_ptr<RingPg> p)
      : pg(std::move(p)), undo(pg.get()), record_pos(pg->bounds.tail) {}
  void Restore() { undo.Restore(); }
};

RingStore::RingStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
                     const Label& label, const StoreMeta& meta, const Options& options)
    : PgStore(std::move(device), std::move(db), options),
      label_(label),
      geo_(MakeGeometry(label.block_size, label.chunk_size, label.chunk_count)),
      alloc_(label.chunk_count),
      meta_(meta) {}

RingStore::~RingStore() { Close().IgnoreError(); }

absl::StatusOr<std::unique_ptr<Store>> RingStore::Open(std::shared_ptr<BlockDevice> device,
                                                       std::unique_ptr<MetadataDb> db,
                                                       const Label& label, const StoreMeta& meta,
                                                       const Options& options) {
  uint64_t max_span = static_cast<uint64_t>(options.limits.max_chunks_per_pg) * label.chunk_size;
  if (max_span > (1ull << 32)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "limits.max_chunks_per_pg (%u) x chunk size (%u) exceeds the 4 GiB a ring may span",
        options.limits.max_chunks_per_pg, label.chunk_size));
  }
  std::unique_ptr<RingStore> s(new RingStore(std::move(device), std::move(db), label, meta, options));
  RETURN_IF_ERROR(s->Recover());
  s->StartPipeline(s->device_.get());
  return std::unique_ptr<Store>(std::move(s));
}

// ---------------------------------------------------------------------------
// Recovery

absl::Status RingStore::Recover() {
  MutexLock l(&mu_);
  // Chunk lists first, then pointers: both keys must exist for every PG.
  absl::flat_hash_map<PgId, PgChunkList> lists;
  RETURN_IF_ERROR(db_->Scan(kPgChunksPrefix, [&](std::string_view k, std::string_view v) {
    PgId id;
    if (!DecodePgKey(k.substr(kPgChunksPrefix.size()), &id)) {
      return absl::DataLossError(absl::StrCat(db_->description(), ": malformed chunk-list key"));
    }
    auto c = PgChunkList::Decode(v);
    if (!c.ok()) {
      return absl::DataLossError(absl::StrCat("PG ", id.ToString(), ": ", c.status().message()));
    }
    lists.emplace(id, *std::move(c));
    return absl::OkStatus();
  }));
  // Claims in key order, which is PG order: the same PG is named first on
  // every open.
  RingClaims claims(geo_.chunk_count, meta_.next_pg_stamp);
  auto refuse = [](const PgId& id, const RingClaims::Verdict& claim) {
    return absl::DataLossError(absl::StrCat("PG ", id.ToString(), ": ", claim.message));
  };
  RETURN_IF_ERROR(db_->Scan(kPgPointerPrefix, [&](std::string_view k, std::string_view v) {
    PgId id;
    if (!DecodePgKey(k.substr(kPgPointerPrefix.size()), &id)) {
      return absl::DataLossError(absl::StrCat(db_->description(), ": malformed pointer key"));
    }
    auto p = PgPointer::Decode(v);
    if (!p.ok()) {
      return absl::DataLossError(absl::StrCat("PG ", id.ToString(), ": ", p.status().message()));
    }
    auto it = lists.find(id);
    if (it == lists.end()) {
      return absl::DataLossError(absl::StrCat("PG ", id.ToString(),
                                              ": has a pointer but no chunk list"));
    }
    if (auto claim = claims.ClaimStamp(id, p->stamp); !claim.ok()) return refuse(id, claim);
    for (size_t i = 0; i < it->second.chunks.size(); ++i) {
      const uint32_t c = it->second.chunks[i];
      if (auto claim = claims.ClaimChunk(id, i, c); !claim.ok()) return refuse(id, claim);
      const bool first = alloc_.MarkOwned(c);  // the claim was the chunk's first
      assert(first);
      (void)first;
    }
    auto pg = std::make_shared<RingPg>(id, p->stamp, geo_.block_size);
    pg->LoadPointer(*p);
    pg->chunks = std::move(it->second);
    lists.erase(it);
    pgs_.Insert(std::move(pg));
    return absl::OkStatus();
  }));
  if (!lists.empty()) {
    return absl::DataLossError(absl::StrCat("PG ", lists.begin()->first.ToString(),
                                            ": has a chunk list but no pointer"));
  }
  // Each PG's ring is read and replayed independently: several at a time
  // keep the device busy (synchronous O_DIRECT reads, no readahead) and use
  // every core for CRCs and replay. Outcomes are handled below in PG order.
  std::vector<RingPg*> order;
  order.reserve(pgs_.size());
  for (auto& [id, pg] : pgs_) order.push_back(pg.get());
  std::vector<absl::Status> outcome(order.size());
  {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next.fetch_add(1); i < order.size(); i = next.fetch_add(1)) {
        outcome[i] = RecoverPg(order[i]);
      }
    };
    const size_t threads = std::min<size_t>(kRecoveryThreads, order.size());
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
  }
  for (size_t i = 0; i < order.size(); ++i) {
    RingPg* pg = order[i];
    const absl::Status& s = outcome[i];
    if (!s.ok()) {
      if (options_.recovery_policy == RecoveryPolicy::kRefuse || s.code() != absl::StatusCode::kDataLoss) {
        return s;
      }
      log_->Log(LogLevel::kError, absl::StrCat("opening with PG ", pg->name,
                                               " marked damaged: ", s.message()));
      pg->Forget();
      pg->damage = s;
    }
    live_items_ += pg->live_items();
  }
  return absl::OkStatus();
}

absl::Status RingStore::RecoverPg(RingPg* pg) {
  RETURN_IF_ERROR(RecoverRingPgLog(device_.get(), geo_, pg));
  const RingBounds& p = pg->bounds;
  pg->durable_head.store(p.head);
  MutexLock l(&pg->io_mu);
  pg->written_upto = p.tail;
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Submit

absl::Status RingStore::ReserveRing(RingPg* pg, uint64_t end, std::vector<uint32_t>* allocated) {
  PgChunkList& c = pg->chunks;
  if (c.chunks.empty()) {
    // An empty ring restarts at the tail's chunk boundary.
    c.base = pg->bounds.tail / geo_.chunk_size * geo_.chunk_size;
  }
  const uint64_t durable_head = pg->durable_head.load();
  while (RingEnd(c, geo_) < end) {
    // Reuse the first chunk if it lies wholly behind the durable head: its
    // records are no longer needed by any pointer that may survive a crash.
    if (!c.chunks.empty() && c.base + geo_.chunk_size <= durable_head &&
        c.base + geo_.chunk_size <= pg->bounds.head) {
      uint32_t first = c.chunks.front();
      c.chunks.erase(c.chunks.begin());
      c.chunks.push_back(first);
      c.base += geo_.chunk_size;
      continue;
    }
    if (c.chunks.size() >= options_.limits.max_chunks_per_pg) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "PG %s: its ring is full (%u chunks, the per-PG limit) and cannot reuse a chunk "
          "until the log is trimmed", pg->name, c.chunks.size()));
    }
    auto chunk = alloc_.Allocate();
    if (!chunk) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "partition is full: no free chunk for PG %s (all %u chunks owned); trim logs",
          pg->name, geo_.chunk_count));
    }
    allocated->push_back(*chunk);
    c.chunks.push_back(*chunk);
  }
  return absl::OkStatus();
}

std::shared_ptr<RingWrite> RingStore::PlanWrite(RingPg* pg, uint64_t pos, const std::string& record) {
  const uint64_t bs = geo_.block_size;
  const uint64_t start = geo_.AlignDown(pos);
  const uint64_t end = geo_.AlignUp(pos + record.size());
  auto w = std::make_shared<RingWrite>();
  w->buffer = std::make_shared<AlignedBuffer>(end - start);
  char* b = w->buffer->data();
  // The block holding the old tail is written again with the records it
  // already holds (kRewriteTailBlock); under kNeverRewrite pos is aligned.
  std::memcpy(b, pg->tail_block->data(), pos - start);
  std::memcpy(b + (pos - start), record.data(), record.size());
  uint64_t new_tail = pos + record.size();
  if (new_tail % bs != 0) {
    std::memcpy(pg->tail_block->data(), b + (geo_.AlignDown(new_tail) - start), bs);
  }
  MapRange(pg->chunks, geo_, start, end - start, &w->extents);
  w->end_lpos = new_tail;
  return w;
}

absl::StatusOr<std::shared_ptr<RingPg>> RingStore::NewPg(const PgId& id) {
  if (meta_.next_pg_stamp == UINT32_MAX) return absl::ResourceExhaustedError("PG stamps exhausted");
  return std::make_shared<RingPg>(id, meta_.next_pg_stamp++, geo_.block_size);
}

absl::Status RingStore::Submit(Transaction txn, CommitCallback done) {
  RETURN_IF_ERROR(CheckWritable());
  auto ctxn = std::make_shared<CommitPipeline::Txn>();
  ctxn->done = std::move(done);
  std::vector<std::shared_ptr<RingWrite>> writes;
  {
    MutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    const StoreMeta old_meta = meta_;
    Staging staging(&pgs_, options_.limits, live_items_);
    absl::Status status = staging.StageOps(
        txn,
        [&](const PgId& id) ABSL_NO_THREAD_SAFETY_ANALYSIS { return NewPg(id); },
        [&](const Transaction::Op& op, PgChange* t, uint64_t* live) {
          RingPgLogEffects effects(t->pg.get(), t->record_pos, &t->body);
          RETURN_IF_ERROR(
              ApplyOp(op, options_.limits, live, t->pg.get(), &t->undo.log(), &effects));
          using T = Transaction::OpType;
          t->trims |= op.type == T::kTrim || op.type == T::kTrimDups || op.type == T::kRewind ||
                      op.type == T::kResetLog;
          t->info_set |= op.type == T::kSetInfo;
          return absl::OkStatus();
        },
        [](PgChange*) {});
    std::vector<std::string> records;
    if (status.ok()) status = PlaceRecords(&staging, &records);
    if (!status.ok()) {
      for (const auto& t : staging.changes()) {
        for (uint32_t c : t->allocated) alloc_.Release(c);
      }
      staging.Rollback();
      meta_ = old_meta;
      return status;
    }
    // From here nothing fails.
    CommitPointers(staging, records, old_meta, &txn, ctxn, &writes);
    live_items_ = staging.live_items();
    pipeline_->Enqueue(ctxn);
  }
  StartWrites(writes);
  WaitForGatesAndRelease(ctxn, txn.gates());
  return absl::OkStatus();
}

absl::Status RingStore::PlaceRecords(Staging* staging, std::vector<std::string>* records) {
  records->resize(staging->changes().size());
  for (size_t i = 0; i < staging->changes().size(); ++i) {
    PgChange* t = staging->changes()[i].get();
    if (t->removed) continue;
    RETURN_IF_ERROR(PlaceRecord(t, &(*records)[i]));
  }
  return absl::OkStatus();
}

absl::Status RingStore::PlaceRecord(PgChange* t, std::string* record) {
  RingPg* pg = t->pg.get();
  // Carry the info forward when it alone would keep the head from moving
  // past what the transaction trimmed.
  RecordBodyBuilder without_info;  // the body before the carried copy
  const uint64_t info_pos_before = pg->info_pos;
  bool carried = false;
  if (t->trims && pg->has_info && !t->info_set) {
    uint64_t others = t->record_pos;
    if (!pg->entries.empty()) {
      others = std::min(others, MappingTable::Pos(pg->entries.front(), pg->bounds.head));
    }
    if (!pg->dups.empty()) {
      others = std::min(others, MappingTable::Pos(pg->dups.front(), pg->bounds.head));
    }
    if (pg->info_pos < others) {
      without_info = t->body;
      t->body.AddInfo(pg->info);
      pg->info_pos = t->record_pos;
      carried = true;
    }
  }
  while (!t->body.empty()) {
    size_t len = kRecordHeaderSize + t->body.size();
    if (options_.tail_block_policy == TailBlockPolicy::kNeverRewrite) {
      size_t pad = geo_.AlignUp(t->record_pos + len) - (t->record_pos + len);
      if (pad == 1) pad += geo_.block_size;
      t->body.AddPad(pad);
    }
    if (t->body.size() > kMaxRecordBody) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "transaction writes %u bytes to PG %s; a transaction may write at most %u "
          "bytes to one PG", t->body.size(), pg->name, kMaxRecordBody));
    }
    AppendRecord(record, kRecordTxn, pg->stamp, LapOf(t->record_pos, geo_), pg->bounds.tail_seq,
                 t->body.body());
    const size_t allocated_before = t->allocated.size();
    absl::Status status = ReserveRing(pg, t->record_pos + record->size(), &t->allocated);
    if (status.ok() || !carried || !absl::IsResourceExhausted(status)) return status;
    // No room for the carried copy of the info (a full partition): take the
    // trim without it rather than refuse the trim that is meant to free
    // space. The head stays at the info for now (it moves at a later trim
    // or info update); nothing else changes. Give back what this attempt
    // allocated (ReserveRing appends allocated chunks last) and build the
    // record again without the info.
    while (t->allocated.size() > allocated_before) {
      alloc_.Release(t->allocated.back());
      pg->chunks.chunks.pop_back();
      t->allocated.pop_back();
    }
    t->body = std::move(without_info);
    pg->info_pos = info_pos_before;
    record->clear();
    carried = false;
  }
  return absl::OkStatus();
}

void RingStore::CommitPointers(const Staging& staging, const std::vector<std::string>& records,
                               const StoreMeta& old_meta, Transaction* txn,
                               const std::shared_ptr<CommitPipeline::Txn>& ctxn,
                               std::vector<std::shared_ptr<RingWrite>>* writes) {
  ctxn->batch = txn->ReleaseBatch();
  if (!ctxn->batch) ctxn->batch = std::make_unique<rocksdb::WriteBatch>();
  // Every key the ring backend writes is a whole value written by the
  // store alone: a commit group keeps only the last write of each.
  StoreKeyWriter wb(ctxn->batch.get(), db_->cf(), &ctxn->store_keys);
  std::vector<uint32_t> to_free;
  std::vector<std::pair<std::shared_ptr<RingPg>, uint64_t>> heads;
  for (size_t i = 0; i < staging.changes().size(); ++i) {
    PgChange* t = staging.changes()[i].get();
    RingPg* pg = t->pg.get();
    if (t->removed) {
      // Chunks go back to the free map only once the removal is durable.
      to_free.insert(to_free.end(), pg->chunks.chunks.begin(), pg->chunks.chunks.end());
      if (!t->created) {
        wb.Delete(PgPointerKey(pg->id));
        wb.Delete(PgChunksKey(pg->id));
      }
      continue;
    }
    if (!records[i].empty()) {
      auto w = PlanWrite(pg, t->record_pos, records[i]);
      w->pg = t->pg;
      w->txn = ctxn;
      writes->push_back(std::move(w));
      pg->bounds.tail = t->record_pos + records[i].size();
      pg->bounds.tail_seq += 1;
      pg->record_bytes_written += records[i].size();
      pg->payload_bytes_written += t->payload;
      record_bytes_.fetch_add(records[i].size());
      payload_bytes_.fetch_add(t->payload);
    }
    pg->bounds.head = pg->ComputeHead(pg->bounds.tail);
    // Give back chunks wholly behind the head, beyond the reserve.
    while (pg->chunks.chunks.size() > options_.reserve_chunks_per_pg &&
           pg->chunks.base + geo_.chunk_size <= pg->bounds.head) {
      to_free.push_back(pg->chunks.chunks.front());
      pg->chunks.chunks.erase(pg->chunks.chunks.begin());
      pg->chunks.base += geo_.chunk_size;
    }
    if (pg->chunks.chunks.empty()) pg->chunks.base = pg->bounds.tail / geo_.chunk_size * geo_.chunk_size;
    wb.Put(PgPointerKey(pg->id), pg->Pointer().Encode());
    if (t->created || !(pg->chunks == t->undo.old_chunks())) {
      wb.Put(PgChunksKey(pg->id), pg->chunks.Encode());
    }
    heads.emplace_back(t->pg, pg->bounds.head);
  }
  if (meta_.next_pg_stamp != old_meta.next_pg_stamp) {
    wb.Put(std::string(kMetaKey), meta_.Encode());
  }
  // With gated_writes_share_flush the partition flush also makes the
  // embedder's writes durable, so a transaction with gates needs one even
  // when it writes no records.
  ctxn->needs_flush = !writes->empty() ||
                      (options_.gated_writes_share_flush && !txn->gates().empty());
  ctxn->pending_writes.store(static_cast<int>(writes->size()));
  ctxn->pending_ios.store(static_cast<int>(writes->size() + txn->gates().size()) + 1);
  ctxn->on_durable = [this, to_free = std::move(to_free), heads = std::move(heads)]() {
    for (uint32_t c : to_free) alloc_.Release(c);
    for (const auto& [pg, head] : heads) {
      uint64_t cur = pg->durable_head.load();
      while (cur < head && !pg->durable_head.compare_exchange_weak(cur, head)) {
      }
    }
  };
  // Queue each PG's write behind its earlier ones, in staging order.
  for (auto& w : *writes) {
    MutexLock io(&w->pg->io_mu);
    w->pg->write_queue.push_back(w);
  }
}

// A PG's writes are issued one at a time, in order, by whoever finds its
// queue idle. Called outside the staging lock.
void RingStore::StartWrites(const std::vector<std::shared_ptr<RingWrite>>& writes) {
  for (auto& w : writes) {
    bool start = false;
    {
      MutexLock io(&w->pg->io_mu);
      if (!w->pg->write_in_flight && !w->pg->write_queue.empty() &&
          w->pg->write_queue.front() == w) {
        w->pg->write_in_flight = true;
        start = true;
      }
    }
    if (start) StartWrite(w);
  }
}

void RingStore::StartWrite(const std::shared_ptr<RingWrite>& w) {
  struct Pending {
    std::atomic<int> left;
    Mutex mu;
    absl::Status status;
  };
  auto p = std::make_shared<Pending>();
  p->left.store(static_cast<int>(w->extents.size()));
  uint64_t buf_off = 0;
  for (const Extent& e : w->extents) {
    std::shared_ptr<AlignedBuffer> piece;
    if (w->extents.size() == 1) {
      piece = w->buffer;
    } else {
      piece = std::make_shared<AlignedBuffer>(e.length);
      std::memcpy(piece->data(), w->buffer->data() + buf_off, e.length);
    }
    buf_off += e.length;
    device_->WriteAsync(e.device_offset, std::move(piece), [this, w, p](absl::Status s) {
      if (!s.ok()) {
        MutexLock l(&p->mu);
        if (p->status.ok()) p->status = s;
      }
      if (p->left.fetch_sub(1) == 1) {
        absl::Status st;
        {
          MutexLock l(&p->mu);
          st = p->status;
        }
        WriteDone(w, st);
      }
    });
  }
}

void RingStore::WriteDone(const std::shared_ptr<RingWrite>& w, const absl::Status& s) {
  std::shared_ptr<RingWrite> next;
  {
    MutexLock io(&w->pg->io_mu);
    if (s.ok()) {
      w->pg->written_upto = std::max(w->pg->written_upto, w->end_lpos);
    } else if (w->pg->io_failure.ok()) {
      w->pg->io_failure = s;
    }
    if (!w->pg->write_queue.empty() && w->pg->write_queue.front() == w) {
      w->pg->write_queue.pop_front();
    }
    if (!w->pg->write_queue.empty()) {
      next = w->pg->write_queue.front();
    } else {
      w->pg->write_in_flight = false;
    }
    w->pg->written_cv.SignalAll();
  }
  pipeline_->RingWriteDone(w->txn.get(),
                           s.ok() ? s
                                  : absl::Status(s.code(), absl::StrCat("ring write for PG ",
                                                                        w->pg->name, ": ",
                                                                        s.message())));
  if (next) StartWrite(next);
}

// ---------------------------------------------------------------------------
// Reads

absl::Status RingStore::WaitWritten(RingPg* pg, uint64_t lpos) const {
  MutexLock io(&pg->io_mu);
  while (pg->written_upto <= lpos && pg->io_failure.ok()) pg->written_cv.Wait(&pg->io_mu);
  return pg->written_upto > lpos ? absl::OkStatus() : pg->io_failure;
}

absl::Status RingStore::ReadRecords(
    RingPg* pg, uint64_t first, uint64_t last,
    const std::function<void(uint64_t, std::string_view)>& fn) const {
  RETURN_IF_ERROR(WaitWritten(pg, last));
  RingReader reader(device_.get(), geo_, pg->chunks, pg->name, pg->stamp, first, pg->bounds.tail);
  RingRecord rec;
  while (true) {
    absl::Status s = reader.Next(&rec);
    if (!s.ok()) return s;
    if (rec.is_txn()) fn(rec.lpos, rec.body);
    if (rec.lpos >= last) return absl::OkStatus();
  }
}

absl::StatusOr<std::vector<LogEntry>> RingStore::ReadSlots(RingPg* pg, ItemKind kind, size_t i,
                                                           size_t j) const {
  std::vector<LogEntry> out;
  if (i >= j) return out;
  const MappingTable& table = kind == ItemKind::kDup ? pg->dups : pg->entries;
  out.reserve(j - i);
  const uint64_t anchor = pg->bounds.head;
  size_t k = i;
  absl::Status s = ReadRecords(
      pg, MappingTable::Pos(table.at(i), anchor), MappingTable::Pos(table.at(j - 1), anchor),
      [&](uint64_t lpos, std::string_view body) {
        for (const Item& it : LiveItems(body, kind)) {
          while (k < j && MappingTable::Pos(table.at(k), anchor) < lpos) ++k;
          if (k < j && MappingTable::Pos(table.at(k), anchor) == lpos &&
              table.at(k).v() == it.version) {
            out.push_back(LogEntry{it.version, std::string(it.payload)});
            ++k;
          }
        }
      });
  if (!s.ok()) return s;
  if (out.size() != j - i) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: found %u of %u items in the ring; the mapping table and the records disagree",
        pg->name, out.size(), j - i));
  }
  return out;
}

void RingStore::AddPgStats(const RingPg& pg, PgStats* s) const {
  s->chunks = static_cast<uint32_t>(pg.chunks.chunks.size());
  s->ring_bytes_used = pg.bounds.tail - pg.bounds.head;
  s->bytes_written = pg.record_bytes_written;
  s->payload_bytes_written = pg.payload_bytes_written;
}

void RingStore::AddStoreStats(StoreStats* s) const {
  s->total_chunks = geo_.chunk_count;
  s->free_chunks = alloc_.free_count();
  s->chunk_size = geo_.chunk_size;
  s->record_bytes_appended = record_bytes_.load();
  s->payload_bytes_appended = payload_bytes_.load();
}

}  // namespace pgring
