// Printing and parsing of the public value types.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "pgring/types.h"

namespace pgring {

std::string PgId::ToString() const {
  if (shard >= 0) return absl::StrFormat("%d.%xs%d", pool, seed, shard);
  return absl::StrFormat("%d.%x", pool, seed);
}

bool PgId::Parse(const std::string& text, PgId* out) {
  auto dot = text.find('.');
  if (dot == std::string::npos || dot == 0) return false;
  PgId p;
  if (!absl::SimpleAtoi(text.substr(0, dot), &p.pool)) return false;
  std::string rest = text.substr(dot + 1);
  auto s = rest.find('s');
  std::string seed_text = rest.substr(0, s);
  if (seed_text.empty() || seed_text.size() > 8) return false;
  for (char c : seed_text) {
    if (!isxdigit(static_cast<unsigned char>(c))) return false;
  }
  p.seed = static_cast<uint32_t>(std::stoul(seed_text, nullptr, 16));
  if (s != std::string::npos) {
    int shard = 0;
    if (!absl::SimpleAtoi(rest.substr(s + 1), &shard) || shard < 0 || shard > 127)
      return false;
    p.shard = static_cast<int8_t>(shard);
  }
  *out = p;
  return true;
}

std::string Version::ToString() const {
  return absl::StrFormat("%u'%u", epoch, version);
}

bool Version::Parse(const std::string& text, Version* out) {
  auto q = text.find('\'');
  if (q == std::string::npos) return false;
  Version v;
  if (!absl::SimpleAtoi(text.substr(0, q), &v.epoch)) return false;
  if (!absl::SimpleAtoi(text.substr(q + 1), &v.version)) return false;
  *out = v;
  return true;
}

}  // namespace pgring
