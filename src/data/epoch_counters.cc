#include "data/epoch_counters.h"

#include "data/dataset.h"

namespace dinput {

uint64_t EpochCounters::next(const EpochCounter& node) {
  std::lock_guard<std::mutex> lock(mu_);
  // Nodes made on the fly (e.g. inside an interleave function) come and go; forget the
  // counts of those that are gone so the map stays as large as the live graph.
  if (counts_.size() >= prune_at_) {
    for (auto it = counts_.begin(); it != counts_.end();)
      it = it->first.expired() ? counts_.erase(it) : std::next(it);
    prune_at_ = 2 * counts_.size() + 64;
  }
  return counts_[node]++;
}

uint64_t EpochCounters::peek(const EpochCounter& node) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find(node);
  return it == counts_.end() ? 0 : it->second;
}

void EpochCounters::set(const EpochCounter& node, uint64_t next_epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  counts_[node] = next_epoch;
}

uint64_t peek_epoch(const IteratorContext& ctx, const EpochCounter& node) {
  return ctx.epochs ? ctx.epochs->peek(node) : node->load();
}

void set_epoch(const IteratorContext& ctx, const EpochCounter& node, uint64_t next_epoch) {
  if (ctx.epochs)
    ctx.epochs->set(node, next_epoch);
  else
    node->store(next_epoch);
}

uint64_t next_epoch(const IteratorContext& ctx, const EpochCounter& node) {
  return ctx.epochs ? ctx.epochs->next(node) : node->fetch_add(1);
}

}  // namespace dinput
