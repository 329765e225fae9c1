// Reference-counted storage behind tensors. A buffer knows where its bytes live so that
// later layers (pinned host staging, CUDA device memory) can add kinds without changing
// tensors. Buffers are shared through std::shared_ptr: slicing a tensor shares its buffer.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace dinput {

enum class MemoryKind { kHost, kPinnedHost, kDevice };

class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  MemoryKind kind() const { return kind_; }
  int device() const { return device_; }  // CUDA ordinal for kDevice, else -1

  // Only the string buffer holds variable-length strings; others return nullptr.
  virtual std::vector<std::string>* strings() { return nullptr; }

 protected:
  Buffer(void* data, size_t size, MemoryKind kind, int device)
      : data_(data), size_(size), kind_(kind), device_(device) {}

  void* data_;
  size_t size_;
  MemoryKind kind_;
  int device_;
};

// Host memory, 64-byte aligned (so slices of rows stay usable by vector code and DLPack
// consumers), uninitialised unless `zero`.
std::shared_ptr<Buffer> allocate_host(size_t bytes, bool zero = false);

// Storage for `count` strings of a bytes tensor.
std::shared_ptr<Buffer> allocate_strings(size_t count);

}  // namespace dinput
