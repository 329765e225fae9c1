// parse_example, parse_single_example and parse_sequence_example: their feature specs are
// written as in Python, a dict of key -> FixedLenFeature(shape, dtype, default_value=None),
// VarLenFeature(dtype) or FixedLenSequenceFeature(shape, dtype, allow_missing=False,
// default_value=None); dtypes are int64, float32 or bytes (tf.int64, tf.float32, tf.string).
#include <string>
#include <vector>

#include "builder_functions.h"
#include "pipeline_builder.h"

namespace dinput_tool {
namespace builder {

namespace {

using FeatureSpecPtr = Handle<dinput_feature_spec_t, dinput_feature_spec_free>;

// `name` without a "tf.io." or "tf." prefix.
std::string bare(const std::string& name) {
  for (const char* prefix : {"tf.io.", "tf."}) {
    if (name.rfind(prefix, 0) == 0) return name.substr(std::string(prefix).size());
  }
  return name;
}

// The feature call's arguments, bound to its parameter names as Python would.
struct FeatureArgs {
  const Value* shape = nullptr;
  const Value* dtype = nullptr;
  const Value* allow_missing = nullptr;
  const Value* default_value = nullptr;
};

FeatureArgs bind_feature(const Args& args, const char* param, const std::string& key,
                         const Value& call, const std::vector<const char*>& names) {
  FeatureArgs out;
  auto slot = [&](const std::string& name) -> const Value** {
    if (name == "shape") return &out.shape;
    if (name == "dtype") return &out.dtype;
    if (name == "allow_missing") return &out.allow_missing;
    if (name == "default_value") return &out.default_value;
    return nullptr;
  };
  size_t positional = 0;
  for (const Argument& a : call.args) {
    std::string name = a.keyword;
    if (name.empty()) {
      if (positional >= names.size())
        throw args.error(param, "(feature '" + key + "') " + call.text + "() takes at most " +
                                    std::to_string(names.size()) + " arguments");
      name = names[positional++];
    }
    bool known = false;
    for (const char* n : names) known = known || name == n;
    const Value** s = slot(name);
    if (!known || s == nullptr)
      throw args.error(
          param, "(feature '" + key + "') " + call.text + "() has no argument '" + name + "'");
    if (*s != nullptr)
      throw args.error(param,
                       "(feature '" + key + "') " + call.text + "() got '" + name + "' twice");
    *s = &a.value;
  }
  if (out.dtype == nullptr || (out.shape == nullptr && names[0] == std::string("shape")))
    throw args.error(param,
                     "(feature '" + key + "') " + call.text + "() needs " +
                         (names[0] == std::string("shape") ? "a shape and a dtype" : "a dtype"));
  return out;
}

dinput_dtype_t feature_dtype(const Args& args, const char* param, const std::string& key,
                             const Value& v) {
  std::string name = v.kind == Value::Kind::kString ? v.text
                     : v.kind == Value::Kind::kName ? bare(v.text)
                                                    : "";
  if (name == "int64") return DINPUT_INT64;
  if (name == "float32" || name == "float") return DINPUT_FLOAT32;
  if (name == "bytes" || name == "string") return DINPUT_BYTES;
  throw args.error(param, "(feature '" + key + "') dtype must be int64, float32 or bytes, got " +
                              (name.empty() ? std::string(describe_kind(v.kind)) : name) +
                              " at position " + std::to_string(v.pos));
}

std::vector<int64_t> feature_shape(const Args& args, const char* param, const std::string& key,
                                   const Value& v) {
  if (v.kind == Value::Kind::kInt) return {v.int_value};
  std::vector<int64_t> dims;
  if (v.kind == Value::Kind::kList || v.kind == Value::Kind::kTuple) {
    for (const Value& d : v.items) {
      if (d.kind != Value::Kind::kInt) break;
      dims.push_back(d.int_value);
    }
    if (dims.size() == v.items.size()) return dims;
  }
  throw args.error(param, "(feature '" + key + "') the shape must be a list of integers, got " +
                              describe_kind(v.kind) + " at position " + std::to_string(v.pos));
}

// Flattens a scalar or (nested) list literal of numbers or strings.
void flatten(const Value& v, std::vector<const Value*>* out) {
  if (v.kind == Value::Kind::kList || v.kind == Value::Kind::kTuple) {
    for (const Value& item : v.items) flatten(item, out);
  } else {
    out->push_back(&v);
  }
}

// The default value literal as a tensor of `dtype` (a flat vector; the library checks its
// number of values against the shape).
TensorPtr default_tensor(const Args& args, const char* param, const std::string& key,
                         const Value* v, dinput_dtype_t dtype) {
  if (v == nullptr || v->kind == Value::Kind::kNone) return nullptr;
  std::vector<const Value*> items;
  flatten(*v, &items);
  const int64_t n = static_cast<int64_t>(items.size());
  dinput_tensor_t* raw = nullptr;
  auto bad = [&](const Value& item) {
    return args.error(param, "(feature '" + key + "') the default must hold " +
                                 dinput_dtype_name(dtype) + " values, got " +
                                 describe_kind(item.kind) + " at position " +
                                 std::to_string(item.pos));
  };
  if (dtype == DINPUT_BYTES) {
    std::vector<const char*> strings;
    std::vector<size_t> lengths;
    for (const Value* item : items) {
      if (item->kind != Value::Kind::kString) throw bad(*item);
      strings.push_back(item->text.data());
      lengths.push_back(item->text.size());
    }
    check(dinput_tensor_new_bytes(&raw, &n, 1, strings.data(), lengths.data()), param);
  } else if (dtype == DINPUT_INT64) {
    std::vector<int64_t> values;
    for (const Value* item : items) {
      if (item->kind != Value::Kind::kInt) throw bad(*item);
      values.push_back(item->int_value);
    }
    check(dinput_tensor_new(&raw, dtype, &n, 1, values.data(), values.size() * sizeof(int64_t)),
          param);
  } else {
    std::vector<float> values;
    for (const Value* item : items) {
      if (item->kind != Value::Kind::kInt && item->kind != Value::Kind::kFloat) throw bad(*item);
      values.push_back(item->kind == Value::Kind::kInt ? static_cast<float>(item->int_value)
                                                       : static_cast<float>(item->float_value));
    }
    check(dinput_tensor_new(&raw, dtype, &n, 1, values.data(), values.size() * sizeof(float)),
          param);
  }
  return TensorPtr(raw);
}

// The feature spec of argument `param` (a dict); null when it is absent or None and
// `optional`.
FeatureSpecPtr feature_spec(const Args& args, const char* param, bool optional) {
  const Value* v = args.get(param);
  if (v == nullptr || (optional && v->kind == Value::Kind::kNone)) return nullptr;
  if (v->kind != Value::Kind::kDict) throw args.type_error(param, "a dict of features", *v);
  dinput_feature_spec_t* raw = nullptr;
  check(dinput_feature_spec_new(&raw), "dinput_feature_spec_new");
  FeatureSpecPtr spec(raw);
  for (size_t i = 0; i + 1 < v->items.size(); i += 2) {
    const Value& key = v->items[i];
    const Value& feature = v->items[i + 1];
    if (key.kind != Value::Kind::kString) throw args.type_error(param, "string keys", key);
    if (key.text.find('\0') != std::string::npos)
      throw args.error(param, "a feature key contains a NUL byte");
    const std::string kind = feature.kind == Value::Kind::kCall ? bare(feature.text) : "";
    const std::string function = args.function();
    if (kind == "FixedLenFeature") {
      FeatureArgs a =
          bind_feature(args, param, key.text, feature, {"shape", "dtype", "default_value"});
      const dinput_dtype_t dtype = feature_dtype(args, param, key.text, *a.dtype);
      const std::vector<int64_t> shape = feature_shape(args, param, key.text, *a.shape);
      TensorPtr def = default_tensor(args, param, key.text, a.default_value, dtype);
      check(dinput_feature_spec_add_fixed_len(spec.get(), key.text.c_str(), dtype, shape.data(),
                                              static_cast<int>(shape.size()), def.get()),
            function.c_str());
    } else if (kind == "VarLenFeature") {
      FeatureArgs a = bind_feature(args, param, key.text, feature, {"dtype"});
      check(dinput_feature_spec_add_var_len(spec.get(), key.text.c_str(),
                                            feature_dtype(args, param, key.text, *a.dtype)),
            function.c_str());
    } else if (kind == "FixedLenSequenceFeature") {
      FeatureArgs a = bind_feature(args, param, key.text, feature,
                                   {"shape", "dtype", "allow_missing", "default_value"});
      const dinput_dtype_t dtype = feature_dtype(args, param, key.text, *a.dtype);
      const std::vector<int64_t> shape = feature_shape(args, param, key.text, *a.shape);
      bool allow_missing = false;
      if (a.allow_missing != nullptr) {
        if (a.allow_missing->kind != Value::Kind::kBool)
          throw args.type_error(param, "allow_missing=True or False", *a.allow_missing);
        allow_missing = a.allow_missing->bool_value;
      }
      TensorPtr def = default_tensor(args, param, key.text, a.default_value, dtype);
      check(dinput_feature_spec_add_fixed_len_sequence(spec.get(), key.text.c_str(), dtype,
                                                       shape.data(), static_cast<int>(shape.size()),
                                                       allow_missing ? 1 : 0, def.get()),
            function.c_str());
    } else {
      throw args.error(param, "(feature '" + key.text +
                                  "') must be FixedLenFeature(...), VarLenFeature(...) or "
                                  "FixedLenSequenceFeature(...), got " +
                                  describe_kind(feature.kind) + " at position " +
                                  std::to_string(feature.pos));
    }
  }
  return spec;
}

}  // namespace

DatasetPtr build_parse_example(const Args& args, const dinput_dataset_t* input) {
  FeatureSpecPtr features = feature_spec(args, "features", false);
  const int64_t component = int_at_least(args, "component", 0, 0);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_parse_example(&made, input, features.get(), component), &made,
               "parse_example");
}

DatasetPtr build_parse_single_example(const Args& args, const dinput_dataset_t* input) {
  FeatureSpecPtr features = feature_spec(args, "features", false);
  const int64_t component = int_at_least(args, "component", 0, 0);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_parse_single_example(&made, input, features.get(), component), &made,
               "parse_single_example");
}

DatasetPtr build_parse_sequence_example(const Args& args, const dinput_dataset_t* input) {
  FeatureSpecPtr context = feature_spec(args, "context_features", true);
  FeatureSpecPtr sequence = feature_spec(args, "sequence_features", true);
  const int64_t component = int_at_least(args, "component", 0, 0);
  dinput_dataset_t* made = nullptr;
  return adopt(
      dinput_dataset_parse_sequence_example(&made, input, context.get(), sequence.get(), component),
      &made, "parse_sequence_example");
}

}  // namespace builder
}  // namespace dinput_tool
