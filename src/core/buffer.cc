#include "core/buffer.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "core/immortal.h"

namespace dinput {

namespace {

constexpr size_t kAlignment = 64;

// Large blocks are costly to get fresh: glibc maps each one anew (above its mmap threshold,
// at most 32 MiB), and the kernel faults in and zeroes every page on first touch. A
// pipeline that makes a 600 KB image per element and a 38 MB batch of 64 spent more time
// there than in the copies. Requests of at least kMinCached bytes are rounded up to a size class
// (an eighth of a power of two: at most 12.5% more), and freed blocks are kept, up to kCacheBytes
// in all and kMaxPerSize of one class, for the next request of their class. AddressSanitizer builds
// keep nothing, so a use after free is still reported.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kCacheBytes = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kCacheBytes = 0;
#else
constexpr size_t kCacheBytes = size_t{128} << 20;
#endif
#else
constexpr size_t kCacheBytes = size_t{128} << 20;
#endif
constexpr size_t kMinCached = size_t{512} << 10;
constexpr size_t kMaxCachedBlocks = 32;
constexpr size_t kMaxPerSize = 8;

// The bytes to allocate for a request of `rounded` bytes (a multiple of kAlignment).
size_t size_class(size_t rounded) {
  if (rounded < kMinCached || rounded > kCacheBytes) return rounded;
  size_t top = kMinCached;  // the power of two at or below rounded
  while (top * 2 <= rounded) top *= 2;
  const size_t step = top / 8;
  return (rounded + step - 1) / step * step;
}

class BlockCache {
 public:
  // A kept block of exactly `rounded` bytes (the most recently freed), or nullptr.
  void* take(size_t rounded) {
    if (rounded < kMinCached || rounded > kCacheBytes) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = count_; i-- > 0;) {
      if (blocks_[i].size != rounded) continue;
      void* p = blocks_[i].data;
      total_ -= rounded;
      for (size_t j = i + 1; j < count_; ++j) blocks_[j - 1] = blocks_[j];
      --count_;
      return p;
    }
    return nullptr;
  }
  // Keeps the block, or frees it (or older blocks, to make room). A size that already has
  // kMaxPerSize blocks kept frees the new one: 64 images freed at once after a batch copied
  // them must not push out the batch-sized block the next batch will take.
  void give(void* p, size_t rounded) {
    if (rounded < kMinCached || rounded > kCacheBytes) return std::free(p);
    void* evicted[kMaxCachedBlocks];
    size_t n_evicted = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t same = 0;
      for (size_t i = 0; i < count_; ++i) same += blocks_[i].size == rounded;
      if (same >= kMaxPerSize) {
        evicted[n_evicted++] = p;
      } else {
        size_t drop = 0;  // the oldest blocks that must go
        size_t total = total_;
        while (drop < count_ &&
               (count_ - drop >= kMaxCachedBlocks || total + rounded > kCacheBytes))
          total -= blocks_[drop++].size;
        for (size_t i = 0; i < drop; ++i) evicted[n_evicted++] = blocks_[i].data;
        for (size_t j = drop; j < count_; ++j) blocks_[j - drop] = blocks_[j];
        count_ -= drop;
        blocks_[count_++] = Block{p, rounded};
        total_ = total + rounded;
      }
    }
    for (size_t i = 0; i < n_evicted; ++i) std::free(evicted[i]);  // outside the lock
  }
  size_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }

 private:
  struct Block {
    void* data;
    size_t size;
  };
  std::mutex mu_;
  Block blocks_[kMaxCachedBlocks];  // oldest first
  size_t count_ = 0;
  size_t total_ = 0;
};

// Never destroyed: buffers may be freed after the static destructors have run at exit.
BlockCache& block_cache() {
  static Immortal<BlockCache> cache;
  return cache.get();
}

class HostBuffer final : public Buffer {
 public:
  // raw: what malloc returned for a small block (see aligned_host); nullptr for a block
  // from aligned_alloc or the cache, which goes back to the cache.
  HostBuffer(void* data, size_t size, size_t rounded, void* raw)
      : Buffer(data, size, MemoryKind::kHost, -1), rounded_(rounded), raw_(raw) {}
  ~HostBuffer() override {
    if (raw_)
      std::free(raw_);
    else
      block_cache().give(data_, rounded_);
  }

 private:
  size_t rounded_;
  void* raw_;
};

// A small block is taken from malloc with room to align it by hand. aligned_alloc would
// split off the bytes before the aligned address (and often some after it) and free them as
// small chunks; a batch made every step then leaves a stream of such chunks, which overflow
// glibc's per-thread cache into its fast bins, and every later request of over 1 KiB first
// merges all of them back (malloc_consolidate: 8% of a distributed step over 8 replicas).
void* small_aligned(size_t rounded, void** raw) {
  *raw = std::malloc(rounded + kAlignment);
  if (!*raw) return nullptr;
  const uintptr_t at = reinterpret_cast<uintptr_t>(*raw);
  return reinterpret_cast<void*>((at + kAlignment - 1) / kAlignment * kAlignment);
}

HostAllocator& thread_host_allocator() {
  thread_local HostAllocator allocator = nullptr;
  return allocator;
}

