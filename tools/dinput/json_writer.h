// JSON text of the library's values: tensors as nested arrays, shapes, element specs.
#ifndef DINPUT_TOOL_JSON_WRITER_H_
#define DINPUT_TOOL_JSON_WRITER_H_

#include <cstdint>
#include <string>

#include "dinput.h"
#include "json_format.h"
#include "status.h"

namespace dinput_tool {

// The tensor's values as nested JSON arrays (a scalar as a bare value): numbers, true/false
// for bool, strings for bytes (see json_format.h for floats and non-UTF-8 bytes).
void append_tensor_values(std::string* out, const dinput_tensor_t* tensor);

// A shape as a JSON array, e.g. [0,3]; DINPUT_UNKNOWN_DIM is null.
JsonObject::array_t shape(const int64_t* dims, int rank);

// {"dtype":"int64","shape":[null]} for each component, as a JSON array.
JsonObject::array_t spec_components(const dinput_spec_t* spec);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_JSON_WRITER_H_
