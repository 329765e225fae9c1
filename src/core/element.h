// An element is an ordered tuple of tensors (its components), and a spec says what every
// element of a dataset looks like: per component a dtype and a partial shape.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace dinput {

using Element = std::vector<Tensor>;

struct TensorSpec {
  DType dtype = DType::kInvalid;
  Shape shape;  // dimensions may be kUnknownDim

  bool operator==(const TensorSpec& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorSpec& o) const { return !(*this == o); }
};

using ElementSpec = std::vector<TensorSpec>;

// The exact spec of a concrete element.
ElementSpec spec_of(const Element& element);

// True when the tensor has the spec's dtype and rank and agrees on every known dimension.
bool is_compatible(const TensorSpec& spec, const Tensor& tensor);

// True when `element` has the spec's number of components and each is_compatible.
bool matches(const ElementSpec& spec, const Element& element);

// Throws INVALID_ARGUMENT naming `what`, the component and both specs when `element` does
// not match `spec`.
void check_matches(const ElementSpec& spec, const Element& element, const std::string& what);

// The most specific spec that both inputs satisfy: dimensions that differ become unknown.
// Used where one dataset can yield elements of either spec (e.g. a short final batch).
ElementSpec merge_specs(const ElementSpec& a, const ElementSpec& b);

// "(int64[None], float32[4,1])"
std::string to_string(const ElementSpec& spec);
std::string to_string(const TensorSpec& spec);

// "(int64[2], float32[2,1])" — the specs of a concrete element, for messages.
std::string describe(const Element& element);

}  // namespace dinput
