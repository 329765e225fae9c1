// Tensors, elements, specs and DLPack export.
#include <dlpack/dlpack.h>

#include <cstring>

#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/host_tensors.h"
#include "capi/tensor_access.h"
#include "device/gpu.h"

using namespace dinput;

namespace {

Shape checked_shape(const char* fn, const int64_t* shape, int rank) {
  if (rank < 0) raise(Code::kInvalidArgument, fn, ": rank must be >= 0, got ", rank);
  if (rank > 0 && !shape)
    raise(Code::kInvalidArgument, fn, ": argument 'shape' is NULL but rank is ", rank);
  for (int i = 0; i < rank; ++i)
    if (shape[i] < 0)
      raise(Code::kInvalidArgument, fn, ": dimension ", i, " is negative (", shape[i], ")");
  Shape s(shape, rank);
  if (s.checked_num_elements() < 0)
    raise(Code::kInvalidArgument, fn, ": shape ", s.to_string(),
          " has more elements than int64 can count");
  return s;
}

// dinput_tensor_new and dinput_tensor_new_pinned: checks the arguments, then copies `data`
// into host memory, or into pinned memory from the GPU layer's pool when `pinned`.
Tensor new_fixed_size_tensor(dinput_dtype_t dtype, const int64_t* shape, int rank, const void* data,
                             size_t nbytes, bool pinned) {
  const char* fn = capi::current_function();
  DType dt = static_cast<DType>(dtype);
  DINPUT_CHECK_ARG(dtype_valid(dt), fn, ": invalid dtype ", static_cast<int>(dtype));
  DINPUT_CHECK_ARG(dt != DType::kBytes, fn,
                   ": bytes tensors are made with dinput_tensor_new_bytes");
  Shape s = checked_shape(fn, shape, rank);
  // Compare sizes before allocating, so a wrong shape is a clear error and never a huge
  // allocation.
  size_t expected = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(s.checked_num_elements()), dtype_size(dt),
                             &expected))
    raise(Code::kInvalidArgument, fn, ": a ", dtype_name(dt), s.to_string(),
          " tensor is too large");
  if (data != nullptr) {
    DINPUT_CHECK_ARG(nbytes == expected, fn, ": a ", dtype_name(dt), s.to_string(),
                     " tensor needs ", expected, " bytes of data, got ", nbytes);
    if (dt == DType::kBool) {
      // Consumers compare bools with 0 and 1; any other byte would read as neither.
      const unsigned char* b = static_cast<const unsigned char*>(data);
      for (size_t i = 0; i < expected; ++i)
        DINPUT_CHECK_ARG(b[i] <= 1, fn, ": bool element ", i, " is ", static_cast<int>(b[i]),
                         "; bool values must be 0 or 1");
    }
  }
  if (!pinned) {
    if (data == nullptr) return Tensor::zeros(dt, s);
    Tensor t = Tensor::allocate(dt, s);
    if (expected) std::memcpy(t.mutable_data(), data, expected);
    return t;
  }
  Tensor t(dt, s, gpu::allocate_pinned(expected), 0);
  if (expected) {
    if (data)
      std::memcpy(t.mutable_data(), data, expected);
    else
      std::memset(t.mutable_data(), 0, expected);
  }
  return t;
}

// Strings read in order, as a consumer reads a batch of records, are read ahead: the bytes of
// the string kStringsAhead places on, and on the first call those of the strings before it.
// After a shuffle each record lies somewhere else in memory, and without this a pass over
// them waited one memory latency per record (docs/records.md, "Reading a batch of records").
constexpr int64_t kStringsAhead = 8;
// `n` is t.num_elements(), which the caller has (a product over the shape).
inline void prefetch_strings_ahead(const Tensor& t, int64_t index, int64_t n) {
  if (index == 0) {
    for (int64_t j = 1; j <= kStringsAhead && j < n; ++j) t.prefetch_string_bytes(j);
  } else if (index + kStringsAhead < n) {
    t.prefetch_string_bytes(index + kStringsAhead);
  }
}

