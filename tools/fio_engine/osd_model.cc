#include "osd_model.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ceph_payload.h"

namespace pgring::fio {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t PayloadMix(char tag, uint64_t a, uint64_t b) {
  uint64_t s = (static_cast<uint64_t>(static_cast<unsigned char>(tag)) << 56) ^ (a * 0x100000001b3ull) ^
               (b + 0x632be59bd9b4e019ull);
  SplitMix64(s);
  return SplitMix64(s);
}

namespace {

// Payload layout: byte 0 the tag, bytes 1..7 `a` (7 low bytes, little
// endian), bytes 8..15 `b`, then pseudo-random bytes seeded by all three —
// a payload found in the wrong place or the wrong PG never matches.
std::string Payload(char tag, uint64_t a, uint64_t b, size_t size) {
  std::string out(size, '\0');
  char header[16];
  header[0] = tag;
  for (int i = 0; i < 7; ++i) header[1 + i] = static_cast<char>(a >> (8 * i));
  for (int i = 0; i < 8; ++i) header[8 + i] = static_cast<char>(b >> (8 * i));
  std::memcpy(out.data(), header, std::min(size, sizeof(header)));
  uint64_t state = PayloadMix(tag, a, b);
  for (size_t pos = sizeof(header); pos < size; pos += 8) {
    uint64_t r = SplitMix64(state);
    std::memcpy(out.data() + pos, &r, std::min<size_t>(8, size - pos));
  }
  return out;
}

}  // namespace

uint32_t CephStableMod(uint32_t x, uint32_t b) {
  uint32_t bmask = 1;
  while (bmask < b) bmask <<= 1;
  bmask -= 1;
  return (x & bmask) < b ? (x & bmask) : (x & (bmask >> 1));
}

uint32_t ObjectHash(uint64_t object) {
  uint32_t h = 0;
  for (int i = 0; i < 8; ++i) {
    h += static_cast<uint8_t>(object >> (8 * i));
    h += h << 10;
    h ^= h >> 6;
  }
  h += h << 3;
  h ^= h >> 11;
  h += h << 15;
  return h;
}

std::string EntryPayload(const EngineConfig& c, uint32_t pg, uint64_t version) {
  if (c.payload == EngineConfig::Payload::kCeph) return CephLogEntry(c, pg, version);
  const uint64_t span = static_cast<uint64_t>(c.entry_max) - c.entry_min + 1;
  return Payload('E', pg, version, c.entry_min + PayloadMix('S', pg, version) % span);
}

std::string DupPayload(const EngineConfig& c, uint32_t pg, uint64_t version) {
  if (c.payload == EngineConfig::Payload::kCeph) return CephLogDup(c, pg, version);
  return Payload('D', pg, version, c.dup_size);
}

std::string InfoPayload(const EngineConfig& c, uint32_t pg, uint64_t version, bool full) {
  if (c.payload == EngineConfig::Payload::kCeph) {
    return full ? CephPgInfo(c, pg, version) : CephPgFastInfo(c, pg, version);
  }
  return full ? Payload('I', pg, version, c.info_size) : Payload('F', pg, version, c.fastinfo_size);
}

std::string OnodeKey(uint64_t object) { return absl::StrFormat("onode.%016x", object); }

std::string OnodePayload(const EngineConfig& c, uint64_t object, uint64_t version) {
  return Payload('O', object, version, c.OnodeValueSize());
}

namespace {

// Puts the object's onode (if the model has onodes) into `txn`'s batch;
// returns its bytes.
uint64_t PutOnode(const EngineConfig& c, uint64_t object, uint64_t version, Transaction* txn) {
  if (c.OnodeValueSize() == 0) return 0;
  std::string onode = OnodePayload(c, object, version);
  txn->batch()->Put(OnodeKey(object), onode);
  return onode.size();
}

}  // namespace

PgId PgIdOfSlot(uint32_t slot, uint32_t pgs_per_pool) {
  return PgId{kFirstPool + slot / pgs_per_pool, slot % pgs_per_pool, -1};
}

std::optional<uint32_t> SlotOf(const PgId& id, uint32_t pgs_per_pool, uint32_t pools) {
  if (id.shard != -1 || id.pool < kFirstPool || id.pool >= kFirstPool + pools ||
      id.seed >= pgs_per_pool) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(id.pool - kFirstPool) * pgs_per_pool + id.seed;
}

OsdModel::OsdModel(const EngineConfig& config)
    : config_(config), target_(config.TargetLogEntries()) {
  const uint64_t slots = config_.TotalPgs();
  pgs_.reserve(slots);
  for (uint64_t i = 0; i < slots; ++i) pgs_.push_back(std::make_unique<PgState>());
}

PgExpectation OsdModel::Expectation(uint32_t pg) const {
  std::lock_guard<std::mutex> lk(pgs_[pg]->mu);
  return pgs_[pg]->x;
}

absl::Status OsdModel::Setup(Store* store) {
  auto listed = store->ListPgs();
  if (!listed.ok()) return listed.status();
  std::set<uint32_t> present;
  for (const PgId& id : *listed) {
    if (auto slot = SlotOf(id, config_.pgs, config_.pools)) present.insert(*slot);
  }
  // PGs left by an earlier run: continue their logs where they end.
  for (uint32_t pg : present) {
    const PgId id = PgIdOf(pg);
    PgExpectation& x = pgs_[pg]->x;
    auto st = store->GetPgStats(id);
    if (!st.ok()) return st.status();
    if (st->entries > 0) {
      if (st->first_version.epoch != st->last_version.epoch ||
          st->last_version.version - st->first_version.version + 1 != st->entries) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "pgring engine: PG %s holds entries %s..%s (%u of them), not a log this engine wrote; "
            "use pgring_mkfs=1", id.ToString(), st->first_version.ToString(),
            st->last_version.ToString(), st->entries));
      }
      x.epoch = st->last_version.epoch;
      x.head = st->last_version.version;
      x.first_entry = st->first_version.version;
    }
    if (st->dups > 0) {
      auto dups = store->ReadDups(id);
      if (!dups.ok()) return dups.status();
      x.first_dup = dups->front().version.version;
      x.last_dup = dups->back().version.version;
      if (x.dups() != dups->size()) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "pgring engine: PG %s holds dups that are not consecutive; use pgring_mkfs=1",
            id.ToString()));
      }
      if (st->entries == 0) {
        // Everything was trimmed: continue after the newest dup.
        x.head = x.last_dup;
        x.first_entry = x.last_dup + 1;
      }
    }
    auto info = store->ReadInfo(id);
    if (info.ok()) {
      x.loaded_info = *info;
    } else if (!absl::IsNotFound(info.status())) {
      return info.status();
    }
    pgs_[pg]->committed.store(x.head);
  }
  std::vector<uint32_t> missing;
  for (uint32_t pg = 0; pg < slots(); ++pg) {
    if (!present.count(pg)) missing.push_back(pg);
  }
  if (missing.empty()) return absl::OkStatus();
  // Create the missing PGs, each with its initial info, in one transaction.
  Transaction txn;
  for (uint32_t pg : missing) {
    txn.CreatePg(PgIdOf(pg));
    txn.SetInfo(PgIdOf(pg), InfoPayload(config_, pg, 0, true));
  }
  absl::Status s = store->Commit(std::move(txn));
  if (!s.ok()) return s;
  if (config_.prefill) return Prefill(store, missing);
  return absl::OkStatus();
}

