// Adapters that turn the C callbacks of dinput.h into the core's C++ function types. They
// own the user_data (released through free_user_data when the last user is gone) and turn a
// failing callback's status and message into a dinput::Error.
#pragma once

#include <memory>

#include "capi/firewall.h"
#include "capi/handles.h"
#include "data/datasets.h"

namespace dinput::capi {

// Owns user_data; calls free_user_data exactly once, when the last holder goes.
class UserData {
 public:
  UserData(void* data, dinput_free_fn free_fn) : data_(data), free_(free_fn) {}
  ~UserData() {
    if (!free_) return;
    CallbackScope scope;  // a callback too: it must not change the caller's last error
    free_(data_);
  }
  UserData(const UserData&) = delete;
  UserData& operator=(const UserData&) = delete;
  void* get() const { return data_; }

 private:
  void* data_;
  dinput_free_fn free_;
};

// Called inside a CallbackScope after a callback returned `status`: when it failed, raises
// its status with the message it set (or a generic one naming `what`). OUT_OF_RANGE is
// raised as INVALID_ARGUMENT naming `what`, since it would read as end of data; the one
// callback whose contract gives OUT_OF_RANGE that meaning (a generator's next) checks for it
// first.
void check_callback(dinput_status_t status, const char* what);

// Takes ownership of an element handle a callback returned.
Element take_element(dinput_element_t* handle, const char* what);
// take_element for results that enter a host pipeline (a map function's, a generator's):
// CUDA tensors in them are copied to host memory (see host_tensors.h).
Element take_host_element(dinput_element_t* handle, const char* what);

std::shared_ptr<const GeneratorSource> make_c_generator(dinput_generator_init_fn init,
                                                        dinput_generator_next_fn next,
                                                        dinput_generator_finalize_fn finalize,
                                                        dinput_generator_save_fn save,
                                                        dinput_generator_restore_fn restore,
                                                        std::shared_ptr<UserData> user_data);
std::shared_ptr<const MapFn> make_c_map(dinput_map_fn fn, std::shared_ptr<UserData> user_data);
std::shared_ptr<const MapManyFn> make_c_map_many(dinput_map_many_fn fn,
                                                 std::shared_ptr<UserData> user_data);
std::shared_ptr<const PredicateFn> make_c_filter(dinput_filter_fn fn,
                                                 std::shared_ptr<UserData> user_data);
std::shared_ptr<const InterleaveFn> make_c_interleave(dinput_interleave_fn fn,
                                                      std::shared_ptr<UserData> user_data);
std::shared_ptr<const LengthFn> make_c_length(dinput_length_fn fn,
                                              std::shared_ptr<UserData> user_data);

}  // namespace dinput::capi
