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
  bool wide;  // rows may be longer than the window's (decode_jpeg_region)
  Tensor out;
  Window window;
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
    const int64_t stride = t->wide && w->pad > 0 ? win.width + w->pad : win.width;
    if (win.height * stride * channels > kMaxImageBytes)
      raise(Code::kInvalidArgument, "the image is ", height, "x", width, "x", channels,
            ", more than the limit of ", kMaxImageBytes, " bytes");
    const int pad = w->pad;
    *w = dinput_image_window{static_cast<int>(win.y),
                             static_cast<int>(win.x),
                             static_cast<int>(win.height),
                             static_cast<int>(win.width),
                             pad,
                             static_cast<int>(stride),
                             0};
    t->window = win;
    t->out = Tensor::allocate(DType::kUInt8, Shape{win.height, stride, channels});
    return t->out.mutable_data_as<unsigned char>();
  } catch (...) {
    t->error = std::current_exception();
    snprintf(error, error_size, "(see the kept exception)");
    return nullptr;
  }
}

// Runs `codec(data, size, prepare, ctx, message, message_size)` and raises its failures.
template <typename Codec>
Target run(Codec&& codec, const char* format, std::string_view bytes, const ChooseWindow* choose,
           bool wide) {
  Target target{choose, wide, Tensor(), Window{}, nullptr};
  char message[256] = {0};
  const int rc = codec(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), prepare,
                       &target, message, sizeof message);
  if (target.error) std::rethrow_exception(target.error);
  if (rc == -2) raise(Code::kUnimplemented, message);
  if (rc != 0) raise(Code::kInvalidArgument, "not a valid ", format, " image: ", message);
  return target;
}

Target jpeg(std::string_view bytes, int channels, const ChooseWindow* choose, bool wide,
            int* x_out) {
  return run(
      [&](const unsigned char* data, size_t size, dinput_image_prepare_fn p, void* ctx, char* m,
          size_t n) { return dinput_image_decode_jpeg(data, size, channels, p, ctx, m, n, x_out); },
      "JPEG", bytes, choose, wide);
}

}  // namespace

Tensor decode_jpeg(std::string_view bytes, int channels, const ChooseWindow* choose) {
  int x_out = 0;
  return std::move(jpeg(bytes, channels, choose, false, &x_out).out);
}

Tensor decode_jpeg_region(std::string_view bytes, int channels, const ChooseWindow& choose,
                          Window& region) {
  int x_out = 0;
  Target t = jpeg(bytes, channels, &choose, true, &x_out);
  region = Window{0, x_out, t.window.height, t.window.width};
  return std::move(t.out);
}

Tensor decode_png(std::string_view bytes, int channels) {
  return std::move(
      run([&](const unsigned char* data, size_t size, dinput_image_prepare_fn p, void* ctx, char* m,
              size_t n) { return dinput_image_decode_png(data, size, channels, p, ctx, m, n); },
          "PNG", bytes, nullptr, false)
          .out);
}

}  // namespace dinput::image
