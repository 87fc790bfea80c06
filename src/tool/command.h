// command.h — one pgring-tool command, in the manner of RocksDB's ldb
// commands: a name, a line of help, its own options, and Run, which does the
// work and returns a CommandResult. Run prints nothing (progress on stderr
// aside): render.h prints the result as text or JSON, so every command's
// output follows one set of rules and a test can run a command in-process.
//
// commands.cc lists every command (AllCommands) and builds the command line
// from that list.
#ifndef PGRING_TOOL_COMMAND_H_
#define PGRING_TOOL_COMMAND_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tool/text_output.h"
#include "tool/tool_common.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pgring::tool {

// What a command did, in both output forms; which one is printed is the
// caller's choice (--format).
struct CommandResult {
  int exit_code = kExitOk;
  // Printed as one "pgring-tool: error: <error>" line on stderr (PrintError).
  std::optional<std::string> error;
  // The --format json document; null: nothing on stdout (a failed command).
  Json json;
  // The default form.
  TextOutput text;

  // A command that failed: an error line, nothing on stdout.
  static CommandResult Failure(std::string_view message, int exit_code) {
    CommandResult r;
    r.exit_code = exit_code;
    r.error = std::string(message);
    return r;
  }
  static CommandResult Failure(const absl::Status& status, int exit_code) {
    return Failure(std::string_view(status.message().data(), status.message().size()), exit_code);
  }
};

// The exit status of an error met while a command ran (not while opening):
// bad input the store rejected (kInvalidArgument) is usage, the rest failure.
inline int ExitCodeFor(const absl::Status& s) {
  return absl::IsInvalidArgument(s) ? kExitUsage : kExitFailed;
}

class Command {
 public:
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  // As typed on the command line ("list-pgs").
  std::string_view name() const { return name_; }
  // One line, for pgring-tool --help.
  std::string_view help() const { return help_; }
  // More text under the command's own --help; empty: none.
  std::string_view footer() const { return footer_; }
  // Whether the command may change the store (then it takes --dry-run and
  // is refused with --live).
  virtual bool writes() const { return false; }
  // Declares the command's own options on its subcommand, bound to members
  // Run reads.
  virtual void AddOptions(CLI::App* app) { (void)app; }
  // False for a command that reads no store (it runs without --dev).
  virtual bool needs_store() const { return true; }
  // Does the work and says what came of it; prints nothing (progress on
  // ctx.err aside).
  virtual CommandResult Run(const ToolContext& ctx) const = 0;

 protected:
  // The texts are string literals: they are kept, not copied.
  Command(std::string_view name, std::string_view help, std::string_view footer = {})
      : name_(name), help_(help), footer_(footer) {}

  // The result of a command that failed:
  //   return Fail(ctx, "PG 1.2 does not exist", kExitFailed);
  // Nothing is printed here (render.h prints the error); the context is taken
  // so that every error path of a Run reads alike.
  static CommandResult Fail(const ToolContext&, std::string_view message, int exit_code) {
    return CommandResult::Failure(message, exit_code);
  }
  static CommandResult Fail(const ToolContext&, const absl::Status& status, int exit_code) {
    return CommandResult::Failure(status, exit_code);
  }

 private:
  std::string_view name_, help_, footer_;
};

// Every command, in the order --help lists them.
std::vector<std::unique_ptr<Command>> AllCommands();

}  // namespace pgring::tool

#endif  // PGRING_TOOL_COMMAND_H_
