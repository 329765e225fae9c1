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

std::string Collective::share_from_worker0(int worker, uint64_t channel,
                                           const std::function<std::string()>& make) {
  // Worker 0 sends 'v' and the value, or 'e', the code (4 bytes) and the message.
  std::string mine;
  if (worker == 0) {
    try {
      mine = "v" + make();
    } catch (const Error& e) {
      const int32_t code = static_cast<int32_t>(e.code());
      mine = "e" + std::string(reinterpret_cast<const char*>(&code), 4) + e.what();
    }
  }
  const std::vector<std::string> all = all_gather(worker, channel, std::move(mine));
  const std::string& from0 = all.at(0);
  if (!from0.empty() && from0[0] == 'v') return from0.substr(1);
  if (from0.size() >= 5 && from0[0] == 'e') {
    int32_t code;
    std::memcpy(&code, from0.data() + 1, 4);
    throw Error(static_cast<Code>(code), from0.substr(5));
  }
  raise(Code::kInternal, "collective: worker 0 shared a malformed value on channel ", channel);
}

std::shared_ptr<void> Collective::attachment(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = attachments_.find(name);
  return found == attachments_.end() ? nullptr : found->second;
}

void Collective::set_attachment(const std::string& name, std::shared_ptr<void> value) {
  std::lock_guard<std::mutex> lock(mu_);
  attachments_[name] = std::move(value);
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
