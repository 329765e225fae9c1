// Autotuning (docs/autotune.md): the RAM budget option.
#include "capi/firewall.h"
#include "capi/handles.h"

using namespace dinput;

extern "C" {

DINPUT_API dinput_status_t dinput_options_set_ram_budget(dinput_options_t* options, int64_t bytes) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    if (bytes < 0)
      raise(Code::kInvalidArgument,
            "dinput_options_set_ram_budget: argument 'bytes' must be 0 (the default: half of "
            "the physical memory) or a positive number of bytes, got ",
            bytes);
    options->options.ram_budget = bytes;
  });
}

}  // extern "C"
