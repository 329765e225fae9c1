/* dinput_dist_iterator_copy_steps: several steps of a distributed iterator copied into one
 * buffer. The steps copied are those get_next gives, in its order, laid out step by step and
 * replica by replica; the first step that does not fit the layout comes whole in *unfit after
 * the ones before it (never lost, never copied); the end of data and an error midway come
 * after the steps made before them; a save stands after the last step returned; bad
 * arguments take no step. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CAP 512

#include "dist_steps_fixture.h"

/* copy_steps with max_steps `max` and pieces of int64 [2] to the end, appending the copied
 * steps as append() does and then the unfit one; returns the final status, the steps copied
 * by each call in counts[0 .. *calls) and the number of unfit steps in *unfits. */
static dinput_status_t copy_in_calls(dinput_dist_iterator_t* it, size_t max, int64_t* dst,
                                     int64_t* n, size_t* counts, int* calls, int* unfits) {
  const int64_t shape[1] = {2};
  int64_t buffer[16 * 2 * 2];
  CHECK(max <= 16);
  for (;;) {
    size_t got = 99, s, t;
    dinput_per_replica_t* unfit = (dinput_per_replica_t*)&got; /* must be overwritten */
    dinput_status_t st;
    memset(buffer, 0xff, sizeof buffer);
    st = dinput_dist_iterator_copy_steps(&got, &unfit, buffer, sizeof buffer, DINPUT_INT64, shape,
                                         1, max, it);
    if (st != DINPUT_OK) {
      CHECK(got == 0 && unfit == NULL);
      return st;
    }
    CHECK(got <= max && (got >= 1 || unfit != NULL));
    counts[(*calls)++] = got;
    for (s = 0; s < got; ++s) {
      for (t = 0; t < 2; ++t) {
        memcpy(dst + *n, buffer + (s * 2 + t) * 2, 2 * sizeof(int64_t));
        *n += 2;
        dst[(*n)++] = -1;
      }
    }
    /* Nothing is written past the steps copied. */
    for (s = got * 4; s < max * 4; ++s) CHECK(buffer[s] == -1);
    if (unfit) {
      ++*unfits;
      append(unfit, dst, n);
    }
  }
}

static void check_same_steps(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  size_t counts[32];
  int calls = 0, unfits = 0;
  dinput_dist_dataset_t* ds = distributed(45, NULL); /* 12 steps, the last one short */
  dinput_dist_iterator_t *one = NULL, *many = NULL;
  CHECK_OK(dinput_dist_dataset_iterator(&one, ds));
  CHECK_OK(dinput_dist_dataset_iterator(&many, ds));
  CHECK_STATUS(take_one_by_one(one, -1, expected, &expected_n), DINPUT_OUT_OF_RANGE);
  CHECK_STATUS(copy_in_calls(many, 4, got, &got_n, counts, &calls, &unfits), DINPUT_OUT_OF_RANGE);
  CHECK(expected_n == 11 * 6 + 3);
  CHECK(same_int64(got, got_n, expected, expected_n));
  /* 11 full steps copied 4, 4, 3, the short twelfth handed out after the third call's
   * copies; then OUT_OF_RANGE alone, and again after it. */
  CHECK(calls == 3 && counts[0] == 4 && counts[1] == 4 && counts[2] == 3 && unfits == 1);
  CHECK_STATUS(copy_in_calls(many, 4, got, &got_n, counts, &calls, &unfits), DINPUT_OUT_OF_RANGE);
  dinput_dist_iterator_free(one);
  dinput_dist_iterator_free(many);
  dinput_dist_dataset_free(ds);
}

/* A layout no step has: every step comes alone in *unfit, none is copied or lost. */
static void check_no_step_fits(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  const int64_t three[1] = {3}, two[1] = {2};
  double buffer[4 * 2 * 3];
  dinput_dist_dataset_t* ds = distributed(45, NULL);
  dinput_dist_iterator_t *one = NULL, *it = NULL;
  int steps = 0;
  CHECK_OK(dinput_dist_dataset_iterator(&one, ds));
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  CHECK_STATUS(take_one_by_one(one, -1, expected, &expected_n), DINPUT_OUT_OF_RANGE);
  for (;; ++steps) {
    size_t n = 99;
    dinput_per_replica_t* unfit = NULL;
    /* Alternately another shape and another dtype than the steps' int64 [2]. */
    dinput_status_t st = steps % 2
                             ? dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer,
                                                               DINPUT_FLOAT64, two, 1, 4, it)
                             : dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer,
                                                               DINPUT_INT64, three, 1, 4, it);
    CHECK(n == 0);
    if (st != DINPUT_OK) {
      CHECK_STATUS(st, DINPUT_OUT_OF_RANGE);
      CHECK(unfit == NULL);
      break;
    }
    CHECK(unfit != NULL);
    if (unfit) append(unfit, got, &got_n);
  }
  CHECK(steps == 12);
  CHECK(same_int64(got, got_n, expected, expected_n));
  dinput_dist_iterator_free(one);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(ds);
}

