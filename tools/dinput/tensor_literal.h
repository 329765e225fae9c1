// Conversion of chain-syntax literals into tensors, with the dtypes TensorFlow would infer
// from the same Python literal (except that Python ints become int64, as in dinput's range):
// ints -> int64, floats (or ints mixed with floats) -> float32, strings -> bytes,
// True/False -> bool; nested lists give the shape and must not be ragged.
#ifndef DINPUT_TOOL_TENSOR_LITERAL_H_
#define DINPUT_TOOL_TENSOR_LITERAL_H_

#include <string>

#include "chain_parser.h"
#include "handles.h"
#include "status.h"

namespace dinput_tool {

// The element a literal denotes: a top-level tuple gives one component per item (so
// `(x, y)` is a two-component element), anything else a single component. `function`
// names the caller in error messages.
ElementPtr element_from_literal(const Value& literal, const std::string& function);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_TENSOR_LITERAL_H_
