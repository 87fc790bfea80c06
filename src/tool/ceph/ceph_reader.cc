#include "tool/ceph/ceph_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pgring::tool::ceph {
namespace {

template <typename T>
T LoadLe(std::string_view b) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    v |= static_cast<T>(static_cast<uint8_t>(b[i])) << (8 * i);
  }
  return v;
}

}  // namespace

std::string CephReader::Path(absl::string_view field) const {
  std::vector<absl::string_view> parts;
  for (const std::string& p : path_) {
    if (!p.empty()) parts.push_back(p);
  }
  if (!field.empty()) parts.push_back(field);
  return absl::StrJoin(parts, ".");
}

std::string CephReader::LimitText() const {
  if (open_.empty()) {
    return absl::StrFormat("the payload ends at offset %u", bytes_.size());
  }
  const Frame& f = open_.back();
  return absl::StrFormat("%s's struct_len ends it at offset %u", f.type, limit_);
}

absl::Status CephReader::Error(absl::string_view field, absl::string_view what) const {
  return absl::DataLossError(absl::StrFormat("%s at offset %u: %s", Path(field), pos_, what));
}

absl::StatusOr<std::string_view> CephReader::Take(absl::string_view field, size_t n) {
  if (n > limit_ - pos_) {
    return Error(
        field, absl::StrFormat("needs %u bytes, only %u left (%s)", n, limit_ - pos_, LimitText()));
  }
  std::string_view out = bytes_.substr(pos_, n);
  pos_ += n;
  return out;
}

absl::StatusOr<uint8_t> CephReader::U8(absl::string_view field) {
  auto b = Take(field, 1);
  if (!b.ok()) return b.status();
  return static_cast<uint8_t>((*b)[0]);
}
absl::StatusOr<uint16_t> CephReader::U16(absl::string_view field) {
  auto b = Take(field, 2);
  if (!b.ok()) return b.status();
  return LoadLe<uint16_t>(*b);
}
absl::StatusOr<uint32_t> CephReader::U32(absl::string_view field) {
  auto b = Take(field, 4);
  if (!b.ok()) return b.status();
  return LoadLe<uint32_t>(*b);
}
absl::StatusOr<uint64_t> CephReader::U64(absl::string_view field) {
  auto b = Take(field, 8);
  if (!b.ok()) return b.status();
  return LoadLe<uint64_t>(*b);
}
absl::StatusOr<int8_t> CephReader::I8(absl::string_view field) {
  auto v = U8(field);
  if (!v.ok()) return v.status();
  return static_cast<int8_t>(*v);
}
absl::StatusOr<int32_t> CephReader::I32(absl::string_view field) {
  auto v = U32(field);
  if (!v.ok()) return v.status();
  return static_cast<int32_t>(*v);
}
absl::StatusOr<int64_t> CephReader::I64(absl::string_view field) {
  auto v = U64(field);
  if (!v.ok()) return v.status();
  return static_cast<int64_t>(*v);
}
absl::StatusOr<bool> CephReader::Bool(absl::string_view field) {
  auto v = U8(field);
  if (!v.ok()) return v.status();
  return *v != 0;
}
absl::StatusOr<double> CephReader::F64(absl::string_view field) {
  auto v = U64(field);
  if (!v.ok()) return v.status();
  double d;
  static_assert(sizeof(d) == sizeof(*v));
  std::memcpy(&d, &*v, sizeof(d));
  return d;
}
absl::StatusOr<std::string_view> CephReader::Raw(absl::string_view field, size_t n) {
  return Take(field, n);
}

absl::StatusOr<std::string_view> CephReader::LengthPrefixed(absl::string_view field) {
  const size_t at = pos_;
  auto n = U32(field);
  if (!n.ok()) return n.status();
  if (*n > limit_ - pos_) {
    pos_ = at;
    return Error(field, absl::StrFormat("length %u runs past the end (%u bytes left; %s)", *n,
                                        limit_ - at - 4, LimitText()));
  }
  return Take(field, *n);
}

