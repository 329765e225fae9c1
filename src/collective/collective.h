// How the workers of a multi-worker strategy exchange the small values that keep them in
// step: the per-step "who still has data" count of the distributed iterator, reduce
// results, and error messages. Backends implement one primitive, all_gather; the rest is
// built on it (the payloads are a few bytes, so gathering is as cheap as reducing).
//
// Operations are matched across workers by (channel, sequence number): the k-th operation a
// worker makes on a channel meets the k-th operation of every other worker on that channel.
// Channel 0 belongs to the strategy (reduce); each distributed iterator opens its own channel
// so that iterators of different epochs cannot cross their steps.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"

namespace dinput {

// The most workers one collective joins: every round holds a slot per worker.
constexpr int kMaxWorkers = 65536;

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int num_workers() const = 0;
  // Every worker's payload, in worker order. DEADLINE_EXCEEDED when a worker does not arrive
  // within the backend's timeout.
  virtual std::vector<std::string> all_gather(int worker, uint64_t channel,
                                              std::string payload) = 0;
  // Makes every pending and future operation fail with `error` on every worker: a worker
  // that cannot go on releases its peers at once instead of leaving them to time out.
  virtual void abort(const Error& error) = 0;
  // Makes every operation on `channel` that has not completed fail with `error` on every
  // worker, now and later; other channels go on. A worker that cancels its distributed
  // iterator releases the other workers' iterators of that epoch this way.
  virtual void abort_channel(uint64_t channel, const Error& error) = 0;
  // Raises, without waiting or exchanging anything, the error that ended the collective or
  // `channel` (an abort, a lost connection), if one is known here. A distributed iterator
  // that needs no per-step exchange (an infinite pipeline) polls this each step, so that
  // another worker's pipeline error still stops it.
  virtual void raise_if_failed(uint64_t channel) = 0;

  std::vector<int64_t> all_reduce_sum(int worker, uint64_t channel,
                                      const std::vector<int64_t>& values);
  std::vector<double> all_reduce_sum(int worker, uint64_t channel,
                                     const std::vector<double>& values);
  // 128-bit integers: exact sums of any integer dtype (reduce).
  std::vector<__int128> all_reduce_sum(int worker, uint64_t channel,
                                       const std::vector<__int128>& values);
  void barrier(int worker, uint64_t channel);
  // Worker 0's value, on every worker: worker 0 calls make() and the others receive what it
  // returned. An Error make() raises is raised on every worker alike (so none waits for a
  // value that never comes). make is called on worker 0 only.
  std::string share_from_worker0(int worker, uint64_t channel,
                                 const std::function<std::string()>& make);

  // How long an operation waits for the other workers; other layers that wait for them
  // (NCCL across the workers) use the same bound.
  virtual std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(60000); }

  // State a layer above keeps per collective, such as NCCL's communicator across the
  // workers: the value stored under `name` (null when none), or replaced. Destroyed with the
  // collective.
  std::shared_ptr<void> attachment(const std::string& name);
  void set_attachment(const std::string& name, std::shared_ptr<void> value);

  // The k-th call by a worker returns the same channel id on every worker.
  uint64_t open_channel(int worker);
  // The same for the agreements distribute_dataset makes (a shared random seed), numbered
  // apart from iterators' channels so that when datasets are distributed does not change
  // which channel an iterator gets.
  uint64_t open_agreement_channel(int worker);

  // A worker index may be held by one strategy at a time; claim returns false if taken.
  bool claim_worker(int worker);
  void release_worker(int worker);

 private:
  std::mutex mu_;
  std::vector<uint64_t> channels_opened_;
  std::vector<uint64_t> agreements_opened_;
  std::vector<bool> claimed_;
  std::map<std::string, std::shared_ptr<void>> attachments_;
};

}  // namespace dinput
