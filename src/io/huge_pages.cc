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
#define DINPUT_KEEP_HUGE_ARENAS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DINPUT_KEEP_HUGE_ARENAS 0
#endif
#endif
#ifndef DINPUT_KEEP_HUGE_ARENAS
#define DINPUT_KEEP_HUGE_ARENAS 1
#endif

constexpr size_t kKeptArenas = DINPUT_KEEP_HUGE_ARENAS ? 8 : 0;

struct KeptArenas {
  std::mutex mu;
  void* arenas[kKeptArenas > 0 ? kKeptArenas : 1];
  size_t count = 0;
};

// Never destroyed: records may be freed after the static destructors have run at exit.
KeptArenas& kept_arenas() {
  static Immortal<KeptArenas> kept;
  return kept.get();
}

class HugeArena final : public Buffer {
 public:
  HugeArena(void* data, size_t size) : Buffer(data, size, MemoryKind::kHost, -1) {}
  ~HugeArena() override {
    {
      KeptArenas& kept = kept_arenas();
      std::lock_guard<std::mutex> lock(kept.mu);
      if (kept.count < kKeptArenas) {
        kept.arenas[kept.count++] = data_;
        return;
      }
    }
    ::munmap(data_, size_);
  }
};

}  // namespace

std::shared_ptr<Buffer> make_huge_arena() {
  void* data = nullptr;
  {
    KeptArenas& kept = kept_arenas();
    std::lock_guard<std::mutex> lock(kept.mu);
    if (kept.count > 0) data = kept.arenas[--kept.count];
  }
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
  uint64_t wanted = (bytes + kHugeArenaBytes - 1) / kHugeArenaBytes + 1;
  KeptArenas& kept = kept_arenas();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(kept.mu);
      if (kept.count >= std::min<uint64_t>(wanted, kKeptArenas)) return;
    }
    void* p = map_huge_page_aligned(kHugeArenaBytes);
    if (!p) return;
    // A write to each 4 KiB page: the first faults in the whole huge page when the kernel
    // grants one, and the others then cost nothing.
    for (size_t at = 0; at < kHugeArenaBytes; at += 4096) static_cast<volatile char*>(p)[at] = 0;
    std::lock_guard<std::mutex> lock(kept.mu);
    if (kept.count >= kKeptArenas) {
      ::munmap(p, kHugeArenaBytes);
      return;
    }
    kept.arenas[kept.count++] = p;
  }
}

}  // namespace dinput
