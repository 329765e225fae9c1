#include "status.h"

#include <utility>

namespace dinput_tool {

namespace {

// A message must stay on one line: the CLI contract promises exactly one stderr line.
std::string one_line(std::string text) {
  for (char &c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string Status::line() const {
  return std::string(dinput_status_name(code)) + ": " + one_line(message);
}

Status invalid_argument(std::string message) {
  return Status{DINPUT_INVALID_ARGUMENT, std::move(message)};
}

Status unimplemented(std::string message) {
  return Status{DINPUT_UNIMPLEMENTED, std::move(message)};
}

Status library_error(dinput_status_t code, const char *what) {
  const char *message = dinput_last_error_message();
  std::string text = (message != nullptr && message[0] != '\0') ? std::string(message)
                                                                : std::string(what) + " failed";
  return Status{code == DINPUT_OK ? DINPUT_INTERNAL : code, std::move(text)};
}

dinput_status_t report_to_library(const Status &status) {
  dinput_error_set(status.code, status.message.c_str());
  return status.code;
}

}  // namespace dinput_tool
