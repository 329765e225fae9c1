// The in-process backend: workers are threads of one process meeting at a shared table.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "collective/collective.h"

namespace dinput {

// Timeouts above this wait without a deadline: a deadline past about 292 years from now
// does not fit the clock (9.2e12 ms overflowed into an immediate timeout), and nobody means
// one that far out.
constexpr int64_t kNoDeadlineMs = 1000000000000;  // 10^12 ms, about 31.7 years

class InProcessCollective final : public Collective {
 public:
  InProcessCollective(int num_workers, std::chrono::milliseconds timeout);
  int num_workers() const override { return num_workers_; }
  std::vector<std::string> all_gather(int worker, uint64_t channel, std::string payload) override;
  void abort(const Error& error) override;
  std::chrono::milliseconds timeout() const override { return timeout_; }
  void abort_channel(uint64_t channel, const Error& error) override;
  void raise_if_failed(uint64_t channel) override;

  // Rounds some worker has entered and not every worker has left (for tests: rounds given
  // up on are freed once every worker has passed them).
  size_t pending_rounds();

 private:
  // One operation, matched across workers. A round that a worker gives up on (timeout) is
  // abandoned: it fails on every worker, those waiting in it and those arriving late, so no
  // worker can complete it alone and receive rows the others never will. Its payloads are
  // freed at once; the entry itself goes when the last worker has passed it.
  struct Round {
    std::vector<std::string> payloads;
    std::vector<bool> arrived;
    int count = 0;     // workers that arrived
    int departed = 0;  // workers that left it, with a result or an error
    std::shared_ptr<const Error> abandoned;
  };

  int num_workers_;
  std::optional<Error> aborted_;
  std::map<uint64_t, Error> aborted_channels_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<Round>> rounds_;  // (channel, seq)
  std::map<std::pair<uint64_t, int>, uint64_t> next_seq_;                   // (channel, worker)
};

std::shared_ptr<Collective> make_in_process_collective(int num_workers, int64_t timeout_ms);

}  // namespace dinput
