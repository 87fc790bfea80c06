#include "store/ring/ring_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <tuple>
#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "log/pg_log_state.h"
#include "log/ring_pg_recovery.h"
#include "log/ring_reader.h"
#include "log/stream_reader.h"
#include "store/group_batch.h"
#include "store/open_store.h"
#include "store/ring/extent_write.h"
#include "util/status_macros.h"
#include "util/thread_name.h"

namespace pgring {

namespace {
// PGs recovered at once at open: enough reads in flight to keep an SSD busy
// (measured: docs/decisions/2026-11-22-first-rounds.md), few enough to cost
// nothing.
constexpr size_t kRecoveryThreads = 8;

// Runs fn(0), ..., fn(n - 1), several at a time: each PG's recovery reads
// its ring with synchronous O_DIRECT reads (no readahead), and its CRCs and
// replay use every core.
void ForEachRecovering(size_t n, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const size_t threads = std::min<size_t>(kRecoveryThreads, n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    pool.emplace_back([&work] {
      NameThisThread("pgring-recover");
      work();
    });
  }
  work();
  for (auto& t : pool) t.join();
}

// A StreamOptions size in whole blocks: rounded down, and at least one
// block unless it is 0 (allowed where 0 means "never").
uint64_t WholeBlocks(uint64_t bytes, uint32_t block_size) {
  if (bytes == 0) return 0;
  return std::max<uint64_t>(bytes - bytes % block_size, block_size);
}

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
  bool restated = false;     // the PG's live log stated again (cleaning)
  uint64_t payload = 0;
  std::vector<uint32_t> allocated;  // chunks taken for this PG (back on rollback)

  explicit PgChange(std::shared_ptr<RingPg> p)
      : pg(std::move(p)), undo(pg.get()), record_pos(pg->bounds.tail) {}
  void Restore() { undo.Restore(); }
};

// Where a transaction's new record bytes go (PlanStream).
struct RingStore::StreamPlan {
  // Per change: how far its PG is homed once the transaction is staged.
  std::vector<uint64_t> homed_after;
  // Per change: where its bytes end in the stream record (from its start).
  std::vector<uint64_t> bytes_end;
  std::string record;  // the stream record; empty: none
  // The record's items are compressed (kRecordStreamLz4): a PG's bytes are
  // found by decompressing it, and bytes_end does not apply.
  bool compressed = false;
  LogStream::Slot slot{};  // where it goes and its sequence number
  std::vector<uint32_t> allocated;  // stream chunks taken for it
  // The stream before the transaction: what changed goes to the batch.
  bool stream_existed = false;
  StreamPointer old_stream;
  uint64_t old_stream_chunks_version = 0;
};

RingStore::RingStore(std::shared_ptr<BlockDevice> device, std::unique_ptr<MetadataDb> db,
                     const Label& label, const StoreMeta& meta, const Options& options)
    : PgStore(std::move(device), std::move(db), options),
      label_(label),
      geo_(MakeGeometry(label.block_size, label.chunk_size, label.chunk_count)),
      alloc_(label.chunk_count),
      meta_(meta),
      stream_layout_(options.log_layout == LogLayout::kStream),
      stream_home_bytes_(WholeBlocks(options.stream.home_bytes, geo_.block_size)),
      stream_resident_bytes_(WholeBlocks(options.stream.resident_bytes, geo_.block_size)),
      stream_forced_home_bytes_(WholeBlocks(options.stream.forced_home_bytes, geo_.block_size)),
      stream_(geo_, &alloc_,
              LogStream::MaxChunksFor(options.stream.max_chunks, label.chunk_count), &seeks_,
              [this](std::vector<std::shared_ptr<CommitPipeline::Txn>> txns, absl::Status s) {
                StreamWritten(std::move(txns), s);
              }),
      commit_writer_(device_.get(), &stream_,
                     [this](CallerWrites* io) { return StartCommitThreadWrites(io); }) {}

RingStore::~RingStore() { Close().IgnoreError(); }

absl::StatusOr<std::unique_ptr<Store>> RingStore::Open(std::shared_ptr<BlockDevice> device,
                                                       std::unique_ptr<MetadataDb> db,
                                                       const Label& label, const StoreMeta& meta,
                                                       const Options& options) {
  // The options were checked by the caller (store/options_check.h).
  std::unique_ptr<RingStore> s(new RingStore(std::move(device), std::move(db), label, meta, options));
  RETURN_IF_ERROR(s->Recover());
  // The version the stream's records need before the stream can hold one:
  // at open, not in Submit, which must never wait on its own I/O (a caller
  // may have plugged the device).
  const uint32_t version = options.stream.compression == StreamCompression::kLz4
                               ? kFormatVersionCompressed
                               : kStreamFormatVersion;
  if (s->stream_layout_ && !options.read_only && label.format_version < version) {
    MutexLock l(&s->mu_);
    RETURN_IF_ERROR(s->MarkStreamFormat(version));
  }
  // The stream's writes are the commit thread's (docs/DESIGN.md, "Who runs
  // what"); per-PG rings write from Submit and complete on the device's
  // thread.
  CommitPipeline::LogWriter* log_writer = s->stream_layout_ ? &s->commit_writer_ : nullptr;
  s->StartPipeline(s->device_.get(), log_writer);
  if (s->stream_layout_ && s->stream_home_bytes_ == 0 && !options.read_only) {
    RingStore* store = s.get();
    s->cleaner_ = std::make_unique<StreamCleaner>(
        [store](uint64_t* stuck_head) { return store->CleanOne(stuck_head); });
  }
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
  // Claims: the stream's chunks, then the PGs' in key order, which is PG
  // order: the same PG is named first on every open.
  RingClaims claims(geo_.chunk_count, meta_.next_pg_stamp);
  StreamPointer stream_ptr;
  PgChunkList stream_chunks;
  ASSIGN_OR_RETURN(const bool has_stream, LoadStreamKeys(&claims, &stream_ptr, &stream_chunks));
  auto refuse = [](const PgId& id, const RingClaims::Verdict& claim) {
    return absl::DataLossError(absl::StrCat("PG ", id.ToString(), ": ", claim.message));
  };
  RETURN_IF_ERROR(db_->Scan(kPgPointerPrefix, [&](std::string_view k, std::string_view v)
                                                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
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
    if (p->unhomed != 0 && !has_stream) {
      return absl::DataLossError(absl::StrFormat(
          "PG %s: %u bytes before its tail are in the log stream (from stream lpos %u), but "
          "the store has no log stream (no %s key)",
          id.ToString(), p->unhomed, p->stream_pos, kStreamPointerKey));
    }
    for (size_t i = 0; i < it->second.chunks.size(); ++i) {
      const uint32_t c = it->second.chunks[i];
      if (auto claim = claims.ClaimChunk(id, i, c); !claim.ok()) return refuse(id, claim);
      const bool first = alloc_.MarkOwned(c);  // the claim was the chunk's first
      assert(first);
      (void)first;
    }
    auto pg = std::make_shared<RingPg>(id, p->stamp, geo_.block_size);
    pg->LoadPointer(*p);
    pg->durable_head.store(p->head);
    pg->written_pointer = *p;
    pg->chunks = std::move(it->second);
    lists.erase(it);
    pgs_.Insert(std::move(pg));
    return absl::OkStatus();
  }));
  if (!lists.empty()) {
    return absl::DataLossError(absl::StrCat("PG ", lists.begin()->first.ToString(),
                                            ": has a chunk list but no pointer"));
  }
  // Each PG: its ring up to its homed position, then its bytes in the
  // stream as one sequential pass over the stream reaches them.
  std::vector<RingPg*> order;
  std::vector<RingPgLog*> logs;
  for (auto& [id, pg] : pgs_) {
    order.push_back(pg.get());
    logs.push_back(pg.get());
  }
  std::vector<absl::Status> outcome;
  absl::Status stream_damage;
  RETURN_IF_ERROR(RecoverRingPgs(
      device_.get(), geo_, logs,
      has_stream ? StreamSource{&stream_ptr, &stream_chunks} : StreamSource{},
      stream_resident_bytes_, ForEachRecovering, &outcome, &stream_damage));
  if (IsStreamTailSeqDamage(stream_damage) && !options_.read_only) {
    // The stream's next record would take the pointer's sequence and not
    // follow the last one: the next open would stop there, and lose the
    // PGs whose bytes came after. Read-only opens (and export) still read
    // every PG.
    return absl::DataLossError(absl::StrCat(
        "log stream: ", stream_damage.message(),
        "; not opened for writing: the next stream record would not follow the last one "
        "(open read-only to read or export the PGs)"));
  }
  if (!stream_damage.ok()) {
    // It cost the PGs whose bytes lay, or may have lain, in what cannot be
    // read (they fail, named, with it); with none, nothing committed is
    // lost.
    log_->Log(LogLevel::kWarning, std::string(stream_damage.message()));
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
      live_items_ += pg->live_items();
      continue;
    }
    {
      MutexLock io(&pg->io_mu);
      pg->written_upto = pg->bounds.homed;
    }
    if (pg->bounds.homed < pg->bounds.tail) stream_.Pin(pg->StreamPos(), pg);
    live_items_ += pg->live_items();
  }
  if (has_stream) {
    // The stream's partial tail block, which the next stream write rewrites
    // with the records it holds.
    std::string prefix;
    if (stream_ptr.tail % geo_.block_size != 0) {
      AlignedBuffer block(geo_.block_size);
      std::vector<Extent> ex;
      MapRange(stream_chunks, geo_, geo_.AlignDown(stream_ptr.tail), geo_.block_size, &ex);
      if (absl::Status s = device_->Read(ex[0].device_offset, block.span()); !s.ok()) {
        return absl::Status(s.code(), absl::StrFormat("log stream: reading its tail block (lpos %u): %s",
                                                      geo_.AlignDown(stream_ptr.tail), s.message()));
      }
      prefix.assign(block.data(), stream_ptr.tail % geo_.block_size);
    }
    stream_.Load(stream_ptr, std::move(stream_chunks), std::move(prefix));
  }
