// Filling dinput_tensor_info_t arrays (api_tensor_info.cc), shared by the exported functions
// that read a whole element or step in one call.
#pragma once

#include <cstddef>

#include "dinput.h"

namespace dinput::capi {

// Fills infos[0 .. min(capacity, n)) with every component of every replica of `value`,
// replica by replica, and returns n; INVALID_ARGUMENT (naming the function running) when the
// replicas differ in their number of components.
size_t per_replica_tensor_infos(dinput_tensor_info_t* infos, size_t capacity,
                                const dinput_per_replica_t& value);

}  // namespace dinput::capi
