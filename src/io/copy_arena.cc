#include "io/copy_arena.h"

#include <algorithm>
#include <cstring>

#include "io/huge_pages.h"

namespace dinput {

const char* CopyArena::copy(const char* data, size_t size, bool huge) {
  constexpr size_t kHeapArenaBytes = size_t{256} << 10;
  if (!arena_ || arena_->size() - used_ < size) {
    arena_ = huge && size <= kHugeArenaBytes / 8 ? make_huge_arena() : nullptr;
    if (!arena_) arena_ = allocate_host(std::max(kHeapArenaBytes, size));
    used_ = 0;
  }
  char* dst = static_cast<char*>(arena_->data()) + used_;
  std::memcpy(dst, data, size);
  used_ = std::min(used_ + ((size + 7) & ~size_t{7}), arena_->size());
  return dst;
}

}  // namespace dinput
