// A static that is constructed on first use and never destroyed. Used for the GPU layer's
// pools and streams: tensors can outlive the static destructors that run at exit, and their
// deleters must still find those objects. The memory is reclaimed with the process.
#pragma once

#include <new>
#include <utility>

namespace dinput {

template <typename T>
class Immortal {
 public:
  template <typename... Args>
  explicit Immortal(Args&&... args) {
    ::new (static_cast<void*>(storage_)) T(std::forward<Args>(args)...);
  }
  Immortal(const Immortal&) = delete;
  Immortal& operator=(const Immortal&) = delete;
  // No destructor body: T's destructor deliberately never runs.

  T& get() { return *std::launder(reinterpret_cast<T*>(storage_)); }
  T* operator->() { return &get(); }
  T& operator*() { return get(); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace dinput
