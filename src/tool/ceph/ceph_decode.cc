#include "tool/ceph/ceph_decode.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tool/ceph/ceph_reader.h"
#include "tool/ceph/ceph_types.h"
#include "util/status_macros.h"

namespace pgring::tool::ceph {
namespace {

constexpr CephType kAllTypes[] = {CephType::kLogEntry,   CephType::kLogDup,   CephType::kPgInfo,
                                  CephType::kPgFastInfo, CephType::kEversion, CephType::kReqid,
                                  CephType::kHobject};

// A scalar as a text cell: strings without quotes.
std::string ScalarText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

// The rows of one object (or array) at one indentation, flushed as a
// KeyValues block before each nested object so that lines keep their order.
void AddRows(const std::string& key, const Json& v, int indent, TextOutput* text, KeyValues* rows) {
  const bool nested = (v.is_object() || v.is_array()) && !v.empty();
  if (!nested) {
    rows->Add(key, v.is_array() ? "[]" : v.is_object() ? "{}" : ScalarText(v));
    return;
  }
  // Arrays of scalars read best on one line.
  if (v.is_array()) {
    bool scalars = true;
    for (const Json& e : v) scalars = scalars && !e.is_structured();
    if (scalars) {
      std::vector<std::string> cells;
      for (const Json& e : v) cells.push_back(ScalarText(e));
      rows->Add(key, absl::StrCat("[", absl::StrJoin(cells, ", "), "]"));
      return;
    }
  }
  if (!rows->rows.empty()) text->Add(std::move(*rows));
  text->Line(std::string(indent, ' ') + key);
  *rows = KeyValues{};
  rows->indent = indent;
  rows->key_width = 36 - indent;
  AddFieldsText(v, indent + 2, text);
}

}  // namespace

absl::string_view CephTypeName(CephType type) {
  switch (type) {
    case CephType::kLogEntry:
      return "pg_log_entry_t";
    case CephType::kLogDup:
      return "pg_log_dup_t";
    case CephType::kPgInfo:
      return "pg_info_t";
    case CephType::kPgFastInfo:
      return "pg_fast_info_t";
    case CephType::kEversion:
      return "eversion_t";
    case CephType::kReqid:
      return "osd_reqid_t";
    case CephType::kHobject:
      return "hobject_t";
  }
  return "unknown";
}

std::vector<std::string> CephTypeNames() {
  std::vector<std::string> names;
  for (CephType t : kAllTypes) names.emplace_back(CephTypeName(t));
  return names;
}

absl::StatusOr<CephType> ParseCephType(absl::string_view name) {
  for (CephType t : kAllTypes) {
    if (CephTypeName(t) == name) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown Ceph type '", name, "' (known: ", absl::StrJoin(CephTypeNames(), ", "), ")"));
}

absl::StatusOr<CephDecoded> DecodeCeph(CephType type, std::string_view bytes) {
  CephReader r(bytes);
  const absl::string_view name = CephTypeName(type);
  CephDecoded d;
  d.type = type;
  switch (type) {
    case CephType::kLogEntry: {
      ASSIGN_OR_RETURN(d.fields, ReadLogEntry(r, name));
      d.summary = LogEntryText(d.fields);
      break;
    }
    case CephType::kLogDup: {
      ASSIGN_OR_RETURN(d.fields, ReadLogDup(r, name));
      d.summary = LogDupText(d.fields);
      break;
    }
    case CephType::kPgInfo: {
      ASSIGN_OR_RETURN(d.fields, ReadPgInfo(r, name));
      d.summary = PgInfoText(d.fields);
      break;
    }
    case CephType::kPgFastInfo: {
      ASSIGN_OR_RETURN(d.fields, ReadPgFastInfo(r, name));
      d.summary = PgFastInfoText(d.fields);
      break;
    }
    case CephType::kEversion: {
      ASSIGN_OR_RETURN(Json v, ReadEversion(r, name));
      d.summary = v.get<std::string>();
      d.fields = {{"version", std::move(v)}};
      break;
    }
    case CephType::kReqid: {
      ASSIGN_OR_RETURN(Json v, ReadReqid(r, name));
      d.summary = v.get<std::string>();
      d.fields = {{"reqid", std::move(v)}};
      break;
    }
    case CephType::kHobject: {
      ASSIGN_OR_RETURN(d.fields, ReadHobject(r, name));
      d.summary = HobjectText(d.fields);
      break;
    }
  }
  RETURN_IF_ERROR(r.ExpectConsumed(name));
  d.notes = r.notes();
  return d;
}

void AddFieldsText(const Json& fields, int indent, TextOutput* text) {
  KeyValues rows;
  rows.indent = indent;
  rows.key_width = 36 - indent;
  if (fields.is_array()) {
    for (size_t i = 0; i < fields.size(); ++i) {
      AddRows(absl::StrCat("[", i, "]"), fields[i], indent, text, &rows);
    }
  } else {
    for (const auto& [key, value] : fields.items()) AddRows(key, value, indent, text, &rows);
  }
  if (!rows.rows.empty()) text->Add(std::move(rows));
}

}  // namespace pgring::tool::ceph
