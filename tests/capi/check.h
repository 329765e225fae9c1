/* A tiny check harness for the C API tests: each CHECK counts as passed or failed, and
 * finish() prints "N passed, M failed" and gives the exit status. C99, no dependencies. */
#ifndef DINPUT_TESTS_CHECK_H
#define DINPUT_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dinput.h"

static int check_passed_ = 0;
static int check_failed_ = 0;

static inline void check_record_(int ok, const char* file, int line, const char* what) {
  if (ok) {
    ++check_passed_;
  } else {
    ++check_failed_;
    fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s: %s)\n", file, line, what,
            dinput_status_name(dinput_last_error_code()), dinput_last_error_message());
  }
}

/* A condition that must hold. */
#define CHECK(cond) check_record_((cond) ? 1 : 0, __FILE__, __LINE__, #cond)

/* A call that must return `code`. */
#define CHECK_STATUS(call, code)                                                         \
  do {                                                                                   \
    dinput_status_t check_st_ = (call);                                                  \
    if (check_st_ != (code))                                                             \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, \
              dinput_status_name(check_st_), dinput_status_name(code));                  \
    check_record_(check_st_ == (code), __FILE__, __LINE__, #call);                       \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, DINPUT_OK)

/* The last error message of this thread contains `text`. */
#define CHECK_MSG(text)                                                                       \
  do {                                                                                        \
    const char* check_msg_ = dinput_last_error_message();                                     \
    int check_has_ = check_msg_ != NULL && strstr(check_msg_, (text)) != NULL;                \
    if (!check_has_)                                                                          \
      fprintf(stderr, "%s:%d: last error message \"%s\" does not contain \"%s\"\n", __FILE__, \
              __LINE__, check_msg_ ? check_msg_ : "(null)", (text));                          \
    check_record_(check_has_, __FILE__, __LINE__, "message contains " #text);                 \
  } while (0)

/* Prints the closing line and returns the process exit status. */
static inline int check_finish_(void) {
  printf("%d passed, %d failed\n", check_passed_, check_failed_);
  return check_failed_ == 0 ? 0 : 1;
}

/* ---- small helpers shared by the programs ---- */

/* An int64 tensor of `n` values (rank 1), or a scalar when rank is 0. */
static inline dinput_tensor_t* make_int64(const int64_t* values, int64_t n, int rank) {
  dinput_tensor_t* t = NULL;
  int64_t shape[1];
  shape[0] = n;
  if (dinput_tensor_new(&t, DINPUT_INT64, shape, rank, values, (size_t)n * sizeof(int64_t)) !=
      DINPUT_OK)
    return NULL;
  return t;
}

/* An element holding the given tensors; the tensors are released (the element keeps its
 * own references). */
static inline dinput_element_t* make_element(dinput_tensor_t** tensors, size_t count) {
  dinput_element_t* e = NULL;
  size_t i;
  if (dinput_element_new(&e, (const dinput_tensor_t* const*)tensors, count) != DINPUT_OK) e = NULL;
  for (i = 0; i < count; ++i) dinput_tensor_free(tensors[i]);
  return e;
}

/* Component `c` of `e` as int64 values: returns how many were copied (at most cap), or -1
 * when the component is not int64. */
static inline int64_t read_int64(const dinput_element_t* e, size_t c, int64_t* dst, int64_t cap) {
  const dinput_tensor_t* t = dinput_element_get(e, c);
  int64_t n = dinput_tensor_num_elements(t);
  if (dinput_tensor_dtype(t) != DINPUT_INT64 || n > cap) return -1;
  if (dinput_tensor_copy_to(dst, (size_t)cap * sizeof(int64_t), t, DINPUT_INT64) != DINPUT_OK)
    return -1;
  return n;
}

/* Iterates `ds` to its end (at most `cap` values in all) and flattens component 0 of every
 * element into dst. Returns the number of values, or -1 on an error other than the end.
 * *num_elements (if given) receives the number of elements. */
static inline int64_t drain_int64(const dinput_dataset_t* ds, int64_t* dst, int64_t cap,
                                  int64_t* num_elements) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  dinput_status_t st;
  int64_t total = 0, count = 0;
  if (dinput_dataset_iterator(&it, ds) != DINPUT_OK) return -1;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    int64_t n = read_int64(e, 0, dst + total, cap - total);
    dinput_element_free(e);
    if (n < 0) {
      dinput_iterator_free(it);
      return -1;
    }
    total += n;
    ++count;
  }
  dinput_iterator_free(it);
  if (num_elements) *num_elements = count;
  return st == DINPUT_OUT_OF_RANGE ? total : -1;
}

/* dst[0..n) == expected[0..n) */
static inline int same_int64(const int64_t* got, int64_t got_n, const int64_t* expected,
                             int64_t n) {
  int64_t i;
  if (got_n != n) return 0;
  for (i = 0; i < n; ++i)
    if (got[i] != expected[i]) return 0;
  return 1;
}

/* ---- the transformations with their former positional settings ----
 * Each makes an options handle, sets it, calls the function and frees the handle. When a
 * setter refuses a value, its status is returned, and (as the dataset function would have
 * done) free_user_data is called. */

