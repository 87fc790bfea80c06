#include "format/rocksdb_backend_keys.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "format/metadata_keys.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring {

std::string PgLogKeyPrefix(const PgId& pg) {
  std::string p(kLogKeyPrefix);
  p += EncodePgKey(pg);
  p.push_back('.');
  return p;
}

std::string PgLogKeyPrefixEnd(const PgId& pg) {
  std::string e = PgLogKeyPrefix(pg);
  e.back() = static_cast<char>(e.back() + 1);
  return e;
}

std::string LogKeyName(const Version& v) {
  char buf[kLogKeyNameSize + 1];
  std::snprintf(buf, sizeof(buf), "%010u.%020llu", v.epoch,
                static_cast<unsigned long long>(v.version));
  return std::string(buf, kLogKeyNameSize);
}

bool ParseLogKeyName(std::string_view name, Version* v) {
  if (name.size() != kLogKeyNameSize || name[10] != '.') return false;
  uint64_t epoch = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    epoch = epoch * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (epoch > UINT32_MAX) return false;
  uint64_t version = 0;
  for (size_t i = 11; i < kLogKeyNameSize; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    uint64_t d = static_cast<uint64_t>(name[i] - '0');
    if (version > (UINT64_MAX - d) / 10) return false;
    version = version * 10 + d;
  }
  v->epoch = static_cast<uint32_t>(epoch);
  v->version = version;
  return true;
}

namespace {

constexpr uint8_t kStateFormat = 1;

void PutVersionVarint(std::string* d, const Version& v) {
  PutVarint64(d, v.epoch);
  PutVarint64(d, v.version);
}

bool GetVersionVarint(std::string_view* in, Version* v) {
  uint64_t e = 0;
  if (!GetVarint64(in, &e) || e > UINT32_MAX || !GetVarint64(in, &v->version)) return false;
  v->epoch = static_cast<uint32_t>(e);
  return true;
}

}  // namespace

std::string PgStateValue::Encode() const {
  std::string v(1, static_cast<char>(kStateFormat));
  PutVersionVarint(&v, entries_trimmed_to);
  PutVersionVarint(&v, dups_trimmed_to);
  PutVersionVarint(&v, last_version);
  PutVersionVarint(&v, last_dup_version);
  PutFixed32(&v, crc32c::Mask(crc32c::Value(v.data(), v.size())));
  return v;
}

absl::StatusOr<PgStateValue> PgStateValue::Decode(std::string_view value) {
  if (value.size() < 5) {
    return absl::DataLossError(absl::StrFormat("_state value is truncated (%u bytes)", value.size()));
  }
  uint32_t stored = crc32c::Unmask(DecodeFixed32(value.data() + value.size() - 4));
  if (stored != crc32c::Value(value.data(), value.size() - 4)) {
    return absl::DataLossError("_state value is damaged: CRC mismatch");
  }
  if (static_cast<uint8_t>(value[0]) != kStateFormat) {
    return absl::DataLossError(absl::StrFormat(
        "_state value has unknown format %u", static_cast<unsigned>(static_cast<uint8_t>(value[0]))));
  }
  std::string_view in = value.substr(1, value.size() - 5);
  PgStateValue s;
  if (!(GetVersionVarint(&in, &s.entries_trimmed_to) && GetVersionVarint(&in, &s.dups_trimmed_to) &&
        GetVersionVarint(&in, &s.last_version) && GetVersionVarint(&in, &s.last_dup_version) &&
        in.empty())) {
    return absl::DataLossError("_state value has the wrong length");
  }
  return s;
}


}  // namespace pgring
