// ceph_decode.h — decodes the Ceph encodings a PG log stores (what
// ceph-dencoder does for these types, which Debian ships without its type
// plug-ins): pg_log_entry_t, pg_log_dup_t, pg_info_t, and the eversion_t,
// osd_reqid_t and hobject_t inside them. A payload decodes only when it is
// one whole encoding of the type: every byte read, nothing left over.
// Errors name the field, its offset and why (ceph_reader.h).
#ifndef PGRING_TOOL_CEPH_CEPH_DECODE_H_
#define PGRING_TOOL_CEPH_CEPH_DECODE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tool/text_output.h"
#include "tool/tool_common.h"

namespace pgring::tool::ceph {

enum class CephType { kLogEntry, kLogDup, kPgInfo, kPgFastInfo, kEversion, kReqid, kHobject };

// Ceph's type name ("pg_log_entry_t").
absl::string_view CephTypeName(CephType type);
// The type named `name`; kInvalidArgument listing the known names.
absl::StatusOr<CephType> ParseCephType(absl::string_view name);
// Every type, by name, in CephType's order.
std::vector<std::string> CephTypeNames();

struct CephDecoded {
  CephType type;
  // Every decoded field, named as Ceph's own dump names them.
  Json fields;
  // One line, in the form Ceph prints the value in its logs.
  std::string summary;
  // Bytes a newer encoder appended that were skipped, one line each.
  std::vector<std::string> notes;
};

// Decodes `bytes` as one whole `type`.
absl::StatusOr<CephDecoded> DecodeCeph(CephType type, std::string_view bytes);

// The fields as indented "key  value" lines (objects nest by two spaces,
// array elements are "key[i]"), starting at `indent`.
void AddFieldsText(const Json& fields, int indent, TextOutput* text);

}  // namespace pgring::tool::ceph

#endif  // PGRING_TOOL_CEPH_CEPH_DECODE_H_
