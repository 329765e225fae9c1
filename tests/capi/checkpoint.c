/* Saving an iterator's state and continuing from it (dinput_iterator_save,
 * dinput_dataset_iterator_from_state): the elements before the save and after the restore
 * make the uninterrupted stream; another pipeline is FAILED_PRECONDITION naming the
 * operation; a truncated or bit-flipped state is DATA_LOSS; an operation without a state is
 * UNIMPLEMENTED naming it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CAP 512

/* range(0, 40).repeat(2).shuffle(7, seed 5, reshuffling).batch(3): partial batches, two
 * epochs, a shuffle buffer. With `buffer` != 7 or another seed for the "other" pipeline. */
static dinput_dataset_t* pipeline(int64_t buffer, int64_t seed) {
  dinput_dataset_t *r = NULL, *rep = NULL, *sh = NULL, *b = NULL;
  CHECK_OK(dinput_dataset_range(&r, 0, 40, 1));
  CHECK_OK(dinput_dataset_repeat(&rep, r, 2));
  CHECK_OK(shuffle_with(&sh, rep, buffer, seed, 1));
  CHECK_OK(batch_with(&b, sh, 3, 0));
  dinput_dataset_free(r);
  dinput_dataset_free(rep);
  dinput_dataset_free(sh);
  return b;
}

/* Appends the values of the iterator's elements to dst from *n on; stops after `steps`
 * elements (-1: at the end). Returns 1 when the end was reached. */
static int take(dinput_iterator_t* it, int64_t steps, int64_t* dst, int64_t* n) {
  dinput_element_t* e = NULL;
  int64_t i;
  for (i = 0; steps < 0 || i < steps; ++i) {
    dinput_status_t st = dinput_iterator_get_next(&e, it);
    if (st == DINPUT_OUT_OF_RANGE) return 1;
    CHECK_OK(st);
    if (st != DINPUT_OK) return 1;
    *n += read_int64(e, 0, dst + *n, CAP - *n);
    dinput_element_free(e);
  }
  return 0;
}

/* Saves after `steps` elements, restores into a new iterator of `restore_into`, and checks
 * that both together give the uninterrupted stream. */
static void check_resume(int64_t steps) {
  static int64_t expected[CAP], got[CAP];
  int64_t expected_n, got_n = 0;
  /* Each dataset's first iterator draws the shuffle's first epoch: one to compare with, one
   * to save from, one built anew to restore into, as after a restart. */
  dinput_dataset_t* reference = pipeline(7, 5);
  dinput_dataset_t* ds = pipeline(7, 5);
  dinput_dataset_t* again = pipeline(7, 5);
  dinput_iterator_t *it = NULL, *restored = NULL;
  dinput_state_t* state = NULL;
  expected_n = drain_int64(reference, expected, CAP, NULL);
  dinput_dataset_free(reference);
  CHECK(expected_n == 80);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  take(it, steps, got, &got_n);
  CHECK_OK(dinput_iterator_save(&state, it));
  dinput_iterator_free(it);
  CHECK(dinput_state_size(state) > 24 && dinput_state_size(state) < 1024);
  CHECK_OK(dinput_dataset_iterator_from_state(&restored, again, dinput_state_data(state),
                                              dinput_state_size(state)));
  dinput_state_free(state);
  take(restored, -1, got, &got_n);
  dinput_iterator_free(restored);
  if (!same_int64(got, got_n, expected, expected_n))
    fprintf(stderr, "resume after %" PRId64 " elements differs\n", steps);
  CHECK(same_int64(got, got_n, expected, expected_n));
  dinput_dataset_free(ds);
  dinput_dataset_free(again);
}

static void test_resume_everywhere(void) {
  int64_t steps;
  for (steps = 0; steps <= 28; ++steps) check_resume(steps); /* 27 batches, then the end */
}

