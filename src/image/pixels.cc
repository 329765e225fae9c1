#include "image/pixels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/half.h"
#include "core/status.h"

namespace dinput::image {
namespace {

// Calls body(T{}) with T the C++ type of the image's dtype (uint8_t, uint16_t holding
// float16 bits, float).
template <typename Body>
void by_dtype(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::kUInt8:
      return body(uint8_t{});
    case DType::kFloat16:
      return body(uint16_t{});
    case DType::kFloat32:
      return body(float{});
    default:
      raise(Code::kInternal, "image dtype ", dtype_name(dtype));
  }
}

inline float load(uint8_t v) { return static_cast<float>(v); }
inline float load(uint16_t v) { return half_to_float(v); }
inline float load(float v) { return v; }

// Writes float values as float32 or float16.
void store(const float* values, size_t n, DType dtype, void* out) {
  if (dtype == DType::kFloat32) {
    std::memcpy(out, values, n * sizeof(float));
    return;
  }
  auto* h = static_cast<uint16_t*>(out);
  for (size_t i = 0; i < n; ++i) h[i] = float_to_half(values[i]);
}

void check_float_dtype(DType dtype) {
  DINPUT_CHECK_ARG(dtype == DType::kFloat32 || dtype == DType::kFloat16,
                   "the output dtype must be float32 or float16, got ", dtype_name(dtype));
}

// For one output coordinate: the two input coordinates it blends and the weight of the
// second (half-pixel centres, clamped to [0, in - 1]).
struct Tap {
  int64_t lo, hi;
  float frac;
};

std::vector<Tap> taps(int64_t in, int64_t out) {
  std::vector<Tap> t(static_cast<size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    const float s = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float f = std::floor(s);
    t[i].lo = std::max<int64_t>(static_cast<int64_t>(f), 0);
    t[i].hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(s)), in - 1);
    t[i].frac = s - f;
  }
  return t;
}

}  // namespace

void check_image(const Tensor& image) {
  image.require_host("the image");
  DINPUT_CHECK_ARG(image.rank() == 3, "an image must have shape [height, width, channels], got ",
                   image.describe());
  const DType d = image.dtype();
  DINPUT_CHECK_ARG(d == DType::kUInt8 || d == DType::kFloat16 || d == DType::kFloat32,
                   "an image must be uint8, float16 or float32, got ", image.describe());
}

NormalizeParams normalize_params(int64_t channels, const std::vector<float>& mean,
                                 const std::vector<float>& stddev) {
  auto per_channel = [&](const std::vector<float>& v, const char* what) {
    DINPUT_CHECK_ARG(v.size() == 1 || static_cast<int64_t>(v.size()) == channels,
                     "normalize: ", v.size(), " ", what, " values for an image of ", channels,
                     " channels");
    std::vector<float> out(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) out[c] = v[v.size() == 1 ? 0 : c];
    return out;
  };
  NormalizeParams p{per_channel(mean, "mean"), per_channel(stddev, "stddev")};
  for (float& s : p.scale) s = 1.0f / s;  // checked nonzero where the operation is built
  return p;
}