#if defined(__GLIBC__)
  // Open freed what it read and did not keep (the windows of eight reading
  // threads, the unhomed bytes that went through memory, the mapping
  // tables' growth) among what it kept, in several threads' arenas; glibc
  // keeps such memory inside its heap until asked. Measured at 1,024 PGs:
  // 17 MB of RSS with the default stream, for no open time measurable.
  malloc_trim(0);
#endif
  return absl::OkStatus();
}

absl::Status RingStore::MarkStreamFormat(uint32_t version) {
  // pgring.meta first: a crash before the label is written leaves the
  // older label, which is still true (no record of the new version yet).
  meta_.format_version = version;
  rocksdb::WriteBatch batch;
  batch.Put(db_->cf(), std::string(kMetaKey), meta_.Encode());
  RETURN_IF_ERROR(db_->WriteSync(&batch));
  label_.format_version = version;
  return WriteLabelRegion(device_.get(), label_);
}

absl::StatusOr<bool> RingStore::LoadStreamKeys(RingClaims* claims, StreamPointer* p,
                                               PgChunkList* c) {
  ASSIGN_OR_RETURN(auto ptr, db_->Get(kStreamPointerKey));
  ASSIGN_OR_RETURN(auto chunks, db_->Get(kStreamChunksKey));
  if (!ptr && !chunks) return false;
  if (!ptr || !chunks) {
    return absl::DataLossError(absl::StrFormat("log stream: %s is there but %s is missing",
                                               ptr ? kStreamPointerKey : kStreamChunksKey,
                                               ptr ? kStreamChunksKey : kStreamPointerKey));
  }
  auto decoded_ptr = StreamPointer::Decode(*ptr);
  if (!decoded_ptr.ok()) {
    return absl::DataLossError(absl::StrCat("log stream: ", decoded_ptr.status().message()));
  }
  auto decoded_chunks = PgChunkList::Decode(*chunks);
  if (!decoded_chunks.ok()) {
    return absl::DataLossError(absl::StrCat("log stream: ", decoded_chunks.status().message()));
  }
  *p = *decoded_ptr;
  *c = *std::move(decoded_chunks);
  for (const absl::Status& s : {CheckPointerInChunks(p->head, p->tail, *c, geo_.chunk_size),
                                CheckChunkListBase(*c, geo_.chunk_size)}) {
    if (!s.ok()) return absl::DataLossError(absl::StrCat("log stream: ", s.message()));
  }
  for (size_t i = 0; i < c->chunks.size(); ++i) {
    auto claim = claims->ClaimStreamChunk(i, c->chunks[i]);
    if (!claim.ok()) return absl::DataLossError(absl::StrCat("log stream: ", claim.message));
    const bool first = alloc_.MarkOwned(c->chunks[i]);
    assert(first);
    (void)first;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Submit

absl::Status RingStore::ReserveRing(RingPg* pg, uint64_t start, uint64_t end,
                                   std::vector<uint32_t>* allocated) {
  PgChunkList& c = pg->chunks;
  // The first chunk is reused once wholly behind the durable head: its
  // records are no longer needed by any pointer that may survive a crash.
  const uint64_t reusable_before = std::min(pg->durable_head.load(), pg->bounds.head);
  // A ring holding nothing such a pointer reads (no chunk, or every chunk
  // wholly behind the durable head) restarts at start's chunk: the lpos
  // before it were only ever in the stream, and need no chunk.
  const uint64_t start_base = start / geo_.chunk_size * geo_.chunk_size;
  if (c.chunks.empty() || (RingEnd(c, geo_) <= reusable_before && c.base < start_base &&
                           RingEnd(c, geo_) <= start)) {
    c.base = start_base;
  }
  assert(c.base <= start);
  while (RingEnd(c, geo_) < end) {
    if (ReuseFirst(&c, geo_, reusable_before)) continue;
    if (c.chunks.size() >= options_.limits.max_chunks_per_pg) return RingFull(*pg);
    auto chunk = alloc_.Allocate();
    if (!chunk) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "partition is full: no free chunk for PG %s (all %u chunks owned, %u of them by the "
          "log stream); trim logs",
          pg->name, geo_.chunk_count, stream_.chunks().chunks.size()));
    }
    allocated->push_back(*chunk);
    c.chunks.push_back(*chunk);
  }
  return absl::OkStatus();
}

