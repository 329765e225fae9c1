// The exception firewall and the thread-local last error. Every exported function runs its
// body inside guard(), so no C++ exception crosses the C ABI: dinput::Error becomes its
// status code, std::bad_alloc RESOURCE_EXHAUSTED, anything else INTERNAL.
#pragma once

#include <new>
#include <string>

#include "core/status.h"
#include "dinput.h"

namespace dinput::capi {

dinput_status_t set_last_error(dinput_status_t code, std::string message);
void clear_last_error();
dinput_status_t last_error_code();
const std::string& last_error_message();

inline dinput_status_t to_status(Code code) { return static_cast<dinput_status_t>(code); }
// Status codes coming from user callbacks may be anything; unknown values become UNKNOWN.
Code to_code(dinput_status_t status);

// The exported function running on this thread, for messages about its arguments. Saved and
// restored, since callbacks may call into the library from inside a call.
const char*& current_function();
class ApiScope {
 public:
  explicit ApiScope(const char* fn) : saved_(current_function()) { current_function() = fn; }
  ~ApiScope() { current_function() = saved_; }

 private:
  const char* saved_;
};

template <typename Body>
dinput_status_t guard(const char* fn, Body&& body) noexcept {
  ApiScope scope(fn);
  try {
    body();
    return DINPUT_OK;
  } catch (const Error& e) {
    return set_last_error(to_status(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return set_last_error(DINPUT_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return set_last_error(DINPUT_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_last_error(DINPUT_INTERNAL, "internal error: unknown exception");
  }
}

// Runs a body that returns a value (accessors); on any exception returns `fallback`.
template <typename T, typename Body>
T guard_value(T fallback, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return fallback;
  }
}

}  // namespace dinput::capi

// INVALID_ARGUMENT naming the function and the argument when a pointer argument is NULL.
#define DINPUT_REQUIRE(arg)                                                                   \
  do {                                                                                        \
    if ((arg) == nullptr)                                                                     \
      ::dinput::raise(::dinput::Code::kInvalidArgument, ::dinput::capi::current_function(),      \
                      ": argument '" #arg "' is NULL");                                          \
  } while (0)

// Checks `out` and clears *out so that a failing call always leaves it NULL.
#define DINPUT_REQUIRE_OUT(out) \
  do {                          \
    DINPUT_REQUIRE(out);        \
    *(out) = nullptr;           \
  } while (0)
