#include "core/element.h"

#include "core/status.h"

namespace dinput {

ElementSpec spec_of(const Element& element) {
  ElementSpec spec;
  spec.reserve(element.size());
  for (const auto& t : element) spec.push_back({t.dtype(), t.shape()});
  return spec;
}

bool is_compatible(const TensorSpec& spec, const Tensor& tensor) {
  if (spec.dtype != tensor.dtype() || spec.shape.rank() != tensor.rank()) return false;
  for (int i = 0; i < tensor.rank(); ++i)
    if (spec.shape[i] != kUnknownDim && spec.shape[i] != tensor.dim(i)) return false;
  return true;
}

bool matches(const ElementSpec& spec, const Element& element) {
  if (spec.size() != element.size()) return false;
  for (size_t i = 0; i < spec.size(); ++i)
    if (!is_compatible(spec[i], element[i])) return false;
  return true;
}

void check_matches(const ElementSpec& spec, const Element& element, const std::string& what) {
  if (spec.size() != element.size())
    raise(Code::kInvalidArgument, what, " produced an element with ", element.size(),
          " component(s) ", describe(element), " but its declared spec ", to_string(spec), " has ",
          spec.size());
  for (size_t i = 0; i < spec.size(); ++i)
    if (!is_compatible(spec[i], element[i]))
      raise(Code::kInvalidArgument, what, " produced component ", i, " as ", element[i].describe(),
            ", which does not match the declared spec ", to_string(spec[i]));
}

ElementSpec merge_specs(const ElementSpec& a, const ElementSpec& b) {
  ElementSpec out = a;
  for (size_t i = 0; i < out.size() && i < b.size(); ++i) {
    if (out[i].shape.rank() != b[i].shape.rank()) continue;
    for (int d = 0; d < out[i].shape.rank(); ++d)
      if (out[i].shape[d] != b[i].shape[d]) out[i].shape[d] = kUnknownDim;
  }
  return out;
}

std::string to_string(const TensorSpec& spec) {
  return std::string(dtype_name(spec.dtype)) + spec.shape.to_string();
}

std::string to_string(const ElementSpec& spec) {
  std::string s = "(";
  for (size_t i = 0; i < spec.size(); ++i) {
    if (i) s += ", ";
    s += to_string(spec[i]);
  }
  return s + ")";
}

std::string describe(const Element& element) { return to_string(spec_of(element)); }

}  // namespace dinput
