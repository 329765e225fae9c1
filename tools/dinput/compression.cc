#include "compression.h"

#include <cctype>

namespace dinput_tool {

bool parse_compression(const std::string& name, dinput_compression_t* out) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.empty() || upper == "NONE") {
    *out = DINPUT_COMPRESSION_NONE;
  } else if (upper == "ZSTD") {
    *out = DINPUT_COMPRESSION_ZSTD;
  } else if (upper == "GZIP") {
    *out = DINPUT_COMPRESSION_GZIP;
  } else {
    return false;
  }
  return true;
}

const char* compression_name(dinput_compression_t compression) {
  switch (compression) {
    case DINPUT_COMPRESSION_NONE:
      return "NONE";
    case DINPUT_COMPRESSION_ZSTD:
      return "ZSTD";
    case DINPUT_COMPRESSION_GZIP:
      return "GZIP";
    case DINPUT_COMPRESSION_FORCE_32BIT:  // only keeps the enum 32-bit wide: not a value
      break;
  }
  return "UNKNOWN";
}

}  // namespace dinput_tool
