#include "collective/collective.h"

#include <cstring>

#include "core/status.h"

namespace dinput {

namespace {

template <typename T>
std::string pack(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <typename T>
std::vector<T> sum_gathered(const std::vector<std::string>& gathered, size_t n, const char* what) {
  std::vector<T> out(n, T{});
  for (size_t w = 0; w < gathered.size(); ++w) {
    if (gathered[w].size() != n * sizeof(T))
      raise(Code::kInternal, what, ": worker ", w, " contributed ", gathered[w].size() / sizeof(T),
            " values but this worker ", n, "; the workers' calls are out of step");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), gathered[w].data(), n * sizeof(T));
    for (size_t i = 0; i < n; ++i) out[i] += v[i];
  }
  return out;
}

}  // namespace

std::vector<int64_t> Collective::all_reduce_sum(int worker, uint64_t channel,
                                                const std::vector<int64_t>& values) {
  return sum_gathered<int64_t>(all_gather(worker, channel, pack(values)), values.size(),
                               "all-reduce");
}

std::vector<double> Collective::all_reduce_sum(int worker, uint64_t channel,
                                               const std::vector<double>& values) {
  return sum_gathered<double>(all_gather(worker, channel, pack(values)), values.size(),
                              "all-reduce");
}

std::vector<__int128> Collective::all_reduce_sum(int worker, uint64_t channel,
                                                 const std::vector<__int128>& values) {
  return sum_gathered<__int128>(all_gather(worker, channel, pack(values)), values.size(),
                                "all-reduce");
}

void Collective::barrier(int worker, uint64_t channel) {
  all_gather(worker, channel, std::string());
}

uint64_t Collective::open_channel(int worker) {
  std::lock_guard<std::mutex> lock(mu_);
  if (channels_opened_.size() < static_cast<size_t>(num_workers()))
    channels_opened_.resize(num_workers(), 0);
  return 1 + channels_opened_.at(static_cast<size_t>(worker))++;
}

uint64_t Collective::open_agreement_channel(int worker) {
  constexpr uint64_t kAgreementChannels = uint64_t{1} << 63;
  std::lock_guard<std::mutex> lock(mu_);
  if (agreements_opened_.size() < static_cast<size_t>(num_workers()))
    agreements_opened_.resize(num_workers(), 0);
  return kAgreementChannels | agreements_opened_.at(static_cast<size_t>(worker))++;
}

bool Collective::claim_worker(int worker) {
  std::lock_guard<std::mutex> lock(mu_);
  if (claimed_.size() < static_cast<size_t>(num_workers())) claimed_.resize(num_workers(), false);
  if (claimed_.at(static_cast<size_t>(worker))) return false;
  claimed_[static_cast<size_t>(worker)] = true;
  return true;
}

void Collective::release_worker(int worker) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<size_t>(worker) < claimed_.size()) claimed_[static_cast<size_t>(worker)] = false;
}

}  // namespace dinput
