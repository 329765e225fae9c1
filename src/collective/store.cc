#include "collective/store.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <utility>

#include "core/status.h"

namespace dinput {

namespace {

class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> base, std::string prefix)
      : base_(std::move(base)), prefix_(std::move(prefix) + "/") {}
  void set(const std::string& key, const std::string& value) override {
    base_->set(prefix_ + key, value);
  }
  std::vector<std::string> get(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) override {
    return base_->get(prefixed(keys), timeout);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    return base_->add(prefix_ + key, delta);
  }
  bool check(const std::vector<std::string>& keys) override { return base_->check(prefixed(keys)); }

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const auto& k : keys) out.push_back(prefix_ + k);
    return out;
  }
  std::shared_ptr<Store> base_;
  std::string prefix_;
};

class MemoryStore final : public Store {
 public:
  void set(const std::string& key, const std::string& value) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      values_[key] = value;
    }
    changed_.notify_all();
  }
  std::vector<std::string> get(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_for(lock, timeout, [&] { return all_present(keys); })) {
      std::string missing;
      for (const auto& k : keys)
        if (!values_.count(k)) missing += (missing.empty() ? "" : ", ") + k;
      raise(Code::kDeadlineExceeded, "rendezvous: keys not set within ", timeout.count(),
            " ms: ", missing);
    }
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const auto& k : keys) out.push_back(values_.at(k));
    return out;
  }
  int64_t add(const std::string& key, int64_t delta) override {
    int64_t now = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = values_.find(key);
      now = (it == values_.end() ? 0 : std::stoll(it->second)) + delta;
      values_[key] = std::to_string(now);
    }
    changed_.notify_all();
    return now;
  }
  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    return all_present(keys);
  }

 private:
  bool all_present(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!values_.count(k)) return false;
    return true;
  }
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

}  // namespace

std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> base, std::string prefix) {
  return std::make_shared<PrefixStore>(std::move(base), std::move(prefix));
}

std::shared_ptr<Store> make_memory_store() { return std::make_shared<MemoryStore>(); }

}  // namespace dinput
