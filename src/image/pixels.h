// Pixel operations on one image, a tensor of shape [height, width, channels]: bilinear
// resizing, cropping, flipping, casting and per-channel normalization. Each returns a new
// tensor, or (flip, cast, normalize) writes over its input's buffer when it holds the only
// reference to it. Errors are INVALID_ARGUMENT naming what is
// wrong with the image (the dataset operation adds which element it was).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "image/decode.h"

namespace dinput::image {

// INVALID_ARGUMENT unless `image` is a host tensor of rank 3 whose dtype is one of uint8,
// float16 or float32.
void check_image(const Tensor& image);

// normalize's per-channel values: mean, and 1 / stddev (one of each per channel; one value
// given for all is repeated). INVALID_ARGUMENT when their number fits neither.
struct NormalizeParams {
  std::vector<float> mean, scale;
};
NormalizeParams normalize_params(int64_t channels, const std::vector<float>& mean,
                                 const std::vector<float>& stddev);

// What resize_bilinear may also do to its output in the same pass, giving exactly the values
// the separate operations give: mirror the columns (flip_left_right), then, when mean is not
// null, normalize(.., *mean, *stddev, float32).
// When `into` is a float32 tensor of the output's shape, the output is written there (and
// returned) instead of into a new tensor.
struct ResizeEpilogue {
  bool flip = false;
  const std::vector<float>* mean = nullptr;
  const std::vector<float>* stddev = nullptr;
  Tensor into;
};

// Bilinear resizing of `window` of the image (the whole image when window.height is 0) to
// height x width, as float32. Output pixel centres map to input coordinates with half-pixel
// centres: x_in = (x_out + 0.5) * in_width / out_width - 0.5, the two nearest input columns
// (clamped to the image) are blended by the fractional part, then the same along rows. This
// is TensorFlow's tf.image.resize(method="bilinear", antialias=False).
Tensor resize_bilinear(const Tensor& image, const Window& window, int64_t height, int64_t width,
                       const ResizeEpilogue& epilogue = {});

// The pixels of `window`, same dtype.
Tensor crop(const Tensor& image, const Window& window);

// Columns in reverse order, same dtype. Taking the image by value lets the operations below
// reuse its buffer when the caller held the only reference (moved it in): then the result is
// written over it.
Tensor flip_left_right(Tensor image);

// Every value converted to `dtype` (float32 or float16), without scaling.
Tensor cast(Tensor image, DType dtype);

// (value - mean[c]) / stddev[c] per channel c, as `dtype` (float32 or float16). mean and
// stddev have one value per channel, or one for all.
Tensor normalize(Tensor image, const std::vector<float>& mean, const std::vector<float>& stddev,
                 DType dtype);

}  // namespace dinput::image
