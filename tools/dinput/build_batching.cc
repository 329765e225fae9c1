// padded_batch, bucket_by_sequence_length and window: the batching transformations whose rows
// may differ in shape (padded) or overlap (windows).
#include <cstring>
#include <string>
#include <vector>

#include "builder_functions.h"

namespace dinput_tool {
namespace builder {

namespace {

using PaddedBatchOptionsPtr =
    Handle<dinput_padded_batch_options_t, dinput_padded_batch_options_free>;

// One shape: an integer n (the vector shape [n]), or a list of integers and None (unknown).
bool parse_shape(const Value& v, std::vector<int64_t>* dims) {
  dims->clear();
  if (v.kind == Value::Kind::kInt) {
    dims->push_back(v.int_value);
    return true;
  }
  if (v.kind != Value::Kind::kList && v.kind != Value::Kind::kTuple) return false;
  for (const Value& item : v.items) {
    if (item.kind == Value::Kind::kInt)
      dims->push_back(item.int_value);
    else if (item.kind == Value::Kind::kNone)
      dims->push_back(DINPUT_UNKNOWN_DIM);
    else
      return false;
  }
  return true;
}

// padded_shapes: one shape for an element of one component, else a list or tuple of one
// shape per component (as tf.data's nested structure of shapes).
SpecPtr parse_padded_shapes(const Args& args, const dinput_spec_t* input) {
  const Value* v = args.get("padded_shapes");
  if (v == nullptr || v->kind == Value::Kind::kNone) return nullptr;
  const size_t n = dinput_spec_size(input);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> dims;
  if (n == 1 && parse_shape(*v, &dims)) {
    shapes.push_back(dims);
  } else if ((v->kind == Value::Kind::kList || v->kind == Value::Kind::kTuple) &&
             v->items.size() == n) {
    for (const Value& item : v->items) {
      if (!parse_shape(item, &dims))
        throw args.type_error("padded_shapes", "a shape (a list of integers and None)", item);
      shapes.push_back(dims);
    }
  } else {
    throw args.error("padded_shapes",
                     "must be a shape per component of the input (" + std::to_string(n) +
                         "), e.g. [None] or ([4], [None]); got " + describe_kind(v->kind) +
                         " at position " + std::to_string(v->pos));
  }
  dinput_spec_t* raw = nullptr;
  check(dinput_spec_new(&raw), "dinput_spec_new");
  SpecPtr spec(raw);
  for (size_t c = 0; c < n; ++c) {
    // Unknown dimensions are -1 here, and the dtype is the component's (it is not used).
    check(dinput_spec_add(spec.get(), dinput_spec_dtype(input, c), shapes[c].data(),
                          static_cast<int>(shapes[c].size())),
          args.function().c_str());
  }
  return spec;
}

// A scalar of `dtype` holding the literal `v`.
TensorPtr scalar_of(const Args& args, const Value& v, dinput_dtype_t dtype) {
  dinput_tensor_t* raw = nullptr;
  const char* fn = args.function().c_str();
  if (dtype == DINPUT_BYTES) {
    if (v.kind != Value::Kind::kString) throw args.type_error("padding_values", "a string", v);
    const char* data = v.text.data();
    const size_t size = v.text.size();
    check(dinput_tensor_new_bytes(&raw, nullptr, 0, &data, &size), fn);
    return TensorPtr(raw);
  }
  const bool is_float = dtype == DINPUT_FLOAT32 || dtype == DINPUT_FLOAT64;
  if (v.kind != Value::Kind::kInt && v.kind != Value::Kind::kBool &&
      !(is_float && v.kind == Value::Kind::kFloat))
    throw args.type_error(
        "padding_values",
        std::string("a number for the ") + dinput_dtype_name(dtype) + " component", v);
  const double d = v.kind == Value::Kind::kFloat  ? v.float_value
                   : v.kind == Value::Kind::kBool ? (v.bool_value ? 1.0 : 0.0)
                                                  : static_cast<double>(v.int_value);
  const int64_t i = v.kind == Value::Kind::kBool ? (v.bool_value ? 1 : 0) : v.int_value;
  unsigned char buf[8] = {0};
  auto put = [&](auto value) { std::memcpy(buf, &value, sizeof value); };
  switch (dtype) {
    case DINPUT_BOOL:
      put(static_cast<uint8_t>(i != 0));
      break;
    case DINPUT_INT8:
      put(static_cast<int8_t>(i));
      break;
    case DINPUT_INT16:
      put(static_cast<int16_t>(i));
      break;
    case DINPUT_INT32:
      put(static_cast<int32_t>(i));
      break;
    case DINPUT_INT64:
      put(i);
      break;
    case DINPUT_UINT8:
      put(static_cast<uint8_t>(i));
      break;
    case DINPUT_UINT16:
      put(static_cast<uint16_t>(i));
      break;
    case DINPUT_UINT32:
      put(static_cast<uint32_t>(i));
      break;
    case DINPUT_UINT64:
      put(static_cast<uint64_t>(i));
      break;
    case DINPUT_FLOAT32:
      put(static_cast<float>(d));
      break;
    case DINPUT_FLOAT64:
      put(d);
      break;
    default:
      throw args.error("padding_values", std::string("cannot be given for a ") +
                                             dinput_dtype_name(dtype) +
                                             " component in the chain syntax");
  }
  check(dinput_tensor_new(&raw, dtype, nullptr, 0, buf, dinput_dtype_size(dtype)), fn);
  return TensorPtr(raw);
}

// padding_values: one value for every component, or a list or tuple of one per component.
ElementPtr parse_padding_values(const Args& args, const dinput_spec_t* input) {
  const Value* v = args.get("padding_values");
  if (v == nullptr || v->kind == Value::Kind::kNone) return nullptr;
  const size_t n = dinput_spec_size(input);
  std::vector<const Value*> values;
  if (v->kind == Value::Kind::kList || v->kind == Value::Kind::kTuple) {
    if (v->items.size() != n)
      throw args.error("padding_values", "has " + std::to_string(v->items.size()) +
                                             " values but the input's elements have " +
                                             std::to_string(n) + " components");
    for (const Value& item : v->items) values.push_back(&item);
  } else {
    values.assign(n, v);
  }
  std::vector<TensorPtr> tensors;
  std::vector<const dinput_tensor_t*> raw;
  for (size_t c = 0; c < n; ++c) {
    tensors.push_back(scalar_of(args, *values[c], dinput_spec_dtype(input, c)));
    raw.push_back(tensors.back().get());
  }
  dinput_element_t* e = nullptr;
  check(dinput_element_new(&e, raw.data(), raw.size()), "dinput_element_new");
  return ElementPtr(e);
}

PaddedBatchOptionsPtr padded_options(const Args& args, const dinput_dataset_t* input) {
  dinput_spec_t* raw_spec = nullptr;
  check(dinput_dataset_element_spec(&raw_spec, input), "dinput_dataset_element_spec");
  SpecPtr spec(raw_spec);
  dinput_padded_batch_options_t* raw = nullptr;
  check(dinput_padded_batch_options_new(&raw), "dinput_padded_batch_options_new");
  PaddedBatchOptionsPtr options(raw);
  const char* fn = args.function().c_str();
  check(dinput_padded_batch_options_set_drop_remainder(
            options.get(), args.get_bool("drop_remainder", false) ? 1 : 0),
        fn);
  SpecPtr shapes = parse_padded_shapes(args, spec.get());
  if (shapes) check(dinput_padded_batch_options_set_padded_shapes(options.get(), shapes.get()), fn);
  ElementPtr values = parse_padding_values(args, spec.get());
  if (values)
    check(dinput_padded_batch_options_set_padding_values(options.get(), values.get()), fn);
  return options;
}

}  // namespace

DatasetPtr build_padded_batch(const Args& args, const dinput_dataset_t* input) {
  const int64_t batch_size = args.get_int("batch_size");
  PaddedBatchOptionsPtr options = padded_options(args, input);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_padded_batch(&made, input, batch_size, options.get()), &made,
               "padded_batch");
}

DatasetPtr build_bucket_by_sequence_length(const Args& args, const dinput_dataset_t* input) {
  const int64_t component = int_at_least(args, "length_component", 0, 0);
  const std::vector<int64_t> boundaries = args.get_ints("bucket_boundaries");
  const std::vector<int64_t> sizes = args.get_ints("bucket_batch_sizes");
  const bool to_boundary = args.get_bool("pad_to_bucket_boundary", false);
  PaddedBatchOptionsPtr options = padded_options(args, input);
  dinput_dataset_t* made = nullptr;
  return adopt(
      dinput_dataset_bucket_by_sequence_length(&made, input, static_cast<size_t>(component),
                                               boundaries.data(), boundaries.size(), sizes.data(),
                                               sizes.size(), to_boundary ? 1 : 0, options.get()),
      &made, "bucket_by_sequence_length");
}

DatasetPtr build_window(const Args& args, const dinput_dataset_t* input) {
  const int64_t size = args.get_int("size");
  // None, as in tf.data, moves each window by its size.
  const int64_t shift = args.get_int("shift", {}, true, size);
  const int64_t stride = args.get_int("stride", {}, true, 1);
  const bool drop_remainder = args.get_bool("drop_remainder", false);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_window(&made, input, size, shift, stride, drop_remainder ? 1 : 0),
               &made, "window");
}

}  // namespace builder
}  // namespace dinput_tool
