#include "io/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "core/buffer.h"
#include "core/immortal.h"

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

namespace {

#if defined(__SANITIZE_ADDRESS__)
#define DINPUT_KEEP_HUGE_PAGES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DINPUT_KEEP_HUGE_PAGES 0
#endif
#endif
#ifndef DINPUT_KEEP_HUGE_PAGES
#define DINPUT_KEEP_HUGE_PAGES 1
#endif

constexpr size_t kKept = DINPUT_KEEP_HUGE_PAGES ? kKeptHugePages : 0;

struct KeptPages {
  std::mutex mu;
  void* pages[kKept > 0 ? kKept : 1];
  size_t count = 0;
};

// Never destroyed: records may be freed after the static destructors have run at exit.
KeptPages& kept_pages() {
  static Immortal<KeptPages> kept;
  return kept.get();
}

// The number of huge pages kept now.
size_t kept_count() {
  KeptPages& kept = kept_pages();
  std::lock_guard<std::mutex> lock(kept.mu);
  return kept.count;
}

class HugeArena final : public Buffer {
 public:
  HugeArena(void* data, size_t size) : Buffer(data, size, MemoryKind::kHost, -1) {}
  ~HugeArena() override { keep_huge_page(data_); }
};

}  // namespace

void* take_kept_huge_page() noexcept {
  KeptPages& kept = kept_pages();
  std::lock_guard<std::mutex> lock(kept.mu);
  return kept.count > 0 ? kept.pages[--kept.count] : nullptr;
}

void keep_huge_page(void* p) noexcept {
  {
    KeptPages& kept = kept_pages();
    std::lock_guard<std::mutex> lock(kept.mu);
    if (kept.count < kKept) {
      kept.pages[kept.count++] = p;
      return;
    }
  }
  ::munmap(p, kHugePageBytes);
}

std::shared_ptr<Buffer> make_huge_arena() {
  void* data = take_kept_huge_page();
  if (!data) data = map_huge_page_aligned(kHugeArenaBytes);
  if (!data) return nullptr;
  try {
    return std::make_shared<HugeArena>(data, kHugeArenaBytes);
  } catch (...) {
    ::munmap(data, kHugeArenaBytes);
    throw;
  }
}

void prefault_huge_arenas(uint64_t bytes) noexcept {
  // One more than the bytes fill: each of a restore's two readers leaves one partly used.
  const uint64_t wanted =
      std::min<uint64_t>((bytes + kHugeArenaBytes - 1) / kHugeArenaBytes + 1, kKept);
  while (kept_count() < wanted) {
    void* p = map_huge_page_aligned(kHugeArenaBytes);
    if (!p) return;
    // A write to each 4 KiB page: the first faults in the whole huge page when the kernel
    // grants one, and the others then cost nothing.
    for (size_t at = 0; at < kHugeArenaBytes; at += 4096) static_cast<volatile char*>(p)[at] = 0;
    keep_huge_page(p);
  }
}

}  // namespace dinput