// dinput_tensor_string_view with its arguments checked and any failure reported: out of line,
// so that the exported function's path for valid arguments sets nothing up for it.
[[gnu::noinline, gnu::cold]] dinput_status_t string_view_checked(const char** out, size_t* out_len,
                                                                 const dinput_tensor_t* tensor,
                                                                 int64_t index) {
  return capi::guard("dinput_tensor_string_view", [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(out_len);
    *out_len = 0;
    DINPUT_REQUIRE(tensor);
    const Tensor& t = tensor->t;
    DINPUT_CHECK_ARG(t.dtype() == DType::kBytes, "dinput_tensor_string_view: the tensor is ",
                     t.describe(), ", not bytes");
    if (index < 0 || index >= t.num_elements())
      raise(Code::kInvalidArgument, "dinput_tensor_string_view: index ", index,
            " is outside a tensor of ", t.num_elements(), " strings");
    std::string_view s = t.string(index);
    *out = s.data();
    *out_len = s.size();
  });
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t dinput_tensor_new(dinput_tensor_t** out, dinput_dtype_t dtype,
                                             const int64_t* shape, int rank, const void* data,
                                             size_t nbytes) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_tensor>(
        new_fixed_size_tensor(dtype, shape, rank, data, nbytes, false));
  });
}

DINPUT_API dinput_status_t dinput_tensor_new_pinned(dinput_tensor_t** out, dinput_dtype_t dtype,
                                                    const int64_t* shape, int rank,
                                                    const void* data, size_t nbytes) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_tensor>(
        new_fixed_size_tensor(dtype, shape, rank, data, nbytes, true));
  });
}

DINPUT_API dinput_status_t dinput_tensor_new_bytes(dinput_tensor_t** out, const int64_t* shape,
                                                   int rank, const char* const* strings,
                                                   const size_t* lengths) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    Shape s = checked_shape(capi::current_function(), shape, rank);
    int64_t n = s.num_elements();
    if (n > 0) DINPUT_REQUIRE(strings);
    Tensor t = Tensor::allocate(DType::kBytes, s);
    for (int64_t i = 0; i < n; ++i) {
      if (!strings[i])
        raise(Code::kInvalidArgument, capi::current_function(), ": strings[", i, "] is NULL");
      size_t len = lengths ? lengths[i] : std::strlen(strings[i]);
      t.set_string(i, std::string_view(strings[i], len));
    }
    *out = capi::new_handle<dinput_tensor>(std::move(t));
  });
}

DINPUT_API dinput_status_t dinput_tensor_ref(dinput_tensor_t** out, const dinput_tensor_t* tensor) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(tensor);
    *out = capi::new_handle<dinput_tensor>(tensor->t);
  });
}

DINPUT_API void dinput_tensor_free(dinput_tensor_t* tensor) { capi::free_handle(tensor); }

DINPUT_API dinput_dtype_t dinput_tensor_dtype(const dinput_tensor_t* t) {
  return t ? static_cast<dinput_dtype_t>(t->t.dtype()) : DINPUT_DTYPE_INVALID;
}
DINPUT_API int dinput_tensor_rank(const dinput_tensor_t* t) { return t ? t->t.rank() : -1; }
DINPUT_API const int64_t* dinput_tensor_shape(const dinput_tensor_t* t) {
  return t ? t->t.shape().data() : nullptr;
}
DINPUT_API int64_t dinput_tensor_dim(const dinput_tensor_t* t, int i) {
  return t && i >= 0 && i < t->t.rank() ? t->t.dim(i) : -1;
}
DINPUT_API int64_t dinput_tensor_num_elements(const dinput_tensor_t* t) {
  return t ? t->t.num_elements() : 0;
}
DINPUT_API size_t dinput_tensor_byte_size(const dinput_tensor_t* t) {
  return t ? t->t.byte_size() : 0;
}
DINPUT_API const void* dinput_tensor_data(const dinput_tensor_t* t) {
  return t ? capi::tensor_data(t->t) : nullptr;
}

