#include "tool/ceph/payload_view.h"

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"

namespace pgring::tool::ceph {

void AddDecodeOption(CLI::App* app, DecodeMode* mode) {
  app->add_option_function<std::string>(
         "--decode",
         [mode](const std::string& m) {
           *mode = m == "ceph" ? DecodeMode::kCeph
                   : m == "none" ? DecodeMode::kNone
                                 : DecodeMode::kAuto;
         },
         "payloads as Ceph encodings: auto (default: decoded when they decode, else hex), "
         "ceph (fail on one that does not), none (hex)")
      ->check(CLI::IsMember({"auto", "ceph", "none"}));
}

PayloadShown ShowPayload(DecodeMode mode, CephType type, std::string_view payload, Json* item) {
  PayloadShown shown;
  if (mode == DecodeMode::kNone) {
    shown.cell = Hex(payload);
    return shown;
  }
  auto decoded = DecodeCeph(type, payload);
  if (!decoded.ok() && type == CephType::kPgInfo) {
    auto fast = DecodeCeph(CephType::kPgFastInfo, payload);
    if (fast.ok()) decoded = std::move(fast);
  }
  if (decoded.ok()) {
    (*item)["type"] = std::string(CephTypeName(decoded->type));
    (*item)["summary"] = decoded->summary;
    (*item)["decoded"] = decoded->fields;
    if (!decoded->notes.empty()) (*item)["decode_notes"] = decoded->notes;
    shown.cell = decoded->summary;
    return shown;
  }
  shown.cell = Hex(payload);
  if (mode == DecodeMode::kCeph) {
    const std::string why = std::string(decoded.status().message());
    (*item)["decode_error"] = why;
    absl::StrAppend(&shown.cell, "  [not a ", CephTypeName(type), ": ", why, "]");
    shown.failed = true;
  }
  return shown;
}

}  // namespace pgring::tool::ceph
