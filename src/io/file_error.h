// Maps an errno from opening, reading or writing a file to a status and a message naming
// the file.
#pragma once

#include <string>

#include "core/status.h"

namespace dinput {

// The status for an errno: missing -> NOT_FOUND, no access -> PERMISSION_DENIED, a
// directory or a symbolic link loop (ELOOP) -> FAILED_PRECONDITION, a name too long ->
// INVALID_ARGUMENT, out of memory or space -> RESOURCE_EXHAUSTED, anything else (EIO, ...)
// -> DATA_LOSS.
Code file_error_code(int err);

// "<what>: cannot read '<path>': <strerror>".
[[noreturn]] void raise_file_error(const char* what, const std::string& path, int err);

// "<what>: cannot <verb> '<path>': <strerror>", e.g. verb "write" or "create".
[[noreturn]] void raise_file_error(const char* what, const char* verb, const std::string& path,
                                   int err);

}  // namespace dinput
