// Status names, the last error, version and build information, dtypes.
#include <string>
#include <utility>

#include "capi/build_info.h"
#include "capi/firewall.h"
#include "core/dtype.h"
#include "device/gpu.h"
#include "device/nccl.h"

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
  capi::guard(__func__, [&] { capi::set_last_error(code, message ? message : ""); });
}

DINPUT_API void dinput_error_clear(void) { capi::clear_last_error(); }

DINPUT_API const char* dinput_version(void) { return DINPUT_VERSION_STRING; }

DINPUT_API int dinput_version_number(void) {
  return DINPUT_VERSION_MAJOR * 10000 + DINPUT_VERSION_MINOR * 100 + DINPUT_VERSION_PATCH;
}

DINPUT_API const char* dinput_build_info(void) {
  // Built once; CUDA and NCCL are probed at run time.
  static const std::string info = capi::build_info_json(gpu::availability(), gpu::nccl());
  return info.c_str();
}

DINPUT_API const char* dinput_dtype_name(dinput_dtype_t dtype) { return dtype_name(static_cast<DType>(dtype)); }

DINPUT_API size_t dinput_dtype_size(dinput_dtype_t dtype) { return dtype_size(static_cast<DType>(dtype)); }

DINPUT_API dinput_dtype_t dinput_dtype_from_name(const char* name) {
  if (!name) return DINPUT_DTYPE_INVALID;
  return static_cast<dinput_dtype_t>(dtype_from_name(name));
}

}  // extern "C"
