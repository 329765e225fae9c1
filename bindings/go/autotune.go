package dinput

/*
#include "shim.h"
*/
import "C"

// setAutotuneOptions applies Options.RAMBudget (docs/autotune.md).
func setAutotuneOptions(opts *C.dinput_options_t, o Options) error {
	if o.RAMBudget == 0 {
		return nil
	}
	return call(func() C.dinput_status_t { return C.dinput_options_set_ram_budget(opts, C.int64_t(o.RAMBudget)) })
}
