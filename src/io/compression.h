// Compression of record files, and what this build can do about it. zstd and zlib are
// optional at build time (DINPUT_HAVE_ZSTD / DINPUT_HAVE_ZLIB); a build without one of them
// still accepts the enum value and fails with UNIMPLEMENTED when it is used.
#pragma once

namespace dinput {

// Values equal dinput_compression_t.
enum class Compression : int { kNone = 0, kZstd = 1, kGzip = 2 };

// "NONE", "ZSTD", "GZIP"; "UNKNOWN" for other values.
const char* compression_name(Compression c);
// True for kNone, and for kZstd / kGzip when the library was compiled with them.
bool compression_supported(Compression c);
// Version of the compression library this build uses ("1.5.4"), or "" when not compiled in.
const char* compression_library_version(Compression c);
// Whether this build's libzstd can decode without verifying a frame's content checksum
// (ZSTD_d_forceIgnoreChecksum), which the record reader asks for; false without zstd.
bool zstd_can_skip_content_checksum();
// Throws INVALID_ARGUMENT for values outside the enum and UNIMPLEMENTED ("this build of
// dinput has no zstd support") for compressions this build lacks. `what` starts the message.
void check_compression(const char* what, Compression c);

}  // namespace dinput
