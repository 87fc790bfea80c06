#include "tool/ceph/decode_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tool/ceph/ceph_decode.h"

namespace pgring::tool {

void DecodeCommand::AddOptions(CLI::App* app) {
  app->add_option("--type", type_,
                  absl::StrCat("the Ceph type: ", absl::StrJoin(ceph::CephTypeNames(), ", ")))
      ->required();
  app->add_option("file", file_, "the file holding the encoding")->required();
}

CommandResult DecodeCommand::Run(const ToolContext& ctx) const {
  auto type = ceph::ParseCephType(type_);
  if (!type.ok()) return Fail(ctx, type.status(), kExitUsage);
  std::ifstream in(file_, std::ios::binary);
  if (!in) return Fail(ctx, absl::StrCat("cannot open ", file_), kExitUsage);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Fail(ctx, absl::StrCat("cannot read ", file_), kExitFailed);
  const std::string bytes = buf.str();
  auto decoded = ceph::DecodeCeph(*type, bytes);
  if (!decoded.ok()) {
    return Fail(ctx, absl::StrCat(file_, ": not a whole ", type_, ": ", decoded.status().message()),
                kExitFailed);
  }
  CommandResult r;
  r.json["type"] = type_;
  r.json["size"] = bytes.size();
  r.json["summary"] = decoded->summary;
  r.json["fields"] = decoded->fields;
  r.json["notes"] = decoded->notes;
  r.text.Line(absl::StrFormat("%s, %u bytes: %s", type_, bytes.size(), decoded->summary));
  ceph::AddFieldsText(decoded->fields, 2, &r.text);
  for (const std::string& n : decoded->notes) r.text.Line(absl::StrCat("note: ", n));
  return r;
}

}  // namespace pgring::tool