absl::Status RingStore::RingFull(const RingPg& pg) const {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "PG %s: its ring is full (%u chunks, the per-PG limit, limits.max_chunks_per_pg) "
      "and cannot reuse a chunk until the log is trimmed",
      pg.name, options_.limits.max_chunks_per_pg));
}

absl::Status RingStore::RingSpanFits(const RingPg& pg, uint64_t end) const {
  const uint64_t from =
      pg.chunks.chunks.empty() ? pg.bounds.head : std::min(pg.bounds.head, pg.chunks.base);
  const uint64_t c = geo_.chunk_size;
  const uint64_t chunks = (end + c - 1) / c - from / c;
  return chunks <= options_.limits.max_chunks_per_pg ? absl::OkStatus() : RingFull(pg);
}

absl::Status RingStore::ReserveHome(RingPg* pg, uint64_t end, std::vector<uint32_t>* allocated) {
  const size_t before = allocated->size();
  absl::Status s = ReserveRing(pg, pg->ImageStart(), end, allocated);
  if (s.ok()) return s;
  // ReserveRing appends what it allocates after what it reuses.
  while (allocated->size() > before) {
    alloc_.Release(allocated->back());
    pg->chunks.chunks.pop_back();
    allocated->pop_back();
  }
  return s;
}

std::shared_ptr<RingWrite> RingStore::HomeWrite(const std::shared_ptr<RingPg>& pg, uint64_t end,
                                                uint64_t homed) {
  const uint64_t start = pg->ImageStart();
  auto w = std::make_shared<RingWrite>();
  w->pg = pg;
  w->buffer = std::make_shared<AlignedBuffer>(end - start);
  // The first block keeps what the ring already holds of it: under
  // kRewriteTailBlock it is written again with those records; otherwise it
  // was never written (homed is aligned, or lies in a block never homed).
  // Past the tail: zeros.
  const uint64_t from = pg->bounds.homed;
  assert(pg->ring_prefix.size() == from - start);
  std::memcpy(w->buffer->data(), pg->ring_prefix.data(), pg->ring_prefix.size());
  std::string bytes;
  const uint64_t to = std::min(end, pg->bounds.tail);
  w->failure = UnhomedBytes(*pg, from, to, &bytes);
  if (!w->failure.ok()) {
    w->failure = absl::Status(
        w->failure.code(), absl::StrFormat("reading its bytes [%u, %u) back from the log stream "
                                           "to home them: %s",
                                           from, std::min(to, pg->ColdEnd()), w->failure.message()));
  } else {
    std::memcpy(w->buffer->data() + (from - start), bytes.data(), bytes.size());
  }
  MapRange(pg->chunks, geo_, start, end - start, &w->extents);
  w->end_lpos = homed;
  pg->MoveHomed(homed);
  home_writes_.fetch_add(1);
  home_bytes_.fetch_add(end - start);
  return w;
}

absl::Status RingStore::UnhomedBytes(const RingPg& pg, uint64_t from, uint64_t to,
                                     std::string* out) const {
  return UnhomedRanges(pg, {RingRange{from, to}}, out);
}

absl::Status RingStore::UnhomedRanges(const RingPg& pg, const std::vector<RingRange>& ranges,
                                      std::string* out) const {
  // The ranges are in ring order and every cold byte lies before ColdEnd(),
  // every resident one after it: their cold parts, read together, then
  // their resident parts make the bytes in order.
  const uint64_t cold_end = pg.ColdEnd();
  std::vector<RingRange> cold;
  for (const RingRange& r : ranges) {
    assert(r.from >= pg.bounds.homed && r.to <= pg.bounds.tail);
    if (r.from < std::min(r.to, cold_end)) cold.push_back({r.from, std::min(r.to, cold_end)});
  }
  if (!cold.empty()) {
    const size_t before = out->size();
    RETURN_IF_ERROR(ReadUnhomedRanges(device_.get(), geo_, stream_.chunks(), pg.stamp,
                                      pg.unhomed_runs, cold, out));
    stream_reads_.fetch_add(1);
    stream_bytes_read_.fetch_add(out->size() - before);
  }
  for (const RingRange& r : ranges) {
    const uint64_t from = std::max(r.from, cold_end);
    if (from < r.to) out->append(pg.image.resident().substr(from - cold_end, r.to - from));
  }
  return absl::OkStatus();
}

absl::Status RingStore::ReadLiveLog(RingPg* pg, LiveLog* live) const {
  const uint64_t anchor = pg->bounds.head, homed = pg->bounds.homed, tail = pg->bounds.tail;
  auto pos = [&](const MappingTable& t, size_t i) { return MappingTable::Pos(t.at(i), anchor); };
  // The slots before the first whose record starts at or past homed.
  auto in_ring = [&](const MappingTable& t) {
    size_t lo = 0, hi = t.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (pos(t, mid) < homed) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
  const size_t ring_entries = in_ring(pg->entries), ring_dups = in_ring(pg->dups);
  ASSIGN_OR_RETURN(live->entries, ReadSlots(pg, ItemKind::kEntry, 0, ring_entries));
  ASSIGN_OR_RETURN(live->dups, ReadSlots(pg, ItemKind::kDup, 0, ring_dups));

  std::vector<uint64_t> starts;
  auto start_of = [&](const MappingTable::Slot& s) {
    starts.push_back(MappingTable::Pos(s, anchor));
  };
  pg->entries.ForEach(ring_entries, pg->entries.size(), start_of);
  pg->dups.ForEach(ring_dups, pg->dups.size(), start_of);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  if (starts.empty()) return absl::OkStatus();
  // Each record's first bytes (a block's worth, or to the next record),
  // then the rest of those that are longer: two rounds of reads in flight.
  constexpr uint64_t kFirstRead = 4096;
  std::vector<RingRange> first;
  for (size_t k = 0; k < starts.size(); ++k) {
    const uint64_t next = k + 1 < starts.size() ? starts[k + 1] : tail;
    first.push_back({starts[k], std::min(next, starts[k] + kFirstRead)});
  }
  std::string head_bytes;
  RETURN_IF_ERROR(UnhomedRanges(*pg, first, &head_bytes));
  auto damage = [&](uint64_t at, std::string_view what) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: the record at lpos %u, which holds live items: %s", pg->name, at, what));
  };
  std::vector<uint64_t> sizes(starts.size());
  std::vector<RingRange> rest;
  size_t at = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    const uint64_t got = first[k].to - first[k].from;
    if (got < kRecordHeaderSize) return damage(starts[k], "too short for a header");
    const RecordHeader h = DecodeRecordHeader(head_bytes.data() + at);
    sizes[k] = kRecordHeaderSize + uint64_t{h.length};
    const uint64_t next = k + 1 < starts.size() ? starts[k + 1] : tail;
    if (starts[k] + sizes[k] > next) {
      return damage(starts[k], "its length runs past the next record or the tail");
    }
    if (sizes[k] > got) rest.push_back({first[k].to, starts[k] + sizes[k]});
    at += got;
  }
  std::string rest_bytes;
  RETURN_IF_ERROR(UnhomedRanges(*pg, rest, &rest_bytes));
  // Each record whole, checked as a reader checks it, its items matched to
  // the slots that name it.
  MappingTable::Cursor e = pg->entries.At(ring_entries), d = pg->dups.At(ring_dups);
  size_t at_head = 0, at_rest = 0;
  std::string rec;
  for (size_t k = 0; k < starts.size(); ++k) {
    const uint64_t got = first[k].to - first[k].from;
    rec.assign(head_bytes, at_head, std::min<uint64_t>(got, sizes[k]));
    at_head += got;
    if (sizes[k] > got) {
      rec.append(rest_bytes, at_rest, sizes[k] - got);
      at_rest += sizes[k] - got;
    }
    const RecordHeader h = DecodeRecordHeader(rec.data());
    if (!RecordCrcMatches(rec)) return damage(starts[k], "CRC mismatch");
    if (h.pg_stamp != pg->stamp || (h.type & ~kSkippableBit) != kRecordTxn) {
      return damage(starts[k], "not a record of this PG");
    }
    const std::string_view body = std::string_view(rec).substr(kRecordHeaderSize);
    // The items the slots from `*next` on name in this record, in order.
    auto take = [&](ItemKind kind, MappingTable::Cursor* next, std::vector<LogEntry>* to) {
      for (const Item& it : LiveItems(body, kind)) {
        if (!next->done() && MappingTable::Pos(next->slot(), anchor) == starts[k] &&
            next->slot().v() == it.version) {
          to->push_back(LogEntry{it.version, std::string(it.payload)});
          next->Next();
        }
      }
    };
    take(ItemKind::kEntry, &e, &live->entries);
    take(ItemKind::kDup, &d, &live->dups);
  }
  if (!e.done() || !d.done()) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: found %u of %u entries and %u of %u dups in their records; the mapping table "
        "and the records disagree", pg->name, e.index(), pg->entries.size(), d.index(),
        pg->dups.size()));
  }
  return absl::OkStatus();
}

