// Errors inside the tool carry a dinput status code and one line of text, so that a
// failure coming from the library and one found by the tool itself are reported the same
// way: `<STATUS_NAME>: <message>` on stderr.
#ifndef DINPUT_TOOL_STATUS_H_
#define DINPUT_TOOL_STATUS_H_

#include <string>

#include "dinput.h"

namespace dinput_tool {

struct Status {
  dinput_status_t code = DINPUT_OK;
  std::string message;

  bool ok() const { return code == DINPUT_OK; }
  // The single stderr line, e.g. "INVALID_ARGUMENT: batch(): ...".
  std::string line() const;
};

inline Status ok_status() { return Status{}; }
Status invalid_argument(std::string message);
Status unimplemented(std::string message);

// Captures the library's thread-local message right after a failing call (it is only valid
// until the next call on this thread). `what` names the call, used when the library gave
// no message.
Status library_error(dinput_status_t code, const char *what);

// Lets callbacks hand an error found by the tool back through the library.
dinput_status_t report_to_library(const Status &status);

}  // namespace dinput_tool

#define DINPUT_TOOL_RETURN_IF_ERROR(expr)   \
  do {                                      \
    ::dinput_tool::Status status_ = (expr); \
    if (!status_.ok()) return status_;      \
  } while (0)

#endif  // DINPUT_TOOL_STATUS_H_
