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
#include <utility>
#include <vector>

#include "core/buffer.h"

namespace dinput {

// One thread adds notes while others may look them up: the copies of an arena are handed
// out while later ones are still copied in, and an error message (or a shuffle's compaction,
// which keeps the origins of what it copies) may look one up on another thread meanwhile.
// Neither side locks. A note is written past the published count, then the count is
// published; when the notes move to a larger array, the old one is kept until the end, so a
// lookup that still reads it finds every note it counted there.
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
    if (n == capacity_) grow(2 * capacity_);
    // The copies of one buffer come from a few files: each origin is kept once, in a deque,
    // whose elements stay where they are as it grows (a lookup hands out their addresses).
    if (origins_.empty() || origins_.back() != *origin) origins_.push_back(*origin);
    arrays_.back()[n] = Piece{at, size, offset, &origins_.back()};
    count_.store(n + 1, std::memory_order_release);
  }

  // The origin of the byte at `at`, with *offset set to that byte's offset in its file;
  // nullptr when no copy noted there holds it.
  const std::shared_ptr<const ByteOrigin>* find(size_t at, uint64_t* offset) const {
    // The count first: the array published before it holds every note it counts.
    const size_t n = count_.load(std::memory_order_acquire);
    const Piece* begin = pieces_.load(std::memory_order_acquire);
    const Piece* end = begin + n;
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
  void grow(size_t capacity) {
    auto larger = std::make_unique<Piece[]>(capacity);
    const size_t n = count_.load(std::memory_order_relaxed);
    if (!arrays_.empty()) std::copy(arrays_.back().get(), arrays_.back().get() + n, larger.get());
    pieces_.store(larger.get(), std::memory_order_release);
    arrays_.push_back(std::move(larger));
    capacity_ = capacity;
  }

  std::atomic<const Piece*> pieces_{nullptr};  // the newest array, for lookups
  std::atomic<size_t> count_{0};
  // The writer's own: every array the notes had (the last is the newest; the others may
  // still be read by a lookup that began before a move), its capacity, the origins.
  std::vector<std::unique_ptr<Piece[]>> arrays_;
  size_t capacity_ = 0;
  std::deque<std::shared_ptr<const ByteOrigin>> origins_;
};

// A buffer of copies that knows where each came from: Buffer::origin_at reads the notes its
// owner adds with note() as it copies. The shuffle's compaction (core/compact.cc) and the
// readers' copy arenas (io/copy_arena.cc) hold their copies in one.
class BufferOfCopies : public Buffer {
 public:
  const std::shared_ptr<const ByteOrigin>* origin_at(const char* p,
                                                     uint64_t* offset) const override {
    const auto* begin = static_cast<const char*>(data_);
    if (p < begin || p > begin + size_) return nullptr;
    return origins_.find(static_cast<size_t>(p - begin), offset);
  }

 protected:
  // `expected`: the copies it will likely hold (their notes are reserved).
  BufferOfCopies(void* data, size_t size, size_t expected)
      : Buffer(data, size, MemoryKind::kHost, -1), origins_(expected) {}
  // The copy at `copy`, of `size` bytes, came from `offset` of the file `origin` names (no
  // origin: unknown). Copies are noted in the order of their places.
  void note(const char* copy, size_t size, const std::shared_ptr<const ByteOrigin>* origin,
            uint64_t offset) {
    origins_.add(static_cast<size_t>(copy - static_cast<const char*>(data_)), size, origin, offset);
  }

 private:
  CopiedOrigins origins_;
};

}  // namespace dinput
