// The image operations as dataset nodes: decode_jpeg, decode_png, resize, center_crop,
// random_crop, random_resized_crop, random_flip_left_right, cast and normalize. Each maps one
// component of every element (the others pass through) on the map machinery, so it runs on
// the map's thread pool with num_parallel_calls > 1 and saves its state as a map does.
//
// The random operations draw from (seed, epoch, position): the position of the element in
// this operation's input since the iterator began, and the epoch counted per iterator of the
// node, as a reshuffling shuffle counts them. Thread timing and num_parallel_calls never
// change a result, and a restored iterator continues with the same draws.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "data/datasets.h"

namespace dinput {

struct ImageOpOptions {
  int64_t component = 0;  // which component holds the image (or its encoded bytes)
  int64_t num_parallel_calls = 1;
  std::optional<bool> deterministic;
};

// A scalar bytes component becomes uint8 [height, width, channels]. JPEG channels: 0 (as
// stored), 1 or 3; PNG: 0, 1, 3 or 4.
DatasetPtr make_decode_jpeg(DatasetPtr input, int64_t channels, const ImageOpOptions& options);
DatasetPtr make_decode_png(DatasetPtr input, int64_t channels, const ImageOpOptions& options);
// Bilinear (image/pixels.h), float32 out.
DatasetPtr make_resize(DatasetPtr input, int64_t height, int64_t width,
                       const ImageOpOptions& options);
DatasetPtr make_center_crop(DatasetPtr input, int64_t height, int64_t width,
                            const ImageOpOptions& options);
// seed < 0: drawn at random.
DatasetPtr make_random_crop(DatasetPtr input, int64_t height, int64_t width, int64_t seed,
                            const ImageOpOptions& options);
// A region of random area (a fraction in [scale_min, scale_max] of the image) and aspect ratio
// (log-uniform in [ratio_min, ratio_max]) resized to height x width, float32 out; directly
// after decode_jpeg of the same component it decodes only that region.
DatasetPtr make_random_resized_crop(DatasetPtr input, int64_t height, int64_t width,
                                    double scale_min, double scale_max, double ratio_min,
                                    double ratio_max, int64_t seed, const ImageOpOptions& options);
DatasetPtr make_random_flip_left_right(DatasetPtr input, int64_t seed,
                                       const ImageOpOptions& options);
// To float32 or float16, values unchanged.
DatasetPtr make_image_cast(DatasetPtr input, DType dtype, const ImageOpOptions& options);
// (x - mean[c]) / stddev[c] to float32 or float16; one value per channel or one for all.
DatasetPtr make_normalize(DatasetPtr input, std::vector<float> mean, std::vector<float> stddev,
                          DType dtype, const ImageOpOptions& options);

}  // namespace dinput
