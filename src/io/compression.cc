#include "io/compression.h"

#include "core/status.h"

#ifdef DINPUT_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_d_forceIgnoreChecksum
#include <zstd.h>
#endif
#ifdef DINPUT_HAVE_ZLIB
#include <zlib.h>
#endif

namespace dinput {

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "NONE";
    case Compression::kZstd:
      return "ZSTD";
    case Compression::kGzip:
      return "GZIP";
  }
  return "UNKNOWN";
}

bool compression_supported(Compression c) {
  switch (c) {
    case Compression::kNone:
      return true;
#ifdef DINPUT_HAVE_ZSTD
    case Compression::kZstd:
      return true;
#endif
#ifdef DINPUT_HAVE_ZLIB
    case Compression::kGzip:
      return true;
#endif
    default:
      return false;
  }
}

const char* compression_library_version(Compression c) {
#ifdef DINPUT_HAVE_ZSTD
  if (c == Compression::kZstd) return ZSTD_versionString();
#endif
#ifdef DINPUT_HAVE_ZLIB
  if (c == Compression::kGzip) return zlibVersion();
#endif
  (void)c;
  return "";
}

bool zstd_can_skip_content_checksum() {
#if defined(DINPUT_HAVE_ZSTD) && defined(ZSTD_d_forceIgnoreChecksum)
  return !ZSTD_isError(ZSTD_dParam_getBounds(ZSTD_d_forceIgnoreChecksum).error);
#else
  return false;
#endif
}

void check_compression(const char* what, Compression c) {
  int v = static_cast<int>(c);
  if (v < 0 || v > 2)
    raise(Code::kInvalidArgument, what, ": invalid compression ", v,
          " (expected NONE=0, ZSTD=1 or GZIP=2)");
  if (!compression_supported(c))
    raise(Code::kUnimplemented, what, ": this build of dinput has no ",
          c == Compression::kZstd ? "zstd" : "gzip", " support");
}

}  // namespace dinput
