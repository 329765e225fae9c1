// Freeing an iterator must not wait for a slow upstream: a prefetch or parallel-map thread
// may be inside a user callback that takes seconds, and its destructor joins that thread.
// dispose() runs the destructor on a thread of its own and waits for it only briefly; if it
// is not done by then, the caller goes on and the thread finishes the destruction when the
// callback returns. The object is owned by that thread until then, so nothing it uses is
// freed under it, and callbacks' user_data is released after their last call, as always.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>

#include "core/thread.h"

namespace dinput {

// How long dispose() waits for an ordinary destruction (threads that stop at once).
// Well under the 50 ms a free may take with a thread stuck in a callback, and far above
// what stopping threads that are not stuck takes, even under sanitizers.
constexpr std::chrono::milliseconds kDisposeGrace{20};

template <typename T>
void dispose(std::unique_ptr<T> doomed, std::chrono::milliseconds grace = kDisposeGrace) {
  if (!doomed) return;
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto done = std::make_shared<Done>();
  // The object moves into the thread only once the thread exists, so a failure to start
  // one leaves it here, to be destroyed inline (waiting, but never leaking).
  auto holder = std::make_shared<std::unique_ptr<T>>(std::move(doomed));
  try {
    Thread([holder, done] {
      holder->reset();
      {
        std::lock_guard<std::mutex> lock(done->mu);
        done->done = true;
      }
      done->cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    holder->reset();
    return;
  }
  std::unique_lock<std::mutex> lock(done->mu);
  done->cv.wait_for(lock, grace, [&] { return done->done; });
}

}  // namespace dinput
