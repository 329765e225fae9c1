// The status for an errno, on its own: it uses nothing but the codes of core/status.h, so the
// dinput tool compiles it in for the errors of its own file access (tools/dinput), and
// both report a failing file with the same status.
#include <cerrno>

#include "io/file_error.h"

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

}  // namespace dinput