namespace {

// One output row from its two x-blended input rows: the blend along y, then (when mean is
// not null) the normalization of each value, as separate operations would round them.
// Plain loops over contiguous floats, which the compiler vectorises (pixels.cc is built at
// -O3: see src/CMakeLists.txt).
void blend_y(const float* top, const float* bottom, float fy, const float* mean, const float* scale,
             float* out, size_t n) {
  if (!mean) {
    for (size_t i = 0; i < n; ++i) out[i] = top[i] + (bottom[i] - top[i]) * fy;
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const float v = top[i] + (bottom[i] - top[i]) * fy;
    out[i] = (v - mean[i]) * scale[i];
  }
}

// The blend along x of uint8 values, four at a time: the gathered bytes are converted
// together and blended with the same single-precision operations as one at a time (so the
// values are the same). Returns how many of the n values it wrote.
size_t blend_x_u8(const uint8_t* in, const int32_t* lo, const int32_t* hi, const float* f,
                  float* out, size_t n) {
#ifdef __SSE2__
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 a =
        _mm_cvtepi32_ps(_mm_setr_epi32(in[lo[i]], in[lo[i + 1]], in[lo[i + 2]], in[lo[i + 3]]));
    const __m128 b =
        _mm_cvtepi32_ps(_mm_setr_epi32(in[hi[i]], in[hi[i + 1]], in[hi[i + 2]], in[hi[i + 3]]));
    _mm_storeu_ps(out + i, _mm_add_ps(a, _mm_mul_ps(_mm_sub_ps(b, a), _mm_loadu_ps(f + i))));
  }
  return i;
#else
  (void)in, (void)lo, (void)hi, (void)f, (void)out, (void)n;
  return 0;
#endif
}

// The same for RGB pixels, one pixel (three values) at a time: each of its two input pixels
// is one 4-byte load (the fourth byte belongs to the next pixel, and the fourth value
// computed from it lands where the next pixel's first value is written afterwards, or in a
// spare float past the row: `out` must have n + 1 of them). Pixels whose 4-byte load would
// reach past `limit` bytes from `in` (the end of the image) are left to the caller.
size_t blend_x_rgb8(const uint8_t* in, size_t limit, const int32_t* lo, const int32_t* hi,
                    const float* f, float* out, size_t n) {
#ifdef __SSE2__
  const __m128i zero = _mm_setzero_si128();
  auto widen = [&](const uint8_t* p) {
    uint32_t bytes;
    std::memcpy(&bytes, p, 4);
    const __m128i b16 = _mm_unpacklo_epi8(_mm_cvtsi32_si128(static_cast<int>(bytes)), zero);
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(b16, zero));
  };
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    if (static_cast<size_t>(lo[i]) + 4 > limit || static_cast<size_t>(hi[i]) + 4 > limit) break;
    const __m128 a = widen(in + lo[i]), b = widen(in + hi[i]);
    _mm_storeu_ps(out + i, _mm_add_ps(a, _mm_mul_ps(_mm_sub_ps(b, a), _mm_set1_ps(f[i]))));
  }
  return i;
#else
  (void)in, (void)limit, (void)lo, (void)hi, (void)f, (void)out, (void)n;
  return 0;
#endif
}

}  // namespace

