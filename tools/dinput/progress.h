// The progress line of `dinput bench` (on stderr, when it is a terminal). Independent of
// the library, so that it can be unit-tested alone.
#ifndef DINPUT_TOOL_PROGRESS_H_
#define DINPUT_TOOL_PROGRESS_H_

#include <cstdint>
#include <string>

namespace dinput_tool {

struct Progress {
  int64_t steps = 0;  // over every worker
  int64_t rows = 0;
  int64_t bytes = 0;
  double seconds = 0;        // since the start
  int64_t total_steps = -1;  // what `steps` will reach at the end; -1: not known
};

// "bench: 250/1000 steps (25.0%), ETA 3s, 250 rows, 0.0 MB, 100 rows/s": the percentage and
// the time left (at the mean rate so far) only when total_steps is known; without it
// "bench: 250 steps, 250 rows, 0.0 MB, 100 rows/s".
std::string progress_text(const Progress& progress);

// A duration for people: "42s", "3m07s", "2h05m".
std::string duration_text(double seconds);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_PROGRESS_H_