// Fills each new PG with what a PG that has taken many writes holds right
// after a trim: the newest `target` entries up to head H, and as dups the
// trimmed entries within osd_pg_log_dups_tracked of H, with H chosen so that
// all of those exist (H = max(target, dups_tracked)). Without it a short run
// would only ever see logs growing, never trimming — not an OSD's steady
// state, and not where the backends differ.
absl::Status OsdModel::Prefill(Store* store, const std::vector<uint32_t>& pgs) {
  const uint64_t tracked = config_.osd_pg_log_dups_tracked;
  const uint64_t head = std::max<uint64_t>(target_, tracked);
  if (head == 0) return absl::OkStatus();
  const uint64_t first_entry = head - target_ + 1;
  const uint64_t first_dup = tracked == 0 ? first_entry : std::max<uint64_t>(1, head - tracked + 1);
  const uint64_t last_dup = first_entry - 1;  // empty when first_dup > last_dup
  constexpr uint64_t kItemsPerTxn = 512;

  std::mutex mu;
  std::condition_variable cv;
  uint64_t pending = 0;
  absl::Status first_error;
  auto done = [&](absl::Status s) {
    std::lock_guard<std::mutex> lk(mu);
    if (!s.ok() && first_error.ok()) first_error = s;
    if (--pending == 0) cv.notify_all();
  };
  auto submit = [&](Transaction txn) -> absl::Status {
    {
      std::lock_guard<std::mutex> lk(mu);
      ++pending;
    }
    absl::Status s = store->Submit(std::move(txn), done);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lk(mu);
      --pending;
    }
    return s;
  };

  absl::Status submit_error;
  for (uint32_t pg : pgs) {
    const PgId id = PgIdOf(pg);
    Transaction txn;
    uint64_t items = 0;
    auto flush = [&]() -> absl::Status {
      if (items == 0) return absl::OkStatus();
      items = 0;
      return submit(std::exchange(txn, Transaction()));
    };
    for (uint64_t v = first_dup; v <= last_dup && submit_error.ok(); ++v) {
      txn.AppendDup(id, Version{1, v}, DupPayload(config_, pg, v));
      if (++items == kItemsPerTxn) submit_error = flush();
    }
    for (uint64_t v = first_entry; v <= head && submit_error.ok(); ++v) {
      txn.AppendEntry(id, Version{1, v}, EntryPayload(config_, pg, v));
      if (++items == kItemsPerTxn) submit_error = flush();
    }
    if (!submit_error.ok()) break;
    txn.SetInfo(id, InfoPayload(config_, pg, head, true));
    ++items;
    submit_error = flush();
    if (!submit_error.ok()) break;
    PgExpectation& x = pgs_[pg]->x;
    x.head = head;
    x.first_entry = first_entry;
    x.first_dup = first_dup;
    x.last_dup = last_dup;
    x.info_version = head;
    x.info_full = true;
    pgs_[pg]->committed.store(head);
    counters_.prefill_entries += head - first_entry + 1;
    counters_.prefill_dups += last_dup >= first_dup ? last_dup - first_dup + 1 : 0;
  }
  std::unique_lock<std::mutex> lk(mu);
  cv.wait(lk, [&] { return pending == 0; });
  if (!submit_error.ok()) return submit_error;
  return first_error;
}

