/* dinput_dist_iterator_get_next_steps: several steps of a distributed iterator per call, with
 * their tensor infos. The steps are those get_next gives, in its order; the end of data and
 * an error midway come after the steps made before them, never in their place; a save after a
 * call stands after its last step and restores there; bad arguments take no step. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CAP 512

#include "dist_steps_fixture.h"

/* get_next_steps with max_steps `max` to the end, checking each step's infos against its
 * tensors; returns the final status and the sizes of the calls in counts[0 .. *calls). */
static dinput_status_t take_in_calls(dinput_dist_iterator_t* it, size_t max, int64_t* dst,
                                     int64_t* n, size_t* counts, int* calls) {
  dinput_per_replica_t* steps[16];
  dinput_tensor_info_t infos[16 * 3];
  for (;;) {
    size_t got = 99, s;
    dinput_status_t st;
    st = dinput_dist_iterator_get_next_steps(&got, steps, infos, max, 3, it);
    if (st != DINPUT_OK) {
      CHECK(got == 0);
      return st;
    }
    CHECK(got >= 1 && got <= max);
    counts[(*calls)++] = got;
    for (s = 0; s < got; ++s) {
      int r;
      for (r = 0; r < 2; ++r) {
        const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(steps[s], r), 0);
        const dinput_tensor_info_t* info = &infos[s * 3 + (size_t)r];
        CHECK(info->tensor == t && info->data == dinput_tensor_data(t));
        CHECK(info->byte_size == dinput_tensor_byte_size(t) && info->rank == 1);
        CHECK(info->dtype == DINPUT_INT64 && info->device_type == DINPUT_DEVICE_CPU);
      }
      append(steps[s], dst, n);
    }
  }
}

static void check_same_steps(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  size_t counts[32];
  int calls = 0;
  dinput_dist_dataset_t* ds = distributed(45, NULL); /* 12 steps, the last one short */
  dinput_dist_iterator_t *one = NULL, *many = NULL;
  size_t got_steps = 99;
  dinput_per_replica_t* step = NULL;
  /* Each step appends 2 values and a -1 per replica, the last one 1 value and 2 -1s. */
  CHECK_OK(dinput_dist_dataset_iterator(&one, ds));
  CHECK_OK(dinput_dist_dataset_iterator(&many, ds));
  CHECK_STATUS(take_one_by_one(one, -1, expected, &expected_n), DINPUT_OUT_OF_RANGE);
  CHECK_STATUS(take_in_calls(many, 4, got, &got_n, counts, &calls), DINPUT_OUT_OF_RANGE);
  CHECK(same_int64(got, got_n, expected, expected_n));
  CHECK(expected_n == 11 * 6 + 3);
  /* 12 steps: 4, 4, 4, then OUT_OF_RANGE alone, and again after it. */
  CHECK(calls == 3 && counts[0] == 4 && counts[1] == 4 && counts[2] == 4);
  CHECK_STATUS(dinput_dist_iterator_get_next_steps(&got_steps, &step, NULL, 1, 0, many),
               DINPUT_OUT_OF_RANGE);
  CHECK(got_steps == 0);
  CHECK_STATUS(dinput_dist_iterator_get_next(&step, many), DINPUT_OUT_OF_RANGE);
  dinput_dist_iterator_free(one);
  dinput_dist_iterator_free(many);
  dinput_dist_dataset_free(ds);
}

