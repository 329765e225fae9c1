// The key-value store through which the worker processes of a job meet (the rendezvous):
// each worker publishes what the others need (addresses, NCCL ids) and waits for theirs.
// Backends, chosen by a URL: tcp://HOST:PORT (served by the worker of rank 0), file://DIR (a
// shared file system) and redis://HOST:PORT. A job id namespaces every key (PrefixStore), so
// two jobs on one store never mix. docs/multi-process.md describes the protocol.
//
// All operations are thread-safe. Errors: UNAVAILABLE when the store cannot be reached (naming
// the address), DEADLINE_EXCEEDED when keys do not appear in time (naming them).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dinput {

class Store {
 public:
  virtual ~Store() = default;
  // Sets `key` to `value`, replacing any value it had.
  virtual void set(const std::string& key, const std::string& value) = 0;
  // Waits until every key exists and returns their values in order; DEADLINE_EXCEEDED naming
  // the keys still missing once `timeout` has passed.
  virtual std::vector<std::string> get(const std::vector<std::string>& keys,
                                       std::chrono::milliseconds timeout) = 0;
  // Adds `delta` to the integer stored at `key` (0 if absent) and returns the new value,
  // atomically across all clients.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Whether every key exists now, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;
};

// A view of `base` in which every key is prefixed with `prefix` + "/" (the job id).
std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> base, std::string prefix);

// A store held in this process's memory, for workers that are threads of one process (and
// for tests).
std::shared_ptr<Store> make_memory_store();

}  // namespace dinput
