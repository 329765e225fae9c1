#include "json_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/half.h"

namespace dinput_tool {

namespace {

const char kHex[] = "0123456789abcdef";

void append_escaped_code_unit(std::string* out, unsigned value) {
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(value >> shift) & 0xF]);
}

// Length of the valid UTF-8 sequence starting at s[0], or 0 when it is not valid (overlong
// forms, surrogates and code points past U+10FFFF are invalid, as in Python's decoder).
size_t utf8_sequence_length(const unsigned char* s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

// Writes the shortest digits `digits` (no dot) with decimal exponent `exp` (the value is
// d.ddd x 10^exp) the way Python's float repr does: positional notation when
// -4 <= exp < 16, scientific otherwise, and always with a '.' or an 'e'.
void append_python_repr(std::string* out, bool negative, const std::string& digits, int exp) {
  if (negative) out->push_back('-');
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out->append(digits);
        out->append(int_len - digits.size(), '0');
        out->append(".0");
      } else {
        out->append(digits, 0, int_len);
        out->push_back('.');
        out->append(digits, int_len, std::string::npos);
      }
    } else {
      out->append("0.");
      out->append(static_cast<size_t>(-exp - 1), '0');
      out->append(digits);
    }
    return;
  }
  out->push_back(digits[0]);
  if (digits.size() > 1) {
    out->push_back('.');
    out->append(digits, 1, std::string::npos);
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  out->append(buf);
}

// Splits scientific text such as "-1.25e+02" into sign, digits "125" and exponent 2.
void append_from_scientific(std::string* out, const char* text) {
  bool negative = false;
  if (*text == '-') {
    negative = true;
    ++text;
  }
  std::string digits;
  const char* p = text;
  for (; *p != '\0' && *p != 'e' && *p != 'E'; ++p) {
    if (*p != '.') digits.push_back(*p);
  }
  int exp = (*p != '\0') ? std::atoi(p + 1) : 0;
  // "%.*e" may leave trailing zeros; the shortest form has none.
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  append_python_repr(out, negative, digits, exp);
}

// JSON has no NaN or infinities; printed bare (as Python's json does) they make the line
// unreadable for strict parsers. They are printed as the strings "NaN", "Infinity" and
// "-Infinity" instead (docs/cli.md), which every JSON parser reads and a reader can map back.
bool append_non_finite(std::string* out, double value) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
    return true;
  }
  if (std::isinf(value)) {
    out->append(value < 0 ? "\"-Infinity\"" : "\"Infinity\"");
    return true;
  }
  return false;
}

template <typename T>
void append_shortest(std::string* out, T value) {
  if (append_non_finite(out, static_cast<double>(value))) return;
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf - 1, value, std::chars_format::scientific);
  *result.ptr = '\0';
  append_from_scientific(out, buf);
}

void append_shortest16(std::string* out, uint16_t bits, float (*to_float)(uint16_t),
                       uint16_t (*from_float)(float)) {
  float value = to_float(bits);
  if (append_non_finite(out, value)) return;
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, static_cast<double>(value));
    if (from_float(std::strtof(buf, nullptr)) == bits) break;
  }
  append_from_scientific(out, buf);
}

}  // namespace

void append_json_string(std::string* out, const char* data, size_t size) {
  const unsigned char* s = reinterpret_cast<const unsigned char*>(data);
  out->push_back('"');
  // Runs of valid UTF-8 are escaped by nlohmann-json; the bytes between them, which no JSON
  // library writes, as \udcXX.
  auto append_run = [&](size_t begin, size_t end) {
    if (begin == end) return;
    const std::string quoted = nlohmann::json(std::string(data + begin, end - begin)).dump();
    out->append(quoted, 1, quoted.size() - 2);
  };
  size_t run = 0, i = 0;
  while (i < size) {
    size_t len = utf8_sequence_length(s + i, size - i);
    if (len > 0) {
      i += len;
      continue;
    }
    append_run(run, i);
    append_escaped_code_unit(out, 0xDC00u | s[i]);
    run = ++i;
  }
  append_run(run, size);
  out->push_back('"');
}

std::string dump_json(const JsonObject& object,
                      const std::vector<std::pair<std::string, std::string>>& bytes) {
  std::string text = object.dump();
  for (const auto& [key, value] : bytes) {
    // The member as nlohmann-json wrote it: its key (escaped as nlohmann-json escapes it)
    // and the placeholder; it occurs once, since keys are unique and quotes inside strings
    // are escaped.
    const std::string name = nlohmann::json(key).dump() + ":";
    const std::string placeholder = object.at(key).dump();
    const size_t at = text.find(name + placeholder);
    if (at == std::string::npos) continue;
    std::string string;
    append_json_string(&string, value);
    text.replace(at + name.size(), placeholder.size(), string);
  }
  return text;
}

void append_double(std::string* out, double value) { append_shortest(out, value); }

void append_float32(std::string* out, float value) { append_shortest(out, value); }

// The 16-bit conversions are the library's own (src/core/half.cc, compiled into the tool):
// one implementation of the rounding for the library's reductions and the tool's output.
void append_float16(std::string* out, uint16_t bits) {
  append_shortest16(out, bits, dinput::half_to_float, dinput::float_to_half);
}

void append_bfloat16(std::string* out, uint16_t bits) {
  append_shortest16(out, bits, dinput::bfloat16_to_float, dinput::float_to_bfloat16);
}

}  // namespace dinput_tool
