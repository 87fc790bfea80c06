// The stock log sinks.
#include <cstdio>
#include <string>

#include "util/sync.h"
#include "pgring/log_sink.h"

namespace pgring {
namespace {

class StderrSink final : public LogSink {
 public:
  explicit StderrSink(LogLevel min) : min_(min) {}
  void Log(LogLevel level, std::string_view message) override {
    if (level < min_) return;
    static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
    MutexLock l(&mu_);
    std::fprintf(stderr, "pgring: %s: %.*s\n", kNames[static_cast<int>(level)],
                 static_cast<int>(message.size()), message.data());
  }

 private:
  const LogLevel min_;
  Mutex mu_;
};

class NullSink final : public LogSink {
 public:
  void Log(LogLevel, std::string_view) override {}
};

}  // namespace

std::shared_ptr<LogSink> StderrLogSink(LogLevel min_level) {
  return std::make_shared<StderrSink>(min_level);
}
std::shared_ptr<LogSink> NullLogSink() { return std::make_shared<NullSink>(); }

}  // namespace pgring
