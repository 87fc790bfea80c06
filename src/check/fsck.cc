#include "check/fsck.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "format/rocksdb_backend_keys.h"
#include "check/stream_view.h"
#include "util/status_macros.h"

namespace pgring {
namespace {

// The log stream's keys and chunk claims (made before any PG's, as the
// store makes them). Returns whether the stream can be read.
bool CheckStreamKeysAndClaims(const StreamKeys& st, const Geometry& g, uint64_t first_missing,
                              RingClaims* claims, std::vector<VerifyProblem>* out) {
  if (!st.present()) return false;
  bool usable = true;
  if (!st.has_pointer_key) {
    out->push_back(StreamProblem(
        "chunk-list-without-pointer",
        absl::StrCat("has a chunk list (", std::string(kStreamChunksKey), ") but no pointer (",
                     std::string(kStreamPointerKey), "): the stream's head and tail are unknown")));
    usable = false;
  } else if (!st.pointer.ok()) {
    out->push_back(StreamProblem(
        "pointer-damaged", absl::StrCat("RocksDB key ", std::string(kStreamPointerKey), ": ",
                                        st.pointer.status().message())));
    usable = false;
  }
  if (!st.has_chunks_key) {
    out->push_back(StreamProblem(
        "pointer-without-chunk-list",
        absl::StrCat("has a pointer (", std::string(kStreamPointerKey), ") but no chunk list (",
                     std::string(kStreamChunksKey), "): where its records lie is unknown")));
    usable = false;
  } else if (!st.chunks.ok()) {
    out->push_back(StreamProblem(
        "chunk-list-damaged", absl::StrCat("RocksDB key ", std::string(kStreamChunksKey), ": ",
                                           st.chunks.status().message())));
    usable = false;
  }
  if (!st.chunks.ok()) return false;
  const PgChunkList& c = *st.chunks;
  if (absl::Status b = CheckChunkListBase(c, g.chunk_size); !b.ok()) {
    out->push_back(StreamProblem("chunk-list-misaligned", std::string(b.message())));
    usable = false;
  }
  if (st.pointer.ok()) {
    if (absl::Status b = CheckPointerInChunks(st.pointer->head, st.pointer->tail, c, g.chunk_size);
        !b.ok()) {
      out->push_back(StreamProblem("pointer-outside-ring", std::string(b.message())));
      usable = false;
    }
  }
  for (size_t i = 0; i < c.chunks.size(); ++i) {
    const uint32_t n = c.chunks[i];
    const RingClaims::Verdict claim = claims->ClaimStreamChunk(i, n);
    if (!claim.ok()) {
      VerifyProblem p =
          StreamProblem(claim.broken == RingClaims::Broken::kChunkOutOfRange ? "chunk-out-of-range"
                                                                             : "chunk-owned-twice",
                        claim.message);
      p.chunk = n;
      out->push_back(std::move(p));
      usable = false;
    } else if (n >= first_missing) {
      usable = false;  // partition-truncated names the missing end
    }
  }
  return usable;
}

// A PG's unhomed bytes that the stream does not give as its pointer says,
// or whose newest records may lie in damaged stream records.
VerifyProblem UnhomedProblem(const PgId& id, const PgPointer& p, const UnhomedBytes& u) {
  VerifyProblem e = PgProblem(id, u.lost_newest ? "unhomed-unknown-end" : "unhomed-missing",
                              std::string(u.error.message()));
  // The message names the PG already.
  const std::string prefix = absl::StrCat("PG ", id.ToString(), ": ");
  if (e.message.rfind(prefix, 0) == 0) e.message.erase(0, prefix.size());
  e.lpos = p.homed();
  e.stream_lpos = u.stream_lpos;
  return e;
}

// The label, pgring.meta, their binding and the partition's size. Sets
// *pg_checks_ok to false when the PGs cannot be checked against this
// partition at all.
void CheckStore(const OfflineStore& s, VerifyReport* r, bool* pg_checks_ok) {
  const auto& label = s.label();
  const auto& meta = s.meta();
  const bool meta_ok = meta && meta->ok();
  const absl::Status meta_geometry = meta_ok ? CheckMetaGeometry(**meta) : absl::OkStatus();
  if (!label.ok()) {
    VerifyProblem p = StoreProblem("label-damaged", std::string(label.status().message()));
    p.offset = 0;
    if (meta_ok && meta_geometry.ok()) {
      p.fixable = true;
      absl::StrAppend(&p.message,
                      "; pgring.meta holds every field of the label, so `repair` "
                      "can write it again");
    }
    r->problems.push_back(std::move(p));
  }
  if (meta && !meta->ok()) {
    r->problems.push_back(StoreProblem(
        "meta-damaged", absl::StrCat("RocksDB key pgring.meta: ", meta->status().message())));
  }
  if (!meta_geometry.ok()) {
    const StoreMeta& m = **meta;
    r->problems.push_back(StoreProblem(
        "meta-damaged", absl::StrFormat("RocksDB key pgring.meta: inconsistent geometry (block %u, "
                                        "chunk %u, size %u, %u chunks, "
                                        "backend %u) under a valid CRC: %s",
                                        m.block_size, m.chunk_size, m.partition_size, m.chunk_count,
                                        static_cast<int>(m.backend), meta_geometry.message())));
  }
  if (s.expand_interrupted()) {
    VerifyProblem p = StoreProblem(
        "expand-interrupted",
        "the label says the store was grown and pgring.meta still has the old size: an expand "
        "stopped between its two writes; the store opens as grown, and its next writable open "
        "(or `pgring-tool expand` again) writes the new size to pgring.meta");
    p.severity = VerifyProblem::Severity::kNote;
    r->problems.push_back(std::move(p));
  }
  if (label.ok() && meta_ok && meta_geometry.ok()) {
    const absl::Status binding =
        CheckMetaMatchesLabel(*label, **meta, "the partition", "the RocksDB");
    if (absl::IsFailedPrecondition(binding)) {
      r->problems.push_back(StoreProblem("uuid-mismatch", std::string(binding.message())));
      r->not_checked.push_back("the PGs: the partition is not this RocksDB's");
      *pg_checks_ok = false;
    } else if (!binding.ok()) {
      r->problems.push_back(StoreProblem("geometry-mismatch", std::string(binding.message())));
      r->not_checked.push_back("the PGs: the label and pgring.meta disagree about the geometry");
      *pg_checks_ok = false;
    }
  }
  if (!s.geometry()) {
    r->not_checked.push_back("the PGs: neither the label nor pgring.meta gives the geometry");
    *pg_checks_ok = false;
  }
}

// The first chunk number that does not lie wholly on the device.
uint64_t FirstMissingChunk(const OfflineStore& s, const Geometry& g) {
  uint64_t size = s.device()->size();
  if (size <= g.data_offset) return 0;
  return std::min<uint64_t>(g.chunk_count, (size - g.data_offset) / g.chunk_size);
}

uint64_t PartitionSize(const OfflineStore& s) {
  if (s.label().ok()) return s.label()->partition_size;
  if (s.meta() && s.meta()->ok()) return (*s.meta())->partition_size;
  return 0;
}

absl::Status CheckRing(const OfflineStore& s, const FsckOptions& o, bool pg_checks_ok,
                       FsckResult* r) {
  VerifyReport& report = r->report;
  std::vector<VerifyProblem> store_problems;
  std::map<PgId, RingPgKeys> keys;
  StreamKeys stream;
  RETURN_IF_ERROR(LoadRingPgKeys(*s.db(), &keys, &stream, &store_problems));
  report.pgs = keys.size();
  std::map<PgId, std::vector<VerifyProblem>> pg_problems;
  if (!pg_checks_ok) {
    for (auto& p : store_problems) report.problems.push_back(std::move(p));
    return absl::OkStatus();
  }
  const Geometry g = *s.geometry();
  report.chunk_count = g.chunk_count;
  const uint64_t first_missing = FirstMissingChunk(s, g);
  const bool meta_ok = s.meta() && s.meta()->ok();
  const std::optional<uint32_t> next_stamp =
      meta_ok ? std::optional<uint32_t>((*s.meta())->next_pg_stamp) : std::nullopt;

  RingClaims claims(g.chunk_count, next_stamp);
  // The stream's chunks first, as the store claims them: a PG naming one
  // of them is the one reported.
  const bool stream_usable =
      CheckStreamKeysAndClaims(stream, g, first_missing, &claims, &store_problems);
  r->stream_usable = stream_usable;
  if (stream.pointer.ok() && stream.chunks.ok()) {
    VerifyStreamSummary summary;
    summary.head = stream.pointer->head;
    summary.tail = stream.pointer->tail;
    summary.chunks = stream.chunks->chunks.size();
    report.stream = summary;
    r->stream_tail_seq = stream.pointer->tail_seq;
  }
  bool stream_conflicted = false;
  std::set<uint32_t> stream_chunks;
  if (stream.chunks.ok()) {
    stream_chunks.insert(stream.chunks->chunks.begin(), stream.chunks->chunks.end());
  }
  std::vector<PgId> on_missing_end;
  std::vector<PgId> conflicted;
  for (auto& [id, k] : keys) {
    FsckPg& f = r->ring_pgs[id];
    f.keys = k;
    auto& out = pg_problems[id];
    bool usable = true;
    if (!k.has_pointer_key) {
      out.push_back(
          PgProblem(id, "chunk-list-without-pointer",
                    "has a chunk list (pgring.chunks key) but no pointer (pgring.ptr key)"));
      usable = false;
    } else if (!k.pointer.ok()) {
      out.push_back(
          PgProblem(id, "pointer-damaged",
                    absl::StrCat("RocksDB key pgring.ptr: ", k.pointer.status().message())));
      usable = false;
    }
    if (!k.has_chunks_key) {
      out.push_back(
          PgProblem(id, "pointer-without-chunk-list",
                    "has a pointer (pgring.ptr key) but no chunk list (pgring.chunks key)"));
      usable = false;
    } else if (!k.chunks.ok()) {
      out.push_back(
          PgProblem(id, "chunk-list-damaged",
                    absl::StrCat("RocksDB key pgring.chunks: ", k.chunks.status().message())));
      usable = false;
    }
    if (k.pointer.ok()) {
      const RingClaims::Verdict claim = claims.ClaimStamp(id, k.pointer->stamp);
      if (!claim.ok()) {
        out.push_back(PgProblem(id, claim.broken == RingClaims::Broken::kStampShared
                                        ? "stamp-shared" : "stamp-invalid",
                                claim.message));
      }
    }
    if (k.chunks.ok()) {
      const PgChunkList& c = *k.chunks;
      if (absl::Status b = CheckChunkListBase(c, g.chunk_size); !b.ok()) {
        out.push_back(PgProblem(id, "chunk-list-misaligned", std::string(b.message())));
        usable = false;
      }
      if (k.pointer.ok()) {
        if (absl::Status b = CheckPgPointerInChunks(k.pointer->head, k.pointer->homed(),
                                                    k.pointer->tail, c, g.chunk_size);
            !b.ok()) {
          out.push_back(PgProblem(id, "pointer-outside-ring", std::string(b.message())));
          usable = false;
        }
      }
      bool missing = false;
      for (size_t i = 0; i < c.chunks.size(); ++i) {
        const uint32_t n = c.chunks[i];
        const RingClaims::Verdict claim = claims.ClaimChunk(id, i, n);
        if (claim.broken != RingClaims::Broken::kChunkOutOfRange && n >= first_missing) {
          missing = true;
        }
        if (!claim.ok()) {
          VerifyProblem p =
              PgProblem(id,
                        claim.broken == RingClaims::Broken::kChunkOutOfRange ? "chunk-out-of-range"
                                                                             : "chunk-owned-twice",
                        claim.message);
          p.chunk = n;
          out.push_back(std::move(p));
          usable = false;
          if (claim.broken == RingClaims::Broken::kChunkShared) {
            // The first claimant: the stream (claimed before every PG) or a PG.
            if (stream_chunks.count(n)) {
              stream_conflicted = true;
            } else {
              conflicted.push_back(claim.other);
            }
          }
        }
      }
      if (missing) {
        on_missing_end.push_back(id);
        usable = false;
      }
      if (k.pointer.ok() && k.pointer->tail <= RingEnd(c, g) && k.pointer->tail >= c.base) {
        const uint64_t used = k.pointer->tail - c.base;
        f.needed_chunks = (used + g.chunk_size - 1) / g.chunk_size;
        if (c.chunks.size() > f.needed_chunks) {
          std::vector<std::string> extra;
          for (size_t i = f.needed_chunks; i < c.chunks.size(); ++i) {
            extra.push_back(absl::StrCat(c.chunks[i]));
          }
          VerifyProblem p = PgProblem(
              id, "chunk-beyond-tail",
              absl::StrFormat(
                  "the chunk list holds %u chunk(s) past the one holding the tail (chunk(s) %s); "
                  "the ring does not need them, and `repair` gives them back",
                  extra.size(), absl::StrJoin(extra, ", ")));
          p.chunk = c.chunks[f.needed_chunks];
          p.fixable = true;
          out.push_back(std::move(p));
        }
      }
    }
    if (k.pointer.ok() && k.pointer->unhomed != 0) {
      const PgPointer& p = *k.pointer;
      std::string why;
      if (!stream.present()) {
        why = absl::StrCat("the store has no log stream (no ", std::string(kStreamPointerKey),
                           " key)");
      } else if (stream.pointer.ok() &&
                 (p.stream_pos < stream.pointer->head || p.stream_pos >= stream.pointer->tail)) {
        why = absl::StrFormat("that lies outside the stream's committed range [%u, %u)",
                              stream.pointer->head, stream.pointer->tail);
      }
      if (!why.empty()) {
        VerifyProblem e = PgProblem(
            id, "unhomed-missing",
            absl::StrFormat("its ring bytes [%u, %u) are in the log stream from stream lpos %u, "
                            "but %s",
                            p.homed(), p.tail, p.stream_pos, why));
        e.lpos = p.homed();
        e.stream_lpos = p.stream_pos;
        out.push_back(std::move(e));
        usable = false;
      }
    }
    f.usable = usable;
  }
  // Both claimants of a chunk are unusable, whichever was read first.
  for (const PgId& id : conflicted) r->ring_pgs[id].usable = false;
  r->stream_usable = stream_usable && !stream_conflicted;
  bool stream_on_missing_end = false;
  for (uint32_t n : stream_chunks) stream_on_missing_end |= n >= first_missing && n < g.chunk_count;
  if (PartitionSize(s) > s.device()->size()) {
    std::vector<std::string> names;
    for (const PgId& id : on_missing_end) names.push_back(id.ToString());
    VerifyProblem p = StoreProblem(
        "partition-truncated",
        absl::StrFormat(
            "the device is %u bytes but the store spans %u: chunks %u..%u are past its end%s%s",
            s.device()->size(), PartitionSize(s), first_missing,
            g.chunk_count == 0 ? 0 : g.chunk_count - 1,
            names.empty()
                ? std::string("; no PG owns any of them")
                : absl::StrCat("; PG(s) ", absl::StrJoin(names, ", "), " own chunks there"),
            stream_on_missing_end ? "; the log stream has chunks there" : ""));
    p.offset = s.device()->size();
    store_problems.insert(store_problems.begin(), std::move(p));
  }
  report.owned_chunks = claims.chunks_claimed();
  report.free_chunks = g.chunk_count - std::min<uint64_t>(g.chunk_count, claims.chunks_claimed());

  if (o.deep) {
    // The stream once, from its head to its tail: every record checked, and
    // each PG's bytes past its homed position collected for its scan.
    std::map<PgId, const RingPgKeys*> readable;
    for (auto& [id, f] : r->ring_pgs) {
      if (f.usable) readable.emplace(id, &f.keys);
    }
    StreamRead stream_read;
    if (r->stream_usable || !stream.present()) {
      auto read = ReadStreamForPgs(s.device(), g, stream, readable, /*report=*/true);
      if (read.ok()) {
        stream_read = *std::move(read);
        store_problems.insert(store_problems.end(), stream_read.problems.begin(),
                              stream_read.problems.end());
      } else {
        // The device failed: the PGs with bytes in the stream are not read
        // (not checked, below).
        store_problems.push_back(
            StreamProblem("read-error", absl::StrCat("reading the log stream: ",
                                                     read.status().message())));
      }
    } else {
      report.not_checked.push_back(
          "the log stream's records: its keys or chunks are not usable (see above)");
    }
    uint64_t total = 0;
    for (auto& [id, f] : r->ring_pgs) total += f.usable ? 1 : 0;
    uint64_t done = 0;
    for (auto& [id, f] : r->ring_pgs) {
      if (!f.usable) {
        report.not_checked.push_back(
            absl::StrCat("the records of PG ", id.ToString(),
                         ": its keys or chunks are not usable (see above)"));
        continue;
      }
      std::string_view unhomed;
      if (f.keys.pointer->unhomed != 0) {
        auto u = stream_read.unhomed.find(id);
        if (u == stream_read.unhomed.end()) {
          // The stream's keys are unusable: reported once, above.
          report.not_checked.push_back(absl::StrCat(
              "the records of PG ", id.ToString(),
              ": its newest bytes are in the log stream, which cannot be read (see above)"));
          continue;
        }
        if (!u->second.error.ok()) {
          pg_problems[id].push_back(UnhomedProblem(id, *f.keys.pointer, u->second));
          report.not_checked.push_back(
              absl::StrCat("the records of PG ", id.ToString(),
                           ": its newest bytes are not all in the log stream (see above)"));
          continue;
        }
        unhomed = u->second.bytes;
        ++report.stream->unhomed_pgs;
        report.stream->unhomed_bytes += unhomed.size();
      }
      PgScanOptions so;
      so.inspect_past_tail = true;
      f.scan = ScanRingPg(s.device(), g, id, *f.keys.pointer, *f.keys.chunks, unhomed, so);
      report.records += f.scan->records;
      report.entries += f.scan->entries.size();
      report.dups += f.scan->dups.size();
      auto& out = pg_problems[id];
      out.insert(out.end(), f.scan->problems.begin(), f.scan->problems.end());
      // Counted: the items are not kept, so that a deep check holds one
      // PG's at a time, not the store's (1,024 PGs x 3,000 entries held
      // ~280 MB more at its peak than an open). Nothing after the checks
      // reads them.
      f.scan->entries = {};
      f.scan->dups = {};
      ++done;
      if (o.progress) o.progress(done, total);
    }
  }
  for (auto& p : store_problems) report.problems.push_back(std::move(p));
  for (auto& [id, ps] : pg_problems) {
    for (auto& p : ps) report.problems.push_back(std::move(p));
  }
  return absl::OkStatus();
}

// The RocksDB backend: its log keys, as RocksDbLogStore::Load reads them.
absl::Status CheckRocksDb(const OfflineStore& s, VerifyReport* r) {
  struct PgLogKeysSeen {
    bool has_state = false;
    absl::StatusOr<PgStateValue> state = absl::NotFoundError("no _state");
    std::optional<Version> first_entry, first_dup;
    uint64_t entries = 0, dups = 0;
  };
  std::map<PgId, PgLogKeysSeen> pgs;
  std::vector<VerifyProblem> store_problems;
  std::map<PgId, std::vector<VerifyProblem>> pg_problems;
  RETURN_IF_ERROR(s.db()->Scan(kKeyPrefix, [&](std::string_view k, std::string_view v) {
    const StoreKeyKind kind = ClassifyStoreKey(k);
    if (kind == StoreKeyKind::kMeta) return absl::OkStatus();
    if (kind != StoreKeyKind::kPgLog) {
      const bool ring = kind == StoreKeyKind::kPgPointer || kind == StoreKeyKind::kPgChunks ||
                        kind == StoreKeyKind::kStreamPointer ||
                        kind == StoreKeyKind::kStreamChunks;
      store_problems.push_back(StoreProblem(
          "key-malformed",
          absl::StrCat("RocksDB key '", absl::CHexEscape(std::string(k)), "' ",
                       ring ? "belongs to the ring backend, but this is a RocksDB-backend store"
                            : "is not a key pgring writes")));
      return absl::OkStatus();
    }
    PgId id;
    std::string_view suffix;
    if (!SplitPgLogKey(k, &id, &suffix)) {
      store_problems.push_back(StoreProblem(
          "key-malformed", absl::StrCat("RocksDB key '", absl::CHexEscape(std::string(k)),
                                        "' is not a valid PG log key (bad PG id)")));
      return absl::OkStatus();
    }
    PgLogKeysSeen& pg = pgs[id];
    auto bad_name = [&](const char* kind, const char* what, const char* expected) {
      pg_problems[id].push_back(PgProblem(
          id, kind,
          absl::StrCat(what, "key name '", absl::CHexEscape(std::string(suffix)), "' ", expected)));
    };
    const PgLogKeyClass key = ClassifyPgLogKeyName(suffix);
    switch (key.kind) {
      case PgLogKeyKind::kEntry:
        if (!pg.first_entry) pg.first_entry = key.version;
        ++pg.entries;
        break;
      case PgLogKeyKind::kDup:
        if (!pg.first_dup) pg.first_dup = key.version;
        ++pg.dups;
        break;
      case PgLogKeyKind::kInfo:  // opaque
        break;
      case PgLogKeyKind::kState:
        pg.has_state = true;
        pg.state = PgStateValue::Decode(v);
        if (!pg.state.ok()) {
          pg_problems[id].push_back(
              PgProblem(id, "rdb-state-damaged",
                        absl::StrCat("RocksDB key _state: ", pg.state.status().message())));
        }
        break;
      case PgLogKeyKind::kMalformedEntry:
        bad_name("rdb-key-malformed", "entry ", "is not EPOCH.VERSION (%010u.%020u)");
        break;
      case PgLogKeyKind::kMalformedDup:
        bad_name("rdb-key-malformed", "dup ", "is not dup_EPOCH.VERSION");
        break;
      case PgLogKeyKind::kUnknown:
        bad_name("rdb-key-unknown", "", "is not an entry, a dup, _info or _state");
        break;
    }
    return absl::OkStatus();
  }));
  r->pgs = pgs.size();
  for (auto& [id, pg] : pgs) {
    r->entries += pg.entries;
    r->dups += pg.dups;
    auto& out = pg_problems[id];
    if (!pg.has_state) {
      out.push_back(PgProblem(id, "rdb-state-missing", "has log keys but no _state key"));
    } else if (pg.state.ok()) {
      if (pg.first_entry && *pg.first_entry <= pg.state->entries_trimmed_to) {
        out.push_back(PgProblem(
            id, "rdb-trimmed-entry",
            absl::StrFormat("entry %s survived the trim to %s", pg.first_entry->ToString(),
                            pg.state->entries_trimmed_to.ToString())));
      }
      if (pg.first_dup && *pg.first_dup <= pg.state->dups_trimmed_to) {
        out.push_back(
            PgProblem(id, "rdb-trimmed-dup",
                      absl::StrFormat("dup %s survived the trim to %s", pg.first_dup->ToString(),
                                      pg.state->dups_trimmed_to.ToString())));
      }
    }
  }
  for (auto& p : store_problems) r->problems.push_back(std::move(p));
  for (auto& [id, ps] : pg_problems) {
    for (auto& p : ps) r->problems.push_back(std::move(p));
  }
  return absl::OkStatus();
}

// Every check, in order: the store's own (the label, pgring.meta), then the
// backend's keys and records, store-wide problems before each PG's.
void CheckAll(const OfflineStore& s, const FsckOptions& o, FsckResult* result) {
  VerifyReport& r = result->report;
  r.deep = o.deep;
  r.backend = s.backend();
  if (s.label().ok()) {
    r.uuid = s.label()->uuid.ToString();
  } else if (s.meta() && s.meta()->ok()) {
    r.uuid = (*s.meta())->uuid.ToString();
  }
  bool pg_checks_ok = true;
  CheckStore(s, &r, &pg_checks_ok);
  if (s.db() == nullptr) {
    r.not_checked.push_back("the PGs: no RocksDB given (--db)");
    return;
  }
  if (s.backend() == Backend::kRocksDb) {
    std::vector<VerifyProblem> store_level = std::move(r.problems);
    r.problems.clear();
    absl::Status st = CheckRocksDb(s, &r);
    if (!st.ok()) {
      VerifyProblem p = StoreProblem("rocksdb-read-error", std::string(st.message()));
      r.problems.push_back(std::move(p));
    }
    store_level.insert(store_level.end(), r.problems.begin(), r.problems.end());
    r.problems = std::move(store_level);
    if (o.deep) {
      r.not_checked.push_back(
          "records: the RocksDB backend has none; its values are covered by RocksDB's own "
          "checksums, verified as fsck read every key");
    }
    return;
  }
  std::vector<VerifyProblem> store_level = std::move(r.problems);
  r.problems.clear();
  absl::Status st = CheckRing(s, o, pg_checks_ok, result);
  if (!st.ok()) r.problems.push_back(StoreProblem("rocksdb-read-error", std::string(st.message())));
  store_level.insert(store_level.end(), r.problems.begin(), r.problems.end());
  r.problems = std::move(store_level);
}

// The report's errors and fixable, from its problems: the one place they
// are counted.
void CountErrors(VerifyReport* r) {
  r->errors = 0;
  r->fixable = 0;
  for (const VerifyProblem& p : r->problems) {
    if (p.severity != VerifyProblem::Severity::kError) continue;
    ++r->errors;
    r->fixable += p.fixable ? 1 : 0;
  }
}

}  // namespace

absl::StatusOr<FsckResult> RunFsck(const OfflineStore& s, const FsckOptions& o) {
  FsckResult r;
  CheckAll(s, o, &r);
  CountErrors(&r.report);
  return r;
}

}  // namespace pgring
