#include "format/rocksdb_backend_keys.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "format/metadata_keys.h"
#include "util/coding.h"

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

StoreKeyKind ClassifyStoreKey(std::string_view key) {
  auto starts = [&](std::string_view prefix) { return key.substr(0, prefix.size()) == prefix; };
  if (key == kMetaKey) return StoreKeyKind::kMeta;
  if (key == kStreamPointerKey) return StoreKeyKind::kStreamPointer;
  if (key == kStreamChunksKey) return StoreKeyKind::kStreamChunks;
  if (starts(kPgPointerPrefix)) return StoreKeyKind::kPgPointer;
  if (starts(kPgChunksPrefix)) return StoreKeyKind::kPgChunks;
  if (starts(kLogKeyPrefix)) return StoreKeyKind::kPgLog;
  return StoreKeyKind::kUnknown;
}

bool SplitPgLogKey(std::string_view key, PgId* pg, std::string_view* name) {
  if (key.substr(0, kLogKeyPrefix.size()) != kLogKeyPrefix) return false;
  std::string_view rest = key.substr(kLogKeyPrefix.size());
  if (rest.size() < kPgKeySize + 1 || rest[kPgKeySize] != '.' ||
      !DecodePgKey(rest.substr(0, kPgKeySize), pg)) {
    return false;
  }
  *name = rest.substr(kPgKeySize + 1);
  return true;
}

PgLogKeyClass ClassifyPgLogKeyName(std::string_view name) {
  PgLogKeyClass c;
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') {
    c.kind = ParseLogKeyName(name, &c.version) ? PgLogKeyKind::kEntry
                                               : PgLogKeyKind::kMalformedEntry;
  } else if (name.substr(0, kDupKeyNamePrefix.size()) == kDupKeyNamePrefix) {
    c.kind = ParseLogKeyName(name.substr(kDupKeyNamePrefix.size()), &c.version)
                 ? PgLogKeyKind::kDup
                 : PgLogKeyKind::kMalformedDup;
  } else if (name == kInfoKeyName) {
    c.kind = PgLogKeyKind::kInfo;
  } else if (name == kStateKeyName) {
    c.kind = PgLogKeyKind::kState;
  }
  return c;
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
  SealValue(&v);
  return v;
}

absl::StatusOr<PgStateValue> PgStateValue::Decode(std::string_view value) {
  auto fields = UnsealValue(value, "_state", kStateFormat);
  if (!fields.ok()) return fields.status();
  std::string_view in = *fields;
  PgStateValue s;
  if (!(GetVersionVarint(&in, &s.entries_trimmed_to) && GetVersionVarint(&in, &s.dups_trimmed_to) &&
        GetVersionVarint(&in, &s.last_version) && GetVersionVarint(&in, &s.last_dup_version) &&
        in.empty())) {
    return absl::DataLossError("_state value has the wrong length");
  }
  return s;
}

}  // namespace pgring
