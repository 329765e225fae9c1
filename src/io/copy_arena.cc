#include "io/copy_arena.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/copied_origins.h"
#include "io/huge_pages.h"

namespace dinput {

// An arena's memory (a huge page or a heap block) and the origins of the copies in it.
class CopyArena::Arena final : public BufferOfCopies {
 public:
  // Room for the notes of copies the size of `first`, the arena's first (they move to a
  // larger array only when later copies are smaller).
  Arena(std::shared_ptr<Buffer> memory, size_t first)
      : BufferOfCopies(memory->data(), memory->size(),
                       memory->size() / std::max<size_t>(first, 64) + 1),
        memory_(std::move(memory)) {}
  using BufferOfCopies::note;

 private:
  std::shared_ptr<Buffer> memory_;
};

const char* CopyArena::copy(const char* data, size_t size, bool huge,
                            const std::shared_ptr<const ByteOrigin>* origin, uint64_t offset) {
  constexpr size_t kHeapArenaBytes = size_t{256} << 10;
  if (!arena_ || arena_->size() - used_ < std::max<size_t>(size, 1)) {
    std::shared_ptr<Buffer> memory =
        huge && size <= kHugeArenaBytes / 8 ? make_huge_arena() : nullptr;
    if (!memory) memory = allocate_host(std::max(kHeapArenaBytes, size));
    auto arena = std::make_shared<Arena>(std::move(memory), size);
    notes_ = arena.get();
    arena_ = std::move(arena);
    used_ = 0;
  }
  char* dst = static_cast<char*>(arena_->data()) + used_;
  std::memcpy(dst, data, size);
  notes_->note(dst, size, origin, offset);
  // An empty record takes room too: no two copies begin at the same address, where their
  // origins could not be told apart.
  used_ = std::min(used_ + ((std::max<size_t>(size, 1) + 7) & ~size_t{7}), arena_->size());
  return dst;
}

}  // namespace dinput
