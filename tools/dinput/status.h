// Errors inside the tool are exceptions of type Failure, carrying a dinput status code and
// one line of text, as the library's own code raises dinput::Error (src/core/status.h).
// A failure coming from the library and one found by the tool itself are reported the same
// way: `<STATUS_NAME>: <message>` on stderr. They are thrown where they are found and caught
// at a boundary only: main() for a command, a worker thread that hands its failure to the
// thread that started it, and every callback the tool gives the library, since no exception
// may unwind through the library's C frames (call_from_library).
#ifndef DINPUT_TOOL_STATUS_H_
#define DINPUT_TOOL_STATUS_H_

#include <exception>
#include <string>
#include <utility>

#include "dinput.h"

namespace dinput_tool {

class Failure : public std::exception {
 public:
  // The message is held as a std::string of its own, not in std::runtime_error's shared
  // buffer: a worker's failure is copied to the thread that reports it (see dinput::Error).
  Failure(dinput_status_t code, std::string message) : code_(code), message_(std::move(message)) {}

  const char* what() const noexcept override { return message_.c_str(); }
  dinput_status_t code() const { return code_; }
  const std::string& message() const { return message_; }
  // The single stderr line, e.g. "INVALID_ARGUMENT: batch(): ...".
  std::string line() const;

 private:
  dinput_status_t code_;
  std::string message_;
};

Failure invalid_argument(std::string message);
Failure unimplemented(std::string message);

// Captures the library's thread-local message right after a failing call (it is only valid
// until the next call on this thread). `what` names the call, used when the library gave
// no message.
Failure library_error(dinput_status_t code, const char* what);

// Throws library_error(code, what) unless `code` is DINPUT_OK.
inline void check(dinput_status_t code, const char* what) {
  if (code != DINPUT_OK) throw library_error(code, what);
}

// The exception being handled (call only inside a catch block) as a Failure: the tool must
// never crash on bad input or a failed allocation, so anything else thrown becomes
// RESOURCE_EXHAUSTED (std::bad_alloc) or INTERNAL.
Failure current_failure();

// Hands a failure found inside a callback back through the library: sets the thread's
// last error and returns the code for the callback to return.
dinput_status_t report_to_library(const Failure& failure);

// Runs `body` inside a callback the library calls: DINPUT_OK when it returns, the code of
// whatever it throws otherwise (report_to_library), so that nothing unwinds into C.
template <typename Body>
dinput_status_t call_from_library(Body&& body) noexcept {
  try {
    body();
    return DINPUT_OK;
  } catch (...) {
    return report_to_library(current_failure());
  }
}

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_STATUS_H_
