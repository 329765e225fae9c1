// Which epoch a new iterator of a reshuffling node draws (shuffle with
// reshuffle_each_iteration, list_files with shuffle): the node's seed and the epoch give its
// order.
//
// By default a node counts its own iterators, so a dataset iterated again gives a new order.
// A pipeline instance that must be reproducible independently of other users of the same
// dataset object (one worker's copy of a distributed pipeline) carries its own counters in
// the IteratorContext: then its first iterator of each node draws epoch 0, the second epoch
// 1, and so on, whatever other workers sharing the dataset object have drawn. This is how
// every worker sees the same order for the same epoch, which DATA sharding relies on.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace dinput {

struct IteratorContext;

// The identity of a reshuffling node: its own counter, shared by the copies a graph rewrite
// makes of it (so a rewritten pipeline continues the same sequence of orders).
using EpochCounter = std::shared_ptr<std::atomic<uint64_t>>;

class EpochCounters {
 public:
  // The next epoch of `node` in this pipeline instance: 0 the first time. Thread-safe.
  uint64_t next(const EpochCounter& node);
  // The epoch the next call to next(node) returns, and setting it (restoring a state).
  uint64_t peek(const EpochCounter& node);
  void set(const EpochCounter& node, uint64_t next_epoch);

 private:
  std::mutex mu_;
  // Keyed by owner (weak), not address: a node freed while these counters live, and another
  // allocated at its address, must not continue its count.
  std::map<std::weak_ptr<std::atomic<uint64_t>>, uint64_t,
           std::owner_less<std::weak_ptr<std::atomic<uint64_t>>>>
      counts_;
  size_t prune_at_ = 64;
};

// The epoch a new iterator of `node` draws: from the context's counters when it has them,
// else from the node's own counter.
uint64_t next_epoch(const IteratorContext& ctx, const EpochCounter& node);
// The epoch that next_epoch would return, without drawing it, and setting it (a restored
// iterator continues the saved one's count).
uint64_t peek_epoch(const IteratorContext& ctx, const EpochCounter& node);
void set_epoch(const IteratorContext& ctx, const EpochCounter& node, uint64_t next_epoch);

}  // namespace dinput
