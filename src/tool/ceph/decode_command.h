// decode_command.h — `pgring-tool decode --type T FILE`: ceph-dencoder's
// "import FILE; decode; dump_json" for the PG-log types (ceph_decode.h), on
// a raw file, with no store. Fails (exit 1) unless the file is one whole
// encoding of the type.
#ifndef PGRING_TOOL_CEPH_DECODE_COMMAND_H_
#define PGRING_TOOL_CEPH_DECODE_COMMAND_H_

#include <string>

#include "tool/command.h"

namespace pgring::tool {

class DecodeCommand final : public Command {
 public:
  DecodeCommand()
      : Command("decode",
                "decode a file holding one Ceph encoding (pg_log_entry_t, ...) as "
                "ceph-dencoder does; no store") {}
  bool needs_store() const override { return false; }
  void AddOptions(CLI::App* app) override;
  CommandResult Run(const ToolContext& ctx) const override;

 private:
  std::string type_, file_;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_CEPH_DECODE_COMMAND_H_