Tensor resize_bilinear(const Tensor& image, const Window& window, int64_t height, int64_t width,
                       const ResizeEpilogue& epilogue) {
  check_image(image);
  const Window w = window.height > 0 ? window : Window{0, 0, image.dim(0), image.dim(1)};
  DINPUT_CHECK_ARG(w.height > 0 && w.width > 0, "cannot resize the empty image ", image.describe());
  const int64_t channels = image.dim(2), in_width = image.dim(1);
  const bool normalized = epilogue.mean != nullptr;
  const NormalizeParams params =
      normalized ? normalize_params(channels, *epilogue.mean, *epilogue.stddev) : NormalizeParams{};
  const Shape shape{height, width, channels};
  const Tensor& into = epilogue.into;
  Tensor out = into.defined() && into.dtype() == DType::kFloat32 && into.shape() == shape
                   ? into
                   : Tensor::allocate(DType::kFloat32, shape);
  float* dst = out.mutable_data_as<float>();
  const std::vector<Tap> ys = taps(w.height, height), xs = taps(w.width, width);
  // Per value of an output row (column x, channel c): the offsets of the two input values it
  // blends within the window's row, and the weight of the second. Flipped, column x takes
  // the taps of column width - 1 - x: the values of the unflipped row, mirrored.
  const size_t out_row = static_cast<size_t>(width * channels);
  std::vector<int32_t> lo(out_row), hi(out_row);
  std::vector<float> fx(out_row), mean, scale;
  for (int64_t x = 0, i = 0; x < width; ++x) {
    const Tap& t = xs[epilogue.flip ? width - 1 - x : x];
    for (int64_t c = 0; c < channels; ++c, ++i) {
      lo[i] = static_cast<int32_t>(t.lo * channels + c);
      hi[i] = static_cast<int32_t>(t.hi * channels + c);
      fx[i] = t.frac;
    }
  }
  if (normalized) {
    mean.resize(out_row);
    scale.resize(out_row);
    for (size_t i = 0; i < out_row; ++i) {
      mean[i] = params.mean[i % channels];
      scale[i] = params.scale[i % channels];
    }
  }
  // Each input row is blended along x once into a row of floats (the two rows an output row
  // needs are kept, and reused by the next output row when it needs the same ones), then the
  // two are blended along y: the same operations, in the same order, as blending the four
  // neighbours of every output value directly.
  // Two rows of floats, each with a spare one after it (blend_x_rgb8 writes one past).
  const size_t row_stride = out_row + 1;
  std::vector<float> rows(2 * row_stride);
  int64_t have[2] = {-1, -1};
  by_dtype(image.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* src = image.data_as<T>();
    auto blend_x = [&](int64_t y, float* row) {
      const T* in = src + ((w.y + y) * in_width + w.x) * channels;
      const int32_t* l = lo.data();
      const int32_t* h = hi.data();
      const float* f = fx.data();
      size_t i = 0;
      if constexpr (std::is_same_v<T, uint8_t>) {
        const size_t limit = static_cast<size_t>(src + image.num_elements() - in);
        if (channels == 3) i = blend_x_rgb8(in, limit, l, h, f, row, out_row);
        if (i == 0) i = blend_x_u8(in, l, h, f, row, out_row);
      }
      for (; i < out_row; ++i) {
        const float a = load(in[l[i]]), b = load(in[h[i]]);
        row[i] = a + (b - a) * f[i];
      }
    };
    auto blended = [&](int64_t y) -> const float* {
      for (int k = 0; k < 2; ++k)
        if (have[k] == y) return rows.data() + k * row_stride;
      // Replace the row that is not the other one needed now (the older one).
      const int k = have[0] == -1 || (have[1] != -1 && have[0] < have[1]) ? 0 : 1;
      have[k] = y;
      blend_x(y, rows.data() + k * row_stride);
      return rows.data() + k * row_stride;
    };
    for (int64_t y = 0; y < height; ++y, dst += out_row) {
      const float* top = blended(ys[y].lo);
      const float* bottom = blended(ys[y].hi);
      blend_y(top, bottom, ys[y].frac, normalized ? mean.data() : nullptr,
              normalized ? scale.data() : nullptr, dst, out_row);
    }
  });
  return out;
}

Tensor crop(const Tensor& image, const Window& w) {
  check_image(image);
  const size_t pixel = static_cast<size_t>(image.dim(2)) * dtype_size(image.dtype());
  Tensor out = Tensor::allocate(image.dtype(), Shape{w.height, w.width, image.dim(2)});
  const char* src = static_cast<const char*>(image.data());
  char* dst = static_cast<char*>(out.mutable_data());
  const size_t in_row = static_cast<size_t>(image.dim(1)) * pixel;
  const size_t out_row = static_cast<size_t>(w.width) * pixel;
  for (int64_t y = 0; y < w.height; ++y)
    std::memcpy(dst + y * out_row, src + (w.y + y) * in_row + w.x * pixel, out_row);
  return out;
}

