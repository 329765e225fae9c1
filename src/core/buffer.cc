#include "core/buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace dinput {

namespace {

constexpr size_t kAlignment = 64;

class HostBuffer final : public Buffer {
 public:
  HostBuffer(void* data, size_t size) : Buffer(data, size, MemoryKind::kHost, -1) {}
  ~HostBuffer() override { std::free(data_); }
};

HostAllocator& thread_host_allocator() {
  thread_local HostAllocator allocator = nullptr;
  return allocator;
}

std::shared_ptr<Buffer> aligned_host(size_t bytes, bool zero) {
  // aligned_alloc needs a size that is a multiple of the alignment; never ask for 0 bytes
  // so that data() of an empty tensor is still a valid, unique pointer.
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) throw std::bad_alloc();
  if (zero) std::memset(p, 0, bytes);
  try {
    return std::make_shared<HostBuffer>(p, bytes);
  } catch (...) {
    std::free(p);
    throw;
  }
}

}  // namespace

ScopedHostAllocator::ScopedHostAllocator(HostAllocator allocator)
    : saved_(thread_host_allocator()) {
  thread_host_allocator() = allocator;
}

ScopedHostAllocator::~ScopedHostAllocator() { thread_host_allocator() = saved_; }

std::shared_ptr<Buffer> allocate_host(size_t bytes, bool zero) {
  if (HostAllocator a = thread_host_allocator())
    if (std::shared_ptr<Buffer> b = a(bytes, zero)) return b;
  return aligned_host(bytes, zero);
}

std::shared_ptr<Buffer> allocate_strings(size_t count) {
  return std::make_shared<BytesStorage>(count);
}

void BytesStorage::keep(const std::shared_ptr<const Buffer>& owner) {
  // Strings of one tensor usually share one owner (a file, a batch): keep each once.
  if (!owner) return;
  for (const auto& o : owners_)
    if (o == owner) return;
  owners_.push_back(owner);
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