absl::StatusOr<uint32_t> CephReader::Count(absl::string_view field, size_t min_element_size) {
  const size_t at = pos_;
  auto n = U32(field);
  if (!n.ok()) return n.status();
  if (min_element_size > 0 && *n > (limit_ - pos_) / min_element_size) {
    pos_ = at;
    return Error(
        field, absl::StrFormat("count %u cannot fit: %u bytes left hold at most %u (%s)", *n,
                               limit_ - at - 4, (limit_ - at - 4) / min_element_size, LimitText()));
  }
  return *n;
}

absl::StatusOr<CephReader::Frame> CephReader::Begin(absl::string_view field, absl::string_view type,
                                                    uint8_t known_v, uint8_t compat_from_v,
                                                    uint8_t len_from_v) {
  Frame f;
  f.type = std::string(type);
  f.known_v = known_v;
  f.header_offset = pos_;
  const std::string label = absl::StrCat(field, field == type ? "" : absl::StrCat(" (", type, ")"));
  auto v = U8(absl::StrCat(label, " struct_v"));
  if (!v.ok()) return v.status();
  f.v = *v;
  if (f.v >= compat_from_v) {
    auto c = U8(absl::StrCat(label, " struct_compat"));
    if (!c.ok()) return c.status();
    f.compat = *c;
    if (f.compat > known_v) {
      pos_ = f.header_offset;
      return absl::UnimplementedError(
          absl::StrFormat("%s at offset %u: %s struct_v %u needs a decoder of version %u or newer "
                          "(struct_compat); this one reads up to %u",
                          Path(field), pos_, type, f.v, f.compat, known_v));
    }
  }
  if (f.v < len_from_v) {
    pos_ = f.header_offset;
    return absl::UnimplementedError(absl::StrFormat(
        "%s at offset %u: %s struct_v %u predates the length-prefixed encoding (v%u), "
        "which this decoder does not read",
        Path(field), pos_, type, f.v, len_from_v));
  }
  auto len = U32(absl::StrCat(label, " struct_len"));
  if (!len.ok()) return len.status();
  f.has_len = true;
  f.start = pos_;
  if (*len > limit_ - pos_) {
    pos_ = f.header_offset;
    return Error(field, absl::StrFormat("%s struct_len %u runs past the end (%u bytes left; %s)",
                                        type, *len, limit_ - f.start, LimitText()));
  }
  f.end = f.start + *len;
  f.outer_limit = limit_;
  limit_ = f.end;
  path_.emplace_back(field == type && path_.size() == 1 ? std::string(type) : std::string(field));
  open_.push_back(f);
  return f;
}

absl::Status CephReader::End(const Frame& frame) {
  if (open_.empty() || open_.back().header_offset != frame.header_offset) {
    return absl::InternalError(absl::StrCat("CephReader::End of ", frame.type,
                                            " does not match the innermost open struct"));
  }
  if (pos_ > frame.end) {  // cannot happen: every read is bounded by the struct's end
    return absl::InternalError(absl::StrFormat("%s was read past its struct_len (offset %u > %u)",
                                               frame.type, pos_, frame.end));
  }
  if (pos_ < frame.end) {
    const size_t skipped = frame.end - pos_;
    notes_.push_back(absl::StrFormat(
        "%s (%s struct_v %u, this decoder reads up to %u): %u byte%s at offset %u %s skipped",
        Path(""), frame.type, frame.v, frame.known_v, skipped, skipped == 1 ? "" : "s", pos_,
        skipped == 1 ? "was" : "were"));
    pos_ = frame.end;
  }
  limit_ = frame.outer_limit;
  path_.pop_back();
  open_.pop_back();
  return absl::OkStatus();
}

absl::Status CephReader::ExpectConsumed(absl::string_view type) const {
  if (pos_ == bytes_.size()) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "%s ends at offset %u but the payload has %u bytes: %u trailing byte%s", type, pos_,
      bytes_.size(), bytes_.size() - pos_, bytes_.size() - pos_ == 1 ? "" : "s"));
}

}  // namespace pgring::tool::ceph
