#include "io/file_error.h"

#include <cerrno>
#include <cstring>

namespace dinput {

void raise_file_error(const char* what, const std::string& path, int err) {
  Code code = Code::kUnknown;
  switch (err) {
    case ENOENT: case ENOTDIR: code = Code::kNotFound; break;
    case EACCES: case EPERM: code = Code::kPermissionDenied; break;
    case EISDIR: code = Code::kFailedPrecondition; break;
    case ENOMEM: code = Code::kResourceExhausted; break;
    default: code = Code::kDataLoss; break;
  }
  raise(code, what, ": cannot read '", path, "': ", std::strerror(err));
}

}  // namespace dinput
