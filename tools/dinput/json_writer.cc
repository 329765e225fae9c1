#include "json_writer.h"

#include "host_tensor.h"

#include <cstring>

#include "json_format.h"

namespace dinput_tool {

namespace {

template <typename T>
T load(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);  // the buffer need not be aligned for T
  return value;
}

class TensorWriter {
 public:
  TensorWriter(std::string* out, const dinput_tensor_t* tensor)
      : out_(out),
        tensor_(tensor),
        dtype_(dinput_tensor_dtype(tensor)),
        rank_(dinput_tensor_rank(tensor)),
        dims_(dinput_tensor_shape(tensor)),
        data_(static_cast<const unsigned char*>(dinput_tensor_data(tensor))),
        item_size_(dinput_dtype_size(dtype_)) {}

  void write() {
    if (rank_ < 0 || (rank_ > 0 && dims_ == nullptr)) {
      throw Failure(DINPUT_INTERNAL, "a tensor returned by the library has no shape");
    }
    if (dtype_ != DINPUT_BYTES && data_ == nullptr && dinput_tensor_num_elements(tensor_) > 0) {
      throw Failure(DINPUT_INTERNAL, "a tensor returned by the library has no host data");
    }
    int64_t index = 0;
    write_level(0, &index);
  }

 private:
  void write_level(int level, int64_t* index) {
    if (level == rank_) return write_scalar((*index)++);
    out_->push_back('[');
    for (int64_t i = 0; i < dims_[level]; ++i) {
      if (i) out_->push_back(',');
      write_level(level + 1, index);
    }
    out_->push_back(']');
  }

  void write_scalar(int64_t index) {
    const unsigned char* p = data_ + index * static_cast<int64_t>(item_size_);
    switch (dtype_) {
      case DINPUT_BOOL:
        out_->append(p[0] ? "true" : "false");
        break;
      case DINPUT_INT8:
        out_->append(std::to_string(load<int8_t>(p)));
        break;
      case DINPUT_INT16:
        out_->append(std::to_string(load<int16_t>(p)));
        break;
      case DINPUT_INT32:
        out_->append(std::to_string(load<int32_t>(p)));
        break;
      case DINPUT_INT64:
        out_->append(std::to_string(load<int64_t>(p)));
        break;
      case DINPUT_UINT8:
        out_->append(std::to_string(load<uint8_t>(p)));
        break;
      case DINPUT_UINT16:
        out_->append(std::to_string(load<uint16_t>(p)));
        break;
      case DINPUT_UINT32:
        out_->append(std::to_string(load<uint32_t>(p)));
        break;
      case DINPUT_UINT64:
        out_->append(std::to_string(load<uint64_t>(p)));
        break;
      case DINPUT_FLOAT16:
        append_float16(out_, load<uint16_t>(p));
        break;
      case DINPUT_BFLOAT16:
        append_bfloat16(out_, load<uint16_t>(p));
        break;
      case DINPUT_FLOAT32:
        append_float32(out_, load<float>(p));
        break;
      case DINPUT_FLOAT64:
        append_double(out_, load<double>(p));
        break;
      case DINPUT_BYTES: {
        const char* s = nullptr;
        size_t len = 0;
        check(dinput_tensor_string_view(&s, &len, tensor_, index), "dinput_tensor_string_view");
        append_json_string(out_, s, len);
        break;
      }
      default:
        throw Failure{DINPUT_INTERNAL,
                      std::string("cannot print a tensor of dtype ") + dinput_dtype_name(dtype_)};
    }
  }

  std::string* out_;
  const dinput_tensor_t* tensor_;
  dinput_dtype_t dtype_;
  int rank_;
  const int64_t* dims_;
  const unsigned char* data_;
  size_t item_size_;
};

}  // namespace

void append_tensor_values(std::string* out, const dinput_tensor_t* tensor) {
  if (tensor == nullptr) throw Failure(DINPUT_INTERNAL, "the library returned a null tensor");
  HostTensor host;
  host.open(tensor);
  TensorWriter(out, host.get()).write();
}

JsonObject::array_t shape(const int64_t* dims, int rank) {
  JsonObject::array_t shape;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == DINPUT_UNKNOWN_DIM) {
      shape.emplace_back(nullptr);
    } else {
      shape.emplace_back(dims[i]);
    }
  }
  return shape;
}

JsonObject::array_t spec_components(const dinput_spec_t* spec) {
  JsonObject::array_t components;
  const size_t n = dinput_spec_size(spec);
  for (size_t i = 0; i < n; ++i) {
    JsonObject component;
    component["dtype"] = dinput_dtype_name(dinput_spec_dtype(spec, i));
    int rank = dinput_spec_rank(spec, i);
    const int64_t* dims = dinput_spec_shape(spec, i);
    if (rank < 0 || (rank > 0 && dims == nullptr)) {
      component["shape"] = nullptr;  // an unknown rank
    } else {
      component["shape"] = shape(dims, rank);
    }
    components.push_back(std::move(component));
  }
  return components;
}

}  // namespace dinput_tool