namespace {

// Reverses the pixels of each row of `dst` (a copy of src's when src != dst, else in place);
// Pixel bytes per pixel (a compile-time size, so that moving one pixel is a move or two, not
// a call), or 0 for another size, given in `pixel`.
template <size_t Pixel>
void reverse_rows(const char* src, char* dst, int64_t height, int64_t width, size_t pixel) {
  const size_t n = Pixel ? Pixel : pixel;
  for (int64_t y = 0; y < height; ++y) {
    if (src != dst) {
      const char* s = src + y * width * n;
      char* d = dst + (y * width + width - 1) * n;
      for (int64_t x = 0; x < width; ++x, s += n, d -= n) std::memcpy(d, s, Pixel ? Pixel : n);
      continue;
    }
    char* l = dst + y * width * n;
    char* r = l + (width - 1) * n;
    for (; l < r; l += n, r -= n) {
      if constexpr (Pixel != 0) {
        char t[Pixel];
        std::memcpy(t, l, Pixel);
        std::memcpy(l, r, Pixel);
        std::memcpy(r, t, Pixel);
      } else {
        std::swap_ranges(l, l + n, r);
      }
    }
  }
}

}  // namespace

Tensor flip_left_right(Tensor image) {
  check_image(image);
  const size_t pixel = static_cast<size_t>(image.dim(2)) * dtype_size(image.dtype());
  // Nobody else holds the buffer (the pipeline moved the tensor in): reverse it in place.
  Tensor out =
      image.buffer().use_count() == 1 ? image : Tensor::allocate(image.dtype(), image.shape());
  const char* src = static_cast<const char*>(image.data());
  char* dst = static_cast<char*>(out.mutable_data());
  const int64_t h = image.dim(0), w = image.dim(1);
  switch (pixel) {
    case 1:
      reverse_rows<1>(src, dst, h, w, pixel);
      break;
    case 3:
      reverse_rows<3>(src, dst, h, w, pixel);
      break;
    case 4:
      reverse_rows<4>(src, dst, h, w, pixel);
      break;
    case 6:
      reverse_rows<6>(src, dst, h, w, pixel);
      break;
    case 12:
      reverse_rows<12>(src, dst, h, w, pixel);
      break;
    case 16:
      reverse_rows<16>(src, dst, h, w, pixel);
      break;
    default:
      reverse_rows<0>(src, dst, h, w, pixel);
  }
  return out;
}

Tensor cast(Tensor image, DType dtype) {
  check_image(image);
  check_float_dtype(dtype);
  if (image.dtype() == dtype) return image;  // tensors are immutable: sharing is a copy
  return normalize(std::move(image), {0.0f}, {1.0f}, dtype);
}

Tensor normalize(Tensor image, const std::vector<float>& mean, const std::vector<float>& stddev,
                 DType dtype) {
  check_image(image);
  check_float_dtype(dtype);
  const int64_t channels = image.dim(2);
  const NormalizeParams params = normalize_params(channels, mean, stddev);
  const std::vector<float>& m = params.mean;
  const std::vector<float>& scale = params.scale;
  // float32 to float32 in a buffer nobody else holds (the pipeline moved the tensor in):
  // in place, each value read before it is written.
  const bool in_place = dtype == DType::kFloat32 && image.dtype() == DType::kFloat32 &&
                        image.buffer().use_count() == 1;
  Tensor out = in_place ? image : Tensor::allocate(dtype, image.shape());
  const int64_t pixels = image.dim(0) * image.dim(1);
  // One row of floats at a time (converted to float16 when asked).
  const int64_t per_row = image.dim(1);
  std::vector<float> row(static_cast<size_t>(per_row * channels));
  by_dtype(image.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* src = image.data_as<T>();
    char* dst = static_cast<char*>(out.mutable_data());
    const size_t row_bytes = row.size() * dtype_size(dtype);
    for (int64_t p0 = 0; p0 < pixels; p0 += per_row) {
      float* r = dtype == DType::kFloat32 ? reinterpret_cast<float*>(dst) : row.data();
      for (int64_t p = 0; p < per_row; ++p, src += channels, r += channels)
        for (int64_t c = 0; c < channels; ++c) r[c] = (load(src[c]) - m[c]) * scale[c];
      if (dtype != DType::kFloat32) store(row.data(), row.size(), dtype, dst);
      dst += row_bytes;
    }
  });
  return out;
}

}  // namespace dinput::image
