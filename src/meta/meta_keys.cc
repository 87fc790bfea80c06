#include "meta/meta_keys.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring {
namespace {

constexpr uint8_t kValueFormat = 1;

void Seal(std::string* v) {
  PutFixed32(v, crc32c::Mask(crc32c::Value(v->data(), v->size())));
}

// Checks the format byte and CRC; returns the fields between them.
absl::StatusOr<std::string_view> Unseal(std::string_view v, const char* what) {
  if (v.size() < 5) {
    return absl::DataLossError(absl::StrFormat("%s value is truncated (%u bytes)", what, v.size()));
  }
  uint32_t stored = crc32c::Unmask(DecodeFixed32(v.data() + v.size() - 4));
  if (stored != crc32c::Value(v.data(), v.size() - 4)) {
    return absl::DataLossError(absl::StrFormat("%s value is damaged: CRC mismatch", what));
  }
  if (static_cast<uint8_t>(v[0]) != kValueFormat) {
    return absl::DataLossError(absl::StrFormat("%s value has unknown format %u", what,
                                               static_cast<unsigned>(static_cast<uint8_t>(v[0]))));
  }
  return v.substr(1, v.size() - 5);
}

void PutVersion(std::string* d, const Version& v) {
  PutFixed32(d, v.epoch);
  PutFixed64(d, v.version);
}
bool GetVersion(std::string_view* in, Version* v) {
  return GetFixed32(in, &v->epoch) && GetFixed64(in, &v->version);
}

}  // namespace

std::string EncodePgKey(const PgId& pg) {
  std::string k;
  PutBigEndian64(&k, static_cast<uint64_t>(pg.pool) ^ (1ull << 63));
  PutBigEndian32(&k, pg.seed);
  k.push_back(static_cast<char>(static_cast<uint8_t>(pg.shard + 1)));
  return k;
}

bool DecodePgKey(std::string_view key, PgId* pg) {
  if (key.size() != kPgKeySize) return false;
  pg->pool = static_cast<int64_t>(DecodeBigEndian64(key.data()) ^ (1ull << 63));
  pg->seed = DecodeBigEndian32(key.data() + 8);
  pg->shard = static_cast<int8_t>(static_cast<uint8_t>(key[12]) - 1);
  return true;
}

std::string PgPointerKey(const PgId& pg) { return std::string(kPgPointerPrefix) + EncodePgKey(pg); }
std::string PgChunksKey(const PgId& pg) { return std::string(kPgChunksPrefix) + EncodePgKey(pg); }

std::string StoreMeta::Encode() const {
  std::string v(1, static_cast<char>(kValueFormat));
  PutFixed32(&v, format_version);
  v.append(reinterpret_cast<const char*>(uuid.bytes.data()), 16);
  PutFixed32(&v, block_size);
  PutFixed32(&v, chunk_size);
  PutFixed64(&v, partition_size);
  PutFixed64(&v, chunk_count);
  v.push_back(static_cast<char>(backend));
  PutFixed32(&v, next_pg_stamp);
  Seal(&v);
  return v;
}

absl::StatusOr<StoreMeta> StoreMeta::Decode(std::string_view value) {
  auto f = Unseal(value, "store metadata (pgring.meta)");
  if (!f.ok()) return f.status();
  std::string_view in = *f;
  StoreMeta m;
  bool ok = GetFixed32(&in, &m.format_version) && in.size() >= 16;
  if (ok) {
    std::memcpy(m.uuid.bytes.data(), in.data(), 16);
    in.remove_prefix(16);
    ok = GetFixed32(&in, &m.block_size) && GetFixed32(&in, &m.chunk_size) &&
         GetFixed64(&in, &m.partition_size) && GetFixed64(&in, &m.chunk_count) && !in.empty();
  }
  if (ok) {
    m.backend = static_cast<Backend>(static_cast<uint8_t>(in.front()));
    in.remove_prefix(1);
    ok = GetFixed32(&in, &m.next_pg_stamp) && in.empty();
  }
  if (!ok) return absl::DataLossError("store metadata (pgring.meta) value has the wrong length");
  return m;
}

std::string PgPointer::Encode() const {
  std::string v(1, static_cast<char>(kValueFormat));
  PutFixed32(&v, stamp);
  PutFixed64(&v, head);
  PutFixed64(&v, tail);
  PutFixed64(&v, tail_seq);
  PutVersion(&v, entries_trimmed_to);
  PutVersion(&v, dups_trimmed_to);
  Seal(&v);
  return v;
}

absl::StatusOr<PgPointer> PgPointer::Decode(std::string_view value) {
  auto f = Unseal(value, "PG pointer");
  if (!f.ok()) return f.status();
  std::string_view in = *f;
  PgPointer p;
  if (!(GetFixed32(&in, &p.stamp) && GetFixed64(&in, &p.head) && GetFixed64(&in, &p.tail) &&
        GetFixed64(&in, &p.tail_seq) && GetVersion(&in, &p.entries_trimmed_to) &&
        GetVersion(&in, &p.dups_trimmed_to) && in.empty())) {
    return absl::DataLossError("PG pointer value has the wrong length");
  }
  if (p.head > p.tail) {
    return absl::DataLossError(absl::StrFormat("PG pointer has head %u past tail %u", p.head, p.tail));
  }
  return p;
}

std::string PgChunkList::Encode() const {
  std::string v(1, static_cast<char>(kValueFormat));
  PutFixed64(&v, base);
  PutFixed32(&v, static_cast<uint32_t>(chunks.size()));
  for (uint32_t c : chunks) PutFixed32(&v, c);
  Seal(&v);
  return v;
}

absl::StatusOr<PgChunkList> PgChunkList::Decode(std::string_view value) {
  auto f = Unseal(value, "PG chunk list");
  if (!f.ok()) return f.status();
  std::string_view in = *f;
  PgChunkList l;
  uint32_t n = 0;
  if (!GetFixed64(&in, &l.base) || !GetFixed32(&in, &n) || in.size() != 4ull * n) {
    return absl::DataLossError("PG chunk list value has the wrong length");
  }
  l.chunks.resize(n);
  for (uint32_t i = 0; i < n; ++i) GetFixed32(&in, &l.chunks[i]);
  return l;
}

}  // namespace pgring
