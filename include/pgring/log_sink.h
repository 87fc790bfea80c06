// pgring/log_sink.h — where pgring's diagnostic messages go. pgring has no
// global logger: each store logs through the sink in its Options, which the
// embedder may replace (an OSD routes it to its own dout/derr).
#ifndef PGRING_LOG_SINK_H_
#define PGRING_LOG_SINK_H_

#include <memory>
#include <string_view>

namespace pgring {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

class LogSink {
 public:
  virtual ~LogSink() = default;
  // Called from any thread; implementations must be thread-safe.
  virtual void Log(LogLevel level, std::string_view message) = 0;
};

// Writes "pgring: <level>: <message>" lines to stderr at or above `min_level`.
std::shared_ptr<LogSink> StderrLogSink(LogLevel min_level = LogLevel::kWarning);
// Discards everything.
std::shared_ptr<LogSink> NullLogSink();

}  // namespace pgring

#endif  // PGRING_LOG_SINK_H_
