#include "format/metadata_keys.h"

#include <cassert>
#include <cstring>
#include <iterator>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status_macros.h"

namespace pgring {
namespace {

constexpr uint8_t kValueFormat = 1;

// The pointer's value formats: 1 is fixed width (57 bytes, still read), 2 is
// varints (written when nothing is unhomed), 3 is format 2 and the unhomed
// bytes' place (written otherwise). The other values have only format 1
// (kValueFormat).
constexpr uint8_t kPointerFormatFixed = 1;
constexpr uint8_t kPointerFormatVarint = 2;
constexpr uint8_t kPointerFormatStream = 3;

// Checks the size and CRC; returns the value without its CRC (format byte
// first). The caller checks the format byte.
absl::StatusOr<std::string_view> CheckSeal(std::string_view v, std::string_view what) {
  if (v.size() < 5) {
    return absl::DataLossError(absl::StrFormat("%s value is truncated (%u bytes)", what, v.size()));
  }
  uint32_t stored = crc32c::Unmask(DecodeFixed32(v.data() + v.size() - 4));
  if (stored != crc32c::Value(v.data(), v.size() - 4)) {
    return absl::DataLossError(absl::StrFormat("%s value is damaged: CRC mismatch", what));
  }
  return v.substr(0, v.size() - 4);
}

absl::Status UnknownFormat(std::string_view what, uint8_t format) {
  return absl::DataLossError(
      absl::StrFormat("%s value has unknown format %u", what, static_cast<unsigned>(format)));
}

absl::StatusOr<std::string_view> Unseal(std::string_view v, std::string_view what) {
  return UnsealValue(v, what, kValueFormat);
}

// A format 1 (fixed-width) version: epoch:u32 version:u64.
bool GetVersion(std::string_view* in, Version* v) {
  return GetFixed32(in, &v->epoch) && GetFixed64(in, &v->version);
}

}  // namespace

void SealValue(std::string* v) {
  PutFixed32(v, crc32c::Mask(crc32c::Value(v->data(), v->size())));
}

absl::StatusOr<std::string_view> UnsealValue(std::string_view v, std::string_view what,
                                             uint8_t format) {
  auto sealed = CheckSeal(v, what);
  if (!sealed.ok()) return sealed.status();
  const auto got = static_cast<uint8_t>(v[0]);
  if (got != format) return UnknownFormat(what, got);
  return sealed->substr(1);
}

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

StoreMeta StoreMeta::ForLabel(const Label& label) {
  StoreMeta m;
  m.uuid = label.uuid;
  m.block_size = label.block_size;
  m.chunk_size = label.chunk_size;
  m.partition_size = label.partition_size;
  m.chunk_count = label.chunk_count;
  m.backend = label.backend;
  return m;
}

Label StoreMeta::ToLabel() const {
  Label l;
  l.uuid = uuid;
  l.block_size = block_size;
  l.chunk_size = chunk_size;
  l.partition_size = partition_size;
  l.chunk_count = chunk_count;
  l.backend = backend;
  return l;
}

absl::Status CheckMetaGeometry(const StoreMeta& m) {
  absl::Status s = CheckGeometry(m.block_size, m.chunk_size, m.partition_size, m.chunk_count);
  return s.ok() ? CheckBackend(m.backend) : s;
}

absl::Status CheckMetaMatchesLabel(const Label& label, const StoreMeta& meta,
                                   std::string_view partition, std::string_view db) {
  if (!(meta.uuid == label.uuid)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s belongs to store %s but %s holds store %s: the partition and the RocksDB do not "
        "belong together",
        partition, label.uuid.ToString(), db, meta.uuid.ToString()));
  }
  std::string differ;
  auto compare = [&](const char* field, uint64_t in_label, uint64_t in_meta) {
    if (in_label == in_meta) return;
    absl::StrAppendFormat(&differ, "%s %s %u in the label, %u in the metadata",
                          differ.empty() ? "" : ";", field, in_label, in_meta);
  };
  compare("block_size", label.block_size, meta.block_size);
  compare("chunk_size", label.chunk_size, meta.chunk_size);
  compare("partition_size", label.partition_size, meta.partition_size);
  compare("chunk_count", label.chunk_count, meta.chunk_count);
  compare("backend", static_cast<uint64_t>(label.backend), static_cast<uint64_t>(meta.backend));
  if (differ.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "the label on %s and the metadata in %s disagree about the store's geometry:%s", partition,
      db, differ));
}

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
  SealValue(&v);
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
  // Format 2 or 3 (docs/FORMAT.md, "PgPointer").
  assert(unhomed <= tail && (unhomed != 0 || stream_pos == 0));
  const bool stream = unhomed != 0;
  std::string v(1, static_cast<char>(stream ? kPointerFormatStream : kPointerFormatVarint));
  PutVarint64(&v, stamp);
  PutVarint64(&v, head);
  PutVarint64(&v, tail);
  PutVarint64(&v, tail_seq);
  PutVarint64(&v, entries_trimmed_to.epoch);
  PutVarint64(&v, entries_trimmed_to.version);
  PutVarint64(&v, dups_trimmed_to.epoch);
  PutVarint64(&v, dups_trimmed_to.version);
  if (stream) {
    PutVarint64(&v, unhomed);
    PutVarint64(&v, stream_pos);
  }
  SealValue(&v);
  return v;
}

