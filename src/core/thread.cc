#include "core/thread.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

#include "core/immortal.h"

namespace dinput {

namespace {

struct LauncherSlot {
  std::mutex mu;
  ThreadLauncher launcher = nullptr;
  void* user_data = nullptr;
};

LauncherSlot& launcher_slot() {
  static Immortal<LauncherSlot> slot;  // threads may still start while statics are destroyed
  return *slot;
}

}  // namespace

void set_thread_launcher(ThreadLauncher launcher, void* user_data) {
  LauncherSlot& slot = launcher_slot();
  std::lock_guard<std::mutex> lock(slot.mu);
  slot.launcher = launcher;
  slot.user_data = launcher ? user_data : nullptr;
}

struct Thread::Launched {
  std::function<void()> body;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

void Thread::run_launched(void* arg) {
  std::shared_ptr<Launched> self;
  {
    std::unique_ptr<std::shared_ptr<Launched>> handed(static_cast<std::shared_ptr<Launched>*>(arg));
    self = std::move(*handed);
  }
  // As on a std::thread, an exception leaving the body ends the process; here it must not
  // unwind into the launcher's frames, which may not be C++ at all.
  try {
    self->body();
    self->body = nullptr;  // what it captured goes before join() returns, as with std::thread
  } catch (...) {
    std::terminate();
  }
  {
    std::lock_guard<std::mutex> lock(self->mu);
    self->done = true;
  }
  self->cv.notify_all();
}

Thread::Thread(std::function<void()> body) {
  ThreadLauncher launcher;
  void* user_data;
  {
    LauncherSlot& slot = launcher_slot();
    std::lock_guard<std::mutex> lock(slot.mu);
    launcher = slot.launcher;
    user_data = slot.user_data;
  }
  if (launcher) {
    auto launched = std::make_shared<Launched>();
    launched->body = std::move(body);
    auto handed = std::make_unique<std::shared_ptr<Launched>>(launched);
    if (launcher(&Thread::run_launched, handed.get(), user_data) == 0) {
      handed.release();  // run_launched owns it now
      launched_ = std::move(launched);
      return;
    }
    body = std::move(launched->body);  // declined: a thread of our own after all
  }
  native_ = std::thread(std::move(body));
}

Thread& Thread::operator=(Thread&& other) noexcept {
  if (this != &other) {
    if (joinable()) join();
    native_ = std::move(other.native_);
    launched_ = std::move(other.launched_);
  }
  return *this;
}

Thread::~Thread() {
  if (joinable()) join();
}

void Thread::join() {
  if (native_.joinable()) {
    native_.join();
    return;
  }
  if (!launched_) return;
  {
    std::unique_lock<std::mutex> lock(launched_->mu);
    launched_->cv.wait(lock, [this] { return launched_->done; });
  }
  launched_.reset();
}

void Thread::detach() {
  if (native_.joinable()) native_.detach();
  launched_.reset();
}

}  // namespace dinput
