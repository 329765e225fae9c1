// The states an input had before some of its elements, kept by the nodes that hold elements
// read ahead of their consumer (shuffle, parallel map, bucket_by_sequence_length, window): a
// save points the input back at the oldest element still held (docs/checkpoint.md). An input
// that cannot save stops the snapshots: iteration goes on, and only a save fails, with why.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <string>

#include "data/iterator.h"
#include "data/state.h"

namespace dinput {

class InputSnapshots {
 public:
  // The input's state before it read element `position`.
  struct Snapshot {
    int64_t position;
    std::string state;
  };

  // Saves `input`'s state as the one before element `position`, unless a save failed before;
  // a failing save keeps its reason and drops every snapshot.
  void take(const Iterator& input, int64_t position) {
    if (error_) return;
    try {
      list_.push_back(Snapshot{position, save_to_bytes(input)});
    } catch (...) {
      error_ = std::current_exception();
      list_.clear();
    }
  }

  // Forgets the snapshots older than the last one at or before `oldest`: a save that points
  // the input at element `oldest` or later no longer needs them.
  void drop_before(int64_t oldest) {
    while (list_.size() > 1 && list_[1].position <= oldest) list_.pop_front();
  }

  // The last snapshot at or before element `position`, or the first one when none is.
  // Requires at least one snapshot.
  const Snapshot& at_or_before(int64_t position) const {
    const Snapshot* best = &list_.front();
    for (const auto& snap : list_)
      if (snap.position <= position) best = &snap;
    return *best;
  }

  // Raises why the input could not save, if it could not.
  void check() const {
    if (error_) std::rethrow_exception(error_);
  }
  bool failed() const { return error_ != nullptr; }

  // The snapshots, oldest first, for the rules of a node's own (window, bucket).
  std::deque<Snapshot>& list() { return list_; }
  const std::deque<Snapshot>& list() const { return list_; }

 private:
  std::deque<Snapshot> list_;
  std::exception_ptr error_;
};

}  // namespace dinput
