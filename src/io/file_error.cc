#include "io/file_error.h"

#include <cerrno>
#include <cstring>

#include "core/quote.h"

namespace dinput {

Code file_error_code(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Code::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return Code::kPermissionDenied;
    case EISDIR:
      return Code::kFailedPrecondition;
    // A symbolic link loop, or a path too long: problems of the name, not of the data.
    case ELOOP:
      return Code::kFailedPrecondition;
    case ENAMETOOLONG:
      return Code::kInvalidArgument;
    case ENOMEM:
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
      return Code::kResourceExhausted;
    default:
      return Code::kDataLoss;
  }
}

void raise_file_error(const char* what, const std::string& path, int err) {
  raise_file_error(what, "read", path, err);
}

void raise_file_error(const char* what, const char* verb, const std::string& path, int err) {
  raise(file_error_code(err), what, ": cannot ", verb, " ", quoted(path), ": ", std::strerror(err));
}

}  // namespace dinput
