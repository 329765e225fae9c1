// Small helpers the unit tests share: an element as text (so that expected streams read as
// strings) and the error a call raises.
#pragma once

#include <functional>
#include <string>

#include "core/element.h"
#include "core/status.h"
#include "core/tensor.h"

namespace dinput::test {

// Each component as "(v1,v2,...)": strings as they are, int64 and float32 values in decimal
// (other dtypes print nothing between the parentheses).
inline std::string text(const Element& e) {
  std::string out;
  for (const Tensor& t : e) {
    out += "(";
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (i) out += ",";
      if (t.dtype() == DType::kBytes)
        out += std::string(t.string(i));
      else if (t.dtype() == DType::kInt64)
        out += std::to_string(t.data_as<int64_t>()[i]);
      else if (t.dtype() == DType::kFloat32)
        out += std::to_string(t.data_as<float>()[i]);
    }
    out += ")";
  }
  return out;
}

// The Error `f` raised, or one of code kOk when it raised none.
inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(Code::kOk, "");
}

}  // namespace dinput::test
