#include "capi/firewall.h"

namespace dinput::capi {

namespace {
struct LastError {
  dinput_status_t code = DINPUT_OK;
  std::string message;
};
LastError& last_error() {
  thread_local LastError error;
  return error;
}
}  // namespace

const char*& current_function() {
  thread_local const char* fn = "dinput";
  return fn;
}

dinput_status_t set_last_error(dinput_status_t code, std::string message) {
  LastError& e = last_error();
  e.code = code;
  e.message = std::move(message);
  return code;
}

void clear_last_error() {
  LastError& e = last_error();
  e.code = DINPUT_OK;
  e.message.clear();
}

CallbackScope::CallbackScope() {
  // Moved, not copied: no allocation per callback, and a message kept on the heap goes back
  // to the same buffer, so a pointer the caller holds from dinput_last_error_message stays
  // valid.
  LastError& e = last_error();
  saved_code_ = e.code;
  saved_message_ = std::move(e.message);
  e.code = DINPUT_OK;
  e.message.clear();
}

CallbackScope::~CallbackScope() {
  LastError& e = last_error();
  e.code = saved_code_;
  e.message = std::move(saved_message_);
}

dinput_status_t last_error_code() { return last_error().code; }
const std::string& last_error_message() { return last_error().message; }

Code to_code(dinput_status_t status) {
  int s = static_cast<int>(status);
  return s >= 0 && s <= 16 ? static_cast<Code>(s) : Code::kUnknown;
}

}  // namespace dinput::capi
