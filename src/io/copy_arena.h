// Where records copied out of the buffers they were read into go: packed into arenas, so
// that a copied record costs no allocation of its own and holds only its arena, not the
// chunk it came from. Used by the record iterator (records read after a skip, a restore's
// kept records) and by reads by address (io/record_reader.h).
#pragma once

#include <cstddef>
#include <memory>

#include "core/buffer.h"

namespace dinput {

// How many records one string storage holds when a reader packs them (record_iterator.cc
// explains the figure).
constexpr size_t kRecordsPerStorage = 48;

class CopyArena {
 public:
  // Copies [data, data + size) into the current arena (a new one when it is full) and
  // returns where; buffer() holds it from then on. `huge`: a restore keeping thousands of
  // records asks for huge-page arenas (io/huge_pages.h), for records up to an eighth of
  // one; otherwise, or when none can be mapped, heap arenas of 256 KiB or the record's size.
  // `origin` and `offset` say where the bytes were read from (Buffer::origin_at of the
  // buffer they are copied from; no origin: unknown): the arena notes them with the copy,
  // so that an error about the record still names its file and offset (core/origin.h).
  const char* copy(const char* data, size_t size, bool huge,
                   const std::shared_ptr<const ByteOrigin>* origin = nullptr, uint64_t offset = 0);
  // The arena of the last copy: the owner to give the view of it.
  const std::shared_ptr<Buffer>& buffer() const { return arena_; }

 private:
  class Arena;
  std::shared_ptr<Buffer> arena_;
  Arena* notes_ = nullptr;  // arena_, as what notes the origins of its copies
  size_t used_ = 0;
};

}  // namespace dinput