DINPUT_API dinput_status_t dinput_tensor_copy_to(void* out, size_t out_bytes,
                                                 const dinput_tensor_t* tensor,
                                                 dinput_dtype_t expected) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(tensor);
    const Tensor& t = tensor->t;
    DINPUT_CHECK_ARG(static_cast<DType>(expected) == t.dtype(),
                     "dinput_tensor_copy_to: the tensor is ", t.describe(), ", not ",
                     dtype_name(static_cast<DType>(expected)));
    DINPUT_CHECK_ARG(
        t.dtype() != DType::kBytes,
        "dinput_tensor_copy_to: bytes tensors are read with dinput_tensor_string_view");
    size_t need = t.byte_size();
    DINPUT_CHECK_ARG(out_bytes >= need, "dinput_tensor_copy_to: the tensor ", t.describe(), " has ",
                     need, " bytes but the destination 'out' holds ", out_bytes);
    if (need) {
      DINPUT_REQUIRE(out);
      // The same tensor when it is in host memory.
      Tensor host = capi::host_tensor(t, capi::current_function(), "argument 'tensor'");
      std::memcpy(out, host.data(), need);
    }
  });
}

DINPUT_API dinput_status_t dinput_tensor_string_view(const char** out, size_t* out_len,
                                                     const dinput_tensor_t* tensor, int64_t index) {
  // Valid arguments, as in every call of a consumer that reads records one by one, skip the
  // guard: its bookkeeping (a thread-local slot, looked up twice) made a call cost about 150
  // instructions, a twentieth of a W1 epoch's. The checks are those of string_view_checked,
  // which reports whichever fails; reading the string cannot throw.
  if (out && out_len && tensor && tensor->t.dtype() == DType::kBytes && index >= 0) {
    const Tensor& t = tensor->t;
    const int64_t n = t.num_elements();
    if (index < n) {
      const std::string_view s = t.string(index);
      *out = s.data();
      *out_len = s.size();
      prefetch_strings_ahead(t, index, n);
      return DINPUT_OK;
    }
  }
  return string_view_checked(out, out_len, tensor, index);
}

DINPUT_API dinput_status_t dinput_tensor_to_dlpack(struct DLManagedTensor** out,
                                                   const dinput_tensor_t* tensor) {
  struct Context {
    Tensor tensor;  // keeps the buffer alive until the consumer's deleter runs
    std::vector<int64_t> shape;
    DLManagedTensor managed;
  };
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(tensor);
    const Tensor& t = tensor->t;
    DLDataType dl{};
    dl.lanes = 1;
    dl.bits = static_cast<uint8_t>(dtype_size(t.dtype()) * 8);
    switch (t.dtype()) {
      case DType::kBool:
        dl.code = kDLUInt;
        break;
      case DType::kInt8:
      case DType::kInt16:
      case DType::kInt32:
      case DType::kInt64:
        dl.code = kDLInt;
        break;
      case DType::kUInt8:
      case DType::kUInt16:
      case DType::kUInt32:
      case DType::kUInt64:
        dl.code = kDLUInt;
        break;
      case DType::kFloat16:
      case DType::kFloat32:
      case DType::kFloat64:
        dl.code = kDLFloat;
        break;
      case DType::kBFloat16:
        dl.code = kDLBfloat;
        break;
      default:
        raise(Code::kInvalidArgument, "dinput_tensor_to_dlpack: ", t.describe(),
              " cannot be exported: DLPack has no type for variable-length byte strings");
    }
    auto ctx = std::make_unique<Context>();
    ctx->tensor = t;
    ctx->shape.assign(t.shape().data(), t.shape().data() + t.rank());
    DLTensor& d = ctx->managed.dl_tensor;
    d.data = const_cast<void*>(t.data());
    switch (t.buffer()->kind()) {
      case MemoryKind::kDevice:
        d.device = DLDevice{kDLCUDA, t.buffer()->device()};
        break;
      case MemoryKind::kPinnedHost:
        d.device = DLDevice{kDLCUDAHost, 0};
        break;
      default:
        d.device = DLDevice{kDLCPU, 0};
        break;
    }
    d.ndim = t.rank();
    d.dtype = dl;
    d.shape = ctx->shape.empty() ? nullptr : ctx->shape.data();
    d.strides = nullptr;  // compact row-major
    d.byte_offset = 0;
    ctx->managed.manager_ctx = ctx.get();
    ctx->managed.deleter = [](DLManagedTensor* self) {
      if (self) std::unique_ptr<Context> owned(static_cast<Context*>(self->manager_ctx));
    };
    *out = &ctx.release()->managed;
  });
}

