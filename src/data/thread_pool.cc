#include "data/thread_pool.h"

namespace dinput {

namespace {
// Yields of an idle worker before it sleeps: a producer handing out cheap tasks one by one
// (a parallel map of a trivial function) then finds it awake, and neither side pays for a
// sleep and a wake-up per task.
constexpr int kYieldsBeforeSleep = 64;
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  threads_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { worker(); });
}

void ThreadPool::grow(int num_threads) {
  while (static_cast<int>(threads_.size()) < num_threads)
    threads_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::submit(std::function<void()> task) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
    wake = sleeping_ > 0;  // a worker still yielding takes it without a wake-up
  }
  if (wake) cv_.notify_one();
}

void ThreadPool::worker() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto has_work = [this] { return stopping_ || !tasks_.empty(); };
      for (int i = 0; i < kYieldsBeforeSleep && !has_work(); ++i) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      }
      ++sleeping_;
      cv_.wait(lock, has_work);
      --sleeping_;
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace dinput
