// The exception firewall and the thread-local last error. Every exported function runs its
// body inside guard(), so no C++ exception crosses the C ABI: dinput::Error becomes its
// status code, std::bad_alloc RESOURCE_EXHAUSTED, anything else INTERNAL.
#pragma once

#include <new>
#include <string>

#include "core/status.h"
#include "dinput.h"

namespace dinput::capi {

// This thread's last error changes only when a dinput call fails (the guard below sets it),
// when a caller clears it (dinput_error_clear), or when a callback sets it
// (dinput_error_set): a successful call leaves it alone.
dinput_status_t set_last_error(dinput_status_t code, std::string message);
void clear_last_error();
dinput_status_t last_error_code();
const std::string& last_error_message();

// Held while a user callback runs: sets this thread's last error aside and leaves the slot
// clear, so that what the callback (or a dinput call it makes) sets there can be told apart
// from an older message; puts the set-aside error back when it goes. A callback that runs
// on the caller's own thread (dataset_fn, value_fn, replica 0 of run, a sequential map) thus
// cannot wipe a message the caller has not read yet.
class CallbackScope {
 public:
  CallbackScope();
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  dinput_status_t saved_code_;
  std::string saved_message_;
};

inline dinput_status_t to_status(Code code) { return static_cast<dinput_status_t>(code); }
// Status codes coming from user callbacks may be anything; unknown values become UNKNOWN.
Code to_code(dinput_status_t status);

// The exported function running on this thread, for messages about its arguments. Saved and
// restored, since callbacks may call into the library from inside a call.
const char*& current_function();
// The slot is looked up once per call: each lookup of a thread-local of a shared library is a
// call into the dynamic loader, and every guarded function pays this.
class ApiScope {
 public:
  explicit ApiScope(const char* fn) : slot_(current_function()), saved_(slot_) { slot_ = fn; }
  ~ApiScope() { slot_ = saved_; }
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

 private:
  const char*& slot_;  // this thread's: the scope lives and dies on it
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

// Runs an iterator's next() for the get_next and get_next_as_optional functions of plain and
// distributed iterators (the exported function running names itself in errors); false at the
// end of data.
//  - OUT_OF_RANGE means end of data and nothing else: next() says end of data by returning
//    false, and an error that carries OUT_OF_RANGE from inside the pipeline is a failure, so
//    it is passed on as INTERNAL rather than read as a clean end that would drop the rest of
//    the epoch.
//  - CANCELLED before and after next() (which itself stops waiting with CANCELLED): a call
//    that a cancel (by `cancel_fn`) overlapped returns CANCELLED even when a callback on this
//    thread went on to produce an element, and so does every later call.
template <typename Cancelled, typename Next>
bool next_element(const char* cancel_fn, Cancelled&& cancelled, Next&& next) {
  auto check = [&] {
    if (cancelled())
      raise(Code::kCancelled, current_function(), ": the iterator was cancelled (", cancel_fn, ")");
  };
  check();
  bool got;
  try {
    got = next();
  } catch (const Error& e) {
    if (e.code() == Code::kCancelled) check();
    if (e.code() != Code::kOutOfRange) throw;
    throw Error(Code::kInternal, str_cat("internal error: a failure with code OUT_OF_RANGE inside "
                                         "the pipeline (not end of data): ",
                                         e.what()));
  }
  check();
  return got;
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
#define DINPUT_REQUIRE(arg)                                                                 \
  do {                                                                                      \
    if ((arg) == nullptr)                                                                   \
      ::dinput::raise(::dinput::Code::kInvalidArgument, ::dinput::capi::current_function(), \
                      ": argument '" #arg "' is NULL");                                     \
  } while (0)

// Checks `out` and clears *out so that a failing call always leaves it NULL.
#define DINPUT_REQUIRE_OUT(out) \
  do {                          \
    DINPUT_REQUIRE(out);        \
    *(out) = nullptr;           \
  } while (0)
