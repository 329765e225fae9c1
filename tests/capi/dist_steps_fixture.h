/* The pipeline and readers that the tests of a distributed iterator's several-steps calls
 * share (dist_steps.c: get_next_steps; dist_copy_steps.c: copy_steps): the steps each call
 * gives are compared with those get_next gives one by one. Include after check.h, with CAP
 * (the capacity of the value arrays) defined. */
#ifndef DINPUT_TESTS_CAPI_DIST_STEPS_FIXTURE_H
#define DINPUT_TESTS_CAPI_DIST_STEPS_FIXTURE_H

static const char* const kDevices[] = {"CPU:0", "CPU:1"};

/* Fails on the element whose value is fail_at (user_data), with DATA_LOSS. */
static dinput_status_t fail_at(dinput_element_t** out, const dinput_element_t* in, void* user) {
  int64_t v = -1;
  read_int64(in, 0, &v, 1);
  if (v == *(const int64_t*)user) {
    dinput_error_set(DINPUT_DATA_LOSS, "fail_at: the element that fails");
    return DINPUT_DATA_LOSS;
  }
  return dinput_element_ref(out, in);
}

/* range(0, stop).shuffle(5, seed 3)[.map(fail_at)].batch(4), distributed over two replicas:
 * steps of 2 int64 values per replica, the last one short when 4 does not divide stop. */
static dinput_dist_dataset_t* distributed(int64_t stop, const int64_t* fail) {
  dinput_dataset_t *r = NULL, *sh = NULL, *m = NULL, *b = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* out = NULL;
  CHECK_OK(dinput_dataset_range(&r, 0, stop, 1));
  CHECK_OK(shuffle_with(&sh, r, 5, 3, 0)); /* the same order in every epoch */
  if (fail) {
    CHECK_OK(map_with(&m, sh, fail_at, NULL, 1, 1, (void*)fail, NULL));
  } else {
    CHECK_OK(dinput_dataset_ref(&m, sh));
  }
  CHECK_OK(batch_with(&b, m, 4, 0));
  CHECK_OK(dinput_strategy_new(&strategy, kDevices, 2));
  CHECK_OK(dinput_strategy_distribute_dataset(&out, strategy, b, NULL));
  dinput_dataset_free(r);
  dinput_dataset_free(sh);
  dinput_dataset_free(m);
  dinput_dataset_free(b);
  dinput_strategy_free(strategy);
  return out;
}

/* Appends a step's values, replica 0 then 1, with -1 after each replica's piece, and frees
 * it. */
static void append(dinput_per_replica_t* step, int64_t* dst, int64_t* n) {
  int r;
  for (r = 0; r < dinput_per_replica_size(step); ++r) {
    *n += read_int64(dinput_per_replica_get(step, r), 0, dst + *n, CAP - *n);
    if (*n < CAP) dst[(*n)++] = -1;
  }
  dinput_per_replica_free(step);
}

/* get_next to the end (or `steps` steps); returns the final status (OK after `steps`). */
static dinput_status_t take_one_by_one(dinput_dist_iterator_t* it, int64_t steps, int64_t* dst,
                                       int64_t* n) {
  int64_t i;
  for (i = 0; steps < 0 || i < steps; ++i) {
    dinput_per_replica_t* step = NULL;
    dinput_status_t st = dinput_dist_iterator_get_next(&step, it);
    if (st != DINPUT_OK) return st;
    append(step, dst, n);
  }
  return DINPUT_OK;
}

#endif