absl::StatusOr<OsdModel::WriteOp> OsdModel::SubmitWrite(Store* store, uint64_t object,
                                                        std::shared_ptr<CommitGate> gate,
                                                        WriteDone done, uint32_t pool) {
  if (pool >= config_.pools) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pgring engine: a write to pool index %u, but the model has %u pool(s)", pool,
        config_.pools));
  }
  const uint32_t pg = pool * config_.pgs + PgOf(object);  // the slot
  if (config_.no_pg_log) {
    return SubmitWriteWithoutLog(store, pg, object, std::move(gate), std::move(done));
  }
  const PgId id = PgIdOf(pg);
  PgState& s = *pgs_[pg];
  std::lock_guard<std::mutex> lk(s.mu);
  PgExpectation& x = s.x;
  const PgExpectation before = x;

  // Ceph's calc_trim_to_aggressive(), on the log as it is before this entry
  // (Ceph computes pg_trim_to before appending the new one).
  uint64_t trim_to = 0;
  const uint64_t size = x.entries();
  if (size > target_) {
    const uint64_t num_to_trim = std::min<uint64_t>(size - target_, config_.osd_pg_log_trim_max);
    if (!(num_to_trim < config_.osd_pg_log_trim_min &&
          config_.osd_pg_log_trim_max >= config_.osd_pg_log_trim_min)) {
      const uint64_t by_n_to_keep = x.head - target_;          // keep the newest `target`
      const uint64_t by_n_to_trim = x.first_entry + num_to_trim - 1;
      const uint64_t limit = std::min(x.head, s.committed.load());  // last_update_ondisk
      const uint64_t t = std::min({by_n_to_keep, by_n_to_trim, limit});
      if (t >= x.first_entry) trim_to = t;
    }
  }

  Transaction txn;
  const uint64_t v = x.head + 1;
  std::string entry = EntryPayload(config_, pg, v);
  const uint64_t entry_bytes = entry.size();
  txn.AppendEntry(id, Version{x.epoch, v}, entry);
  x.head = v;
  uint64_t dups_added = 0, entries_trimmed = 0, dups_trimmed = 0;
  bool full_info = false;
  if (trim_to != 0) {
    // PGLog::IndexedLog::trim(): trimmed entries within dups_tracked of the
    // head become dups; older dups go.
    const uint64_t tracked = config_.osd_pg_log_dups_tracked;
    const uint64_t earliest_dup = v < tracked ? 0 : v - tracked + 1;
    for (uint64_t e = x.first_entry; e <= trim_to; ++e) {
      if (e < earliest_dup) continue;
      txn.AppendDup(id, Version{x.epoch, e}, DupPayload(config_, pg, e));
      if (x.last_dup < x.first_dup) x.first_dup = e;
      x.last_dup = e;
      ++dups_added;
    }
    txn.Trim(id, Version{x.epoch, trim_to});
    entries_trimmed = trim_to - x.first_entry + 1;
    x.first_entry = trim_to + 1;
    if (x.dups() > 0 && x.first_dup < earliest_dup) {
      const uint64_t up_to = std::min(earliest_dup - 1, x.last_dup);
      txn.TrimDups(id, Version{x.epoch, up_to});
      dups_trimmed = up_to - x.first_dup + 1;
      x.first_dup = up_to + 1;
    }
    full_info = true;  // the trim moved info.log_tail: no fast path
  }
  if (config_.full_info_every != 0 && v % config_.full_info_every == 0) full_info = true;
  txn.SetInfo(id, InfoPayload(config_, pg, v, full_info));
  x.info_version = v;
  x.info_full = full_info;
  x.loaded_info.reset();
  const uint64_t onode_bytes = PutOnode(config_, object, v, &txn);
  txn.WaitFor(std::move(gate));

  const WriteOp op{pg, v};
  // Noted before Submit: the store can never hold a version past this.
  if (ack_record_ != nullptr) ack_record_->NoteSubmitted(pg, v);
  absl::Status st = store->Submit(std::move(txn), [this, op, done = std::move(done)](absl::Status result) {
    if (result.ok()) {
      // Noted before `done` tells fio the write completed.
      if (ack_record_ != nullptr) ack_record_->NoteAcked(op.pg, op.version);
      // Commits arrive in submission order; keep the maximum anyway.
      std::atomic<uint64_t>& c = pgs_[op.pg]->committed;
      uint64_t cur = c.load();
      while (cur < op.version && !c.compare_exchange_weak(cur, op.version)) {
      }
    }
    done(op, result);
  });
  if (!st.ok()) {
    x = before;
    return st;
  }
  ++x.writes;
  counters_.entries += 1;
  counters_.entry_bytes += entry_bytes;
  counters_.dups += dups_added;
  counters_.entries_trimmed += entries_trimmed;
  counters_.dups_trimmed += dups_trimmed;
  if (trim_to != 0) counters_.trims += 1;
  (full_info ? counters_.full_infos : counters_.fast_infos) += 1;
  counters_.onode_bytes += onode_bytes;
  return op;
}

