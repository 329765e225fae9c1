#include "collective/in_process.h"

#include "core/status.h"

namespace dinput {

InProcessCollective::InProcessCollective(int num_workers, std::chrono::milliseconds timeout)
    : num_workers_(num_workers), timeout_(timeout) {}

std::vector<std::string> InProcessCollective::all_gather(int worker, uint64_t channel,
                                                         std::string payload) {
  if (worker < 0 || worker >= num_workers_)
    raise(Code::kInvalidArgument, "collective: worker index ", worker, " is outside [0, ",
          num_workers_, ")");
  std::unique_lock<std::mutex> lock(mu_);
  if (aborted_) throw *aborted_;
  auto channel_error = [&]() -> const Error* {
    auto found = aborted_channels_.find(channel);
    return found == aborted_channels_.end() ? nullptr : &found->second;
  };
  if (const Error* e = channel_error()) throw *e;
  const uint64_t seq = next_seq_[{channel, worker}]++;
  const auto key = std::make_pair(channel, seq);
  std::shared_ptr<Round>& slot = rounds_[key];
  if (!slot) {
    slot = std::make_shared<Round>();
    slot->payloads.resize(static_cast<size_t>(num_workers_));
    slot->arrived.resize(static_cast<size_t>(num_workers_), false);
  }
  const std::shared_ptr<Round> round = slot;  // the map entry may go while this worker waits
  // Every worker leaves every round it entered exactly once; the last one frees it.
  auto depart = [&] {
    if (++round->departed == num_workers_) rounds_.erase(key);
  };
  if (round->abandoned) {  // a late arrival: the others have given up on this round
    depart();
    throw *round->abandoned;
  }
  round->payloads[static_cast<size_t>(worker)] = std::move(payload);
  round->arrived[static_cast<size_t>(worker)] = true;
  if (++round->count == num_workers_) cv_.notify_all();
  auto done = [&] {
    return round->count == num_workers_ || round->abandoned || aborted_ || channel_error();
  };
  if (timeout_.count() > kNoDeadlineMs)
    cv_.wait(lock, done);
  else
    cv_.wait_for(lock, timeout_, done);
  if (round->count == num_workers_ && !round->abandoned) {
    std::vector<std::string> result = round->payloads;
    depart();
    return result;
  }
  if (round->abandoned) {
    depart();
    throw *round->abandoned;
  }
  if (aborted_) {
    depart();
    throw *aborted_;
  }
  if (const Error* e = channel_error()) {
    Error error = *e;
    depart();
    throw error;
  }
  // This worker gives up: the round fails for everyone, now and for late arrivals. The
  // missing workers are named, at most kNamed of them: with thousands of workers the list
  // would swamp the message.
  constexpr int kNamed = 10;
  std::string missing;
  int num_missing = 0;
  for (int w = 0; w < num_workers_; ++w) {
    if (round->arrived[static_cast<size_t>(w)]) continue;
    if (num_missing++ < kNamed) missing += (missing.empty() ? "" : ", ") + std::to_string(w);
  }
  if (num_missing > kNamed) missing += str_cat(" and ", num_missing - kNamed, " more");
  // Nothing here tells a slow worker from one that stopped: say both, and where its own
  // error (if it has one) appears.
  round->abandoned = std::make_shared<const Error>(
      Code::kDeadlineExceeded,
      str_cat("collective: worker ", worker, " waited ", timeout_.count(), " ms for ",
              num_missing == 1 ? "worker " : "workers ", missing, " at step ", seq, " of channel ",
              channel,
              "; they had not arrived: they may only be slow (raise the timeout), or have stopped "
              "iterating or never "
              "started. A worker that failed reports its own error; every worker fails this step"));
  std::vector<std::string>().swap(round->payloads);
  cv_.notify_all();
  depart();
  throw *round->abandoned;
}

size_t InProcessCollective::pending_rounds() {
  std::lock_guard<std::mutex> lock(mu_);
  return rounds_.size();
}

void InProcessCollective::abort(const Error& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!aborted_) aborted_ = error;
  }
  cv_.notify_all();
}

void InProcessCollective::abort_channel(uint64_t channel, const Error& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_channels_.emplace(channel, error);  // the first reason stays
    // Workers waiting in a round keep it alive themselves; one that never arrives would
    // otherwise leave its entry behind for good.
    for (auto it = rounds_.lower_bound({channel, 0});
         it != rounds_.end() && it->first.first == channel;)
      it = rounds_.erase(it);
  }
  cv_.notify_all();
}

void InProcessCollective::raise_if_failed(uint64_t channel) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_) throw *aborted_;
  auto found = aborted_channels_.find(channel);
  if (found != aborted_channels_.end()) throw found->second;
}

std::shared_ptr<Collective> make_in_process_collective(int num_workers, int64_t timeout_ms) {
  DINPUT_CHECK_ARG(num_workers >= 1, "collective: num_workers must be >= 1, got ", num_workers);
  DINPUT_CHECK_ARG(num_workers <= kMaxWorkers, "collective: num_workers must be at most ",
                   kMaxWorkers, ", got ", num_workers);
  DINPUT_CHECK_ARG(timeout_ms >= 0, "collective: timeout_ms must be >= 0, got ", timeout_ms);
  return std::make_shared<InProcessCollective>(
      num_workers, std::chrono::milliseconds(timeout_ms == 0 ? 60000 : timeout_ms));
}

}  // namespace dinput
