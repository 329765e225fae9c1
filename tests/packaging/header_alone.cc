// dinput.h must compile on its own, first in a translation unit, as C++17; its functions
// must have C linkage (checked by taking their addresses as extern "C" function types).
#include "dinput.h"

extern "C" typedef const char* version_fn(void);

int main() {
  version_fn* fn = &dinput_version;
  dinput_tensor_t* t = nullptr;
  (void)t;
  return fn == nullptr ? 1 : 0;
}