static void check_error_midway(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  size_t counts[32];
  int calls = 0, unfits = 0;
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
  st = copy_in_calls(many, 16, got, &got_n, counts, &calls, &unfits);
  CHECK_STATUS(st, DINPUT_DATA_LOSS);
  CHECK_MSG("the element that fails");
  CHECK(calls == 1 && unfits == 0 && (int64_t)counts[0] == expected_n / 6);
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
  const int64_t shape[1] = {2};
  int64_t buffer[3 * 2 * 2];
  size_t taken = 0;
  dinput_dist_dataset_t* ds = distributed(45, NULL);
  dinput_dist_iterator_t *it = NULL, *restored = NULL;
  dinput_per_replica_t* unfit = NULL;
  dinput_state_t* state = NULL;
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  /* 3 steps copied in one call, saved there: the restored iterator goes on with the fourth. */
  CHECK_OK(dinput_dist_iterator_copy_steps(&taken, &unfit, buffer, sizeof buffer, DINPUT_INT64,
                                           shape, 1, 3, it));
  CHECK(taken == 3 && unfit == NULL);
  CHECK_OK(dinput_dist_iterator_save(&state, it));
  CHECK_STATUS(take_one_by_one(it, -1, expected, &expected_n), DINPUT_OUT_OF_RANGE);
  CHECK(expected_n == 8 * 6 + 3); /* the fourth to the eleventh, then the short twelfth */
  CHECK_OK(dinput_dist_dataset_iterator_from_state(&restored, ds, dinput_state_data(state),
                                                   dinput_state_size(state)));
  CHECK_STATUS(take_one_by_one(restored, -1, got, &got_n), DINPUT_OUT_OF_RANGE);
  CHECK(same_int64(got, got_n, expected, expected_n));
  dinput_state_free(state);
  dinput_dist_iterator_free(it);
  dinput_dist_iterator_free(restored);
  dinput_dist_dataset_free(ds);
}

static void check_arguments(void) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  const int64_t two[1] = {2}, negative[1] = {-2};
  int64_t buffer[2 * 2 * 2];
  dinput_dist_dataset_t* ds = distributed(45, NULL);
  dinput_dist_iterator_t *one = NULL, *it = NULL;
  dinput_per_replica_t* unfit = NULL;
  size_t n = 99;
  CHECK_OK(dinput_dist_dataset_iterator(&one, ds));
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_INT64, two,
                                               1, 0, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'max_steps' is 0");
  CHECK(n == 0 && unfit == NULL);
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_BYTES, two,
                                               1, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'dtype' is bytes");
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer,
                                               (dinput_dtype_t)99, two, 1, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'dtype'");
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_INT64, two,
                                               -1, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'rank' is -1");
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_INT64,
                                               NULL, 1, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'shape' is NULL");
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_INT64,
                                               negative, 1, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'shape' has dimension 0 = -2");
  /* 3 steps of 2 replicas of 2 int64 need 96 bytes; the buffer has 64. */
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_INT64, two,
                                               1, 3, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'buffer_size' is 64, but 3 steps of 2 tensors of 16 bytes need 96");
  CHECK_STATUS(
      dinput_dist_iterator_copy_steps(&n, &unfit, NULL, sizeof buffer, DINPUT_INT64, two, 1, 2, it),
      DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'buffer' is NULL");
  CHECK_STATUS(dinput_dist_iterator_copy_steps(NULL, &unfit, buffer, sizeof buffer, DINPUT_INT64,
                                               two, 1, 2, it),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(
      dinput_dist_iterator_copy_steps(&n, NULL, buffer, sizeof buffer, DINPUT_INT64, two, 1, 2, it),
      DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'unfit' is NULL");
  CHECK_STATUS(dinput_dist_iterator_copy_steps(&n, &unfit, buffer, sizeof buffer, DINPUT_INT64, two,
                                               1, 2, NULL),
               DINPUT_INVALID_ARGUMENT);
  CHECK(n == 0 && unfit == NULL);
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
  check_no_step_fits();
  check_error_midway();
  check_save_restore();
  check_arguments();
  return check_finish_();
}
