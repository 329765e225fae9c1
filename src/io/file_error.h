// Maps an errno from opening or reading a file to a status and a message naming the file.
#pragma once

#include <string>

#include "core/status.h"

namespace dinput {

[[noreturn]] void raise_file_error(const char* what, const std::string& path, int err);

}  // namespace dinput