/* The integer after `"name":` in a JSON text (the first such key), or -1: enough for the
 * flat figures of the statistics documents the tests read. */
static inline int64_t field(const char* text, const char* name) {
  char key[64];
  const char* p;
  if (!text) return -1;
  snprintf(key, sizeof key, "\"%s\":", name);
  p = strstr(text, key);
  if (!p) return -1;
  return strtoll(p + strlen(key), NULL, 10);
}

static inline dinput_deterministic_t deterministic_of(int deterministic) {
  return deterministic ? DINPUT_DETERMINISTIC_TRUE : DINPUT_DETERMINISTIC_FALSE;
}

static inline dinput_status_t map_with(dinput_dataset_t** out, const dinput_dataset_t* input,
                                       dinput_map_fn fn, const dinput_spec_t* out_spec,
                                       int64_t num_parallel_calls, int deterministic,
                                       void* user_data, dinput_free_fn free_user_data) {
  dinput_map_options_t* o = NULL;
  dinput_status_t st = dinput_map_options_new(&o);
  if (st == DINPUT_OK) st = dinput_map_options_set_out_spec(o, out_spec);
  if (st == DINPUT_OK) st = dinput_map_options_set_num_parallel_calls(o, num_parallel_calls);
  if (st == DINPUT_OK)
    st = dinput_map_options_set_deterministic(o, deterministic_of(deterministic));
  if (st == DINPUT_OK) {
    st = dinput_dataset_map(out, input, fn, user_data, free_user_data, o);
  } else if (free_user_data) {
    free_user_data(user_data);
  }
  dinput_map_options_free(o);
  return st;
}

static inline dinput_status_t interleave_with(dinput_dataset_t** out, const dinput_dataset_t* input,
                                              dinput_interleave_fn fn,
                                              const dinput_spec_t* out_spec, int64_t cycle_length,
                                              int64_t block_length, int64_t num_parallel_calls,
                                              int deterministic, void* user_data,
                                              dinput_free_fn free_user_data) {
  dinput_interleave_options_t* o = NULL;
  dinput_status_t st = dinput_interleave_options_new(&o);
  if (st == DINPUT_OK) st = dinput_interleave_options_set_cycle_length(o, cycle_length);
  if (st == DINPUT_OK) st = dinput_interleave_options_set_block_length(o, block_length);
  if (st == DINPUT_OK) st = dinput_interleave_options_set_num_parallel_calls(o, num_parallel_calls);
  if (st == DINPUT_OK)
    st = dinput_interleave_options_set_deterministic(o, deterministic_of(deterministic));
  if (st == DINPUT_OK) {
    st = dinput_dataset_interleave(out, input, fn, out_spec, user_data, free_user_data, o);
  } else if (free_user_data) {
    free_user_data(user_data);
  }
  dinput_interleave_options_free(o);
  return st;
}

/* seed < 0: no seed (a random one). */
static inline dinput_status_t shuffle_with(dinput_dataset_t** out, const dinput_dataset_t* input,
                                           int64_t buffer_size, int64_t seed, int reshuffle) {
  dinput_shuffle_options_t* o = NULL;
  dinput_status_t st = dinput_shuffle_options_new(&o);
  if (st == DINPUT_OK && seed >= 0) st = dinput_shuffle_options_set_seed(o, seed, 0);
  if (st == DINPUT_OK) st = dinput_shuffle_options_set_reshuffle_each_iteration(o, reshuffle);
  if (st == DINPUT_OK) st = dinput_dataset_shuffle(out, input, buffer_size, o);
  dinput_shuffle_options_free(o);
  return st;
}

static inline dinput_status_t batch_with(dinput_dataset_t** out, const dinput_dataset_t* input,
                                         int64_t batch_size, int drop_remainder) {
  dinput_batch_options_t* o = NULL;
  dinput_status_t st = dinput_batch_options_new(&o);
  if (st == DINPUT_OK) st = dinput_batch_options_set_drop_remainder(o, drop_remainder);
  if (st == DINPUT_OK) st = dinput_dataset_batch(out, input, batch_size, o);
  dinput_batch_options_free(o);
  return st;
}

/* Every element (bytes scalars) of ds joined by ',' into dst (at most cap bytes); returns the
 * final status of the iteration (DINPUT_OUT_OF_RANGE at its end). */
static inline dinput_status_t join_strings(const dinput_dataset_t* ds, char* dst, size_t cap) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  dinput_status_t st;
  size_t used = 0;
  dst[0] = '\0';
  if ((st = dinput_dataset_iterator(&it, ds)) != DINPUT_OK) return st;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    const char* s = NULL;
    size_t len = 0;
    if (dinput_tensor_string_view(&s, &len, dinput_element_get(e, 0), 0) == DINPUT_OK &&
        used + len + 2 < cap) {
      if (used) dst[used++] = ',';
      memcpy(dst + used, s, len);
      used += len;
      dst[used] = '\0';
    }
    dinput_element_free(e);
  }
  dinput_iterator_free(it);
  return st;
}

#endif /* DINPUT_TESTS_CHECK_H */
