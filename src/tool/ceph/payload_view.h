// payload_view.h — how `log`, `dups` and `info` show a record's payload:
// decoded as the Ceph type an OSD stores there (ceph_decode.h) or as hex,
// by --decode:
//   auto  (default) decoded when the payload is one whole encoding, hex when not;
//   ceph  decoded; a payload that does not decode is shown as hex with the
//         reason, and the command fails (exit 1);
//   none  hex.
#ifndef PGRING_TOOL_CEPH_PAYLOAD_VIEW_H_
#define PGRING_TOOL_CEPH_PAYLOAD_VIEW_H_

#include <string>
#include <string_view>

#include "tool/ceph/ceph_decode.h"
#include "tool/tool_common.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pgring::tool::ceph {

enum class DecodeMode { kAuto, kCeph, kNone };

// Declares --decode on a command, bound to `mode`.
void AddDecodeOption(CLI::App* app, DecodeMode* mode);

struct PayloadShown {
  std::string cell;     // the summary line, or the hex (with the reason, in ceph mode)
  bool failed = false;  // ceph mode and the payload did not decode
};

// Shows `payload` (of type `type`) by `mode`. An info slot holds either a
// pg_info_t or a pg_fast_info_t: kPgInfo tries both. When it decodes, adds
// "decoded" (the fields) and "summary" to `item`; when ceph mode fails,
// "decode_error". The "payload" hex the caller keeps in `item` is untouched.
PayloadShown ShowPayload(DecodeMode mode, CephType type, std::string_view payload, Json* item);

}  // namespace pgring::tool::ceph

#endif  // PGRING_TOOL_CEPH_PAYLOAD_VIEW_H_
