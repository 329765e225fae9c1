// Library log lines go to stderr, filtered by the DINPUT_LOG_LEVEL environment variable
// (ERROR, WARNING — the default —, INFO). Informational notes, such as an AUTO auto-shard
// policy falling back to DATA, are INFO so that tools printing JSON stay quiet by default.
#pragma once

#include <string>

namespace dinput {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2 };

void log_line(LogLevel level, const std::string& message);

}  // namespace dinput