std::shared_ptr<Buffer> aligned_host(size_t bytes, bool zero) {
  // aligned_alloc needs a size that is a multiple of the alignment; never ask for 0 bytes
  // so that data() of an empty tensor is still a valid, unique pointer.
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  rounded = size_class(rounded);
  void* raw = nullptr;
  void* p = nullptr;
  if (rounded < kMinCached) {
    p = small_aligned(rounded, &raw);
  } else {
    p = block_cache().take(rounded);
    if (!p) p = std::aligned_alloc(kAlignment, rounded);
  }
  if (!p) throw std::bad_alloc();
  if (zero) std::memset(p, 0, bytes);
  try {
    return std::make_shared<HostBuffer>(p, bytes, rounded, raw);
  } catch (...) {
    std::free(raw ? raw : p);
    throw;
  }
}

}  // namespace

const std::shared_ptr<const ByteOrigin>* Buffer::origin_at(const char* p, uint64_t* offset) const {
  if (!origin_) return nullptr;
  const auto at = reinterpret_cast<uintptr_t>(p);
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  if (at < begin || at > begin + size_) return nullptr;
  *offset = origin_->offset + (at - reinterpret_cast<uintptr_t>(origin_->anchor));
  return &origin_;
}

ScopedHostAllocator::ScopedHostAllocator(HostAllocator allocator)
    : saved_(thread_host_allocator()) {
  thread_host_allocator() = allocator;
}

ScopedHostAllocator::~ScopedHostAllocator() { thread_host_allocator() = saved_; }

bool scoped_host_allocator_active() { return thread_host_allocator() != nullptr; }

std::shared_ptr<Buffer> allocate_host(size_t bytes, bool zero) {
  if (HostAllocator a = thread_host_allocator())
    if (std::shared_ptr<Buffer> b = a(bytes, zero)) return b;
  return aligned_host(bytes, zero);
}

size_t kept_host_bytes() { return block_cache().bytes(); }

std::shared_ptr<Buffer> allocate_strings(size_t count) {
  return std::make_shared<BytesStorage>(count);
}

namespace {

// Up to this many owners keep() scans them; past it, it looks them up in owners_index_.
constexpr size_t kScannedOwners = 8;

size_t owner_slot(const Buffer* owner, size_t mask) {
  // Buffers are heap objects, 16-byte aligned at least: the low bits say nothing.
  return static_cast<size_t>((reinterpret_cast<uintptr_t>(owner) >> 4) * 0x9E3779B97F4A7C15ull >>
                             32) &
         mask;
}

}  // namespace

bool BytesStorage::index_owner(const Buffer* owner) {
  const size_t mask = owners_index_.size() - 1;
  for (size_t h = owner_slot(owner, mask);; h = (h + 1) & mask) {
    if (owners_index_[h] == owner) return false;
    if (!owners_index_[h]) {
      owners_index_[h] = owner;
      return true;
    }
  }
}

void BytesStorage::rebuild_owners_index() {
  // At most half full, so that a probe ends after a slot or two; 64 slots to begin with, so
  // that a batch of about 80 owners rebuilds it twice, not four times.
  size_t slots = 8 * kScannedOwners;
  while (slots < 2 * owners_.size()) slots *= 2;
  owners_index_.assign(slots, nullptr);
  for (const auto& o : owners_) index_owner(o.get());
}

void BytesStorage::keep(const std::shared_ptr<const Buffer>& owner) {
  // Strings of one tensor usually share one owner (a file, a batch): keep each once.
  if (!owner) return;
  if (owners_index_.empty()) {
    for (const auto& o : owners_)
      if (o == owner) return;
    owners_.push_back(owner);
    if (owners_.size() > kScannedOwners) rebuild_owners_index();
    return;
  }
  if (!index_owner(owner.get())) return;
  owners_.push_back(owner);
  if (2 * owners_.size() > owners_index_.size()) rebuild_owners_index();
}

void BytesStorage::set_copy(size_t i, std::string_view s) {
  constexpr size_t kChunk = 4096;
  if (s.size() > arena_left_) {
    // A new chunk sized for the tensor (a scalar's storage holds just its string); a string
    // longer than a chunk gets one of its own size.
    size_t n = std::max(s.size(), std::min(kChunk, 64 * items_.size()));
    arena_.push_back(std::make_unique<char[]>(n));
    arena_next_ = arena_.back().get();
    arena_left_ = n;
  }
  if (!s.empty()) std::memcpy(arena_next_, s.data(), s.size());
  items_[i] = ByteString{arena_next_, s.size()};
  arena_next_ += s.size();
  arena_left_ -= s.size();
}

void BytesStorage::set_view(size_t i, const char* data, size_t size,
                            const std::shared_ptr<const Buffer>& owner) {
  items_[i] = ByteString{data, size};
  keep(owner);
}

void BytesStorage::set_from(size_t i, const BytesStorage& other, size_t j,
                            const std::shared_ptr<Buffer>& other_buffer) {
  items_[i] = other.items_[j];
  if (other.arena_.empty()) {
    // Its strings live in its owners: keep those, not the small storage object itself.
    for (const auto& o : other.owners_) keep(o);
  } else {
    keep(other_buffer);
  }
}

}  // namespace dinput
