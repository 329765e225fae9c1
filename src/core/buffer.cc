#include "core/buffer.h"

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

class StringBuffer final : public Buffer {
 public:
  explicit StringBuffer(size_t count) : Buffer(nullptr, 0, MemoryKind::kHost, -1), strings_(count) {}
  std::vector<std::string>* strings() override { return &strings_; }

 private:
  std::vector<std::string> strings_;
};

}  // namespace

std::shared_ptr<Buffer> allocate_host(size_t bytes, bool zero) {
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

std::shared_ptr<Buffer> allocate_strings(size_t count) { return std::make_shared<StringBuffer>(count); }

}  // namespace dinput