static void test_errors(void) {
  dinput_dataset_t* ds = pipeline(7, 5);
  dinput_dataset_t* other = pipeline(70, 5);
  dinput_iterator_t *it = NULL, *restored = NULL;
  dinput_state_t* state = NULL;
  int64_t values[CAP], n = 0;
  char* bytes;
  size_t size, i;
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  take(it, 4, values, &n);
  CHECK_OK(dinput_iterator_save(&state, it));
  size = dinput_state_size(state);
  bytes = (char*)malloc(size);
  memcpy(bytes, dinput_state_data(state), size);

  /* Another pipeline: the shuffle differs (operation 1, after the batch). */
  restored = (dinput_iterator_t*)1;
  CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, other, bytes, size),
               DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("operation 1 differs: saved 'shuffle(buffer_size=7");
  CHECK_MSG("this pipeline has 'shuffle(buffer_size=70");
  CHECK(restored == NULL);

  /* Truncated anywhere, or any bit flipped: DATA_LOSS. */
  for (i = 0; i < size; i += 3) {
    CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, ds, bytes, i), DINPUT_DATA_LOSS);
    CHECK(restored == NULL);
  }
  CHECK_MSG("truncated");
  for (i = 0; i < size * 8; i += 5) {
    bytes[i / 8] ^= (char)(1 << (i % 8));
    CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, ds, bytes, size), DINPUT_DATA_LOSS);
    bytes[i / 8] ^= (char)(1 << (i % 8));
  }
  bytes[size - 1] ^= 1;
  CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, ds, bytes, size), DINPUT_DATA_LOSS);
  CHECK_MSG("checksum");
  bytes[size - 1] ^= 1;

  /* The intact state still works; bad arguments are INVALID_ARGUMENT. */
  CHECK_OK(dinput_dataset_iterator_from_state(&restored, ds, bytes, size));
  dinput_iterator_free(restored);
  CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, ds, NULL, size),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, NULL, bytes, size),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_iterator_save(NULL, it), DINPUT_INVALID_ARGUMENT);
  dinput_state_free(state); /* a failing save clears its out-parameter */
  state = NULL;
  CHECK_STATUS(dinput_iterator_save(&state, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK(state == NULL);
  CHECK(dinput_state_data(NULL) == NULL && dinput_state_size(NULL) == 0);
  dinput_state_free(NULL);
  free(bytes);
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
  dinput_dataset_free(other);
}

static dinput_status_t identity(dinput_element_t** out, const dinput_element_t* in,
                                void* user_data) {
  (void)user_data;
  return dinput_element_ref(out, in);
}

static void test_unsupported_and_end(void) {
  dinput_dataset_t *r = NULL, *p = NULL;
  dinput_iterator_t *it = NULL, *restored = NULL;
  dinput_state_t* state = NULL;
  dinput_element_t* e = NULL;
  int64_t values[CAP], n = 0;
  CHECK_OK(dinput_dataset_range(&r, 0, 5, 1));
  /* Results as they finish: an order no state can reproduce. */
  CHECK_OK(map_with(&p, r, identity, NULL, 2, 0, NULL, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, p));
  CHECK_STATUS(dinput_iterator_save(&state, it), DINPUT_UNIMPLEMENTED);
  CHECK_MSG("map: ");
  CHECK_MSG("deterministic=false");
  CHECK(state == NULL);
  CHECK(take(it, -1, values, &n) == 1 && n == 5); /* the iterator goes on (in any order) */
  dinput_iterator_free(it);

  /* After the end: the restored iterator ends at once. */
  n = 0;
  CHECK_OK(dinput_dataset_iterator(&it, r));
  CHECK(take(it, -1, values, &n) == 1 && n == 5);
  CHECK_OK(dinput_iterator_save(&state, it));
  CHECK_OK(dinput_dataset_iterator_from_state(&restored, r, dinput_state_data(state),
                                              dinput_state_size(state)));
  CHECK_STATUS(dinput_iterator_get_next(&e, restored), DINPUT_OUT_OF_RANGE);
  dinput_iterator_free(restored);
  dinput_iterator_free(it);
  dinput_state_free(state);
  dinput_dataset_free(r);
  dinput_dataset_free(p);
}

/* A generator of the int64 scalars 0..9 whose state is its next value (malloc'd by init). */
static dinput_status_t counter_init(void** state, void* user_data) {
  int64_t* next = malloc(sizeof(int64_t));
  (void)user_data;
  *next = 0;
  *state = next;
  return DINPUT_OK;
}

static dinput_status_t counter_next(dinput_element_t** out, void* state) {
  int64_t* next = state;
  dinput_tensor_t* t;
  if (*next >= 10) return DINPUT_OUT_OF_RANGE;
  t = make_int64(next, 1, 0);
  ++*next;
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static void counter_finalize(void* state) { free(state); }

static dinput_status_t counter_save(void* state, dinput_state_write_fn write, void* sink) {
  /* In two writes, to check that they are appended. */
  const char* bytes = state;
  write(sink, bytes, 3);
  write(sink, bytes + 3, sizeof(int64_t) - 3);
  return DINPUT_OK;
}

static dinput_status_t counter_restore(void* state, const void* data, size_t size) {
  if (size != sizeof(int64_t)) return DINPUT_INVALID_ARGUMENT;
  memcpy(state, data, size);
  return DINPUT_OK;
}

static dinput_status_t failing_save(void* state, dinput_state_write_fn write, void* sink) {
  (void)state, (void)write, (void)sink;
  return DINPUT_ABORTED;
}

static dinput_dataset_t* counter(dinput_generator_save_fn save,
                                 dinput_generator_restore_fn restore) {
  dinput_spec_t* spec = NULL;
  dinput_dataset_t *g = NULL, *b = NULL;
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(dinput_dataset_from_generator_with_state(&g, spec, counter_init, counter_next,
                                                    counter_finalize, save, restore, NULL, NULL));
  CHECK_OK(batch_with(&b, g, 3, 0));
  dinput_dataset_free(g);
  dinput_spec_free(spec);
  return b;
}

static void test_generator_callbacks(void) {
  int64_t steps;
  dinput_spec_t* spec = NULL;
  dinput_dataset_t* g = NULL;
  for (steps = 0; steps <= 4; ++steps) {
    int64_t got[CAP], n = 0, i;
    dinput_dataset_t* ds = counter(counter_save, counter_restore);
    dinput_iterator_t *it = NULL, *restored = NULL;
    dinput_state_t* state = NULL;
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    take(it, steps, got, &n);
    CHECK_OK(dinput_iterator_save(&state, it));
    dinput_iterator_free(it);
    CHECK_OK(dinput_dataset_iterator_from_state(&restored, ds, dinput_state_data(state),
                                                dinput_state_size(state)));
    take(restored, -1, got, &n);
    CHECK(n == 10);
    for (i = 0; i < n && i < 10; ++i) CHECK(got[i] == i);
    dinput_iterator_free(restored);
    dinput_state_free(state);
    dinput_dataset_free(ds);
  }
  {
    /* A failing save callback fails the save with its status, naming the callback. */
    dinput_dataset_t* ds = counter(failing_save, counter_restore);
    dinput_iterator_t* it = NULL;
    dinput_state_t* state = NULL;
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    CHECK_STATUS(dinput_iterator_save(&state, it), DINPUT_ABORTED);
    CHECK_MSG("save callback");
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
  }
  /* One callback without the other is refused. */
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  CHECK_STATUS(
      dinput_dataset_from_generator_with_state(&g, spec, counter_init, counter_next,
                                               counter_finalize, counter_save, NULL, NULL, NULL),
      DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'restore' is NULL");
  dinput_spec_free(spec);
}

int main(void) {
  test_resume_everywhere();
  test_errors();
  test_unsupported_and_end();
  test_generator_callbacks();
  return check_finish_();
}
