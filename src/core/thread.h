// The threads the library starts. Each one starts through the launcher that a binding may
// install (dinput_set_thread_launcher; docs/c-api.md, "The library's threads"), so that a
// runtime whose callbacks are costly on threads it did not make (Go attaches a foreign
// thread anew for every call) can run them on threads of its own; without a launcher, and
// when the launcher declines, it is a std::thread.
#pragma once

#include <functional>
#include <memory>
#include <thread>

namespace dinput {

// What dinput_set_thread_launcher takes: calls body(arg) once on a new thread and returns 0,
// or returns non-zero without calling it.
using ThreadLauncher = int (*)(void (*body)(void*), void* arg, void* user_data);

// Installs `launcher` (nullptr: none) for the threads started from now on.
void set_thread_launcher(ThreadLauncher launcher, void* user_data);

// A std::thread in all but how it starts. join() waits for the body to return (and for
// what it captured to be destroyed), not for the thread to end: a launched thread's end is
// its launcher's business. Unlike std::thread, destroying a joinable Thread joins it.
class Thread {
 public:
  Thread() = default;
  // Starts `body`; throws std::system_error when no thread can be had, as std::thread does.
  explicit Thread(std::function<void()> body);
  Thread(Thread&& other) noexcept = default;
  Thread& operator=(Thread&& other) noexcept;
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;
  ~Thread();

  bool joinable() const { return native_.joinable() || launched_ != nullptr; }
  void join();
  void detach();

 private:
  struct Launched;  // the body and its end, shared with the launched thread
  static void run_launched(void* arg);

  std::thread native_;
  std::shared_ptr<Launched> launched_;
};

}  // namespace dinput
