/* Saving a distributed iterator's state and continuing from it (dinput_dist_iterator_save,
 * dinput_dist_dataset_iterator_from_state) on one worker of two CPU replicas: the steps
 * before the save and after the restore make the uninterrupted run, replica for replica; a
 * plain iterator's state is FAILED_PRECONDITION, a damaged one DATA_LOSS. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CAP 256

static const char* const kDevices[] = {"CPU:0", "CPU:1"};

/* range(0, 23).shuffle(5, seed 3).batch(4), distributed over two replicas. */
static dinput_dist_dataset_t* distributed(int64_t stop) {
  dinput_dataset_t *r = NULL, *sh = NULL, *b = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* out = NULL;
  CHECK_OK(dinput_dataset_range(&r, 0, stop, 1));
  CHECK_OK(shuffle_with(&sh, r, 5, 3, 1));
  CHECK_OK(batch_with(&b, sh, 4, 0));
  CHECK_OK(dinput_strategy_new(&strategy, kDevices, 2));
  CHECK_OK(dinput_strategy_distribute_dataset(&out, strategy, b, NULL));
  dinput_dataset_free(r);
  dinput_dataset_free(sh);
  dinput_dataset_free(b);
  dinput_strategy_free(strategy);
  return out;
}

/* Appends each step's values, replica 0 then 1, with -1 after each replica's piece; stops
 * after `steps` steps (-1: at the end). */
static void take(dinput_dist_iterator_t* it, int64_t steps, int64_t* dst, int64_t* n) {
  int64_t i;
  int r;
  for (i = 0; steps < 0 || i < steps; ++i) {
    dinput_per_replica_t* step = NULL;
    dinput_status_t st = dinput_dist_iterator_get_next(&step, it);
    if (st == DINPUT_OUT_OF_RANGE) return;
    CHECK_OK(st);
    if (st != DINPUT_OK) return;
    for (r = 0; r < dinput_per_replica_size(step); ++r) {
      *n += read_int64(dinput_per_replica_get(step, r), 0, dst + *n, CAP - *n);
      if (*n < CAP) dst[(*n)++] = -1;
    }
    dinput_per_replica_free(step);
  }
}

static void check_resume(int64_t steps) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n = 0, got_n = 0;
  dinput_dist_dataset_t* ds = distributed(23);
  dinput_dist_dataset_t* again = distributed(23);
  dinput_dist_iterator_t *it = NULL, *restored = NULL;
  dinput_state_t* state = NULL;
  /* One iterator runs through and saves on the way; the expected run is its own. */
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  take(it, steps, expected, &expected_n);
  got_n = expected_n;
  memcpy(got, expected, (size_t)expected_n * sizeof(int64_t));
  CHECK_OK(dinput_dist_iterator_save(&state, it));
  CHECK(dinput_state_size(state) > 24);
  take(it, -1, expected, &expected_n);
  dinput_dist_iterator_free(it);
  CHECK_OK(dinput_dist_dataset_iterator_from_state(&restored, again, dinput_state_data(state),
                                                   dinput_state_size(state)));
  take(restored, -1, got, &got_n);
  CHECK(got_n == expected_n);
  CHECK(memcmp(got, expected, (size_t)expected_n * sizeof(int64_t)) == 0);
  dinput_dist_iterator_free(restored);
  dinput_state_free(state);
  dinput_dist_dataset_free(ds);
  dinput_dist_dataset_free(again);
}

static void check_refusals(void) {
  dinput_dist_dataset_t* ds = distributed(23);
  dinput_dist_dataset_t* other = distributed(24);
  dinput_dist_iterator_t *it = NULL, *restored = NULL;
  dinput_iterator_t* plain_it = NULL;
  dinput_dataset_t* r = NULL;
  dinput_state_t *state = NULL, *plain = NULL;
  char* flipped;
  size_t size;
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  take(it, 2, (int64_t[CAP]){0}, &(int64_t){0});
  CHECK_OK(dinput_dist_iterator_save(&state, it));
  size = dinput_state_size(state);

  CHECK_STATUS(
      dinput_dist_dataset_iterator_from_state(&restored, other, dinput_state_data(state), size),
      DINPUT_FAILED_PRECONDITION);
  CHECK(strstr(dinput_last_error_message(), "range(start=0, stop=23, step=1)") != NULL);
  CHECK(restored == NULL);

  flipped = malloc(size);
  memcpy(flipped, dinput_state_data(state), size);
  flipped[size - 2] ^= 0x01;
  CHECK_STATUS(dinput_dist_dataset_iterator_from_state(&restored, ds, flipped, size),
               DINPUT_DATA_LOSS);
  CHECK_STATUS(
      dinput_dist_dataset_iterator_from_state(&restored, ds, dinput_state_data(state), size - 5),
      DINPUT_DATA_LOSS);
  free(flipped);
  CHECK_STATUS(dinput_dist_dataset_iterator_from_state(&restored, ds, NULL, 3),
               DINPUT_INVALID_ARGUMENT);
  {
    dinput_state_t* none = NULL; /* a failing call clears its out-parameter */
    CHECK_STATUS(dinput_dist_iterator_save(&none, NULL), DINPUT_INVALID_ARGUMENT);
    CHECK(none == NULL);
  }

  /* A dataset iterator's state is not a distributed iterator's. */
  CHECK_OK(dinput_dataset_range(&r, 0, 5, 1));
  CHECK_OK(dinput_dataset_iterator(&plain_it, r));
  CHECK_OK(dinput_iterator_save(&plain, plain_it));
  CHECK_STATUS(dinput_dist_dataset_iterator_from_state(&restored, ds, dinput_state_data(plain),
                                                       dinput_state_size(plain)),
               DINPUT_FAILED_PRECONDITION);
  CHECK(strstr(dinput_last_error_message(), "not a distributed iterator") != NULL);

  dinput_state_free(plain);
  dinput_iterator_free(plain_it);
  dinput_dataset_free(r);
  dinput_state_free(state);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(ds);
  dinput_dist_dataset_free(other);
}

/* dinput_state_describe: JSON naming the kind, the step and the pipeline's operations. */
static void check_describe(void) {
  dinput_dist_dataset_t* ds = distributed(23);
  dinput_dist_iterator_t* it = NULL;
  dinput_state_t *state = NULL, *json = NULL;
  char* text;
  CHECK_OK(dinput_dist_dataset_iterator(&it, ds));
  take(it, 3, (int64_t[CAP]){0}, &(int64_t){0});
  CHECK_OK(dinput_dist_iterator_save(&state, it));
  CHECK_OK(dinput_state_describe(&json, dinput_state_data(state), dinput_state_size(state)));
  text = calloc(dinput_state_size(json) + 1, 1);
  memcpy(text, dinput_state_data(json), dinput_state_size(json));
  CHECK(strstr(text, "\"kind\":\"distributed_iterator\"") != NULL);
  CHECK(strstr(text, "\"step\":3") != NULL);
  CHECK(strstr(text, "range(start=0, stop=23, step=1)") != NULL);
  free(text);
  dinput_state_free(json);
  CHECK_STATUS(dinput_state_describe(&json, dinput_state_data(state), 10), DINPUT_DATA_LOSS);
  dinput_state_free(state);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(ds);
}

int main(void) {
  int64_t steps;
  for (steps = 0; steps <= 4; ++steps) check_resume(steps);
  check_resume(100); /* after the end */
  check_refusals();
  check_describe();
  return check_finish_();
}
