// Status names, the last error, version and build information, dtypes.
#include <string>
#include <utility>

#include "capi/firewall.h"
#include "core/dtype.h"
#include "device/gpu.h"
#include "device/nccl.h"

namespace {
std::string json_escape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}
}  // namespace
#include "io/compression.h"

using namespace dinput;

#ifndef DINPUT_VERSION_STRING
#error "DINPUT_VERSION_STRING must be defined by the build"
#endif

extern "C" {

DINPUT_API const char* dinput_status_name(dinput_status_t code) {
  int c = static_cast<int>(code);
  if (c < 0 || c > 16) return "UNKNOWN_STATUS";
  return code_name(static_cast<Code>(c));
}

DINPUT_API const char* dinput_last_error_message(void) { return capi::last_error_message().c_str(); }

DINPUT_API dinput_status_t dinput_last_error_code(void) { return capi::last_error_code(); }

DINPUT_API void dinput_error_set(dinput_status_t code, const char* message) {
  // A last error of DINPUT_OK would tell a caller that reads it after a failing call that
  // nothing failed. The function stays void (callbacks call it on their way out and would
  // not check a result), so the refusal is itself recorded as the last error.
  if (code == DINPUT_OK) {
    capi::set_last_error(DINPUT_INVALID_ARGUMENT,
                         "dinput_error_set: code must not be DINPUT_OK (dinput_error_clear clears the last error)");
    return;
  }
  capi::guard(__func__, [&] { capi::set_last_error(code, message ? message : ""); });
}

DINPUT_API void dinput_error_clear(void) { capi::clear_last_error(); }

DINPUT_API const char* dinput_version(void) { return DINPUT_VERSION_STRING; }

DINPUT_API int dinput_version_number(void) {
  return DINPUT_VERSION_MAJOR * 10000 + DINPUT_VERSION_MINOR * 100 + DINPUT_VERSION_PATCH;
}

DINPUT_API const char* dinput_build_info(void) {
  // Built once; each optional component says whether it was compiled in and whether it is
  // usable now (CUDA and NCCL are probed at run time). Gloo is not part of dinput yet.
  static const std::string info = [] {
    std::string s = "{\"version\":\"" DINPUT_VERSION_STRING "\"";
#if defined(__clang__)
    s += ",\"compiler\":\"clang " __clang_version__ "\"";
#elif defined(__GNUC__)
    s += ",\"compiler\":\"gcc " __VERSION__ "\"";
#endif
    const gpu::Availability& cuda = gpu::availability();
    s += str_cat(",\"cuda\":{\"compiled\":", cuda.compiled ? "true" : "false", ",\"available\":",
                 cuda.usable ? "true" : "false", ",\"devices\":", cuda.devices, ",\"reason\":\"", json_escape(cuda.reason),
                 "\"}");
    const gpu::NcclAvailability& nccl = gpu::nccl();
    s += str_cat(",\"nccl\":{\"compiled\":", nccl.compiled ? "true" : "false", ",\"available\":",
                 nccl.loaded ? "true" : "false", ",\"version\":", nccl.version, ",\"reason\":\"",
                 json_escape(nccl.reason), "\"}");
    for (const char* component : {"gloo"})
      s += std::string(",\"") + component + "\":{\"compiled\":false,\"available\":false}";
    // Record-file compression: linked in when found at build time, so usable whenever the
    // library loads; the version is the one the library runs with.
    for (auto [component, c] : {std::pair{"zstd", Compression::kZstd}, std::pair{"zlib", Compression::kGzip}}) {
      bool compiled = compression_supported(c);
      s += std::string(",\"") + component + "\":{\"compiled\":" + (compiled ? "true" : "false") +
           ",\"available\":" + (compiled ? "true" : "false");
      if (compiled) s += std::string(",\"version\":\"") + compression_library_version(c) + "\"";
      s += "}";
    }
    s += ",\"dlpack\":{\"compiled\":true,\"available\":true}}";
    return s;
  }();
  return info.c_str();
}

DINPUT_API const char* dinput_dtype_name(dinput_dtype_t dtype) { return dtype_name(static_cast<DType>(dtype)); }

DINPUT_API size_t dinput_dtype_size(dinput_dtype_t dtype) { return dtype_size(static_cast<DType>(dtype)); }

DINPUT_API dinput_dtype_t dinput_dtype_from_name(const char* name) {
  if (!name) return DINPUT_DTYPE_INVALID;
  return static_cast<dinput_dtype_t>(dtype_from_name(name));
}

}  // extern "C"
