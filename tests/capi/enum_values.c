/* Values outside the C enums. In C an enum parameter may hold any int, and dinput.h
 * documents what happens to unknown values (dinput_status_name gives "UNKNOWN_STATUS",
 * dtype functions "invalid"/0/INVALID_ARGUMENT, a callback's unknown status becomes UNKNOWN,
 * a bad policy is INVALID_ARGUMENT). The C++ implementation must handle them without
 * undefined behaviour: in the sanitizer build UBSan aborts on an out-of-range enum load.
 * They are kept in this program of their own so that such an abort does not hide the other
 * C API checks. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dinput.h"

static dinput_status_t odd_status_next(dinput_element_t** out, void* state) {
  (void)out;
  (void)state;
  dinput_error_set((dinput_status_t)77, "odd status");
  return (dinput_status_t)77;
}

/* Every enum of the header is 4 bytes in C: the ..._FORCE_32BIT sentinels keep it so even
 * under -fshort-enums (tests/packaging/enum_size.c checks that build at compile time). */
static void test_enum_sizes(void) {
  CHECK(sizeof(dinput_status_t) == 4);
  CHECK(sizeof(dinput_dtype_t) == 4);
  CHECK(sizeof(dinput_device_type_t) == 4);
  CHECK(sizeof(dinput_auto_shard_policy_t) == 4);
  CHECK(sizeof(dinput_compression_t) == 4);
  CHECK(sizeof(dinput_replication_mode_t) == 4);
  CHECK(sizeof(dinput_reduce_op_t) == 4);
  CHECK(sizeof(dinput_deterministic_t) == 4);
}

/* The sentinels are not values: the library treats them as any unknown value. */
static void test_sentinels_are_refused(void) {
  int64_t shape[1] = {2};
  dinput_tensor_t* t = NULL;
  dinput_options_t* opts = NULL;
  dinput_input_options_t* iopts = NULL;
  dinput_dataset_t* ds = NULL;
  dinput_record_writer_t* w = NULL;
  const char* files[1] = {"unused.tfrecord"};

  CHECK(strcmp(dinput_status_name(DINPUT_STATUS_FORCE_32BIT), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(dinput_dtype_name(DINPUT_DTYPE_FORCE_32BIT), "invalid") == 0);
  CHECK(dinput_dtype_size(DINPUT_DTYPE_FORCE_32BIT) == 0);
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_DTYPE_FORCE_32BIT, shape, 1, NULL, 0),
               DINPUT_INVALID_ARGUMENT);
  CHECK(t == NULL);
  CHECK_OK(dinput_options_new(&opts));
  CHECK_STATUS(dinput_options_set_auto_shard_policy(opts, DINPUT_AUTO_SHARD_POLICY_FORCE_32BIT),
               DINPUT_INVALID_ARGUMENT);
  dinput_options_free(opts);
  CHECK_OK(dinput_input_options_new(&iopts));
  CHECK_STATUS(
      dinput_input_options_set_replication_mode(iopts, DINPUT_REPLICATION_MODE_FORCE_32BIT),
      DINPUT_INVALID_ARGUMENT);
  dinput_input_options_free(iopts);
  {
    dinput_records_options_t* ro = NULL;
    dinput_record_writer_options_t* wo = NULL;
    dinput_map_options_t* mo = NULL;
    CHECK_OK(dinput_records_options_new(&ro));
    CHECK_STATUS(dinput_records_options_set_compression(ro, DINPUT_COMPRESSION_FORCE_32BIT),
                 DINPUT_INVALID_ARGUMENT);
    CHECK(dinput_records_options_compression(ro) == DINPUT_COMPRESSION_NONE);
    dinput_records_options_free(ro);
    CHECK_OK(dinput_record_writer_options_new(&wo));
    CHECK_STATUS(dinput_record_writer_options_set_compression(wo, DINPUT_COMPRESSION_FORCE_32BIT),
                 DINPUT_INVALID_ARGUMENT);
    dinput_record_writer_options_free(wo);
    CHECK_OK(dinput_map_options_new(&mo));
    CHECK_STATUS(dinput_map_options_set_deterministic(mo, DINPUT_DETERMINISTIC_FORCE_32BIT),
                 DINPUT_INVALID_ARGUMENT);
    dinput_map_options_free(mo);
  }
  (void)files;
  (void)ds;
  (void)w;
  dinput_error_clear();
}

int main(void) {
  int64_t shape[1] = {2};
  int64_t buf[2];
  dinput_tensor_t* t = NULL;
  dinput_spec_t* spec = NULL;
  dinput_options_t* opts = NULL;
  dinput_dataset_t* ds = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;

  CHECK(strcmp(dinput_status_name((dinput_status_t)17), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(dinput_status_name((dinput_status_t)-1), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(dinput_status_name((dinput_status_t)100000), "UNKNOWN_STATUS") == 0);

  CHECK(strcmp(dinput_dtype_name((dinput_dtype_t)99), "invalid") == 0);
  CHECK(strcmp(dinput_dtype_name((dinput_dtype_t)-4), "invalid") == 0);
  CHECK(dinput_dtype_size((dinput_dtype_t)99) == 0);

  CHECK_STATUS(dinput_tensor_new(&t, (dinput_dtype_t)99, shape, 1, NULL, 0),
               DINPUT_INVALID_ARGUMENT);
  CHECK(t == NULL);
  CHECK_OK(dinput_tensor_new(&t, DINPUT_INT64, shape, 1, NULL, 0));
  CHECK_STATUS(dinput_tensor_copy_to(buf, sizeof buf, t, (dinput_dtype_t)99),
               DINPUT_INVALID_ARGUMENT);
  dinput_tensor_free(t);

  CHECK_OK(dinput_spec_new(&spec));
  CHECK_STATUS(dinput_spec_add(spec, (dinput_dtype_t)99, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_spec_size(spec) == 0);

  CHECK_OK(dinput_options_new(&opts));
  CHECK_STATUS(dinput_options_set_auto_shard_policy(opts, (dinput_auto_shard_policy_t)9),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_options_set_auto_shard_policy(opts, (dinput_auto_shard_policy_t)-5),
               DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_options_auto_shard_policy(opts) == DINPUT_AUTO_SHARD_AUTO);
  dinput_options_free(opts);

  dinput_error_set((dinput_status_t)77, "set by hand");
  CHECK((int)dinput_last_error_code() == 77 || dinput_last_error_code() == DINPUT_UNKNOWN);
  dinput_error_clear();

  /* A callback's status outside the enum reaches the caller as UNKNOWN, with its message. */
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(dinput_dataset_from_generator(&ds, spec, NULL, odd_status_next, NULL, NULL, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_UNKNOWN);
  CHECK_MSG("odd status");
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
  dinput_spec_free(spec);
  test_enum_sizes();
  test_sentinels_are_refused();
  return check_finish_();
}
