// Our Store (store.h) seen as Gloo's rendezvous store, for connecting a Gloo context. Includes
// Gloo's headers: only the Gloo backend and its tests and benchmark include it.
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collective/store.h"

namespace dinput {

class GlooStoreAdapter final : public gloo::rendezvous::Store {
 public:
  GlooStoreAdapter(std::shared_ptr<dinput::Store> store, std::chrono::milliseconds timeout)
      : store_(std::move(store)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const std::string value = store_->get({key}, timeout_).at(0);
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->get(keys, timeout_); }
  // Gloo passes its own default (30 s) here; the collective's timeout is the one the user
  // chose, so it wins.
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    store_->get(keys, timeout_);
  }

 private:
  std::shared_ptr<dinput::Store> store_;
  std::chrono::milliseconds timeout_;
};

}  // namespace dinput
