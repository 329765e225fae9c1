// Where the strings copied into one buffer were read from: a buffer of copies (a shuffle's
// compaction, core/compact.cc; a reader's copy arena, io/copy_arena.h) holds strings of many
// records, often of several files, so one ByteOrigin for the whole buffer cannot say it.
// Each copy notes its place, its size and its offset in the file its origin names, and
// Buffer::origin_at finds them by address (docs/examples.md, "Errors").
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>

#include "core/buffer.h"

namespace dinput {

// One thread adds notes while others may look them up: the copies of an arena are handed
// out while later ones are still copied in, and an error message about one of them may be
// written on another thread meanwhile. Adding a note is a few stores: the note is written
// past the published count, then the count is published. Only moving the notes to a larger
// array takes the lock, which a lookup holds throughout (lookups are for error messages).
class CopiedOrigins {
 public:
  explicit CopiedOrigins(size_t expected = 0) { grow(std::max<size_t>(expected, 16)); }
  CopiedOrigins(const CopiedOrigins&) = delete;
  CopiedOrigins& operator=(const CopiedOrigins&) = delete;

  // Notes that the copy at `at` (bytes from the buffer's start, increasing from call to call)
  // of `size` bytes came from `offset` of the file `origin` names. One thread adds.
  void add(size_t at, size_t size, const std::shared_ptr<const ByteOrigin>* origin,
           uint64_t offset) {
    if (!origin || !*origin) return;
    const size_t n = count_.load(std::memory_order_relaxed);
    if (n == capacity_) {
      std::lock_guard<std::mutex> lock(mu_);
      grow(2 * capacity_);
    }
    // The copies of one buffer come from a few files: each origin is kept once, in a deque,
    // whose elements stay where they are as it grows (a lookup hands out their addresses).
    if (origins_.empty() || origins_.back() != *origin) origins_.push_back(*origin);
    pieces_[n] = Piece{at, size, offset, &origins_.back()};
    count_.store(n + 1, std::memory_order_release);
  }

  // The origin of the byte at `at`, with *offset set to that byte's offset in its file;
  // nullptr when no copy noted there holds it.
  const std::shared_ptr<const ByteOrigin>* find(size_t at, uint64_t* offset) const {
    std::lock_guard<std::mutex> lock(mu_);
    const Piece* begin = pieces_.get();
    const Piece* end = begin + count_.load(std::memory_order_acquire);
    const Piece* it =
        std::upper_bound(begin, end, at, [](size_t a, const Piece& piece) { return a < piece.at; });
    if (it == begin) return nullptr;
    --it;
    // An empty copy is found by its own place; a byte just past a copy belongs to the next
    // one, which may have no note.
    if (at - it->at >= std::max<size_t>(it->size, 1)) return nullptr;
    *offset = it->offset + (at - it->at);
    return it->origin;
  }

 private:
  struct Piece {
    size_t at;        // where the copy begins
    size_t size;      // its bytes
    uint64_t offset;  // where it was read from, in the file its origin names
    const std::shared_ptr<const ByteOrigin>* origin;  // in origins_
  };
  // Under mu_ (or in the constructor): no lookup reads the notes while they move.
  void grow(size_t capacity) {
    auto larger = std::make_unique<Piece[]>(capacity);
    const size_t n = count_.load(std::memory_order_relaxed);
    std::move(pieces_.get(), pieces_.get() + n, larger.get());
    pieces_ = std::move(larger);
    capacity_ = capacity;
  }

  mutable std::mutex mu_;
  std::unique_ptr<Piece[]> pieces_;
  size_t capacity_ = 0;
  std::atomic<size_t> count_{0};
  std::deque<std::shared_ptr<const ByteOrigin>> origins_;  // the writer's own
};

}  // namespace dinput
