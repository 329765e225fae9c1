#include "status.h"

#include <new>
#include <utility>

namespace dinput_tool {

namespace {

// A message must stay on one line: the CLI contract promises exactly one stderr line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string Failure::line() const {
  return std::string(dinput_status_name(code_)) + ": " + one_line(message_);
}

Failure invalid_argument(std::string message) {
  return Failure(DINPUT_INVALID_ARGUMENT, std::move(message));
}

Failure unimplemented(std::string message) {
  return Failure(DINPUT_UNIMPLEMENTED, std::move(message));
}

Failure library_error(dinput_status_t code, const char* what) {
  const char* message = dinput_last_error_message();
  std::string text = (message != nullptr && message[0] != '\0') ? std::string(message)
                                                                : std::string(what) + " failed";
  return Failure(code == DINPUT_OK ? DINPUT_INTERNAL : code, std::move(text));
}

Failure current_failure() {
  try {
    throw;
  } catch (const Failure& failure) {
    return failure;
  } catch (const std::bad_alloc&) {
    return Failure(DINPUT_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return Failure(DINPUT_INTERNAL, e.what());
  } catch (...) {
    return Failure(DINPUT_INTERNAL, "unexpected exception");
  }
}

dinput_status_t report_to_library(const Failure& failure) {
  dinput_error_set(failure.code(), failure.message().c_str());
  return failure.code();
}

}  // namespace dinput_tool
