// The launcher through which the library starts its threads (docs/c-api.md, "The library's
// threads").
#include "capi/firewall.h"
#include "core/thread.h"

extern "C" {

DINPUT_API void dinput_set_thread_launcher(dinput_thread_launcher_fn launcher, void* user_data) {
  // Nothing here throws but a failed lock; the guard keeps even that inside the library.
  dinput::capi::guard(__func__, [&] { dinput::set_thread_launcher(launcher, user_data); });
}

}  // extern "C"