void RingStore::EvictOldUnhomed(RingPg* pg) {
  pg->EvictUnhomed(stream_resident_bytes_, stream_.written());
}

absl::StatusOr<std::shared_ptr<RingPg>> RingStore::NewPg(const PgId& id) {
  if (meta_.next_pg_stamp == UINT32_MAX) return absl::ResourceExhaustedError("PG stamps exhausted");
  return std::make_shared<RingPg>(id, meta_.next_pg_stamp++, geo_.block_size);
}

absl::Status RingStore::Submit(Transaction txn, CommitCallback done) {
  return Stage(std::move(txn), std::move(done), nullptr);
}

absl::Status RingStore::Stage(Transaction txn, CommitCallback done, const Restatement* restate) {
  RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(std::shared_ptr<CommitPipeline::Txn> ctxn,
                   pipeline_->NewTxn(/*from_caller=*/restate == nullptr));
  ctxn->done = std::move(done);
  std::vector<std::shared_ptr<RingWrite>> writes;
  {
    MutexLock l(&mu_);
    RETURN_IF_ERROR(CheckOpen());
    const StoreMeta old_meta = meta_;
    Staging staging(&pgs_, options_.limits, live_items_);
    // NewPg needs mu_, held here. The lambda cannot say so with
    // ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_): StageOps (pg_map.h), a template that
    // knows no RingStore, calls it, and clang would then demand mu_ there.
    absl::Status status = restate != nullptr ? StageRestatement(&staging, *restate) :
                          staging.StageOps(
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
    StreamPlan plan;
    if (status.ok()) status = PlaceRecords(&staging, &records);
    if (status.ok()) status = PlanStream(staging, records, &plan);
    if (!status.ok()) {
      for (const auto& t : staging.changes()) {
        for (uint32_t c : t->allocated) alloc_.Release(c);
      }
      staging.Rollback();
      meta_ = old_meta;
      return status;
    }
    // From here nothing fails.
    CommitPointers(staging, records, &plan, old_meta, &txn, ctxn, &writes);
    live_items_ = staging.live_items();
    KeepStreamBuffers(&plan.record);
  }
  StartWrites(writes);
  WaitForGatesAndRelease(ctxn, txn.gates());
  return absl::OkStatus();
}

void RingStore::KeepStreamBuffers(std::string* record) {
  // What one large record (a restatement's) grew them to goes back.
  constexpr size_t kKeep = 256 << 10;
  if (stream_body_.size() > kKeep) stream_body_ = RecordBodyBuilder();
  if (compressed_body_.capacity() > kKeep) compressed_body_ = std::string();
  if (record->capacity() > stream_record_.capacity() && record->capacity() <= kKeep) {
    stream_record_.swap(*record);
  }
}

absl::Status RingStore::StageRestatement(Staging* staging, const Restatement& r) {
  absl::StatusOr<std::shared_ptr<RingPg>> found = pgs_.Find(r.pg->id);
  if (!found.ok() || found->get() != r.pg.get() || r.pg->bounds.tail_seq != r.tail_seq) {
    return absl::FailedPreconditionError(
        absl::StrCat("PG ", r.pg->name, " changed after its live log was read"));
  }
  PgChange* t = staging->Touch(r.pg);
  RingPgLogEffects effects(t->pg.get(), t->record_pos, &t->body);
  RETURN_IF_ERROR(RestateLog(r.live, t->pg.get(), &t->undo.log(), &effects));
  t->info_set = r.live.has_info;
  t->restated = true;
  return absl::OkStatus();
}

bool RingStore::WantsCleaning() const {
  // From three quarters of the fill that starts forced homes, so that the
  // cleaner keeps the stream from reaching it.
  const uint64_t percent = std::max<uint64_t>(1, options_.stream.force_home_percent * 3 / 4);
  return stream_.exists() && !stream_.pins().empty() &&
         stream_.bytes_used() * 100 >= stream_.capacity() * percent;
}

bool RingStore::CleanOne(uint64_t* stuck_head, bool any_fill) {
  Restatement r;
  {
    ReaderMutexLock l(&mu_);
    if (!CheckOpen().ok() || !CheckWritable().ok()) return false;
    if (any_fill ? !stream_.exists() || stream_.pins().empty() : !WantsCleaning()) return false;
    RingPg* pg = stream_.pins().begin()->second;
    *stuck_head = stream_.head();
    // Restating writes the PG's live log; homing what it has not homed.
    // For a PG still written to, either comes back each lap of the stream:
    // restating cleans one whose live log is under half of that (a busy PG
    // whose dups reach far back), where it clearly writes less; a PG with
    // few dead records is homed, as a `home_bytes` stream homes every PG. A
    // PG not written since its last restatement would only be restated
    // again, lap after lap, where a home writes it once. Forced homes take
    // what the cleaner leaves.
    // At most: a header, the reset and a rewind, and each item with its
    // payload and a length of up to five varint bytes.
    const uint64_t bytes = kRecordHeaderSize + 2 * RecordBodyBuilder::ItemSize(kItemVersionSize) +
                           pg->live_items() * (1 + 5 + kItemVersionSize) + pg->entry_bytes +
                           pg->dup_bytes + RecordBodyBuilder::ItemSize(pg->info.size());
    if (!pg->damage.ok() || bytes > kMaxRecordBody || pg->bounds.tail == pg->restated_tail ||
        2 * bytes >= pg->bounds.tail - pg->bounds.homed) {
      return false;
    }
    r.pg = *pgs_.Find(pg->id);  // a pinned PG is in the map
    r.tail_seq = pg->bounds.tail_seq;
    if (absl::Status read = ReadLiveLog(pg, &r.live); !read.ok()) {
      log_->Log(LogLevel::kWarning,
                absl::StrCat("PG ", pg->name, ": cleaning the log stream could not read its "
                             "live log: ", read.ToString()));
      return false;
    }
    r.live.has_info = pg->has_info;
    r.live.info = pg->info;
  }
  Notification committed;
  absl::Status result;
  absl::Status s = Stage(Transaction(), [&](absl::Status st) {
    result = st;
    committed.Notify();
  }, &r);
  // A PG written since the read is read again (the next call), twice; one
  // written that often is left to forced homes (a livelock of reads
  // otherwise). A closed or failed store stops the next call.
  if (absl::IsFailedPrecondition(s)) {
    if (++restate_retries_ <= 2) return true;
    restate_retries_ = 0;
    return false;
  }
  restate_retries_ = 0;
  if (!s.ok()) {
    log_->Log(LogLevel::kWarning, absl::StrCat("PG ", r.pg->name, ": cleaning the log stream "
                                               "could not restate its log: ", s.ToString()));
    return false;
  }
  committed.WaitForNotification();
  if (!result.ok()) return false;
  *stuck_head = ~uint64_t{0};
  return true;
}

absl::Status RingStore::CleanStreamNowForTest() {
  if (cleaner_ == nullptr) {
    return absl::FailedPreconditionError("the store has no stream cleaner (home_bytes 0)");
  }
  uint64_t stuck_head = ~uint64_t{0};
  while (CleanOne(&stuck_head, /*any_fill=*/true)) {
  }
  return absl::OkStatus();
}

void RingStore::StopBackgroundWork() {
  if (cleaner_ != nullptr) cleaner_->Stop();
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
    // Under kNeverRewrite a record ends its block, so that the next one is
    // never written into a block holding it. Behind the stream a ring is
    // written in whole blocks, and a home to the tail ends the partial one
    // with a pad record (PadPartialBlock); a record pads itself only where
    // it would leave its block too little room for that record, so that
    // the pad never needs a block, or a chunk, past it.
    if (options_.tail_block_policy == TailBlockPolicy::kNeverRewrite) {
      size_t pad = geo_.AlignUp(t->record_pos + len) - (t->record_pos + len);
      if (stream_layout_ && pad >= kMinPadRecord) pad = 0;
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
    // Behind the stream the ring takes chunks only for what is homed
    // (PlanStream), but the PG's log must still fit the ring it is homed
    // to; per-PG rings home every record now, from the block holding homed
    // on (a stream an earlier open left may hold the bytes before it). A
    // record carrying the info forward is a trim's, which must be taken on
    // a full partition (the stream may be full too): its home's chunks are
    // taken now, and without them the trim goes without the info.
    const uint64_t end = t->record_pos + record->size();
    const size_t allocated_before = t->allocated.size();
    absl::Status status =
        stream_layout_ && !carried
            ? RingSpanFits(*pg, end)
            : ReserveRing(pg, pg->ImageStart(), stream_layout_ ? geo_.AlignUp(end) : end,
                          &t->allocated);
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

absl::Status RingStore::PlanStream(const Staging& staging,
                                   const std::vector<std::string>& records, StreamPlan* plan) {
  const auto& changes = staging.changes();
  plan->homed_after.assign(changes.size(), 0);
  plan->bytes_end.assign(changes.size(), 0);
  plan->stream_existed = stream_.exists();
  plan->old_stream = stream_.Pointer();
  plan->old_stream_chunks_version = stream_.chunks_version();
  // Every PG homed to its tail. Behind the stream its ring takes the chunks
  // for that here (per-PG rings took them in PlaceRecord); false when the
  // partition has no room for them.
  auto home_all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (size_t i = 0; i < changes.size(); ++i) {
      PgChange* t = changes[i].get();
      if (stream_layout_ && !t->removed && !records[i].empty()) {
        RETURN_IF_ERROR(ReserveHome(t->pg.get(),
                                    geo_.AlignUp(t->record_pos + records[i].size()),
                                    &t->allocated));
      }
    }
    for (size_t i = 0; i < changes.size(); ++i) {
      plan->homed_after[i] = changes[i]->record_pos + records[i].size();
    }
    return absl::OkStatus();
  };
  if (!stream_layout_) return home_all();
  if (options_.stream.bypass_when_idle && txns_in_flight_.load() == 0 &&
      std::all_of(changes.begin(), changes.end(), [&](const auto& t) {
        // Homing writes only the blocks this record touches, as per-PG
        // rings would; a PG with whole blocks waiting keeps them in the
        // stream until home_bytes of them are there.
        return t->removed || t->pg->ImageStart() >= geo_.AlignDown(t->record_pos);
      }) &&
      home_all().ok()) {
    return absl::OkStatus();
  }
  // Each PG keeps in the stream what is not a whole block past the ones
  // its ring holds, once home_bytes of them are there. The body is sized
  // once (each item's header, the pad), not grown a copy at a time.
  RecordBodyBuilder& body = stream_body_;
  body.Clear();
  plan->record.swap(stream_record_);
  plan->record.clear();
  size_t most = geo_.block_size + kMinPadRecord;
  for (size_t i = 0; i < changes.size(); ++i) {
    most += RecordBodyBuilder::ItemSize(kItemPgBytesPrefixSize + records[i].size());
  }
  body.Reserve(most);
  for (size_t i = 0; i < changes.size(); ++i) {
    PgChange* t = changes[i].get();
    if (t->removed || records[i].empty()) continue;
    const RingPg* pg = t->pg.get();
    const uint64_t pos = t->record_pos;
    const uint64_t tail = pos + records[i].size();
    uint64_t homed = pg->bounds.homed;
    // A PG whose ring has no room for its home keeps its bytes in the
    // stream (forced homes and the cleaner take them later).
    if (stream_home_bytes_ != 0 &&
        geo_.AlignDown(tail) >= pg->ImageStart() + stream_home_bytes_ &&
        ReserveHome(t->pg.get(), geo_.AlignDown(tail), &t->allocated).ok()) {
      homed = geo_.AlignDown(tail);
    }
    plan->homed_after[i] = homed;
    const uint64_t from = std::max(pos, homed);
    // A record in the stream is one more run in the PG's list, and the runs
    // its head passes (this transaction's trims staged) leave it.
    if (from < tail && pg->unhomed_runs.size() >= options_.limits.max_stream_records_per_pg) {
      const uint64_t passed = std::max(pg->bounds.homed, pg->ComputeHead(tail));
      const uint64_t kept = pg->unhomed_runs.size() - pg->unhomed_runs.FirstEndingPast(passed);
      if (kept + 1 > options_.limits.max_stream_records_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: its records lie in %u stream records, the per-PG limit "
            "(limits.max_stream_records_per_pg); trim the log (a PG's records stay in the "
            "stream until it trims them)",
            pg->name, kept));
      }
    }
    if (from < tail) {
      body.AddPgBytes(pg->stamp, from, std::string_view(records[i]).substr(from - pos));
      plan->bytes_end[i] = kRecordHeaderSize + body.size();
    }
  }
  if (body.empty()) return absl::OkStatus();  // every PG's new bytes go home in whole blocks
  const LogStream::Slot slot = stream_.NextSlot();
  const uint64_t pos = slot.pos;
  const bool never_rewrite = options_.tail_block_policy == TailBlockPolicy::kNeverRewrite;
  // The next stream write must not rewrite the block a record ends in
  // under kNeverRewrite: this many bytes take it to the block's end.
  auto pad_for = [&](size_t len) -> size_t {
    if (!never_rewrite) return 0;
    return geo_.AlignUp(pos + len) - (pos + len);
  };
  plan->compressed = options_.stream.compression == StreamCompression::kLz4 &&
                     compressor_.Compress(body.body(), &compressed_body_);
  // The items' bytes less the compressed body's (Compress makes it smaller).
  const size_t saved = plan->compressed ? body.size() - compressed_body_.size() : 0;
  if (plan->compressed) {
    // A compressed body ends in filler, so any length pads it.
    compressed_body_.append(pad_for(kRecordHeaderSize + compressed_body_.size()), '\0');
  } else if (never_rewrite) {
    size_t pad = pad_for(kRecordHeaderSize + body.size());
    if (pad == 1) pad += geo_.block_size;
    body.AddPad(pad);
  }
  const std::string& stream_body = plan->compressed ? compressed_body_ : body.body();
  if (stream_body.size() <= kMaxRecordBody) {
    plan->record.reserve(kRecordHeaderSize + stream_body.size());
    AppendRecord(&plan->record, plan->compressed ? kRecordStreamLz4 : kRecordStream,
                 kStreamStamp, LapOf(pos, geo_), slot.seq, stream_body);
    if (stream_.Reserve(pos + plan->record.size(), &plan->allocated)) {
      plan->slot = slot;
      if (plan->compressed) {
        compressed_records_.fetch_add(1);
        compression_saved_bytes_.fetch_add(saved);
      }
      return absl::OkStatus();
    }
  }
  // The stream is full (its head is pinned by PGs not homed yet) or the
  // record too large for one: this transaction writes to the PGs' rings.
  plan->record.clear();
  plan->compressed = false;
  stream_full_fallbacks_.fetch_add(1);
  return home_all();
}

