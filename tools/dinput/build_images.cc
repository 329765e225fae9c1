// The image operations of the chain syntax: decode_jpeg, decode_png, resize, center_crop,
// random_crop, random_resized_crop, random_flip_left_right, cast and normalize. Each takes
// the image options component, num_parallel_calls and deterministic as keywords.
#include <vector>

#include "builder_functions.h"

namespace dinput_tool {
namespace builder {

namespace {

using ImageOptionsPtr = Handle<dinput_image_options_t, dinput_image_options_free>;

ImageOptionsPtr image_options(const Args& args, const char* what) {
  dinput_image_options_t* raw = nullptr;
  check(dinput_image_options_new(&raw), "dinput_image_options_new");
  ImageOptionsPtr options(raw);
  const int64_t component = args.get_int("component", {}, true, 0);
  check(dinput_image_options_set_component(options.get(), component), what);
  const int64_t parallel = args.get_int("num_parallel_calls", {kAutotune}, true, 1);
  check(dinput_image_options_set_num_parallel_calls(options.get(), parallel), what);
  const Value* deterministic = args.get("deterministic");
  if (deterministic != nullptr && deterministic->kind != Value::Kind::kNone) {
    const bool d = args.get_bool("deterministic", true, true);
    check(dinput_image_options_set_deterministic(
              options.get(), d ? DINPUT_DETERMINISTIC_TRUE : DINPUT_DETERMINISTIC_FALSE),
          what);
  }
  return options;
}

// [height, width] (or one integer for a square).
std::pair<int64_t, int64_t> size_of(const Args& args) {
  const std::vector<int64_t> size = args.get_ints("size");
  if (size.size() == 1) return {size[0], size[0]};
  if (size.size() != 2) throw args.error("size", "must be [height, width] or one integer");
  return {size[0], size[1]};
}

// A number (integer or float).
double number(const Value& v, const Args& args, const char* name) {
  if (v.kind == Value::Kind::kInt) return static_cast<double>(v.int_value);
  if (v.kind == Value::Kind::kFloat) return v.float_value;
  throw args.type_error(name, "a number or a list of numbers", v);
}

std::vector<double> numbers(const Args& args, const char* name) {
  const Value* v = args.get(name);
  if (v->kind != Value::Kind::kList && v->kind != Value::Kind::kTuple)
    return {number(*v, args, name)};
  std::vector<double> out;
  for (const Value& item : v->items) out.push_back(number(item, args, name));
  return out;
}

std::pair<double, double> range_of(const Args& args, const char* name, double lo, double hi) {
  if (args.get(name) == nullptr || args.get(name)->kind == Value::Kind::kNone) return {lo, hi};
  const std::vector<double> v = numbers(args, name);
  if (v.size() != 2) throw args.error(name, "must be [min, max]");
  return {v[0], v[1]};
}

dinput_dtype_t float_dtype(const Args& args) {
  const Value* v = args.get("dtype");
  if (v == nullptr || v->kind == Value::Kind::kNone) return DINPUT_FLOAT32;
  if (v->kind != Value::Kind::kName && v->kind != Value::Kind::kString)
    throw args.type_error("dtype", "float32 or float16", *v);
  if (v->text == "float32") return DINPUT_FLOAT32;
  if (v->text == "float16") return DINPUT_FLOAT16;
  throw args.error("dtype", "must be float32 or float16, got '" + v->text + "'");
}

DatasetPtr made(dinput_status_t code, dinput_dataset_t* const* out, const char* what) {
  return adopt(code, out, what);
}

}  // namespace

DatasetPtr build_decode_jpeg(const Args& args, const dinput_dataset_t* input) {
  ImageOptionsPtr o = image_options(args, "decode_jpeg");
  dinput_dataset_t* out = nullptr;
  return made(
      dinput_dataset_decode_jpeg(&out, input, args.get_int("channels", {}, true, 0), o.get()), &out,
      "decode_jpeg");
}

DatasetPtr build_decode_png(const Args& args, const dinput_dataset_t* input) {
  ImageOptionsPtr o = image_options(args, "decode_png");
  dinput_dataset_t* out = nullptr;
  return made(
      dinput_dataset_decode_png(&out, input, args.get_int("channels", {}, true, 0), o.get()), &out,
      "decode_png");
}

DatasetPtr build_resize(const Args& args, const dinput_dataset_t* input) {
  const auto size = size_of(args);
  ImageOptionsPtr o = image_options(args, "resize");
  dinput_dataset_t* out = nullptr;
  return made(dinput_dataset_resize(&out, input, size.first, size.second, o.get()), &out, "resize");
}

DatasetPtr build_center_crop(const Args& args, const dinput_dataset_t* input) {
  const auto size = size_of(args);
  ImageOptionsPtr o = image_options(args, "center_crop");
  dinput_dataset_t* out = nullptr;
  return made(dinput_dataset_center_crop(&out, input, size.first, size.second, o.get()), &out,
              "center_crop");
}

DatasetPtr build_random_crop(const Args& args, const dinput_dataset_t* input) {
  const auto size = size_of(args);
  const int64_t seed = args.get_int("seed", {}, true, -1);
  ImageOptionsPtr o = image_options(args, "random_crop");
  dinput_dataset_t* out = nullptr;
  return made(dinput_dataset_random_crop(&out, input, size.first, size.second, seed, o.get()), &out,
              "random_crop");
}

DatasetPtr build_random_resized_crop(const Args& args, const dinput_dataset_t* input) {
  const auto size = size_of(args);
  const auto scale = range_of(args, "scale", 0.08, 1.0);
  const auto ratio = range_of(args, "ratio", 3.0 / 4.0, 4.0 / 3.0);
  const int64_t seed = args.get_int("seed", {}, true, -1);
  ImageOptionsPtr o = image_options(args, "random_resized_crop");
  dinput_dataset_t* out = nullptr;
  return made(
      dinput_dataset_random_resized_crop(&out, input, size.first, size.second, scale.first,
                                         scale.second, ratio.first, ratio.second, seed, o.get()),
      &out, "random_resized_crop");
}

DatasetPtr build_random_flip_left_right(const Args& args, const dinput_dataset_t* input) {
  const int64_t seed = args.get_int("seed", {}, true, -1);
  ImageOptionsPtr o = image_options(args, "random_flip_left_right");
  dinput_dataset_t* out = nullptr;
  return made(dinput_dataset_random_flip_left_right(&out, input, seed, o.get()), &out,
              "random_flip_left_right");
}

DatasetPtr build_cast(const Args& args, const dinput_dataset_t* input) {
  const dinput_dtype_t dtype = float_dtype(args);
  ImageOptionsPtr o = image_options(args, "cast");
  dinput_dataset_t* out = nullptr;
  return made(dinput_dataset_cast_image(&out, input, dtype, o.get()), &out, "cast");
}

DatasetPtr build_normalize(const Args& args, const dinput_dataset_t* input) {
  const std::vector<double> mean = numbers(args, "mean"), stddev = numbers(args, "stddev");
  const std::vector<float> m(mean.begin(), mean.end()), s(stddev.begin(), stddev.end());
  if (m.size() != s.size())
    throw args.error("stddev", "must have as many values as mean (" + std::to_string(m.size()) +
                                   "), got " + std::to_string(s.size()));
  const dinput_dtype_t dtype = float_dtype(args);
  ImageOptionsPtr o = image_options(args, "normalize");
  dinput_dataset_t* out = nullptr;
  return made(dinput_dataset_normalize(&out, input, m.data(), s.data(), m.size(), dtype, o.get()),
              &out, "normalize");
}

}  // namespace builder
}  // namespace dinput_tool
