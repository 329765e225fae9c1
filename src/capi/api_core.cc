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

DINPUT_API const char* dinput_last_error_message(void) {
  return capi::last_error_message().c_str();
}

DINPUT_API dinput_status_t dinput_last_error_code(void) { return capi::last_error_code(); }

DINPUT_API void dinput_error_set(dinput_status_t code, const char* message) {
  // A last error of DINPUT_OK would tell a caller that reads it after a failing call that
  // nothing failed. The function stays void (callbacks call it on their way out and would
  // not check a result), so the refusal is itself recorded as the last error.
  if (code == DINPUT_OK) {
    capi::set_last_error(
        DINPUT_INVALID_ARGUMENT,
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
  // Built once; CUDA and NCCL are probed at run time.
  static const std::string info = capi::build_info_json(gpu::availability(), gpu::nccl());
  return info.c_str();
}

DINPUT_API const char* dinput_dtype_name(dinput_dtype_t dtype) {
  return dtype_name(static_cast<DType>(dtype));
}

DINPUT_API size_t dinput_dtype_size(dinput_dtype_t dtype) {
  return dtype_size(static_cast<DType>(dtype));
}

DINPUT_API dinput_dtype_t dinput_dtype_from_name(const char* name) {
  if (!name) return DINPUT_DTYPE_INVALID;
  return static_cast<dinput_dtype_t>(dtype_from_name(name));
}

}  // extern "C"