void RingStore::Repin(RingPg* pg, bool was_pinned, uint64_t old_pos) {
  const bool pinned = pg->bounds.homed < pg->bounds.tail;
  const uint64_t pos = pg->StreamPos();
  if (was_pinned == pinned && (!pinned || pos == old_pos)) return;
  if (was_pinned) stream_.Unpin(old_pos, pg);
  if (pinned) stream_.Pin(pos, pg);
}

void RingStore::CommitPointers(const Staging& staging, const std::vector<std::string>& records,
                               StreamPlan* plan, const StoreMeta& old_meta, Transaction* txn,
                               const std::shared_ptr<CommitPipeline::Txn>& ctxn,
                               std::vector<std::shared_ptr<RingWrite>>* writes) {
  ctxn->batch = txn->ReleaseBatch();
  if (!ctxn->batch) ctxn->batch = std::make_unique<rocksdb::WriteBatch>();
  // Every key the ring backend writes is a whole value written by the
  // store alone: a commit group keeps only the last write of each.
  StoreKeyWriter wb(ctxn->batch.get(), db_->cf(), &ctxn->store_keys);
  std::vector<uint32_t> to_free;
  std::vector<std::pair<std::shared_ptr<RingPg>, uint64_t>> heads;
  const StreamPointer& old_stream = plan->old_stream;
  const bool stream_existed = plan->stream_existed;
  for (size_t i = 0; i < staging.changes().size(); ++i) {
    PgChange* t = staging.changes()[i].get();
    RingPg* pg = t->pg.get();
    const bool was_pinned = pg->bounds.homed < pg->bounds.tail;
    const uint64_t old_pin = pg->StreamPos();
    if (t->removed) {
      if (was_pinned) stream_.Unpin(old_pin, pg);
      // Chunks go back to the free map only once the removal is durable.
      to_free.insert(to_free.end(), pg->chunks.chunks.begin(), pg->chunks.chunks.end());
      if (!t->created) {
        wb.Delete(PgPointerKey(pg->id));
        wb.Delete(PgChunksKey(pg->id));
      }
      continue;
    }
    if (!records[i].empty()) {
      const std::string& rec = records[i];
      const uint64_t new_tail = t->record_pos + rec.size();
      pg->image.Append(rec);
      pg->bounds.tail = new_tail;
      pg->bounds.tail_seq += 1;
      uint64_t homed = plan->homed_after[i];
      if (homed == new_tail) {
        // Homed to the tail (kPerPgRings, an idle bypass or a full stream):
        // its partial block goes too, under kNeverRewrite ended by a pad so
        // no later home writes it again. Else whole blocks only. The pad
        // fits its block (PlaceRecord); only a tail left by an older
        // version may need a block past it, and on a full partition the
        // block is written as it is, to be written again by the next home.
        if (!PadPartialBlock(pg)) {
          log_->Log(LogLevel::kWarning,
                    absl::StrCat("PG ", pg->name, ": no room for the pad record that ends its "
                                 "partial block at lpos ", pg->bounds.tail,
                                 "; the next home writes that block again"));
        }
        homed = pg->bounds.tail;
        writes->push_back(HomeWrite(t->pg, geo_.AlignUp(homed), homed));
      } else if (homed > pg->bounds.homed) {
        writes->push_back(HomeWrite(t->pg, homed, homed));
      }
      if (pg->bounds.homed < new_tail) {
        pg->unhomed_runs.push_back(
            plan->compressed
                ? UnhomedRun{new_tail, plan->slot.pos, plan->slot.pos + plan->record.size(), true}
                : UnhomedRun{new_tail, plan->slot.pos, plan->slot.pos + plan->bytes_end[i]});
      }
      if (t->restated) {
        pg->restated_tail = new_tail;
        restates_.fetch_add(1);
        restated_bytes_.fetch_add(rec.size());
      }
      pg->record_bytes_written += rec.size();
      pg->payload_bytes_written += t->payload;
      record_bytes_.fetch_add(rec.size());
      payload_bytes_.fetch_add(t->payload);
    }
    pg->bounds.head = pg->ComputeHead(pg->bounds.tail);
    // Bytes before the head are never read again: no need to home them.
    if (pg->bounds.homed < pg->bounds.head) pg->MoveHomed(pg->bounds.head);
    Repin(pg, was_pinned, old_pin);
    EvictOldUnhomed(pg);
    // Give back chunks wholly behind the head, beyond the reserve; behind
    // the stream a ring that holds none of the log gives back every chunk
    // (its records are in the stream, which may hold them for good; once
    // this is durable no pointer reads the ring).
    const bool ring_unused = stream_layout_ && pg->bounds.homed == pg->bounds.head;
    GiveBackBefore(&pg->chunks, geo_, ring_unused ? UINT64_MAX : pg->bounds.head,
                   ring_unused ? 0 : options_.reserve_chunks_per_pg, &to_free);
    // An empty ring's base stays at or before the head, where a reader of
    // the log starts (the ring holds none of it: homed is the head).
    if (pg->chunks.chunks.empty()) {
      pg->chunks.base = pg->bounds.homed / geo_.chunk_size * geo_.chunk_size;
    }
    // The pointer is written when something only it can say changes: the
    // chunk list, the head, the trim points, how far the ring holds the log
    // (homed), or that the stream holds some of it (a pointer with nothing
    // unhomed counts every record, so a PG that stays homed is never one
    // whose newest records may lie in damaged stream records). Records that
    // all went to the stream otherwise continue the PG's log past its
    // pointer's tail, and recovery reads them from there (docs/FORMAT.md,
    // "A pointer that lags its records"): a PG's pointer is written about
    // once per home or trim, not once per transaction.
    const bool chunks_changed = t->created || !(pg->chunks == t->undo.old_chunks());
    const PgPointer now = pg->Pointer();
    const PgPointer& was = pg->written_pointer;
    if (chunks_changed || was.unhomed == 0 || now.head != was.head ||
        now.homed() != was.homed() || !(now.entries_trimmed_to == was.entries_trimmed_to) ||
        !(now.dups_trimmed_to == was.dups_trimmed_to)) {
      wb.Put(PgPointerKey(pg->id), now.Encode());
      pg->written_pointer = now;
      heads.emplace_back(t->pg, pg->bounds.head);
    }
    if (chunks_changed) wb.Put(PgChunksKey(pg->id), pg->chunks.Encode());
  }
  if (meta_.next_pg_stamp != old_meta.next_pg_stamp) {
    wb.Put(std::string(kMetaKey), meta_.Encode());
  }
  const bool stream_record = !plan->record.empty();
  if (stream_record) {
    stream_.Place(plan->slot, plan->record.size());
  }
  ForceHomes(&wb, writes, &to_free);
  stream_.UpdateHead();
  stream_.GiveBackPassed(&to_free);
  if (cleaner_ != nullptr && WantsCleaning()) cleaner_->Wake(stream_.head());
  uint64_t stream_head = stream_.head();
  if (stream_.exists()) {
    if (!stream_existed || !(stream_.Pointer() == old_stream)) {
      wb.Put(std::string(kStreamPointerKey), stream_.Pointer().Encode());
    }
    if (!stream_existed || stream_.chunks_version() != plan->old_stream_chunks_version) {
      wb.Put(std::string(kStreamChunksKey), stream_.chunks().Encode());
    }
  } else if (stream_existed) {
    wb.Delete(std::string(kStreamPointerKey));
    wb.Delete(std::string(kStreamChunksKey));
  }
  // With gated_writes_share_flush the partition flush also makes the
  // embedder's writes durable, so a transaction with gates needs one even
  // when it writes no records.
  const int n_writes = static_cast<int>(writes->size()) + (stream_record ? 1 : 0);
  ctxn->needs_flush = n_writes > 0 ||
                      (options_.gated_writes_share_flush && !txn->gates().empty());
  ctxn->pending_writes.store(n_writes);
  // In the stream layout the commit thread issues them all (StartWrite).
  ctxn->log_writes.store(stream_layout_ ? n_writes : (stream_record ? 1 : 0));
  txns_in_flight_.fetch_add(1);
  ctxn->pending_ios.store(n_writes + static_cast<int>(txn->gates().size()) + 1);
  ctxn->on_durable = [this, to_free = std::move(to_free), heads = std::move(heads),
                      stream_head]() {
    for (uint32_t c : to_free) alloc_.Release(c);
    for (const auto& [pg, head] : heads) {
      uint64_t cur = pg->durable_head.load();
      while (cur < head && !pg->durable_head.compare_exchange_weak(cur, head)) {
      }
    }
    stream_.HeadDurable(stream_head);
    txns_in_flight_.fetch_sub(1);
  };
  // Enqueued before any of its writes can complete, in staging order.
  pipeline_->Enqueue(ctxn);
  // Queue each PG's write behind its earlier ones, in staging order, and
  // the stream record behind the stream's.
  for (auto& w : *writes) {
    w->txn = ctxn;
    MutexLock io(&w->pg->io_mu);
    w->pg->write_queue.push_back(w);
  }
  if (stream_record) stream_.Queue(plan->record, ctxn);
}

