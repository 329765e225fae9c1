/* dinput.h must compile on its own, first in a translation unit, as strict C99. */
#include "dinput.h"

int main(void) {
  dinput_status_t st = DINPUT_OK;
  dinput_dtype_t dt = DINPUT_BYTES;
  return (int)st + (DINPUT_VERSION_NUMBER > 0 ? 0 : 1) + (dt == DINPUT_BYTES ? 0 : 1);
}
