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

class InProcessCollective final : public Collective {
 public:
  InProcessCollective(int num_workers, std::chrono::milliseconds timeout);
  int num_workers() const override { return num_workers_; }
  std::vector<std::string> all_gather(int worker, uint64_t channel, std::string payload) override;
  void abort(const Error& error) override;

 private:
  struct Round {
    std::vector<std::string> payloads;
    std::vector<bool> arrived;
    int count = 0;
    int departed = 0;
  };

  int num_workers_;
  std::optional<Error> aborted_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<uint64_t, uint64_t>, Round> rounds_;           // (channel, seq)
  std::map<std::pair<uint64_t, int>, uint64_t> next_seq_;           // (channel, worker)
};

std::shared_ptr<Collective> make_in_process_collective(int num_workers, int64_t timeout_ms);

}  // namespace dinput