void RingStore::ForceHomes(StoreKeyWriter* wb, std::vector<std::shared_ptr<RingWrite>>* writes,
                           std::vector<uint32_t>* to_free) {
  if (!stream_.exists()) return;
  // In kPerPgRings every transaction homes some of what a stream left.
  stream_.UpdateHead();
  const bool full_enough =
      !stream_layout_ || stream_.PressesPartition() ||
      stream_.bytes_used() * 100 >= stream_.capacity() * options_.stream.force_home_percent;
  for (uint32_t n = 0; full_enough && n < options_.stream.max_forced_homes &&
                       !stream_.pins().empty();
       ++n) {
    RingPg* pg = stream_.pins().begin()->second;
    std::shared_ptr<RingPg> owner = *pgs_.Find(pg->id);  // a pinned PG is in the map
    const PgChunkList old_chunks = pg->chunks;
    const uint64_t old_pin = pg->StreamPos();
    // A PG with more to go than the budget: its oldest whole blocks (the
    // next forced home goes on from there). Else all of it, to its tail.
    // No room on the partition for its ring (or the pad) now: a later
    // transaction retries.
    std::vector<uint32_t> allocated;
    const uint64_t budget_end = pg->ImageStart() + stream_forced_home_bytes_;
    if (budget_end < geo_.AlignUp(pg->bounds.tail)) {
      if (!ReserveHome(pg, budget_end, &allocated).ok()) break;
      writes->push_back(HomeWrite(owner, budget_end, budget_end));
    } else {
      if (!ReserveHome(pg, geo_.AlignUp(pg->bounds.tail), &allocated).ok() ||
          !PadPartialBlock(pg)) {
        break;
      }
      const uint64_t tail = pg->bounds.tail;
      writes->push_back(HomeWrite(owner, geo_.AlignUp(tail), tail));
    }
    Repin(pg, true, old_pin);
    forced_homes_.fetch_add(1);
    pg->written_pointer = pg->Pointer();
    wb->Put(PgPointerKey(pg->id), pg->written_pointer.Encode());
    if (!(pg->chunks == old_chunks)) wb->Put(PgChunksKey(pg->id), pg->chunks.Encode());
  }
  stream_.UpdateHead();
  if (!stream_layout_ && stream_.pins().empty()) stream_.Drop(to_free);
}

