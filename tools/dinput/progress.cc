#include "progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dinput_tool {

std::string duration_text(double seconds) {
  const long long s = std::llround(std::max(0.0, seconds));
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  }
  return buf;
}

std::string progress_text(const Progress& p) {
  std::string text = "bench: " + std::to_string(p.steps);
  if (p.total_steps > 0) {
    // The data may end before total_steps (--steps K on a shorter pipeline): never past 100%.
    const double fraction =
        std::min(1.0, static_cast<double>(p.steps) / static_cast<double>(p.total_steps));
    char buf[64];
    std::snprintf(buf, sizeof buf, "/%lld steps (%.1f%%), ETA ",
                  static_cast<long long>(p.total_steps), 100.0 * fraction);
    text += buf;
    text += p.steps > 0 ? duration_text(p.seconds * (1.0 - fraction) / fraction) : "unknown";
  } else {
    text += " steps";
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, ", %lld rows, %.1f MB, %.0f rows/s",
                static_cast<long long>(p.rows), static_cast<double>(p.bytes) / 1e6,
                p.seconds > 0 ? static_cast<double>(p.rows) / p.seconds : 0.0);
  return text + buf;
}

}  // namespace dinput_tool
