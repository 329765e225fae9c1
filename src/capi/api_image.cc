// The image operations (src/image/) and their option handle.
#include <vector>

#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/transform_options.h"
#include "image/image_ops.h"

using namespace dinput;

struct dinput_image_options : dinput::capi::FreezableOptions {
  int64_t component = 0;
  int64_t num_parallel_calls = 1;
  dinput_deterministic_t deterministic = DINPUT_DETERMINISTIC_UNSET;
};

namespace {

// Builds one image operation over `input` with the handle's settings, then freezes the handle.
template <typename Make>
dinput_status_t make_image_op(const char* fn, dinput_dataset_t** out, const dinput_dataset_t* input,
                              const dinput_image_options* options, Make&& make) {
  const dinput_image_options& o = capi::settings(options);
  return capi::freeze_if_ok(options, fn, capi::guard(fn, [&] {
                              if (!out)
                                raise(Code::kInvalidArgument, fn, ": argument 'out' is NULL");
                              *out = nullptr;
                              if (!input)
                                raise(Code::kInvalidArgument, fn, ": argument 'input' is NULL");
                              ImageOpOptions io;
                              io.component = o.component;
                              io.num_parallel_calls = o.num_parallel_calls;
                              io.deterministic = capi::to_optional(o.deterministic);
                              *out = capi::new_handle<dinput_dataset>(make(input->ds, io));
                            }));
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t dinput_image_options_new(dinput_image_options_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = std::make_unique<dinput_image_options>().release();  // the caller owns it until _free
  });
}

DINPUT_API void dinput_image_options_free(dinput_image_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_image_options_set_component(dinput_image_options_t* options,
                                                              int64_t component) {
  return capi::set_option(__func__, options, [&](dinput_image_options& o) {
    DINPUT_CHECK_ARG(component >= 0,
                     "dinput_image_options_set_component: component must be >= 0, got ", component);
    o.component = component;
  });
}

DINPUT_API int64_t dinput_image_options_component(const dinput_image_options_t* options) {
  return options ? options->component : 0;
}

DINPUT_API dinput_status_t dinput_image_options_set_num_parallel_calls(
    dinput_image_options_t* options, int64_t num_parallel_calls) {
  return capi::set_option(__func__, options, [&](dinput_image_options& o) {
    capi::check_parallel_calls("dinput_image_options_set_num_parallel_calls", num_parallel_calls);
    o.num_parallel_calls = num_parallel_calls;
  });
}

DINPUT_API int64_t dinput_image_options_num_parallel_calls(const dinput_image_options_t* options) {
  return options ? options->num_parallel_calls : 1;
}

DINPUT_API dinput_status_t dinput_image_options_set_deterministic(
    dinput_image_options_t* options, dinput_deterministic_t deterministic) {
  return capi::set_option(__func__, options, [&](dinput_image_options& o) {
    capi::check_deterministic("dinput_image_options_set_deterministic", deterministic);
    o.deterministic = deterministic;
  });
}

DINPUT_API dinput_deterministic_t
dinput_image_options_deterministic(const dinput_image_options_t* options) {
  return options ? options->deterministic : DINPUT_DETERMINISTIC_UNSET;
}

DINPUT_API dinput_status_t dinput_dataset_decode_jpeg(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input,
                                                      int64_t channels,
                                                      const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_decode_jpeg(std::move(in), channels, o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_decode_png(dinput_dataset_t** out,
                                                     const dinput_dataset_t* input,
                                                     int64_t channels,
                                                     const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_decode_png(std::move(in), channels, o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_resize(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, int64_t height,
                                                 int64_t width,
                                                 const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_resize(std::move(in), height, width, o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_center_crop(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input, int64_t height,
                                                      int64_t width,
                                                      const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_center_crop(std::move(in), height, width, o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_random_crop(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input, int64_t height,
                                                      int64_t width, int64_t seed,
                                                      const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_random_crop(std::move(in), height, width, seed, o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_random_resized_crop(
    dinput_dataset_t** out, const dinput_dataset_t* input, int64_t height, int64_t width,
    double scale_min, double scale_max, double ratio_min, double ratio_max, int64_t seed,
    const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_random_resized_crop(std::move(in), height, width, scale_min, scale_max, ratio_min,
                                    ratio_max, seed, o);
  });
}

DINPUT_API dinput_status_t
dinput_dataset_random_flip_left_right(dinput_dataset_t** out, const dinput_dataset_t* input,
                                      int64_t seed, const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_random_flip_left_right(std::move(in), seed, o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_cast_image(dinput_dataset_t** out,
                                                     const dinput_dataset_t* input,
                                                     dinput_dtype_t dtype,
                                                     const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    return make_image_cast(std::move(in), static_cast<DType>(dtype), o);
  });
}

DINPUT_API dinput_status_t dinput_dataset_normalize(dinput_dataset_t** out,
                                                    const dinput_dataset_t* input,
                                                    const float* mean, const float* stddev,
                                                    size_t count, dinput_dtype_t dtype,
                                                    const dinput_image_options_t* options) {
  return make_image_op(__func__, out, input, options, [&](DatasetPtr in, const ImageOpOptions& o) {
    DINPUT_CHECK_ARG(count >= 1 && count <= 4096,
                     "dinput_dataset_normalize: count must be 1..4096, got ", count);
    DINPUT_CHECK_ARG(mean && stddev, "dinput_dataset_normalize: argument '",
                     mean ? "stddev" : "mean", "' is NULL");
    return make_normalize(std::move(in), std::vector<float>(mean, mean + count),
                          std::vector<float>(stddev, stddev + count), static_cast<DType>(dtype), o);
  });
}

}  // extern "C"