bool RingStore::PadPartialBlock(RingPg* pg) {
  const uint64_t tail = pg->bounds.tail;
  if (options_.tail_block_policy != TailBlockPolicy::kNeverRewrite || tail % geo_.block_size == 0) {
    return true;
  }
  uint64_t end = geo_.AlignUp(tail);
  if (end - tail < kMinPadRecord) end += geo_.block_size;
  const uint64_t pad = end - tail;
  std::vector<uint32_t> allocated;
  if (!ReserveHome(pg, end, &allocated).ok()) return false;
  std::string rec;
  AppendPadRecord(&rec, kRecordTxn, pg->stamp, LapOf(pg->bounds.tail, geo_), pg->bounds.tail_seq,
                  pad);
  pg->image.Append(rec);
  pg->bounds.tail += rec.size();
  pg->bounds.tail_seq += 1;
  return true;
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
  if (!w->failure.ok()) return WriteDone(w, w->failure);
  if (stream_layout_) {
    // The commit thread's next round issues it (StartCommitThreadWrites).
    MutexLock l(&commit_thread_writes_mu_);
    commit_thread_writes_.push_back(w);
    return;
  }
  WriteExtents(device_.get(), w->extents, w->buffer, &seeks_, &writes_in_flight_,
               [this, w](absl::Status s) { WriteDone(w, s); });
}

