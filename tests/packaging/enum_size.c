/* Compiled with -fshort-enums, under which a C enum takes the smallest type that holds its
 * values: the ..._FORCE_32BIT sentinel of each enum of dinput.h must still make it 4 bytes,
 * so that a caller built that way passes and receives the same 32-bit values as the
 * library. A size mismatch is a negative array size: a compile error. */
#include "dinput.h"

#define DINPUT_TEST_SIZE_IS_4(type) typedef char type##_is_4_bytes[sizeof(type) == 4 ? 1 : -1]

DINPUT_TEST_SIZE_IS_4(dinput_status_t);
DINPUT_TEST_SIZE_IS_4(dinput_dtype_t);
DINPUT_TEST_SIZE_IS_4(dinput_device_type_t);
DINPUT_TEST_SIZE_IS_4(dinput_auto_shard_policy_t);
DINPUT_TEST_SIZE_IS_4(dinput_compression_t);
DINPUT_TEST_SIZE_IS_4(dinput_replication_mode_t);
DINPUT_TEST_SIZE_IS_4(dinput_reduce_op_t);
DINPUT_TEST_SIZE_IS_4(dinput_deterministic_t);

int main(void) { return 0; }
