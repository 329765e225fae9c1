// Errors inside the library are C++ exceptions of type dinput::Error carrying a canonical
// status code; the C ABI firewall (src/capi) turns them into dinput_status_t + message.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace dinput {

// Same numbers as dinput_status_t in dinput.h.
enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

const char* code_name(Code code);

class Error : public std::runtime_error {
 public:
  Error(Code code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  // Copies do not share the message: std::runtime_error's copy shares a reference-counted
  // string, and one error is often copied and thrown on several threads (an abandoned
  // collective round fails every worker). The count is updated inside the uninstrumented
  // C++ runtime, which ThreadSanitizer reports as a race; a copy of its own costs nothing
  // that matters on an error path.
  Error(const Error& other) : std::runtime_error(std::string(other.what())), code_(other.code_) {}
  Error& operator=(const Error& other) {
    if (this != &other) {
      std::runtime_error::operator=(std::runtime_error(std::string(other.what())));
      code_ = other.code_;
    }
    return *this;
  }
  Code code() const { return code_; }

 private:
  Code code_;
};

// Builds a message from any streamable pieces: raise(Code::kInvalidArgument, "x=", x).
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

template <typename... Args>
[[noreturn]] void raise(Code code, Args&&... args) {
  throw Error(code, str_cat(std::forward<Args>(args)...));
}

#define DINPUT_CHECK_ARG(cond, ...)                                              \
  do {                                                                           \
    if (!(cond)) ::dinput::raise(::dinput::Code::kInvalidArgument, __VA_ARGS__); \
  } while (0)

}  // namespace dinput