bool RingStore::StartCommitThreadWrites(CallerWrites* io) {
  std::vector<std::shared_ptr<RingWrite>> writes;
  {
    MutexLock l(&commit_thread_writes_mu_);
    writes.swap(commit_thread_writes_);
  }
  bool started = false;
  for (const auto& w : writes) {
    if (w->issued.exchange(true)) continue;  // a reader issued it
    StartExtents(io, w->extents, w->buffer, &seeks_, [this, w](absl::Status s) { WriteDone(w, s); });
    started = true;
  }
  return started;
}

void RingStore::StreamWritten(std::vector<std::shared_ptr<CommitPipeline::Txn>> txns,
                              const absl::Status& s) {
  for (const auto& t : txns) {
    t->log_writes.fetch_sub(1);
    pipeline_->RingWriteDone(t.get(), s);
  }
}

void RingStore::WriteDone(const std::shared_ptr<RingWrite>& w, const absl::Status& s) {
  std::shared_ptr<RingWrite> next;
  const absl::Status failure =
      s.ok() ? s
             : absl::Status(s.code(), absl::StrCat("ring write for PG ", w->pg->name, ": ",
                                                   s.message()));
  {
    MutexLock io(&w->pg->io_mu);
    if (!s.ok()) {
      if (w->pg->io_failure.ok()) w->pg->io_failure = failure;
    } else if (w->pg->io_failure.ok()) {
      // Not past a failed write: its bytes are not on the ring, and a read
      // of them must get the write's error, not what the ring holds there
      // (which it would take for damage). The PG's later writes may still
      // succeed.
      w->pg->written_upto = std::max(w->pg->written_upto, w->end_lpos);
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
  if (stream_layout_) w->txn->log_writes.fetch_sub(1);
  pipeline_->RingWriteDone(w->txn.get(), failure);
  if (next) {
    StartWrite(next);
    // Queued for the commit thread, whose round may have been the last its
    // transaction woke it for.
    if (stream_layout_) pipeline_->LogWanted();
  }
}

// ---------------------------------------------------------------------------
// Reads

absl::Status RingStore::WaitWritten(RingPg* pg, uint64_t lpos) const {
  MutexLock io(&pg->io_mu);
  while (pg->written_upto <= lpos && pg->io_failure.ok()) {
    // The stream layout: the PG's next write may still wait for the commit
    // thread's next round, and the commit thread for the staging lock this
    // reader holds (a callback that submits). So the reader issues it on
    // the device itself; it completes on the device's thread.
    std::shared_ptr<RingWrite> w;
    if (stream_layout_ && !pg->write_queue.empty() && !pg->write_queue.front()->issued.load()) {
      w = pg->write_queue.front();
    }
    if (w != nullptr && !w->issued.exchange(true)) {
      // A plain write, not one of the commit thread's durable ones.
      w->txn->written_off_round.store(true);
      // A read is const; the write it issues is the store's own (the one
      // the commit thread would have issued).
      RingStore* self = const_cast<RingStore*>(this);
      pg->io_mu.Unlock();
      WriteExtents(device_.get(), w->extents, w->buffer, &seeks_, &writes_in_flight_,
                   [self, w](absl::Status s) { self->WriteDone(w, s); });
      pg->io_mu.Lock();
      continue;
    }
    pg->written_cv.Wait(&pg->io_mu);
  }
  return pg->written_upto > lpos ? absl::OkStatus() : pg->io_failure;
}

absl::Status RingStore::ReadRecords(
    RingPg* pg, uint64_t first, uint64_t last,
    const std::function<void(uint64_t, std::string_view)>& fn) const {
  // Bytes from ImageStart() on come from memory (the unhomed ones read
  // back from the stream first when they are needed and not resident);
  // those before it from the ring, once the writes that home them have
  // completed.
  const uint64_t image_start = pg->ImageStart();
  const uint64_t cold_end = pg->ColdEnd();
  uint64_t overlay_start = cold_end;
  std::string_view overlay = pg->image.resident();
  std::string assembled;
  if (geo_.AlignDown(first) < cold_end) {
    // The reader's first block starts before the resident bytes.
    assembled = pg->ring_prefix;
    RETURN_IF_ERROR(UnhomedBytes(*pg, pg->bounds.homed, pg->bounds.tail, &assembled));
    overlay_start = image_start;
    overlay = assembled;
  }
  if (first < image_start) RETURN_IF_ERROR(WaitWritten(pg, image_start - 1));
  RingReader reader(device_.get(), geo_, pg->chunks, pg->name, pg->stamp, first, pg->bounds.tail);
  reader.SetOverlay(overlay_start, overlay);
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
  MappingTable::Cursor k = table.At(i);
  absl::Status s = ReadRecords(
      pg, MappingTable::Pos(table.at(i), anchor), MappingTable::Pos(table.at(j - 1), anchor),
      [&](uint64_t lpos, std::string_view body) {
        for (const Item& it : LiveItems(body, kind)) {
          while (k.index() < j && MappingTable::Pos(k.slot(), anchor) < lpos) k.Next();
          if (k.index() < j && MappingTable::Pos(k.slot(), anchor) == lpos &&
              k.slot().v() == it.version) {
            out.push_back(LogEntry{it.version, std::string(it.payload)});
            k.Next();
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
  s->unhomed_bytes = pg.bounds.tail - pg.bounds.homed;
  s->unhomed_resident_bytes = pg.image.resident_size();
  s->stream_records = pg.unhomed_runs.size();
  s->bytes_written = pg.record_bytes_written;
  s->payload_bytes_written = pg.payload_bytes_written;
}

void RingStore::AddStoreStats(StoreStats* s) const {
  s->total_chunks = geo_.chunk_count;
  s->free_chunks = alloc_.free_count();
  s->chunk_size = geo_.chunk_size;
  s->record_bytes_appended = record_bytes_.load();
  s->payload_bytes_appended = payload_bytes_.load();
  s->device_seeks = seeks_.seeks();
  s->stream_chunks = stream_.chunks().chunks.size();
  s->stream_max_chunks = stream_layout_ ? stream_.max_chunks() : 0;
  s->stream_bytes_used = stream_.exists() ? stream_.bytes_used() : 0;
  s->stream_records = stream_.records();
  s->stream_compressed_records = compressed_records_.load();
  s->stream_compression_saved_bytes = compression_saved_bytes_.load();
  s->stream_writes = stream_.writes();
  s->stream_bytes_written = stream_.bytes_written();
  s->home_writes = home_writes_.load();
  s->home_bytes_written = home_bytes_.load();
  s->forced_homes = forced_homes_.load();
  s->stream_restates = restates_.load();
  s->stream_restated_bytes = restated_bytes_.load();
  s->stream_full_fallbacks = stream_full_fallbacks_.load();
  s->stream_reads = stream_reads_.load();
  s->stream_bytes_read = stream_bytes_read_.load();
  for (const auto& [id, pg] : pgs_) {
    s->unhomed_resident_bytes += pg->image.resident_size();
    s->stream_index_bytes += pg->unhomed_runs.bytes();
  }
}

}  // namespace pgring
