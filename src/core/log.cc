#include "core/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dinput {

namespace {
LogLevel configured_level() {
  static const LogLevel level = [] {
    const char* env = std::getenv("DINPUT_LOG_LEVEL");
    if (!env) return LogLevel::kWarning;
    if (!std::strcmp(env, "INFO") || !std::strcmp(env, "info")) return LogLevel::kInfo;
    if (!std::strcmp(env, "ERROR") || !std::strcmp(env, "error")) return LogLevel::kError;
    return LogLevel::kWarning;
  }();
  return level;
}
}  // namespace

void log_line(LogLevel level, const std::string& message) {
  if (level > configured_level()) return;
  static const char* const kNames[] = {"ERROR", "WARNING", "INFO"};
  std::fprintf(stderr, "dinput %s: %s\n", kNames[static_cast<int>(level)], message.c_str());
}

}  // namespace dinput
