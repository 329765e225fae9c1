#include "capi/build_info.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "io/compression.h"
#include "io/crc32c.h"

namespace dinput::capi {

std::string build_info_json(const gpu::Availability& cuda, const gpu::NcclAvailability& nccl) {
  // Each optional component says whether it was compiled in and whether it is usable now.
  nlohmann::ordered_json info;
  info["version"] = DINPUT_VERSION_STRING;
#if defined(__clang__)
  info["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  info["compiler"] = "gcc " __VERSION__;
#endif
  info["cuda"] = {{"compiled", cuda.compiled},
                  {"available", cuda.usable},
                  {"devices", cuda.devices},
                  {"reason", cuda.reason}};
  info["nccl"] = {{"compiled", nccl.compiled},
                  {"available", nccl.loaded},
                  {"version", nccl.version},
                  {"reason", nccl.reason}};
  // The multi-process collective's transport: linked in when found at build time
  // (src/collective/gloo.cc), so usable whenever the library loads.
#ifdef DINPUT_HAVE_GLOO
  info["gloo"] = {{"compiled", true}, {"available", true}};
#else
  info["gloo"] = {{"compiled", false}, {"available", false}};
#endif
  // Record-file compression: linked in when found at build time, so usable whenever the
  // library loads; the version is the one the library runs with.
  for (auto [component, c] :
       {std::pair{"zstd", Compression::kZstd}, std::pair{"zlib", Compression::kGzip}}) {
    const bool compiled = compression_supported(c);
    nlohmann::ordered_json entry = {{"compiled", compiled}, {"available", compiled}};
    if (compiled) entry["version"] = compression_library_version(c);
    info[component] = std::move(entry);
  }
  // ISA-L computes CRC32C of 256 bytes and more when compiled in (src/io/crc32c.cc).
  info["isal"] = {{"compiled", crc32c::isal_available()}, {"available", crc32c::isal_available()}};
  info["dlpack"] = {{"compiled", true}, {"available", true}};
  // A reason comes from a driver's or dlerror's message: whatever its bytes, the text stays
  // valid JSON (bytes that are not UTF-8 become U+FFFD).
  return info.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dinput::capi