// ---- elements ----

DINPUT_API dinput_status_t dinput_element_new(dinput_element_t** out,
                                              const dinput_tensor_t* const* tensors, size_t count) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    if (count > 0) DINPUT_REQUIRE(tensors);
    dinput_element e;
    e.parts.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (!tensors[i])
        raise(Code::kInvalidArgument, "dinput_element_new: tensors[", i, "] is NULL");
      e.parts.push_back(tensors[i]->t);
    }
    *out = capi::new_handle<dinput_element>(std::move(e));
  });
}

DINPUT_API void dinput_element_free(dinput_element_t* element) { capi::free_handle(element); }

DINPUT_API dinput_status_t dinput_element_ref(dinput_element_t** out,
                                              const dinput_element_t* element) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(element);
    *out = capi::new_handle<dinput_element>(*element);
  });
}

DINPUT_API size_t dinput_element_size(const dinput_element_t* e) { return e ? e->parts.size() : 0; }

DINPUT_API const dinput_tensor_t* dinput_element_get(const dinput_element_t* e, size_t i) {
  return e && i < e->parts.size() ? capi::as_handle(e->parts[i]) : nullptr;
}

// ---- specs ----

DINPUT_API dinput_status_t dinput_spec_new(dinput_spec_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_spec>();
  });
}

DINPUT_API dinput_status_t dinput_spec_add(dinput_spec_t* spec, dinput_dtype_t dtype,
                                           const int64_t* shape, int rank) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(spec);
    spec->frozen.check_mutable("spec");
    DType dt = static_cast<DType>(dtype);
    DINPUT_CHECK_ARG(dtype_valid(dt), "dinput_spec_add: invalid dtype ", static_cast<int>(dtype));
    DINPUT_CHECK_ARG(rank >= 0, "dinput_spec_add: rank must be >= 0, got ", rank);
    if (rank > 0) DINPUT_REQUIRE(shape);
    for (int i = 0; i < rank; ++i)
      DINPUT_CHECK_ARG(shape[i] >= 0 || shape[i] == DINPUT_UNKNOWN_DIM,
                       "dinput_spec_add: dimension ", i, " is ", shape[i],
                       "; use a size >= 0 or DINPUT_UNKNOWN_DIM");
    spec->spec.push_back({dt, Shape(shape, rank)});
  });
}

DINPUT_API void dinput_spec_free(dinput_spec_t* spec) { capi::free_handle(spec); }
DINPUT_API size_t dinput_spec_size(const dinput_spec_t* s) { return s ? s->spec.size() : 0; }
DINPUT_API dinput_dtype_t dinput_spec_dtype(const dinput_spec_t* s, size_t i) {
  return s && i < s->spec.size() ? static_cast<dinput_dtype_t>(s->spec[i].dtype)
                                 : DINPUT_DTYPE_INVALID;
}
DINPUT_API int dinput_spec_rank(const dinput_spec_t* s, size_t i) {
  return s && i < s->spec.size() ? s->spec[i].shape.rank() : -1;
}
DINPUT_API const int64_t* dinput_spec_shape(const dinput_spec_t* s, size_t i) {
  return s && i < s->spec.size() ? s->spec[i].shape.data() : nullptr;
}

}  // extern "C"
