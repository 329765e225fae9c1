// Where the strings copied into one buffer were read from: a buffer of copies (a shuffle's
// compaction, core/compact.cc; a reader's copy arena, io/copy_arena.h) holds strings of many
// records, often of several files, so one ByteOrigin for the whole buffer cannot say it.
// Each copy notes its place, its size and its offset in the file its origin names, and
// Buffer::origin_at finds them by address (docs/examples.md, "Errors").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/buffer.h"

namespace dinput {

class CopiedOrigins {
 public:
  void reserve(size_t copies) { pieces_.reserve(copies); }

  // The copy at `at` (bytes from the buffer's start, increasing from call to call) of `size`
  // bytes came from `offset` of the file `origin` names. No origin: nothing to note.
  void add(size_t at, size_t size, const std::shared_ptr<const ByteOrigin>* origin,
           uint64_t offset) {
    if (!origin || !*origin) return;
    // The copies of one buffer come from a few files: each origin is kept once.
    if (origins_.empty() || origins_.back() != *origin) origins_.push_back(*origin);
    pieces_.push_back(Piece{at, size, offset, origins_.size() - 1});
  }

  // The origin of the byte at `at`, with *offset set to that byte's offset in its file;
  // nullptr when no copy noted there holds it.
  const std::shared_ptr<const ByteOrigin>* find(size_t at, uint64_t* offset) const {
    auto it = std::upper_bound(pieces_.begin(), pieces_.end(), at,
                               [](size_t a, const Piece& piece) { return a < piece.at; });
    if (it == pieces_.begin()) return nullptr;
    --it;
    if (at > it->at + it->size) return nullptr;
    *offset = it->offset + (at - it->at);
    return &origins_[it->origin];
  }

 private:
  struct Piece {
    size_t at;        // where the copy begins
    size_t size;      // its bytes
    uint64_t offset;  // where it was read from, in the file its origin names
    size_t origin;    // in origins_
  };
  std::vector<Piece> pieces_;  // by `at`
  std::vector<std::shared_ptr<const ByteOrigin>> origins_;
};

}  // namespace dinput
