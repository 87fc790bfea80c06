#include "ack_record.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "osd_model.h"

namespace pgring::fio {
namespace {

// File layout (host byte order; the record is read back on the same host):
//   header  8 bytes magic, u32 PGs, u32 durable (1) or unsynced (0),
//           16 bytes reserved
//   slots   per PG: u64 start, u64 submitted, u64 acked
constexpr char kMagic[8] = {'P', 'G', 'R', 'A', 'C', 'K', '1', '\0'};
constexpr size_t kHeaderSize = 32;
constexpr size_t kSlotWords = 3;
constexpr size_t kSlotSize = kSlotWords * sizeof(uint64_t);

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat("pgring engine: ack record: ", what, ": ", std::strerror(errno)));
}

void StoreMax(uint64_t* word, uint64_t v) {
  std::atomic_ref<uint64_t> a(*word);
  uint64_t cur = a.load(std::memory_order_relaxed);
  while (cur < v && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<AckRecord>> AckRecord::Create(const std::string& path, bool durable,
                                                             const std::vector<uint64_t>& heads) {
  const uint32_t pgs = static_cast<uint32_t>(heads.size());
  const size_t size = kHeaderSize + pgs * kSlotSize;
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(absl::StrCat("creating ", tmp));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    absl::Status s = Errno(absl::StrCat("sizing ", tmp));
    ::close(fd);
    return s;
  }
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Errno(absl::StrCat("mapping ", tmp));
  auto* bytes = static_cast<char*>(map);
  std::memcpy(bytes, kMagic, sizeof(kMagic));
  std::memcpy(bytes + 8, &pgs, sizeof(pgs));
  const uint32_t d = durable ? 1 : 0;
  std::memcpy(bytes + 12, &d, sizeof(d));
  std::unique_ptr<AckRecord> r(new AckRecord(map, size, pgs));
  for (uint32_t pg = 0; pg < pgs; ++pg) {
    for (int f = 0; f < static_cast<int>(kSlotWords); ++f) *r->Word(pg, f) = heads[pg];
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Errno(absl::StrCat("renaming ", tmp));
  return r;
}

AckRecord::~AckRecord() { ::munmap(map_, size_); }

uint64_t* AckRecord::Word(uint32_t pg, int field) const {
  return reinterpret_cast<uint64_t*>(static_cast<char*>(map_) + kHeaderSize + pg * kSlotSize) + field;
}

void AckRecord::NoteSubmitted(uint32_t pg, uint64_t version) {
  if (pg < pgs_) StoreMax(Word(pg, 1), version);
}

void AckRecord::NoteAcked(uint32_t pg, uint64_t version) {
  if (pg < pgs_) StoreMax(Word(pg, 2), version);
}

absl::StatusOr<AckRecord::Contents> AckRecord::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Errno(absl::StrCat("reading ", path));
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint32_t pgs = 0, durable = 0;
  if (data.size() < kHeaderSize || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(absl::StrCat("pgring engine: ack record ", path, ": not an ack record"));
  }
  std::memcpy(&pgs, data.data() + 8, sizeof(pgs));
  std::memcpy(&durable, data.data() + 12, sizeof(durable));
  if (data.size() != kHeaderSize + pgs * kSlotSize) {
    return absl::DataLossError(absl::StrFormat("pgring engine: ack record %s: %u bytes for %u PGs", path,
                                               data.size(), pgs));
  }
  Contents c;
  c.durable = durable != 0;
  c.slots.resize(pgs);
  for (uint32_t pg = 0; pg < pgs; ++pg) {
    uint64_t w[kSlotWords];
    std::memcpy(w, data.data() + kHeaderSize + pg * kSlotSize, sizeof(w));
    c.slots[pg] = Slot{w[0], w[1], w[2]};
  }
  return c;
}

AckCheckResult CheckAcks(const std::string& path, const Store& store, uint32_t pgs_per_pool) {
  AckCheckResult r;
  r.ran = true;
  auto error = [&](std::string msg) {
    ++r.error_count;
    if (r.errors.size() < 20) r.errors.push_back(std::move(msg));
  };
  auto rec = AckRecord::Load(path);
  if (!rec.ok()) {
    error(rec.status().ToString());
    return r;
  }
  r.durable = rec->durable;
  for (uint32_t pg = 0; pg < rec->slots.size(); ++pg) {
    const AckRecord::Slot& s = rec->slots[pg];
    const PgId id = PgIdOfSlot(pg, pgs_per_pool);
    ++r.pgs;
    if (s.acked < s.start || s.submitted < s.acked) {
      error(absl::StrFormat("PG %s: inconsistent record (start %u, submitted %u, acked %u)",
                            id.ToString(), s.start, s.submitted, s.acked));
      continue;
    }
    r.acked_writes += s.acked - s.start;
    r.in_flight += s.submitted - s.acked;
    auto st = store.GetPgStats(id);
    if (!st.ok()) {
      error(absl::StrCat("PG ", id.ToString(), ": ", st.status().ToString()));
      r.lost += s.acked - s.start;
      continue;
    }
    uint64_t head = 0;
    if (st->entries > 0) {
      head = st->last_version.version;
    } else if (st->dups > 0) {
      auto dups = store.ReadDups(id);
      if (!dups.ok() || dups->empty()) {
        error(absl::StrCat("PG ", id.ToString(), ": reading dups: ", dups.status().ToString()));
        continue;
      }
      head = dups->back().version.version;
    }
    if (head < s.start) {
      // The head after setup was synced: losing it is a failure in every mode.
      error(absl::StrFormat("PG %s: the store holds up to version %u, below %u, the head synced at setup",
                            id.ToString(), head, s.start));
    }
    if (head < s.acked) {
      r.lost += s.acked - head;
      if (r.durable) {
        error(absl::StrFormat("PG %s: acknowledged up to version %u, the store holds up to %u: "
                              "%u acknowledged write(s) lost", id.ToString(), s.acked, head, s.acked - head));
      }
    } else if (head > s.submitted) {
      r.beyond_submitted += head - s.submitted;
      error(absl::StrFormat("PG %s: the store holds up to version %u, but only up to %u was ever submitted",
                            id.ToString(), head, s.submitted));
    } else {
      r.committed_unacked += head - s.acked;
    }
  }
  return r;
}

}  // namespace pgring::fio
