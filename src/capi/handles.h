// What the opaque handles of dinput.h are. Each wraps a core object; handles that are
// handed out are heap objects owned by the caller until their _free.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/element.h"
#include "data/dataset.h"
#include "data/options.h"
#include "dinput.h"

struct dinput_tensor {
  dinput::Tensor t;
};

struct dinput_element {
  std::vector<dinput_tensor> parts;
};

struct dinput_spec {
  dinput::ElementSpec spec;
};

struct dinput_options {
  dinput::Options options;
};

struct dinput_dataset {
  dinput::DatasetPtr ds;
};

struct dinput_per_replica {
  std::vector<dinput_element> replicas;
};

struct dinput_optional {
  std::optional<dinput_element> element;
  std::optional<dinput_per_replica> per_replica;
};

namespace dinput::capi {

// Hands a new handle to the caller (released by the matching _free).
template <typename T, typename... Args>
T* new_handle(Args&&... args) {
  return std::make_unique<T>(T{std::forward<Args>(args)...}).release();
}
template <typename T>
void free_handle(T* handle) {
  std::unique_ptr<T> owned(handle);
}

Element to_element(const dinput_element& handle);
dinput_element to_handle(Element&& element);

}  // namespace dinput::capi
