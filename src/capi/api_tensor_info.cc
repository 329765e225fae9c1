// dinput_tensor_info_t: every accessor of a tensor in one struct, gathered for a whole element
// or a whole step per call, for bindings whose foreign calls cost more than the accessors.
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/tensor_access.h"
#include "capi/tensor_info.h"

using namespace dinput;

namespace {

// The accessors' values, read here rather than through the exported functions (see
// capi/tensor_access.h).
dinput_tensor_info_t info_of(const Tensor& tensor) {
  dinput_tensor_info_t info;
  info.tensor = capi::as_handle(tensor);
  info.data = capi::tensor_data(tensor);
  info.shape = tensor.shape().data();
  info.byte_size = tensor.byte_size();
  info.rank = tensor.rank();
  info.dtype = static_cast<dinput_dtype_t>(tensor.dtype());
  info.device_type = capi::tensor_device_type(tensor);
  info.device_index = capi::tensor_device_index(tensor);
  return info;
}

// Writes the components of `element` at infos[first ..), as far as capacity allows.
void fill(dinput_tensor_info_t* infos, size_t capacity, size_t first, const Element& element) {
  for (size_t i = 0; i < element.size() && first + i < capacity; ++i)
    infos[first + i] = info_of(element[i]);
}

}  // namespace

size_t capi::per_replica_tensor_infos(dinput_tensor_info_t* infos, size_t capacity,
                                      const dinput_per_replica_t& value) {
  const auto& replicas = value.replicas;
  const size_t components = replicas.empty() ? 0 : replicas[0].size();
  for (size_t r = 1; r < replicas.size(); ++r)
    if (replicas[r].size() != components)
      raise(Code::kInvalidArgument, capi::current_function(), ": replica ", r, " has ",
            replicas[r].size(), " components where replica 0 has ", components);
  for (size_t r = 0; r < replicas.size(); ++r) fill(infos, capacity, r * components, replicas[r]);
  return replicas.size() * components;
}

extern "C" {

DINPUT_API dinput_status_t dinput_element_tensor_infos(size_t* count, dinput_tensor_info_t* infos,
                                                       size_t capacity,
                                                       const dinput_element_t* element) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(count);
    *count = 0;
    DINPUT_REQUIRE(element);
    if (capacity > 0) DINPUT_REQUIRE(infos);
    fill(infos, capacity, 0, element->parts);
    *count = element->parts.size();
  });
}

DINPUT_API dinput_status_t dinput_per_replica_tensor_infos(size_t* count,
                                                           dinput_tensor_info_t* infos,
                                                           size_t capacity,
                                                           const dinput_per_replica_t* value) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(count);
    *count = 0;
    DINPUT_REQUIRE(value);
    if (capacity > 0) DINPUT_REQUIRE(infos);
    *count = capi::per_replica_tensor_infos(infos, capacity, *value);
  });
}

}  // extern "C"
