#include "io/file_error.h"

#include <cstring>

#include "core/quote.h"

namespace dinput {

void raise_file_error(const char* what, const std::string& path, int err) {
  raise_file_error(what, "read", path, err);
}

void raise_file_error(const char* what, const char* verb, const std::string& path, int err) {
  raise(file_error_code(err), what, ": cannot ", verb, " ", quoted(path), ": ", std::strerror(err));
}

}  // namespace dinput