namespace {

constexpr const char* kPointerWhat = "PG pointer";

// Format 1: fixed-width fields (docs/FORMAT.md, "PgPointer, format 1").
absl::Status DecodePointerFixed(std::string_view in, PgPointer* p) {
  if (!(GetFixed32(&in, &p->stamp) && GetFixed64(&in, &p->head) && GetFixed64(&in, &p->tail) &&
        GetFixed64(&in, &p->tail_seq) && GetVersion(&in, &p->entries_trimmed_to) &&
        GetVersion(&in, &p->dups_trimmed_to) && in.empty())) {
    return absl::DataLossError("PG pointer value has the wrong length");
  }
  return absl::OkStatus();
}

// One varint field of a value: its name, where it goes (a u32 field must
// fit in 32 bits), and, once read, its offset in the value.
struct VarintField {
  const char* name;
  uint64_t* u64 = nullptr;
  uint32_t* u32 = nullptr;
  size_t offset = 0;
};

// Reads `fields` (a value's bytes after its format byte, before its CRC)
// as these varints, strictly, filling it exactly; kDataLoss naming `what`,
// the field and its offset otherwise.
absl::Status ParseVarintFields(std::string_view fields, std::string_view what,
                               std::span<VarintField> out) {
  std::string_view in = fields;
  for (VarintField& f : out) {
    const size_t at = 1 + (fields.size() - in.size());  // offset in the value
    f.offset = at;
    if (in.empty()) {
      return absl::DataLossError(absl::StrFormat(
          "%s value has the wrong length: it ends before field %s (offset %u)", what, f.name,
          at));
    }
    uint64_t x = 0;
    const VarintResult r = ParseVarint64(&in, &x);
    if (r == VarintResult::kTruncated) {
      return absl::DataLossError(absl::StrFormat(
          "%s value has the wrong length: truncated varint in field %s (offset %u)", what,
          f.name, at));
    }
    if (r != VarintResult::kOk) {
      return absl::DataLossError(
          absl::StrFormat("%s value is malformed: %s in field %s (offset %u)", what,
                          VarintResultName(r), f.name, at));
    }
    if (f.u32 != nullptr) {
      if (x > UINT32_MAX) {
        return absl::DataLossError(absl::StrFormat(
            "%s value is malformed: field %s is %u, more than 32 bits (offset %u)", what,
            f.name, x, at));
      }
      *f.u32 = static_cast<uint32_t>(x);
    } else {
      *f.u64 = x;
    }
  }
  if (!in.empty()) {
    return absl::DataLossError(absl::StrFormat(
        "%s value has the wrong length: %u trailing bytes after the fields (offset %u)", what,
        in.size(), 1 + (fields.size() - in.size())));
  }
  return absl::OkStatus();
}

// Format 2: eight varints; format 3 (`stream`): the same, then unhomed and
// stream_pos.
absl::Status DecodePointerVarint(std::string_view fields, bool stream, PgPointer* p) {
  uint64_t head = 0, tail = 0, tail_seq = 0, ev = 0, dv = 0, unhomed = 0, stream_pos = 0;
  uint32_t stamp = 0, ee = 0, de = 0;
  VarintField all[] = {
      {"stamp", nullptr, &stamp},
      {"head", &head},
      {"tail", &tail},
      {"tail_seq", &tail_seq},
      {"entries_trimmed_to.epoch", nullptr, &ee},
      {"entries_trimmed_to.version", &ev},
      {"dups_trimmed_to.epoch", nullptr, &de},
      {"dups_trimmed_to.version", &dv},
      {"unhomed", &unhomed},
      {"stream_pos", &stream_pos},
  };
  constexpr size_t kFormat2Fields = 8;
  std::span<VarintField> used(all, stream ? std::size(all) : kFormat2Fields);
  RETURN_IF_ERROR(ParseVarintFields(fields, kPointerWhat, used));
  if (stream) {
    // Format 3 is written only for a pointer with unhomed bytes, and they
    // lie before its tail.
    const VarintField& f = all[kFormat2Fields];
    if (unhomed == 0) {
      return absl::DataLossError(absl::StrFormat(
          "PG pointer value is malformed: field unhomed is 0 in format 3 (offset %u)", f.offset));
    }
    if (unhomed > tail) {
      return absl::DataLossError(absl::StrFormat(
          "PG pointer value is malformed: field unhomed is %u, more than tail %u (offset %u)",
          unhomed, tail, f.offset));
    }
  }
  p->stamp = stamp;
  p->head = head;
  p->tail = tail;
  p->tail_seq = tail_seq;
  p->entries_trimmed_to = Version{ee, ev};
  p->dups_trimmed_to = Version{de, dv};
  p->unhomed = unhomed;
  p->stream_pos = stream_pos;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PgPointer> PgPointer::Decode(std::string_view value) {
  auto sealed = CheckSeal(value, kPointerWhat);
  if (!sealed.ok()) return sealed.status();
  const auto format = static_cast<uint8_t>(value[0]);
  const std::string_view fields = sealed->substr(1);
  PgPointer p;
  absl::Status s;
  if (format == kPointerFormatVarint || format == kPointerFormatStream) {
    s = DecodePointerVarint(fields, format == kPointerFormatStream, &p);
  } else if (format == kPointerFormatFixed) {
    s = DecodePointerFixed(fields, &p);
  } else {
    return UnknownFormat(kPointerWhat, format);
  }
  if (!s.ok()) return s;
  if (p.head > p.tail) {
    return absl::DataLossError(
        absl::StrFormat("PG pointer has head %u past tail %u", p.head, p.tail));
  }
  return p;
}

std::string StreamPointer::Encode() const {
  std::string v(1, static_cast<char>(kValueFormat));
  PutVarint64(&v, head);
  PutVarint64(&v, tail);
  PutVarint64(&v, tail_seq);
  SealValue(&v);
  return v;
}

absl::StatusOr<StreamPointer> StreamPointer::Decode(std::string_view value) {
  constexpr const char* kWhat = "stream pointer";
  auto f = UnsealValue(value, kWhat, kValueFormat);
  if (!f.ok()) return f.status();
  StreamPointer p;
  VarintField fields[] = {{"head", &p.head}, {"tail", &p.tail}, {"tail_seq", &p.tail_seq}};
  RETURN_IF_ERROR(ParseVarintFields(*f, kWhat, fields));
  if (p.head > p.tail) {
    return absl::DataLossError(absl::StrFormat(
        "stream pointer value is malformed: field head %u is past tail %u (offset %u)", p.head,
        p.tail, fields[0].offset));
  }
  if (p.tail_seq == 0) {
    return absl::DataLossError(absl::StrFormat(
        "stream pointer value is malformed: field tail_seq is 0, sequences start at 1 (offset "
        "%u)",
        fields[2].offset));
  }
  return p;
}

std::string PgChunkList::Encode() const {
  std::string v(1, static_cast<char>(kValueFormat));
  PutFixed64(&v, base);
  PutFixed32(&v, static_cast<uint32_t>(chunks.size()));
  for (uint32_t c : chunks) PutFixed32(&v, c);
  SealValue(&v);
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

absl::Status CheckChunkListBase(const PgChunkList& chunks, uint32_t chunk_size) {
  if (chunks.base % chunk_size == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "chunk list base %u is not chunk-aligned (not a multiple of the chunk size %u)", chunks.base,
      chunk_size));
}

absl::Status CheckPointerInChunks(uint64_t head, uint64_t tail, const PgChunkList& chunks,
                                  uint32_t chunk_size) {
  const uint64_t end = chunks.End(chunk_size);
  if (chunks.base <= head && head <= tail && tail <= end) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat("pointer [%u, %u) lies outside its chunks [%u, %u)",
                                             head, tail, chunks.base, end));
}

absl::Status CheckPgPointerInChunks(uint64_t head, uint64_t homed, uint64_t tail,
                                    const PgChunkList& chunks, uint32_t chunk_size) {
  if (head > tail) {
    return absl::DataLossError(
        absl::StrFormat("pointer's head %u is past its tail %u", head, tail));
  }
  if (homed > tail) {
    return absl::DataLossError(
        absl::StrFormat("pointer's homed position %u is past its tail %u", homed, tail));
  }
  if (homed < head) {
    return absl::DataLossError(absl::StrFormat(
        "pointer's homed position %u (tail %u less %u unhomed bytes) is before its head %u",
        homed, tail, tail - homed, head));
  }
  // The base is never past the head, chunks or none: a ring that takes
  // chunks again starts at or after its base, where the log is.
  const uint64_t end = chunks.End(chunk_size);
  if (chunks.base <= head && (homed == head || homed <= end)) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "pointer's homed bytes [%u, %u) lie outside its chunks [%u, %u)", head, homed,
      chunks.base, end));
}

