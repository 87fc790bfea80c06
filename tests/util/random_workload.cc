#include "util/random_workload.h"

#include <algorithm>
#include <vector>

namespace pgring::testing {

std::string RandomWorkload::Payload(uint64_t tag) {
  size_t n = Chance(p_.large_payload_rate) ? Uniform(4096, 40960) : Uniform(0, p_.max_payload);
  std::string s = std::to_string(tag) + ":";
  s.reserve(n + s.size());
  while (s.size() < n) s.push_back(static_cast<char>(rng_() & 0xff));
  return s;
}

void RandomWorkload::OsdWrite(const PgId& id, const ModelPg& pg, Transaction* t) {
  Version v{std::max(epoch_, pg.last.epoch), pg.last.version + 1};
  uint64_t n = Uniform(1, 3);
  for (uint64_t i = 0; i < n; ++i, ++v.version) t->AppendEntry(id, v, Payload(++counter_));
  t->SetInfo(id, Payload(++counter_));
  // Trim when the log is long: trimmed entries become dups, as Ceph does.
  if (pg.entries.size() > p_.keep_entries + 10) {
    auto it = pg.entries.begin();
    std::advance(it, pg.entries.size() - p_.keep_entries);
    Version to = it->first;
    Version dv{std::max(pg.last_dup.epoch, pg.entries.begin()->first.epoch), pg.last_dup.version};
    for (auto e = pg.entries.begin(); e != it; ++e) {
      dv.version = std::max(dv.version + 1, e->first.version);
      dv.epoch = std::max(dv.epoch, e->first.epoch);
      t->AppendDup(id, dv, e->second.substr(0, 57));
    }
    t->Trim(id, to);
    if (pg.dups.size() > p_.keep_dups + 10) {
      auto d = pg.dups.begin();
      std::advance(d, pg.dups.size() - p_.keep_dups);
      t->TrimDups(id, d->first);
    }
  }
}

Transaction RandomWorkload::Next(const LogModel& model, const std::vector<PgId>* creatable) {
  Transaction t;
  const auto& pgs = model.pgs();
  if (Chance(0.005)) ++epoch_;
  auto create = [&](const PgId& id) {
    t.CreatePg(id);
    if (Chance(0.5)) t.AppendEntry(id, Version{epoch_, 1}, Payload(++counter_));
  };
  if (creatable != nullptr) {
    if (!creatable->empty() && (pgs.empty() || Chance(0.05))) {
      create((*creatable)[Uniform(0, creatable->size() - 1)]);
      return t;
    }
  } else if (pgs.empty() || (static_cast<int>(pgs.size()) < p_.max_pgs && Chance(0.05))) {
    // Create PGs until there are enough; sometimes remove or recreate one.
    for (int i = 0; i < p_.max_pgs * 2; ++i) {
      PgId id{p_.pool, static_cast<uint32_t>(Uniform(0, p_.max_pgs * 2)), -1};
      if (!pgs.count(id)) {
        create(id);
        return t;
      }
    }
  }
  std::vector<PgId> ids;
  for (const auto& [id, pg] : pgs) ids.push_back(id);
  auto pick = [&]() { return ids[Uniform(0, ids.size() - 1)]; };
  // A writer sharing PGs may remove the only one it holds (another may
  // hold the rest).
  if (Chance(p_.remove_rate) && (ids.size() > 1 || creatable != nullptr)) {
    t.RemovePg(pick());
    return t;
  }
  if (Chance(p_.invalid_rate)) {
    PgId id = pick();
    const ModelPg& pg = pgs.at(id);
    OsdWrite(id, pg, &t);  // valid ops first: the bad one must undo them
    switch (Uniform(0, 4)) {
      case 0: t.AppendEntry(id, pg.last, "dup version"); break;
      case 1: t.Trim(id, Version{pg.last.epoch, pg.last.version + 100}); break;
      case 2: t.CreatePg(id); break;
      case 3: t.AppendEntry(PgId{2, 999, -1}, Version{1, 1}, "no such pg"); break;
      default: t.Rewind(id, Version::Min()); if (pg.trimmed == Version::Min()) t.CreatePg(id); break;
    }
    return t;
  }
  uint64_t touched = Uniform(1, std::min<uint64_t>(3, ids.size()));
  std::vector<PgId> chosen;
  for (uint64_t i = 0; i < touched; ++i) {
    PgId id = pick();
    if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) chosen.push_back(id);
  }
  for (const PgId& id : chosen) {
    const ModelPg& pg = pgs.at(id);
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    // A PG whose last version is above its every entry (a rewind to a
    // version no entry has): half the time its next change is the info
    // update below, with both trims, so the head often passes the rewind
    // before an entry is appended above it.
    const Version top = pg.entries.empty() ? pg.trimmed : pg.entries.rbegin()->first;
    if (pg.last > top && Chance(0.5)) r = 0.05;
    if (r < 0.03 && pg.entries.size() > 2) {
      // Divergent tail: rewind somewhere after the tail and append anew.
      auto it = pg.entries.begin();
      std::advance(it, Uniform(0, pg.entries.size() - 1));
      // Sometimes below every live entry (down to the trim point).
      Version to = Chance(0.3) ? pg.trimmed : it->first;
      t.Rewind(id, to);
      ++epoch_;
      uint64_t n = Uniform(0, 4);
      for (uint64_t i = 1; i <= n; ++i) t.AppendEntry(id, Version{epoch_, to.version + i}, Payload(++counter_));
    } else if (r < 0.045) {
      // A rewind to a version no entry has (between the last version and a
      // new entry above it), then, mostly, a trim of every entry below it,
      // here or later: the floor on versions the rewind leaves is then kept
      // by the rewind alone, whatever moves the head after it (issue 14:
      // the ring backend lost it across a reopen).
      const Version above{std::max(epoch_, pg.last.epoch), pg.last.version + 3};
      t.AppendEntry(id, above, Payload(++counter_));
      t.Rewind(id, Version{above.epoch, pg.last.version + 1});
      if (!pg.entries.empty() && Chance(0.5)) t.Trim(id, pg.entries.rbegin()->first);
    } else if (r < 0.06) {
      // An info update with no entry (as peering writes), sometimes with a
      // trim of every entry and every dup: the head moves past the records
      // before it, a rewind's among them.
      t.SetInfo(id, Payload(++counter_));
      const bool all = pg.last > top || Chance(0.5);
      if (!pg.entries.empty() && all) t.Trim(id, pg.entries.rbegin()->first);
      if (!pg.dups.empty() && all) t.TrimDups(id, pg.dups.rbegin()->first);
    } else if (r < 0.065) {
      // Replace the whole log, as when taking an authoritative log.
      t.ResetLog(id);
      ++epoch_;
      uint64_t base = Uniform(1, 1000), n = Uniform(0, 20);
      for (uint64_t i = 0; i < n; ++i) t.AppendEntry(id, Version{epoch_, base + i}, Payload(++counter_));
      for (uint64_t i = 0; i < n / 2; ++i) t.AppendDup(id, Version{epoch_, base + i}, Payload(++counter_));
    } else if (r < 0.085 && !pg.entries.empty()) {
      // A trim alone (no info update): exercises the info carried forward.
      auto it = pg.entries.begin();
      std::advance(it, Uniform(0, pg.entries.size() - 1));
      t.Trim(id, it->first);
    } else {
      // Need a fresh (epoch) copy: OsdWrite reads pg.last for the version.
      ModelPg copy = pg;
      OsdWrite(id, copy, &t);
    }
  }
  if (Chance(0.3)) {
    std::string prefix = !p_.key_prefix.empty() ? p_.key_prefix
                         : p_.pool == 1          ? "osd.key."
                                                 : "osd.key." + std::to_string(p_.pool) + ".";
    t.batch()->Put(prefix + std::to_string(Uniform(0, 50)), Payload(++counter_));
  }
  return t;
}

}  // namespace pgring::testing
