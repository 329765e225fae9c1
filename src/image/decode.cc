#include "image/decode.h"

#include <exception>
#include <string>

#include "core/status.h"
#include "image/codec.h"

namespace dinput::image {
namespace {

// What the codec's prepare callback needs: it allocates the output tensor. Exceptions (an
// allocation failure, an invalid window) cannot cross the C codec: they are kept here and
// raised once the codec has returned.
struct Target {
  const ChooseWindow* choose;
  Tensor out;
  std::exception_ptr error;
};

unsigned char* prepare(void* ctx, int height, int width, int channels, dinput_image_window* w,
                       char* error, size_t error_size) noexcept {
  auto* t = static_cast<Target*>(ctx);
  try {
    Window win{0, 0, height, width};
    if (t->choose) {
      (*t->choose)(height, width, win);
      if (win.y < 0 || win.x < 0 || win.height < 1 || win.width < 1 ||
          win.y + win.height > height || win.x + win.width > width)
        raise(Code::kInternal, "the crop window [", win.y, ", ", win.x, ", ", win.height, ", ",
              win.width, "] is outside the ", height, "x", width, " image");
    }
    if (win.height * win.width * channels > kMaxImageBytes)
      raise(Code::kInvalidArgument, "the image is ", height, "x", width, "x", channels,
            ", more than the limit of ", kMaxImageBytes, " bytes");
    *w = dinput_image_window{static_cast<int>(win.y), static_cast<int>(win.x),
                             static_cast<int>(win.height), static_cast<int>(win.width)};
    t->out = Tensor::allocate(DType::kUInt8, Shape{win.height, win.width, channels});
    return t->out.mutable_data_as<unsigned char>();
  } catch (...) {
    t->error = std::current_exception();
    snprintf(error, error_size, "(see the kept exception)");
    return nullptr;
  }
}

using Codec = int (*)(const unsigned char*, size_t, int, dinput_image_prepare_fn, void*, char*,
                      size_t);

Tensor run(Codec codec, const char* format, std::string_view bytes, int channels,
           const ChooseWindow* choose) {
  Target target{choose, Tensor(), nullptr};
  char message[256] = {0};
  const int rc = codec(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), channels,
                       prepare, &target, message, sizeof message);
  if (target.error) std::rethrow_exception(target.error);
  if (rc == -2) raise(Code::kUnimplemented, message);
  if (rc != 0) raise(Code::kInvalidArgument, "not a valid ", format, " image: ", message);
  return std::move(target.out);
}

}  // namespace

Tensor decode_jpeg(std::string_view bytes, int channels, const ChooseWindow* choose) {
  return run(dinput_image_decode_jpeg, "JPEG", bytes, channels, choose);
}

Tensor decode_png(std::string_view bytes, int channels) {
  return run(dinput_image_decode_png, "PNG", bytes, channels, nullptr);
}

}  // namespace dinput::image