RingClaims::Verdict RingClaims::ClaimStamp(const PgId& pg, uint32_t stamp) {
  if (stamp == 0 || (next_pg_stamp_ && stamp >= *next_pg_stamp_)) {
    return {Broken::kStampNeverIssued, {},
            next_pg_stamp_
                ? absl::StrFormat("stamp %u was never issued (next is %u)", stamp, *next_pg_stamp_)
                : absl::StrFormat("stamp %u was never issued (stamps run from 1)", stamp)};
  }
  // Stamps are never reused: a shared one would let one PG accept the
  // other's stale records as its own.
  auto [it, fresh] = stamp_owner_.emplace(stamp, pg);
  if (fresh) return {};
  return {Broken::kStampShared, it->second,
          absl::StrFormat("PG %s and PG %s both have stamp %u: each could take the other's "
                          "records for its own",
                          it->second.ToString(), pg.ToString(), stamp)};
}

RingClaims::Verdict RingClaims::ClaimChunk(const PgId& pg, size_t index, uint32_t chunk) {
  return Claim(ChunkClaim{pg, index, false}, chunk);
}

RingClaims::Verdict RingClaims::ClaimStreamChunk(size_t index, uint32_t chunk) {
  return Claim(ChunkClaim{PgId{}, index, true}, chunk);
}

RingClaims::Verdict RingClaims::Claim(const ChunkClaim& claim, uint32_t chunk) {
  const size_t index = claim.index;
  if (chunk >= chunk_count_) {
    return {Broken::kChunkOutOfRange, {},
            absl::StrFormat("chunk %u is out of range (the partition has %u chunks), at chunk "
                            "list position %u",
                            chunk, chunk_count_, index)};
  }
  auto [it, fresh] = chunk_owner_.emplace(chunk, claim);
  if (fresh) return {};
  const ChunkClaim& first = it->second;
  if (first.stream == claim.stream && first.pg == claim.pg) {
    return {Broken::kChunkTwiceInList, claim.pg,
            absl::StrFormat("chunk %u appears twice in the chunk list (positions %u and %u)",
                            chunk, first.index, index)};
  }
  auto owner = [](const ChunkClaim& c) {
    return c.stream ? std::string("the log stream") : absl::StrCat("PG ", c.pg.ToString());
  };
  return {Broken::kChunkShared, first.pg,
          absl::StrFormat("chunk %u is claimed by %s (position %u) and %s (position %u)", chunk,
                          owner(first), first.index, owner(claim), index)};
}

}  // namespace pgring
