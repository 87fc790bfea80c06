#include "tool/tool_common.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace pgring::tool {

int PrintError(const ToolContext& ctx, std::string_view message, int exit_code) {
  std::string m(message);
  std::replace(m.begin(), m.end(), '\n', ' ');
  *ctx.err << "pgring-tool: error: " << m << "\n";
  ctx.err->flush();
  return exit_code;
}

absl::Status ExplainOpenError(const absl::Status& s, std::string_view what) {
  if (s.ok()) return s;
  const std::string msg(s.message());
  if (!absl::IsUnavailable(s)) return s;
  constexpr char kHint[] =
      " (a command that only reads can look at it anyway with --live)";
  if (msg.find(kHint) != std::string::npos) return s;
  if (msg.find("in use by another process") == std::string::npos) {
    return absl::UnavailableError(
        absl::StrCat(std::string(what), " is in use by another process: ", msg, kHint));
  }
  return absl::UnavailableError(absl::StrCat(msg, kHint));
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Hex32(uint32_t v) { return absl::StrFormat("0x%08x", v); }

std::string HumanBytes(uint64_t b) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (b < 1024) return absl::StrCat(b, " B");
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", v, kUnits[u]);
}

Json ProblemToJson(const VerifyProblem& p) {
  Json j;
  j["severity"] = p.severity == VerifyProblem::Severity::kError ? "error" : "note";
  j["kind"] = p.kind;
  j["pg"] = p.pg ? Json(p.pg->ToString()) : Json(nullptr);
  j["chunk"] = p.chunk ? Json(*p.chunk) : Json(nullptr);
  j["offset"] = p.offset ? Json(*p.offset) : Json(nullptr);
  j["lpos"] = p.lpos ? Json(*p.lpos) : Json(nullptr);
  j["stream"] = p.stream;
  j["stream_lpos"] = p.stream_lpos ? Json(*p.stream_lpos) : Json(nullptr);
  j["message"] = p.message;
  j["fixable"] = p.fixable;
  return j;
}

Progress::Progress(const ToolContext& ctx, std::string what, uint64_t total)
    : err_(ctx.progress ? ctx.err : nullptr), what_(std::move(what)), total_(total) {}

Progress::~Progress() {
  if (err_ != nullptr && shown_) {
    *err_ << "\r\033[K";
    err_->flush();
  }
}

void Progress::Update(uint64_t done) {
  if (err_ == nullptr) return;
  auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < std::chrono::milliseconds(100) && done < total_) return;
  last_ = now;
  shown_ = true;
  *err_ << "\r\033[K" << what_ << ": " << done << "/" << total_;
  err_->flush();
}

absl::StatusOr<PgId> ParsePgId(const std::string& text) {
  PgId id;
  if (!PgId::Parse(text, &id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad PG id '", text,
                     "': expected POOL.SEED in hex, or POOL.SEEDsSHARD (e.g. 1.2a, 3.1fs0)"));
  }
  return id;
}

absl::StatusOr<Version> ParseVersion(const std::string& text) {
  std::string t = text;
  // Ceph prints eversion_t as 12'345; 12.345 saves quoting in shells.
  if (t.find('\'') == std::string::npos) {
    auto dot = t.find('.');
    if (dot != std::string::npos) t[dot] = '\'';
  }
  Version v;
  if (!Version::Parse(t, &v) || t.empty() || t.front() == '-' || t.find('-') != std::string::npos ||
      t.find('+') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad version '", text, "': expected EPOCH'VERSION or EPOCH.VERSION (e.g. 12'345)"));
  }
  return v;
}

}  // namespace pgring::tool
