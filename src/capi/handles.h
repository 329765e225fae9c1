// What the opaque handles of dinput.h are. Each wraps a core object; handles that are
// handed out are heap objects owned by the caller until their _free.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "capi/frozen.h"
#include "core/element.h"
#include "data/dataset.h"
#include "data/options.h"
#include "dinput.h"

#include <type_traits>

struct dinput_tensor {
  dinput::Tensor t;
};
// An element handle holds the core's Element itself (no conversion on the hot path), and
// dinput_element_get hands out its tensors as dinput_tensor pointers. That is well-defined
// because a standard-layout struct is pointer-interconvertible with its first member.
static_assert(std::is_standard_layout_v<dinput_tensor>,
              "dinput_tensor must wrap Tensor without layout changes");
static_assert(sizeof(dinput_tensor) == sizeof(dinput::Tensor),
              "dinput_tensor must wrap Tensor exactly");

struct dinput_element {
  dinput::Element parts;
};
// A per-replica value stores its replicas' Elements themselves, which the distributed
// iterator cuts its pieces into, and dinput_per_replica_get hands them out as element handles
// (capi::as_handle), as an element's tensors are handed out as tensor handles.
static_assert(std::is_standard_layout_v<dinput_element>,
              "dinput_element must wrap Element without layout changes");
static_assert(sizeof(dinput_element) == sizeof(dinput::Element),
              "dinput_element must wrap Element exactly");

// Constructors rather than aggregates: the freeze mark is never given by the builder.
struct dinput_spec {
  dinput_spec() = default;
  explicit dinput_spec(dinput::ElementSpec s) : spec(std::move(s)) {}
  dinput::ElementSpec spec;
  dinput::capi::FreezeMark frozen;  // set by the first dataset built with it
};

struct dinput_options {
  dinput_options() = default;
  dinput::Options options;
  dinput::capi::FreezeMark frozen;  // set by the first with_options that used it
};

struct dinput_dataset {
  dinput::DatasetPtr ds;
};

namespace dinput::capi {
class StepPool;
}
struct dinput_per_replica {
  std::vector<dinput::Element> replicas;  // handed out as dinput_element (capi::as_handle)
  // Set on the values dinput_dist_iterator_get_next hands out: their storage goes back to
  // that iterator's pool when freed (capi/step_pool.h; pools are never destroyed).
  dinput::capi::StepPool* pool = nullptr;
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

inline const Element& to_element(const dinput_element& handle) { return handle.parts; }
inline dinput_element to_handle(Element&& element) { return dinput_element{std::move(element)}; }
inline const dinput_tensor* as_handle(const Tensor& t) {
  return reinterpret_cast<const dinput_tensor*>(&t);
}
inline const dinput_element* as_handle(const Element& e) {
  return reinterpret_cast<const dinput_element*>(&e);
}

}  // namespace dinput::capi
