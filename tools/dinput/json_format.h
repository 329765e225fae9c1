// JSON text for scalars, written the way Python's json module writes the same values, so
// that the tool's output compares equal to what a TensorFlow script would print with
// json.dumps(tensor.numpy().tolist()), but with each float written with the fewest digits
// that identify it in its own precision (float32 0.1 is written 0.1, as numpy shows it).
// Independent of the library, so that it can be unit-tested alone.
#ifndef DINPUT_TOOL_JSON_FORMAT_H_
#define DINPUT_TOOL_JSON_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dinput_tool {

// Appends `data` as a JSON string literal. Valid UTF-8 is kept as is (escaped by
// nlohmann-json: quotes, backslashes and control characters); each byte that is not part of
// valid UTF-8 is written as \udcXX (XX its value), the lone-surrogate convention of Python's
// "surrogateescape", so arbitrary bytes survive the round trip:
//   json.loads(line)[...].encode("utf-8", "surrogateescape") gives the original bytes.
void append_json_string(std::string* out, const char* data, size_t size);
inline void append_json_string(std::string* out, const std::string& s) {
  append_json_string(out, s.data(), s.size());
}

// The tool's JSON objects are built with nlohmann-json, members in the order they are set.
using JsonObject = nlohmann::ordered_json;

// `object` as one line of JSON (no newline), written by nlohmann-json. nlohmann-json holds
// only UTF-8 strings, while file names are arbitrary bytes: each member of `bytes` (a key of
// `object` whose value is a placeholder, e.g. null) is written with append_json_string instead.
std::string dump_json(const JsonObject& object,
                      const std::vector<std::pair<std::string, std::string>>& bytes = {});

// Floats as Python's repr: 1.0, 0.5, 1e+16, 1.5e-05, -0.0, and (not strict JSON, but what
// Python's json module writes and reads) NaN, Infinity, -Infinity.
void append_double(std::string* out, double value);
void append_float32(std::string* out, float value);
void append_float16(std::string* out, uint16_t bits);
void append_bfloat16(std::string* out, uint16_t bits);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_JSON_FORMAT_H_
