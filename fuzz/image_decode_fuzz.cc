// Fuzz target of the JPEG and PNG decoders (src/image/decode.cc and the C codecs under it).
// Input: one control byte, four window bytes, then the encoded image. The control byte picks
// the format (bit 0: PNG, else JPEG), the channels (bits 1-2) and, for JPEG, whether a window
// is decoded (bit 3; the four bytes place it). Besides "no crash, no hang, no leak" (the
// sanitizers: a libjpeg or libpng error jump that crossed a C++ frame would show up as leaks
// or corrupted state), it checks:
//   - the only failure is INVALID_ARGUMENT (damaged or unsupported data), or the fuzzer's
//     own size cap below;
//   - a decoded image is uint8 [h, w, c] with the channels asked for (or 1..4 as stored);
//   - a window decode gives exactly the window's pixels of the whole image.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/status.h"
#include "image/decode.h"

namespace {

using namespace dinput;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "image_decode_fuzz: invariant violated: %s\n", what.c_str());
  std::abort();
}

// Keeps the fuzzer's memory small: a few header bytes can claim a huge image.
constexpr int64_t kMaxPixels = int64_t{1} << 22;
const char kTooLarge[] = "fuzz: image too large";

void check_image(const Tensor& t, int channels) {
  if (t.dtype() != DType::kUInt8 || t.rank() != 3) fail("not uint8 of rank 3: " + t.describe());
  const int64_t c = t.dim(2);
  if (channels != 0 ? c != channels : (c < 1 || c > 4)) fail("channels: " + t.describe());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const uint8_t control = data[0];
  const bool png = control & 1;
  static const int kJpegChannels[4] = {0, 1, 3, 3};
  static const int kPngChannels[4] = {0, 1, 3, 4};
  const int channels = (png ? kPngChannels : kJpegChannels)[(control >> 1) & 3];
  const bool window = !png && (control & 8);
  const std::string_view bytes(reinterpret_cast<const char*>(data + 5), size - 5);

  image::Window chosen;
  const image::ChooseWindow choose = [&](int64_t h, int64_t w, image::Window& win) {
    if (h * w > kMaxPixels) raise(Code::kResourceExhausted, kTooLarge);
    if (!window) return;
    win.y = data[1] % h;
    win.x = data[2] % w;
    win.height = 1 + data[3] % (h - win.y);
    win.width = 1 + data[4] % (w - win.x);
    chosen = win;
  };
  Tensor whole;
  try {
    whole = png ? image::decode_png(bytes, channels) : image::decode_jpeg(bytes, channels, &choose);
  } catch (const Error& e) {
    if (e.code() == Code::kResourceExhausted && std::strstr(e.what(), kTooLarge)) return 0;
    if (e.code() != Code::kInvalidArgument && e.code() != Code::kUnimplemented)
      fail(std::string("unexpected error ") + code_name(e.code()) + ": " + e.what());
    return 0;
  }
  check_image(whole, channels);
  if (png && whole.dim(0) * whole.dim(1) > kMaxPixels) return 0;
  if (!window) return 0;
  // The window's pixels must be those of the whole image (decoded without a window).
  if (whole.dim(0) != chosen.height || whole.dim(1) != chosen.width) fail("window shape");
  {
    // The same region decoded into rows as wide as libjpeg decodes them: the same pixels.
    image::Window where;
    Tensor wide;
    try {
      wide = image::decode_jpeg_region(bytes, channels, choose, where);
    } catch (const Error& e) {
      fail(std::string("the region decode failed where the window decode did not: ") + e.what());
    }
    if (where.height != chosen.height || where.width != chosen.width || where.x < 0 ||
        where.x + where.width > wide.dim(1) || wide.dim(0) != chosen.height)
      fail("region placement");
    const int64_t c = wide.dim(2);
    for (int64_t y = 0; y < chosen.height; ++y)
      if (std::memcmp(whole.data_as<uint8_t>() + y * chosen.width * c,
                      wide.data_as<uint8_t>() + (y * wide.dim(1) + where.x) * c,
                      static_cast<size_t>(chosen.width * c)) != 0)
        fail("region pixels differ from the window's at row " + std::to_string(y));
  }
  Tensor full;
  try {
    full = image::decode_jpeg(bytes, channels);
  } catch (const Error& e) {
    // Decoding stops after the window's last row: damage below it fails only the whole.
    if (e.code() != Code::kInvalidArgument) fail(std::string("whole image: ") + e.what());
    return 0;
  }
  const int64_t c = full.dim(2), width = full.dim(1);
  const uint8_t* a = whole.data_as<uint8_t>();
  const uint8_t* b = full.data_as<uint8_t>();
  for (int64_t y = 0; y < chosen.height; ++y)
    if (std::memcmp(a + y * chosen.width * c, b + ((chosen.y + y) * width + chosen.x) * c,
                    static_cast<size_t>(chosen.width * c)) != 0)
      fail("window pixels differ from the whole image's at row " + std::to_string(y));
  return 0;
}
