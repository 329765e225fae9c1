// JPEG and PNG decoding into uint8 tensors of shape [height, width, channels]. The codecs run
// in C (image/codec.h) so that their error jumps never cross a C++ frame; here their failures
// become INVALID_ARGUMENT (damaged or unsupported data) or UNIMPLEMENTED (built without the
// library).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "core/tensor.h"

namespace dinput::image {

// The most bytes a decoded image may have (1 GiB): a few bytes of header can claim an
// image of 65535 x 65535 pixels, which is refused before anything is allocated.
constexpr int64_t kMaxImageBytes = int64_t{1} << 30;

// A region of an image: rows [y, y + height), columns [x, x + width).
struct Window {
  int64_t y = 0, x = 0, height = 0, width = 0;
};
// Chooses the region to decode once the image's size is known (a random crop fused with the
// decoding); it is given the whole image and may narrow it.
using ChooseWindow = std::function<void(int64_t height, int64_t width, Window& window)>;

// channels: 0 (as stored), 1 or 3. `choose` may be null (the whole image).
Tensor decode_jpeg(std::string_view bytes, int channels, const ChooseWindow* choose = nullptr);
// The region `choose` picks, decoded possibly into rows longer than the region's (libjpeg
// then writes its rows straight into the tensor instead of through a copy): the tensor is
// [region height, row width, channels] and `region` says where the region lies in it. The
// columns outside the region hold no meaningful values.
Tensor decode_jpeg_region(std::string_view bytes, int channels, const ChooseWindow& choose,
                          Window& region);
// channels: 0 (as stored, 1 to 4), 1, 3 or 4.
Tensor decode_png(std::string_view bytes, int channels);

}  // namespace dinput::image
