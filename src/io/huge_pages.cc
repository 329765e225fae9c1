#include "io/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace dinput {

void* map_huge_page_aligned(size_t size) noexcept {
  // Over-map by one huge page, then trim both ends so that exactly [p, p + size) stays
  // mapped and can be unmapped like any other mapping.
  void* raw = ::mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHugePageBytes - 1) & ~uintptr_t{kHugePageBytes - 1};
  const uintptr_t end = begin + size + kHugePageBytes;
  if (aligned > begin) ::munmap(raw, aligned - begin);
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace dinput
