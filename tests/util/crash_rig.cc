#include "util/crash_rig.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "util/sync.h"
#include "util/test_util.h"

namespace pgring::testing {

const char* const kCrashTallyNames[kCrashTallyKinds] = {
    "create_pg", "remove_pg", "append", "set_info", "dup_append", "dup_trim",
    "trim", "rewind", "reset_log", "chunk_grow", "chunk_shrink"};

uint32_t CrashOpMask(const Transaction& t) {
  uint32_t m = 0;
  for (const auto& op : t.ops()) {
    switch (op.type) {
      case Transaction::OpType::kCreatePg: m |= 1u << kTCreate; break;
      case Transaction::OpType::kRemovePg: m |= 1u << kTRemove; break;
      case Transaction::OpType::kAppendEntry: m |= 1u << kTAppend; break;
      case Transaction::OpType::kSetInfo: m |= 1u << kTInfo; break;
      case Transaction::OpType::kAppendDup: m |= 1u << kTDup; break;
      case Transaction::OpType::kTrimDups: m |= 1u << kTTrimDups; break;
      case Transaction::OpType::kTrim: m |= 1u << kTTrim; break;
      case Transaction::OpType::kRewind: m |= 1u << kTRewind; break;
      case Transaction::OpType::kResetLog: m |= 1u << kTReset; break;
    }
  }
  return m;
}

std::string CrashTallyKinds(const std::array<uint64_t, kCrashTallyKinds>& counts) {
  std::string s;
  for (int k = 0; k < kCrashTallyKinds; ++k) {
    s += std::string(k ? "," : "") + kCrashTallyNames[k] + "=" + std::to_string(counts[k]);
  }
  return s;
}

Options CrashStoreOptions(const CrashConfig& c) {
  Options o;
  o.durability = c.mode;
  o.tail_block_policy = c.policy;
  o.reserve_chunks_per_pg = 1;
  o.unsynced_max_delay = std::chrono::milliseconds(5);
  o.log_sink = NullLogSink();
  o.limits.max_payload_bytes = 64 << 10;
  o.gated_writes_share_flush = c.shared_flush;
  o.metadata_sync_flushes_partition = c.sync_covers;
  // Groups of at most two: the workload submits up to four transactions
  // at a time, so some of them commit in a group after the first one's,
  // on that group's RocksDB sync. (Its waves wait for their commits, so
  // a ring write completing during a sync is left to commit_pipeline_test's
  // SyncCoversTest, which holds one there.)
  if (c.sync_covers) o.max_group_size = 2;
  // The stream: small, homing two blocks at a time and force-homing early,
  // one block per forced home, so power goes during homes, forced homes of
  // a PG's oldest block and of its partial block, and full-stream
  // fallbacks within the short form (and during wraps in the long one);
  // one block kept in memory, so homes read bytes back from the stream.
  o.log_layout = c.layout;
  o.stream.max_chunks = 2;
  o.stream.home_bytes = 2 * uint64_t{c.block_size};
  o.stream.resident_bytes = c.block_size;
  o.stream.force_home_percent = 5;
  o.stream.max_forced_homes = 2;
  o.stream.forced_home_bytes = c.block_size;
  o.stream.bypass_when_idle = false;  // the stream takes every transaction
  if (c.write_once) {
    // Nothing homed by count: the cleaner restates PGs from 45% full,
    // forced homes take the rest from 60% (earlier, they would home what
    // the cleaner is there to restate).
    o.stream.home_bytes = 0;
    o.stream.force_home_percent = 60;
  }
  return o;
}

WorkloadParams CrashWorkloadParams() {
  WorkloadParams wp;
  wp.max_pgs = 6;
  wp.keep_entries = 30;
  wp.keep_dups = 20;
  wp.max_payload = 400;
  wp.large_payload_rate = 0.03;
  return wp;
}

std::string CrashRig::DataBlock(uint64_t seed, size_t i) {
  std::string b(kDataBlock, '\0');
  for (size_t j = 0; j < b.size(); ++j) b[j] = static_cast<char>((seed * 131 + i * 31 + j) % 251);
  return b;
}

namespace {

PowerLossDisk CrashDisk(const CrashConfig& c) {
  PowerLossDisk d;
  d.partition_bytes = c.device_size;
  d.block_size = c.block_size;
  d.fault.timed = c.timed;
  d.fault.seed = c.device_seed;
  d.fault.tear_unit = c.tear_unit;
  d.data_partition = c.shared_flush;
  d.sync_flushes_disk = c.sync_covers;
  return d;
}

}  // namespace

CrashRig::CrashRig(const CrashConfig& c)
    : config_(c), options_(CrashStoreOptions(c)), rig_(CrashDisk(c)) {}

void CrashRig::Fresh() {
  MkfsOptions m;
  m.chunk_size = 64 << 10;
  m.backend = config_.backend;
  ASSERT_OK(rig_.Mkfs(m));
  ASSERT_OK(rig_.Open(options_));
  ASSERT_EQ(store()->backend(), config_.backend);
}

CrashWorkResult CrashRig::Work(RandomWorkload* work, const LogModel& start, size_t first_txn,
                               size_t txns, CrashSnapshots* snapshots,
                               std::vector<uint32_t>* masks,
                               const std::function<void(size_t)>& before_submit,
                               uint64_t data_seed) {
  LogModel model = start;
  CrashWorkResult res;
  snapshots->emplace_back(first_txn, model);
  // Every transaction before `first_txn` is in the state the store has now:
  // a recovered state must never be lost again, whatever the mode.
  size_t durable = first_txn;
  size_t submitted = first_txn;
  const size_t end = first_txn + txns;
  const bool unsynced = options_.durability == DurabilityMode::kUnsynced;
  Store* const store = rig_.store();
  BlockDevice* const data = rig_.data_partition();
  auto owned = [&]() {
    StoreStats st = store->GetStoreStats();
    return st.total_chunks - st.free_chunks;
  };
  uint64_t owned_seen = masks != nullptr ? owned() : 0;
  auto see_owned = [&]() {
    const uint64_t o = owned();
    if (o > owned_seen) res.chunk_allocs += o - owned_seen;
    owned_seen = o;
  };
  while (submitted < end) {
    int depth = 1 + static_cast<int>(work->rng()() % 4);
    std::vector<std::unique_ptr<pgring::Notification>> done;
    std::vector<absl::Status> results(depth);
    size_t first = submitted;
    bool stop = false;
    for (int d = 0; d < depth && submitted < end; ++d) {
      Transaction t = work->Next(model);
      LogModel next = model;
      if (next.Apply(t) != absl::StatusCode::kOk) continue;  // valid ones only
      done.push_back(std::make_unique<pgring::Notification>());
      pgring::Notification* n = done.back().get();
      absl::Status* result = &results[done.size() - 1];
      uint32_t mask = CrashOpMask(t);
      std::vector<PgId> touched;
      for (const auto& op : t.ops()) touched.push_back(op.pg);
      auto chunks = [&]() {
        uint64_t c = 0;
        for (const PgId& id : touched) {
          auto st = store->GetPgStats(id);
          if (st.ok()) c += st->chunks;
        }
        return c;
      };
      const uint64_t chunks_before = masks != nullptr ? chunks() : 0;
      if (masks != nullptr) see_owned();
      if (before_submit) before_submit(submitted);
      std::shared_ptr<CommitGate> gate;
      if (data) {
        gate = std::make_shared<CommitGate>();
        t.WaitFor(gate);
      }
      absl::Status s = store->Submit(std::move(t), [n, result](absl::Status st) {
        *result = st;
        n->Notify();
      });
      if (!s.ok()) {
        if (res.error.ok()) res.error = s;
        done.pop_back();
        stop = true;
        break;
      }
      if (gate) {
        // The OSD's data write, in parallel with the log write; the gate
        // opens when it completes, before any flush.
        const std::string block = DataBlock(data_seed, submitted);
        auto buf = std::make_shared<AlignedBuffer>(block.size());
        std::memcpy(buf->data(), block.data(), block.size());
        data->WriteAsync(DataOffset(submitted), std::move(buf),
                         [gate](absl::Status st) { gate->Open(st); });
      }
      if (masks != nullptr) {
        const uint64_t chunks_after = chunks();
        if (chunks_after > chunks_before) mask |= 1u << kTChunkGrow;
        if (chunks_after < chunks_before) mask |= 1u << kTChunkShrink;
        masks->push_back(mask);
        see_owned();
      }
      model = std::move(next);
      ++submitted;
      snapshots->emplace_back(submitted, model);
    }
    bool all_ok = true;
    for (size_t d = 0; d < done.size(); ++d) {
      done[d]->WaitForNotification();
      all_ok &= results[d].ok();
      if (!results[d].ok() && res.error.ok()) res.error = results[d];
      // A durable mode's OK is the promise that the transaction survives
      // any crash after it: the recovered state must hold it, and with
      // it every transaction before it. Also in the batch the power went
      // in: that ack-versus-crash window is the one that matters most.
      if (!unsynced && results[d].ok()) durable = std::max(durable, first + d + 1);
    }
    // kUnsynced promises nothing of an acknowledged transaction until a
    // Sync() returns OK: what it loses is a suffix (Verify takes prefixes
    // only) that starts after the last Sync().
    if (unsynced && all_ok && work->rng()() % 3 == 0) {
      if (store->Sync().ok()) durable = submitted;
    }
    if (!all_ok || stop) break;
    while (snapshots->size() > 1 && snapshots->front().first < durable) snapshots->pop_front();
  }
  res.durable = durable;
  res.submitted = submitted;
  return res;
}

void CrashRig::PowerLoss(FaultInjectionDevice::CrashImage image, uint64_t seed,
                         bool random_fs_drop) {
  ASSERT_OK(rig_.PowerLoss(image, seed, random_fs_drop));
}

void CrashRig::Verify(size_t durable, const CrashSnapshots& snapshots, const std::string& what,
                      uint64_t data_seed, bool keep_open, std::pair<size_t, LogModel>* match,
                      std::map<std::string, std::string>* pgring_keys) {
  // The embedder's keys, as the reopened RocksDB holds them (read first:
  // the store then holds the DB's lock; pgring never writes them).
  std::map<std::string, std::string> kv;
  {
    auto db = rig_.OpenDbReadOnly();
    ASSERT_TRUE(db.ok()) << what << ": " << db.status();
    std::unique_ptr<rocksdb::Iterator> it((*db)->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek("osd."); it->Valid() && it->key().starts_with("osd."); it->Next()) {
      kv[it->key().ToString()] = it->value().ToString();
    }
    if (pgring_keys != nullptr) {
      pgring_keys->clear();
      for (it->Seek("pgring."); it->Valid() && it->key().starts_with("pgring."); it->Next()) {
        (*pgring_keys)[it->key().ToString()] = it->value().ToString();
      }
    }
  }
  absl::Status s = rig_.Open(options_);
  ASSERT_TRUE(s.ok()) << what << ": " << s;
  Store* const store = rig_.store();
  std::string diffs;
  const std::pair<size_t, LogModel>* matched = nullptr;
  for (const auto& snap : snapshots) {
    const auto& [index, model] = snap;
    if (index < durable) continue;
    std::string d = model.Diff(*store);
    if (d.empty() && kv != model.kv()) d = "embedder keys are from another prefix";
    // What no read shows: each PG's version floor and trim points. Two
    // prefixes can differ in nothing else (an append and the trim of it),
    // so the floors choose between them too; probing changes nothing.
    if (d.empty()) d = model.ProbeFloors(*store);
    if (d.empty()) {
      matched = &snap;
      break;
    }
    diffs += "\n  vs state after " + std::to_string(index) + " txns: " + d;
  }
  ASSERT_NE(matched, nullptr) << what << ": recovered state is no prefix covering the "
                              << durable << " durable transactions:" << diffs;
  // Chunks: owned once (open checks) and none leaked.
  auto pgs = store->ListPgs();
  ASSERT_OK(pgs);
  uint64_t owned = 0;
  for (const auto& id : *pgs) owned += store->GetPgStats(id)->chunks;
  StoreStats st = store->GetStoreStats();
  ASSERT_EQ(owned + st.stream_chunks + st.free_chunks, st.total_chunks) << what;
  // Shared flush: every committed transaction's data write is durable.
  if (BlockDevice* data = rig_.data_partition()) {
    AlignedBuffer buf(kDataBlock);
    for (size_t i = 0; i < matched->first; ++i) {
      ASSERT_OK(data->Read(DataOffset(i), buf.span()));
      ASSERT_TRUE(std::string(buf.data(), buf.size()) == DataBlock(data_seed, i))
          << what << ": transaction " << i << " committed (the log holds the state after "
          << matched->first << " transactions) but its data write was lost";
    }
  }
  if (match != nullptr) *match = *matched;
  if (!keep_open) {
    ASSERT_OK(rig_.Close());
  }
}

}  // namespace pgring::testing
