// Puts names that come from users (file names, patterns, keys) into messages safely: a
// file name may hold newlines or terminal escape sequences, and printing it raw would let
// it forge log lines or change the terminal. See docs/errors.md.
#pragma once

#include <string>
#include <string_view>

namespace dinput {

// `text` between single quotes, with control bytes (below 0x20, and 0x7f) written as
// \n, \t, \r or \xNN, and a backslash or single quote preceded by a backslash. Bytes of
// 0x80 and above pass unchanged, so UTF-8 names stay readable.
std::string quoted(std::string_view text);
// Exact-match overloads: without them, a std::string argument would find std::quoted of
// <iomanip> through argument-dependent lookup, and that template would win.
inline std::string quoted(const std::string& text) { return quoted(std::string_view(text)); }
inline std::string quoted(const char* text) { return quoted(std::string_view(text)); }

}  // namespace dinput