static void check_error_midway(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  size_t counts[32];
  int calls = 0;
  const int64_t fail = 30; /* about the eighth step (values 28 .. 31, shuffled by 5) */
  dinput_dist_dataset_t* ds = distributed(64, &fail);
  dinput_dist_iterator_t *one = NULL, *many = NULL;
  dinput_per_replica_t* step = NULL;
  dinput_status_t st;
  CHECK_OK(dinput_dist_dataset_iterator(&one, ds));
  CHECK_OK(dinput_dist_dataset_iterator(&many, ds));
  st = take_one_by_one(one, -1, expected, &expected_n);
  CHECK_STATUS(st, DINPUT_DATA_LOSS);
  CHECK(expected_n >= 5 * 6 && expected_n % 6 == 0); /* whole steps, 6 entries each */
  /* Asked for 16 at once: every step made before the failure, then the failure alone. */
  st = take_in_calls(many, 16, got, &got_n, counts, &calls);
  CHECK_STATUS(st, DINPUT_DATA_LOSS);
  CHECK_MSG("the element that fails");
  CHECK(calls == 1 && (int64_t)counts[0] == expected_n / 6);
  CHECK(same_int64(got, got_n, expected, expected_n));
  /* The iterator stays failed, as get_next leaves it. */
  CHECK_STATUS(dinput_dist_iterator_get_next(&step, many), DINPUT_DATA_LOSS);
  dinput_dist_iterator_free(one);
  dinput_dist_iterator_free(many);
  dinput_dist_dataset_free(ds);
}

static void check_save_restore(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  size_t counts[32], taken = 0, s;
  int calls = 0;
  dinput_dist_dataset_t* ds = distributed(45, NULL);
  dinput_dist_iterator_t *it = NULL, *restored = NULL;
  dinput_per_replica_t* steps[3];
  dinput_state_t* state = NULL;
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  /* 3 steps in one call, saved there: the restored iterator goes on with the fourth. */
  CHECK_OK(dinput_dist_iterator_get_next_steps(&taken, steps, NULL, 3, 0, it));
  CHECK(taken == 3);
  for (s = 0; s < taken; ++s) dinput_per_replica_free(steps[s]);
  CHECK_OK(dinput_dist_iterator_save(&state, it));
  CHECK_STATUS(take_one_by_one(it, -1, expected, &expected_n), DINPUT_OUT_OF_RANGE);
  CHECK(expected_n == 8 * 6 + 3); /* the fourth to the eleventh, then the short twelfth */
  CHECK_OK(dinput_dist_dataset_iterator_from_state(&restored, ds, dinput_state_data(state),
                                                   dinput_state_size(state)));
  CHECK_STATUS(take_in_calls(restored, 5, got, &got_n, counts, &calls), DINPUT_OUT_OF_RANGE);
  CHECK(same_int64(got, got_n, expected, expected_n));
  CHECK(calls == 2 && counts[0] == 5 && counts[1] == 4);
  dinput_state_free(state);
  dinput_dist_iterator_free(it);
  dinput_dist_iterator_free(restored);
  dinput_dist_dataset_free(ds);
}

static void check_arguments(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  dinput_dist_dataset_t* ds = distributed(45, NULL);
  dinput_dist_iterator_t *one = NULL, *it = NULL;
  dinput_per_replica_t* steps[2];
  dinput_tensor_info_t infos[4];
  size_t n = 99;
  CHECK_OK(dinput_dist_dataset_iterator(&one, ds));
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  CHECK_STATUS(dinput_dist_iterator_get_next_steps(&n, steps, infos, 0, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("max_steps");
  CHECK(n == 0);
  /* A step has 2 tensors (2 replicas of 1 component): room for 1 is refused up front. */
  CHECK_STATUS(dinput_dist_iterator_get_next_steps(&n, steps, infos, 2, 1, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'infos_per_step' is 1, but a step has 2 tensors");
  CHECK_STATUS(dinput_dist_iterator_get_next_steps(NULL, steps, infos, 2, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dist_iterator_get_next_steps(&n, NULL, infos, 2, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dist_iterator_get_next_steps(&n, steps, infos, 2, 2, NULL),
               DINPUT_INVALID_ARGUMENT);
  /* None of them took a step. */
  CHECK_OK(take_one_by_one(one, 1, expected, &expected_n));
  CHECK_OK(take_one_by_one(it, 1, got, &got_n));
  CHECK(same_int64(got, got_n, expected, expected_n));
  dinput_dist_iterator_free(one);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(ds);
}

int main(void) {
  check_same_steps();
  check_error_midway();
  check_save_restore();
  check_arguments();
  return check_finish_();
}
