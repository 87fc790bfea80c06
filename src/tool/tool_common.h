// tool_common.h — what every pgring-tool command shares: where its output
// goes and in which format, progress reporting, exit codes, error lines, and
// small formatting and parsing helpers (hex, JSON of problems, PG ids and
// versions).
//
// Each command is a class (command.h) that runs over a ToolContext and
// returns its result; render.h prints it in the context's format.
#ifndef PGRING_TOOL_TOOL_COMMON_H_
#define PGRING_TOOL_TOOL_COMMON_H_

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgring/types.h"
#include "pgring/verify.h"

namespace pgring::tool {

// Keys keep the order they were inserted in, so output is stable and reads
// in the same order as the text form.
using Json = nlohmann::ordered_json;

enum class OutputFormat { kText, kJson };

// Exit statuses of every command.
inline constexpr int kExitOk = 0;
// The command ran and failed (a missing PG, a version out of range, damage
// met while reading), or fsck/repair found problems.
inline constexpr int kExitFailed = 1;
// Bad usage, or the store could not be opened at all (missing path, not a
// pgring store, in use by another process, partition and RocksDB of
// different stores).
inline constexpr int kExitUsage = 2;

struct ToolContext {
  std::string dev;  // --dev
  std::string db;   // --db
  // --column-family: where in the RocksDB the store's keys are (empty: the
  // default family).
  std::string column_family;
  // --live: read a store another process has open (tool_db.h); the output
  // says the view may be behind.
  bool live = false;
  OutputFormat format = OutputFormat::kText;
  bool progress = false;  // show progress on *err (stderr is a terminal)
  std::istream* in = nullptr;  // import --file -
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;

  bool json() const { return format == OutputFormat::kJson; }
};

// Prints "pgring-tool: error: <message>" (one line) on ctx.err and returns
// `exit_code`. Newlines in the message are flattened.
int PrintError(const ToolContext& ctx, std::string_view message, int exit_code);

// An error opening the store, made explicit: a device or RocksDB that
// another process holds (kUnavailable) says "in use by another process".
absl::Status ExplainOpenError(const absl::Status& s, std::string_view what);

// Lower-case hex of `bytes`.
std::string Hex(std::string_view bytes);
// "0x1a2b3c4d".
std::string Hex32(uint32_t v);
// 1536 -> "1.5 KiB"; exact byte counts stay in JSON.
std::string HumanBytes(uint64_t bytes);

Json ProblemToJson(const VerifyProblem& p);

// Parses "1.2a" / "1.2as0" / versions "12'345", with errors that say what
// was expected.
absl::StatusOr<PgId> ParsePgId(const std::string& text);
absl::StatusOr<Version> ParseVersion(const std::string& text);

// Shows "<what>: done/total" on `err`, rewriting one line, at most ten times
// a second; clears the line when destroyed. Does nothing when disabled.
class Progress {
 public:
  Progress(const ToolContext& ctx, std::string what, uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void Update(uint64_t done);

 private:
  std::ostream* err_;  // null: disabled
  std::string what_;
  uint64_t total_;
  std::chrono::steady_clock::time_point last_{};
  bool shown_ = false;
};

}  // namespace pgring::tool

#endif  // PGRING_TOOL_TOOL_COMMON_H_
