#include "tensor_literal.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace dinput_tool {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

// Leaf kinds seen in one component, to infer its dtype.
struct LeafKinds {
  bool has_int = false, has_float = false, has_string = false, has_bool = false;
};

class ComponentBuilder {
 public:
  explicit ComponentBuilder(const std::string& function) : function_(function) {}

  // The shape of `v`, checking that every leaf is a scalar literal.
  std::vector<int64_t> infer_shape(const Value& v) {
    switch (v.kind) {
      case Value::Kind::kInt:
        kinds_.has_int = true;
        return {};
      case Value::Kind::kFloat:
        kinds_.has_float = true;
        return {};
      case Value::Kind::kString:
        kinds_.has_string = true;
        return {};
      case Value::Kind::kBool:
        kinds_.has_bool = true;
        return {};
      case Value::Kind::kList:
      case Value::Kind::kTuple:  // inside a tensor a tuple is a sequence, as in numpy
        break;
      default:
        throw invalid_argument(function_ + "(): " + describe_kind(v.kind) + " at position " +
                               std::to_string(v.pos) + " cannot be part of a tensor");
    }
    std::vector<int64_t> shape = {static_cast<int64_t>(v.items.size())};
    if (v.items.empty()) return shape;
    const std::vector<int64_t> first = infer_shape(v.items[0]);
    for (size_t i = 1; i < v.items.size(); ++i) {
      const std::vector<int64_t> other = infer_shape(v.items[i]);
      if (other != first) {
        throw invalid_argument(
            function_ + "(): ragged nested list at position " + std::to_string(v.pos) +
            ": item 0 has shape " + shape_text(first) + " but item " + std::to_string(i) +
            " has shape " + shape_text(other) + "; all items of a list must have the same shape");
      }
    }
    shape.insert(shape.end(), first.begin(), first.end());
    return shape;
  }

  dinput_dtype_t infer_dtype(const Value& v) const {
    int families = kinds_.has_string + kinds_.has_bool + (kinds_.has_int || kinds_.has_float);
    if (families > 1) {
      throw invalid_argument(function_ + "(): the tensor at position " + std::to_string(v.pos) +
                             " mixes strings, bools and numbers; a tensor has one dtype");
    }
    if (kinds_.has_string) return DINPUT_BYTES;
    if (kinds_.has_bool) return DINPUT_BOOL;
    if (kinds_.has_int && !kinds_.has_float) return DINPUT_INT64;
    return DINPUT_FLOAT32;  // also for an empty list, as tf.constant([]) is float32
  }

  // Appends the leaves of `v` in row-major order.
  void flatten(const Value& v, std::vector<const Value*>* leaves) const {
    if (v.kind == Value::Kind::kList || v.kind == Value::Kind::kTuple) {
      for (const Value& item : v.items) flatten(item, leaves);
    } else {
      leaves->push_back(&v);
    }
  }

  TensorPtr build(const Value& v) {
    const std::vector<int64_t> shape = infer_shape(v);
    const dinput_dtype_t dtype = infer_dtype(v);
    std::vector<const Value*> leaves;
    flatten(v, &leaves);
    const int rank = static_cast<int>(shape.size());
    dinput_tensor_t* tensor = nullptr;
    dinput_status_t code;
    if (dtype == DINPUT_BYTES) {
      std::vector<const char*> strings;
      std::vector<size_t> lengths;
      for (const Value* leaf : leaves) {
        strings.push_back(leaf->text.data());
        lengths.push_back(leaf->text.size());
      }
      code = dinput_tensor_new_bytes(&tensor, shape.data(), rank, strings.data(), lengths.data());
    } else {
      const size_t item_size = dinput_dtype_size(dtype);
      std::vector<unsigned char> data(leaves.size() * item_size);
      unsigned char* p = data.data();
      for (const Value* leaf : leaves) {
        if (dtype == DINPUT_INT64) {
          std::memcpy(p, &leaf->int_value, sizeof(int64_t));
        } else if (dtype == DINPUT_FLOAT32) {
          float f = leaf->kind == Value::Kind::kInt ? static_cast<float>(leaf->int_value)
                                                    : static_cast<float>(leaf->float_value);
          std::memcpy(p, &f, sizeof f);
        } else {  // bool: one non-zero byte for True
          p[0] = leaf->bool_value ? 1 : 0;
        }
        p += item_size;
      }
      code = dinput_tensor_new(&tensor, dtype, shape.data(), rank, data.data(), data.size());
    }
    check(code, "dinput_tensor_new");
    return TensorPtr(tensor);
  }

 private:
  const std::string& function_;
  LeafKinds kinds_;
};

}  // namespace

ElementPtr element_from_literal(const Value& literal, const std::string& function) {
  std::vector<const Value*> parts;
  if (literal.kind == Value::Kind::kTuple) {
    for (const Value& item : literal.items) {
      if (item.kind == Value::Kind::kTuple) {
        throw invalid_argument(function + "(): nested tuple at position " +
                               std::to_string(item.pos) +
                               " is not supported; an element is a flat tuple of tensors");
      }
      parts.push_back(&item);
    }
  } else {
    parts.push_back(&literal);
  }
  std::vector<TensorPtr> tensors;
  for (const Value* part : parts) tensors.push_back(ComponentBuilder(function).build(*part));
  std::vector<const dinput_tensor_t*> raw;
  for (const TensorPtr& t : tensors) raw.push_back(t.get());
  dinput_element_t* element = nullptr;
  check(dinput_element_new(&element, raw.data(), raw.size()), "dinput_element_new");
  return ElementPtr(element);
}

}  // namespace dinput_tool