absl::StatusOr<OsdModel::WriteOp> OsdModel::SubmitWriteWithoutLog(Store* store, uint32_t slot,
                                                                  uint64_t object,
                                                                  std::shared_ptr<CommitGate> gate,
                                                                  WriteDone done) {
  // The onode alone, with the data write's gate: the same data write, flush
  // and synced RocksDB write as a real OSD write, and no PG log.
  Transaction txn;
  const uint64_t onode_bytes =
      PutOnode(config_, object, no_log_writes_.fetch_add(1) + 1, &txn);
  txn.WaitFor(std::move(gate));
  const WriteOp op{slot, 0};
  absl::Status st = store->Submit(std::move(txn), [op, done = std::move(done)](absl::Status result) {
    done(op, result);
  });
  if (!st.ok()) return st;
  counters_.onode_bytes += onode_bytes;
  return op;
}

CheckResult OsdModel::CheckStore(const Store& store, size_t max_errors) const {
  CheckResult r;
  auto error = [&](std::string msg) {
    ++r.error_count;
    if (r.errors.size() < max_errors) r.errors.push_back(std::move(msg));
  };
  for (uint32_t pg = 0; pg < slots(); ++pg) {
    const PgId id = PgIdOf(pg);
    const std::string name = id.ToString();
    const PgExpectation x = Expectation(pg);
    ++r.pgs;
    auto entries = store.ReadEntries(id);
    if (!entries.ok()) {
      error(absl::StrCat("PG ", name, ": reading entries: ", entries.status().ToString()));
      continue;
    }
    if (entries->size() != x.entries()) {
      error(absl::StrFormat("PG %s: %u entries (last %s), expected %u (%u'%u..%u'%u)", name,
                            entries->size(),
                            entries->empty() ? std::string("none") : entries->back().version.ToString(),
                            x.entries(), x.epoch, x.first_entry, x.epoch, x.head));
    } else {
      for (size_t i = 0; i < entries->size(); ++i) {
        const LogEntry& e = (*entries)[i];
        const Version want{x.epoch, x.first_entry + i};
        if (e.version != want) {
          error(absl::StrFormat("PG %s: entry %u is %s, expected %s", name, i, e.version.ToString(),
                                want.ToString()));
          break;
        }
        if (e.payload != EntryPayload(config_, pg, want.version)) {
          error(absl::StrFormat("PG %s: entry %s: payload differs (%u bytes)", name,
                                want.ToString(), e.payload.size()));
          break;
        }
      }
      r.entries += entries->size();
    }
    auto dups = store.ReadDups(id);
    if (!dups.ok()) {
      error(absl::StrCat("PG ", name, ": reading dups: ", dups.status().ToString()));
    } else if (dups->size() != x.dups()) {
      error(absl::StrFormat("PG %s: %u dups, expected %u", name, dups->size(), x.dups()));
    } else {
      for (size_t i = 0; i < dups->size(); ++i) {
        const LogEntry& d = (*dups)[i];
        const Version want{x.epoch, x.first_dup + i};
        if (d.version != want || d.payload != DupPayload(config_, pg, want.version)) {
          error(absl::StrFormat("PG %s: dup %u is %s (%u bytes), expected %s", name, i,
                                d.version.ToString(), d.payload.size(), want.ToString()));
          break;
        }
      }
      r.dups += dups->size();
    }
    auto info = store.ReadInfo(id);
    const std::string want_info =
        x.loaded_info ? *x.loaded_info : InfoPayload(config_, pg, x.info_version, x.info_full);
    if (!info.ok()) {
      error(absl::StrCat("PG ", name, ": reading info: ", info.status().ToString()));
    } else if (*info != want_info) {
      error(absl::StrFormat("PG %s: info (%u bytes) is not the one written with version %u", name,
                            info->size(), x.info_version));
    }
  }
  return r;
}

}  // namespace pgring::fio
