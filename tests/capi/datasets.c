/* Every dataset constructor of dinput.h through the C API, with real iteration results;
 * bad arguments; iterators (end, restart, free order) and optionals. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dinput.h"

#define MAXV 256

static int64_t got[MAXV];

/* Checks that `ds` yields exactly `expected` (component 0 flattened) in `num_elements`
 * elements. Frees ds. */
static void expect_values(dinput_dataset_t* ds, const int64_t* expected, int64_t n,
                          int64_t num_elements, int line) {
  int64_t count = -1;
  int64_t total = drain_int64(ds, got, MAXV, &count);
  int ok = same_int64(got, total, expected, n) && count == num_elements;
  if (!ok) {
    int64_t i;
    fprintf(stderr, "line %d: got %" PRId64 " values in %" PRId64 " elements:", line, total, count);
    for (i = 0; i < total && i < 40; ++i) fprintf(stderr, " %" PRId64, got[i]);
    fprintf(stderr, "\n");
  }
  check_record_(ok, __FILE__, line, "dataset values");
  dinput_dataset_free(ds);
}
#define EXPECT_VALUES(ds, n_elements, ...)                                            \
  do {                                                                                \
    static const int64_t expected_[] = {__VA_ARGS__};                                 \
    expect_values((ds), expected_, (int64_t)(sizeof expected_ / sizeof expected_[0]), \
                  (n_elements), __LINE__);                                            \
  } while (0)

static dinput_dataset_t* range(int64_t start, int64_t stop, int64_t step) {
  dinput_dataset_t* ds = NULL;
  CHECK_OK(dinput_dataset_range(&ds, start, stop, step));
  return ds;
}

/* The element sizes of a batched dataset (component 0's first dimension), into sizes. */
static int64_t batch_sizes(const dinput_dataset_t* ds, int64_t* sizes, int64_t cap) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t n = 0;
  if (dinput_dataset_iterator(&it, ds) != DINPUT_OK) return -1;
  while (n < cap && dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    sizes[n++] = dinput_tensor_dim(dinput_element_get(e, 0), 0);
    dinput_element_free(e);
  }
  dinput_iterator_free(it);
  return n;
}

static void test_range(void) {
  dinput_dataset_t* ds = NULL;
  EXPECT_VALUES(range(0, 5, 1), 5, 0, 1, 2, 3, 4);
  EXPECT_VALUES(range(10, 0, -4), 3, 10, 6, 2);
  EXPECT_VALUES(range(INT64_MAX - 2, INT64_MAX, 1), 2, INT64_MAX - 2, INT64_MAX - 1);
  EXPECT_VALUES(range(INT64_MIN, INT64_MAX, INT64_MAX), 3, INT64_MIN, -1, INT64_MAX - 1);
  ds = range(3, 3, 1);
  CHECK(dinput_dataset_cardinality(ds) == 0);
  CHECK(drain_int64(ds, got, MAXV, NULL) == 0);
  dinput_dataset_free(ds);
  ds = range(0, 10, 3);
  CHECK(dinput_dataset_cardinality(ds) == 4);
  CHECK(strcmp(dinput_dataset_name(ds), "range") == 0);
  dinput_dataset_free(ds);
  ds = (dinput_dataset_t*)(void*)got;
  CHECK_STATUS(dinput_dataset_range(&ds, 0, 10, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("step");
  CHECK(ds == NULL);
}

/* docs/semantics.md, "Datasets": from_tensors(([1.],[1.])) is one element with two
 * components of shape [1]. */
static void test_from_tensors(void) {
  float one = 1.0f;
  int64_t shape[1] = {1};
  dinput_tensor_t* parts[2];
  dinput_element_t *e, *item = NULL;
  dinput_dataset_t* ds = NULL;
  dinput_iterator_t* it = NULL;
  dinput_spec_t* spec = NULL;
  float back = 0;
  CHECK_OK(dinput_tensor_new(&parts[0], DINPUT_FLOAT32, shape, 1, &one, sizeof one));
  CHECK_OK(dinput_tensor_new(&parts[1], DINPUT_FLOAT32, shape, 1, &one, sizeof one));
  e = make_element(parts, 2);
  CHECK_OK(dinput_dataset_from_tensors(&ds, e));
  dinput_element_free(e); /* the dataset keeps what it needs */
  CHECK(dinput_dataset_cardinality(ds) == 1);
  CHECK(strcmp(dinput_dataset_name(ds), "from_tensors") == 0);
  CHECK_OK(dinput_dataset_element_spec(&spec, ds));
  CHECK(dinput_spec_size(spec) == 2);
  CHECK(dinput_spec_dtype(spec, 1) == DINPUT_FLOAT32 && dinput_spec_rank(spec, 1) == 1 &&
        dinput_spec_shape(spec, 1)[0] == 1);
  dinput_spec_free(spec);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_OK(dinput_iterator_get_next(&item, it));
  CHECK(dinput_element_size(item) == 2);
  CHECK_OK(dinput_tensor_copy_to(&back, sizeof back, dinput_element_get(item, 1), DINPUT_FLOAT32));
  CHECK(back == 1.0f);
  dinput_element_free(item);
  item = (dinput_element_t*)(void*)got;
  CHECK_STATUS(dinput_iterator_get_next(&item, it), DINPUT_OUT_OF_RANGE);
  CHECK(item == NULL);
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
}

static void test_from_tensor_slices(void) {
  int64_t v[4] = {1, 2, 3, 4};
  int64_t w[3] = {5, 6, 7};
  dinput_tensor_t* parts[2];
  dinput_element_t* e;
  dinput_dataset_t* ds = NULL;

  parts[0] = make_int64(v, 4, 1);
  e = make_element(parts, 1);
  CHECK_OK(dinput_dataset_from_tensor_slices(&ds, e));
  dinput_element_free(e);
  CHECK(dinput_dataset_cardinality(ds) == 4);
  EXPECT_VALUES(ds, 4, 1, 2, 3, 4);

  /* Components with different numbers of rows. */
  parts[0] = make_int64(v, 4, 1);
  parts[1] = make_int64(w, 3, 1);
  e = make_element(parts, 2);
  ds = (dinput_dataset_t*)(void*)got;
  CHECK_STATUS(dinput_dataset_from_tensor_slices(&ds, e), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("first dimension");
  CHECK(ds == NULL);
  dinput_element_free(e);

  /* A scalar cannot be sliced. */
  parts[0] = make_int64(v, 1, 0);
  e = make_element(parts, 1);
  CHECK_STATUS(dinput_dataset_from_tensor_slices(&ds, e), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("scalar");
  dinput_element_free(e);
}

static void test_batch(void) {
  dinput_dataset_t *r = range(0, 10, 1), *ds = NULL;
  dinput_spec_t* spec = NULL;
  CHECK_OK(dinput_dataset_batch(&ds, r, 4, NULL));
  CHECK(dinput_dataset_cardinality(ds) == 3);
  CHECK(strcmp(dinput_dataset_name(ds), "batch") == 0);
  CHECK_OK(dinput_dataset_element_spec(&spec, ds));
  CHECK(dinput_spec_rank(spec, 0) == 1 && dinput_spec_shape(spec, 0)[0] == DINPUT_UNKNOWN_DIM);
  dinput_spec_free(spec);
  EXPECT_VALUES(ds, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);

  CHECK_OK(batch_with(&ds, r, 4, 1));
  CHECK(dinput_dataset_cardinality(ds) == 2);
  CHECK_OK(dinput_dataset_element_spec(&spec, ds));
  CHECK(dinput_spec_shape(spec, 0)[0] == 4);
  dinput_spec_free(spec);
  EXPECT_VALUES(ds, 2, 0, 1, 2, 3, 4, 5, 6, 7);

  ds = (dinput_dataset_t*)(void*)got;
  CHECK_STATUS(dinput_dataset_batch(&ds, r, 0, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("batch_size");
  CHECK(ds == NULL);
  CHECK_STATUS(batch_with(&ds, r, -3, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("-3");
  dinput_dataset_free(r);
}

static void test_batch_of_bytes(void) {
  const char* words[5] = {"a", "bb", "", "dddd", "e"};
  int64_t shape[1] = {5};
  dinput_tensor_t* t = NULL;
  dinput_element_t *e, *item = NULL;
  dinput_dataset_t *slices = NULL, *batched = NULL;
  dinput_iterator_t* it = NULL;
  const char* s = NULL;
  size_t len = 0;
  CHECK_OK(dinput_tensor_new_bytes(&t, shape, 1, words, NULL));
  e = make_element(&t, 1);
  CHECK_OK(dinput_dataset_from_tensor_slices(&slices, e));
  dinput_element_free(e);
  CHECK_OK(dinput_dataset_batch(&batched, slices, 2, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, batched));
  CHECK_OK(dinput_iterator_get_next(&item, it));
  dinput_element_free(item);
  CHECK_OK(dinput_iterator_get_next(&item, it));
  CHECK(dinput_tensor_dtype(dinput_element_get(item, 0)) == DINPUT_BYTES);
  CHECK(dinput_tensor_dim(dinput_element_get(item, 0), 0) == 2);
  CHECK_OK(dinput_tensor_string_view(&s, &len, dinput_element_get(item, 0), 1));
  CHECK(len == 4 && memcmp(s, "dddd", 4) == 0);
  dinput_element_free(item);
  CHECK_OK(dinput_iterator_get_next(&item, it));
  CHECK(dinput_tensor_dim(dinput_element_get(item, 0), 0) == 1);
  CHECK_OK(dinput_tensor_string_view(&s, &len, dinput_element_get(item, 0), 0));
  CHECK(len == 1 && s[0] == 'e');
  dinput_element_free(item);
  CHECK_STATUS(dinput_iterator_get_next(&item, it), DINPUT_OUT_OF_RANGE);
  dinput_iterator_free(it);
  dinput_dataset_free(batched);
  dinput_dataset_free(slices);
}

static void test_unbatch_repeat_take_skip(void) {
  dinput_dataset_t *r = range(0, 5, 1), *b = NULL, *ds = NULL, *forever = NULL;
  CHECK_OK(dinput_dataset_batch(&b, r, 2, NULL));
  CHECK_OK(dinput_dataset_unbatch(&ds, b));
  CHECK(strcmp(dinput_dataset_name(ds), "unbatch") == 0);
  EXPECT_VALUES(ds, 5, 0, 1, 2, 3, 4);
  CHECK_STATUS(dinput_dataset_unbatch(&ds, r), DINPUT_INVALID_ARGUMENT); /* scalars */
  CHECK_MSG("scalar");

  CHECK_OK(dinput_dataset_repeat(&ds, r, 2));
  CHECK(dinput_dataset_cardinality(ds) == 10);
  EXPECT_VALUES(ds, 10, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4);
  CHECK_OK(dinput_dataset_repeat(&forever, r, DINPUT_REPEAT_FOREVER));
  CHECK(dinput_dataset_cardinality(forever) == DINPUT_INFINITE_CARDINALITY);
  CHECK_OK(dinput_dataset_take(&ds, forever, 7));
  CHECK(dinput_dataset_cardinality(ds) == 7);
  EXPECT_VALUES(ds, 7, 0, 1, 2, 3, 4, 0, 1);
  CHECK_STATUS(dinput_dataset_repeat(&ds, r, -2), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("-2");

  /* Batches span epochs (docs/semantics.md, "Datasets"). */
  {
    dinput_dataset_t* rep = NULL;
    CHECK_OK(dinput_dataset_repeat(&rep, r, 2));
    CHECK_OK(dinput_dataset_batch(&ds, rep, 4, NULL));
    EXPECT_VALUES(ds, 3, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4);
    dinput_dataset_free(rep);
  }

  CHECK_OK(dinput_dataset_take(&ds, r, -1));
  EXPECT_VALUES(ds, 5, 0, 1, 2, 3, 4);
  CHECK_OK(dinput_dataset_take(&ds, r, 2));
  CHECK(strcmp(dinput_dataset_name(ds), "take") == 0);
  EXPECT_VALUES(ds, 2, 0, 1);
  CHECK_OK(dinput_dataset_skip(&ds, r, 3));
  CHECK(strcmp(dinput_dataset_name(ds), "skip") == 0);
  CHECK(dinput_dataset_cardinality(ds) == 2);
  EXPECT_VALUES(ds, 2, 3, 4);
  CHECK_OK(dinput_dataset_skip(&ds, r, -1));
  CHECK(dinput_dataset_cardinality(ds) == 0);
  CHECK(drain_int64(ds, got, MAXV, NULL) == 0);
  dinput_dataset_free(ds);
  ds = (dinput_dataset_t*)(void*)got;
  CHECK_STATUS(dinput_dataset_take(&ds, r, -2), DINPUT_INVALID_ARGUMENT);
  CHECK(ds == NULL);
  CHECK_STATUS(dinput_dataset_skip(&ds, r, -5), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("-5");

  dinput_dataset_free(forever);
  dinput_dataset_free(b);
  dinput_dataset_free(r);
}

static void test_shard(void) {
  dinput_dataset_t *r = range(0, 10, 1), *ds = NULL, *hint = NULL;
  dinput_iterator_t* it = NULL;
  CHECK_OK(dinput_dataset_shard(&ds, r, 3, 1));
  CHECK(dinput_dataset_cardinality(ds) == 3);
  CHECK(strcmp(dinput_dataset_name(ds), "shard") == 0);
  EXPECT_VALUES(ds, 3, 1, 4, 7);
  ds = (dinput_dataset_t*)(void*)got;
  CHECK_STATUS(dinput_dataset_shard(&ds, r, 3, 3), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("index");
  CHECK(ds == NULL);
  CHECK_STATUS(dinput_dataset_shard(&ds, r, 3, -2), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_shard(&ds, r, 0, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("num_shards");
  CHECK_STATUS(dinput_dataset_shard(&ds, r, DINPUT_SHARD_HINT, 0), DINPUT_INVALID_ARGUMENT);
  /* The placeholder is accepted, but only distribution can iterate it. */
  CHECK_OK(dinput_dataset_shard(&hint, r, DINPUT_SHARD_HINT, DINPUT_SHARD_HINT));
  it = (dinput_iterator_t*)(void*)got;
  CHECK_STATUS(dinput_dataset_iterator(&it, hint), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("SHARD_HINT");
  CHECK(it == NULL);
  dinput_dataset_free(hint);
  dinput_dataset_free(r);
}

static int64_t sorted_is_iota(int64_t* v, int64_t n) {
  int64_t i, j;
  for (i = 1; i < n; ++i)
    for (j = i; j > 0 && v[j - 1] > v[j]; --j) {
      int64_t tmp = v[j];
      v[j] = v[j - 1];
      v[j - 1] = tmp;
    }
  for (i = 0; i < n; ++i)
    if (v[i] != i) return 0;
  return 1;
}

static void test_shuffle(void) {
  dinput_dataset_t *r = range(0, 50, 1), *a = NULL, *b = NULL, *re = NULL;
  int64_t first[50], second[50], third[50];
  int64_t n1, n2, n3;
  CHECK_OK(shuffle_with(&a, r, 50, 1234, 0));
  CHECK_OK(shuffle_with(&b, r, 50, 1234, 0));
  CHECK(strcmp(dinput_dataset_name(a), "shuffle") == 0);
  CHECK(dinput_dataset_cardinality(a) == 50);
  n1 = drain_int64(a, first, 50, NULL);
  n2 = drain_int64(b, second, 50, NULL);
  CHECK(n1 == 50 && same_int64(first, n1, second, n2)); /* same seed, same order */
  dinput_dataset_free(b);
  b = NULL;
  n3 = drain_int64(a, third, 50, NULL);
  CHECK(same_int64(first, n1, third, n3)); /* no reshuffle: same order again */
  CHECK(!same_int64(first, n1, got, drain_int64(r, got, MAXV, NULL))); /* shuffled at all */
  CHECK(sorted_is_iota(first, n1));                                    /* a permutation */

  CHECK_OK(shuffle_with(&re, r, 50, 1234, 1));
  n1 = drain_int64(re, first, 50, NULL);
  n2 = drain_int64(re, second, 50, NULL);
  CHECK(n1 == 50 && n2 == 50 && !same_int64(first, n1, second, n2)); /* a new order per iterator */
  CHECK(sorted_is_iota(second, n2));

  CHECK_STATUS(shuffle_with(&b, r, 0, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("buffer_size");
  dinput_dataset_free(re);
  dinput_dataset_free(a);
  dinput_dataset_free(r);
}

static dinput_status_t square(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  int64_t v = 0;
  dinput_tensor_t* t;
  (void)user_data;
  if (dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64) != DINPUT_OK)
    return dinput_last_error_code();
  v = v * v;
  t = make_int64(&v, 1, 0);
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static dinput_status_t is_odd(int* keep, const dinput_element_t* in, void* user_data) {
  int64_t v = 0;
  (void)user_data;
  dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64);
  *keep = (int)(v % 2 != 0);
  return DINPUT_OK;
}

static void test_map_filter_enumerate_prefetch(void) {
  dinput_dataset_t *r = range(0, 6, 1), *ds = NULL, *mapped = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t pair[2];
  CHECK_OK(map_with(&mapped, r, square, NULL, 1, 1, NULL, NULL));
  CHECK(strcmp(dinput_dataset_name(mapped), "map") == 0);
  CHECK(dinput_dataset_cardinality(mapped) == 6);
  EXPECT_VALUES(mapped, 6, 0, 1, 4, 9, 16, 25);
  CHECK_OK(map_with(&mapped, r, square, NULL, DINPUT_AUTOTUNE, 1, NULL, NULL));
  EXPECT_VALUES(mapped, 6, 0, 1, 4, 9, 16, 25);
  CHECK_STATUS(map_with(&mapped, r, square, NULL, -7, 1, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("num_parallel_calls");

  CHECK_OK(dinput_dataset_filter(&ds, r, is_odd, NULL, NULL));
  CHECK(strcmp(dinput_dataset_name(ds), "filter") == 0);
  CHECK(dinput_dataset_cardinality(ds) == DINPUT_UNKNOWN_CARDINALITY);
  EXPECT_VALUES(ds, 3, 1, 3, 5);

  CHECK_OK(dinput_dataset_enumerate(&ds, r, 100));
  CHECK(strcmp(dinput_dataset_name(ds), "enumerate") == 0);
  CHECK(dinput_dataset_cardinality(ds) == 6);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(dinput_element_size(e) == 2);
  CHECK(read_int64(e, 0, pair, 1) == 1 && pair[0] == 101);
  CHECK(read_int64(e, 1, pair + 1, 1) == 1 && pair[1] == 1);
  dinput_element_free(e);
  dinput_iterator_free(it);
  dinput_dataset_free(ds);

  CHECK_OK(dinput_dataset_prefetch(&ds, r, 2));
  CHECK(strcmp(dinput_dataset_name(ds), "prefetch") == 0);
  EXPECT_VALUES(ds, 6, 0, 1, 2, 3, 4, 5);
  CHECK_OK(dinput_dataset_prefetch(&ds, r, DINPUT_AUTOTUNE));
  EXPECT_VALUES(ds, 6, 0, 1, 2, 3, 4, 5);
  CHECK_OK(dinput_dataset_prefetch(&ds, r, 0));
  EXPECT_VALUES(ds, 6, 0, 1, 2, 3, 4, 5);
  CHECK_STATUS(dinput_dataset_prefetch(&ds, r, -2), DINPUT_INVALID_ARGUMENT);
  dinput_dataset_free(r);
}

static void test_rebatch(void) {
  dinput_dataset_t *r = range(0, 10, 1), *b = NULL, *ds = NULL;
  int64_t sizes[3] = {2, 0, 3};
  int64_t zeros[2] = {0, 0};
  int64_t neg[1] = {-1};
  int64_t seen[16];
  static const int64_t expected_sizes[6] = {2, 0, 3, 2, 0, 3};
  CHECK_OK(dinput_dataset_batch(&b, r, 4, NULL));
  CHECK_OK(dinput_dataset_rebatch(&ds, b, sizes, 3, 0));
  CHECK(strcmp(dinput_dataset_name(ds), "rebatch") == 0);
  CHECK(same_int64(seen, batch_sizes(ds, seen, 16), expected_sizes, 6));
  EXPECT_VALUES(ds, 6, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
  CHECK_STATUS(dinput_dataset_rebatch(&ds, b, zeros, 2, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_rebatch(&ds, b, neg, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_rebatch(&ds, b, sizes, 0, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_rebatch(&ds, r, sizes, 3, 0), DINPUT_INVALID_ARGUMENT); /* scalars */
  dinput_dataset_free(b);
  dinput_dataset_free(r);
}

static void test_options(void) {
  dinput_options_t* opts = NULL;
  dinput_dataset_t *r = range(0, 3, 1), *ds = NULL;
  CHECK_OK(dinput_options_new(&opts));
  CHECK(dinput_options_auto_shard_policy(opts) == DINPUT_AUTO_SHARD_AUTO);
  CHECK_OK(dinput_options_set_auto_shard_policy(opts, DINPUT_AUTO_SHARD_OFF));
  CHECK(dinput_options_auto_shard_policy(opts) == DINPUT_AUTO_SHARD_OFF);
  CHECK_OK(dinput_dataset_with_options(&ds, r, opts));
  dinput_options_free(opts); /* copied by with_options */
  CHECK(strcmp(dinput_dataset_name(ds), "with_options") == 0);
  CHECK(dinput_dataset_cardinality(ds) == 3);
  EXPECT_VALUES(ds, 3, 0, 1, 2);
  dinput_dataset_free(r);
}

/* ---- text_lines over files in a fresh temporary directory ---- */

static char tmpdir[256];

static void write_file(const char* path, const char* content, size_t n) {
  FILE* f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(content, 1, n, f) == n);
  fclose(f);
}

static void test_text_lines(void) {
  char a[300], b[300], missing[300];
  const char* files[3];
  dinput_dataset_t* ds = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  const char* s = NULL;
  size_t len = 0;
  static const char* const expected[3] = {"one", "two", "three"};
  int i;
  snprintf(a, sizeof a, "%s/a.txt", tmpdir);
  snprintf(b, sizeof b, "%s/b.txt", tmpdir);
  snprintf(missing, sizeof missing, "%s/missing.txt", tmpdir);
  write_file(a, "one\r\ntwo\n", 9);
  write_file(b, "three", 5);
  files[0] = a;
  files[1] = b;
  files[2] = missing;

  CHECK_OK(dinput_dataset_text_lines(&ds, files, 2));
  CHECK(strcmp(dinput_dataset_name(ds), "text_lines") == 0);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  for (i = 0; i < 3; ++i) {
    CHECK_OK(dinput_iterator_get_next(&e, it));
    CHECK(dinput_tensor_dtype(dinput_element_get(e, 0)) == DINPUT_BYTES);
    CHECK_OK(dinput_tensor_string_view(&s, &len, dinput_element_get(e, 0), 0));
    CHECK(len == strlen(expected[i]) && memcmp(s, expected[i], len) == 0);
    dinput_element_free(e);
  }
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_OUT_OF_RANGE);
  dinput_iterator_free(it);
  dinput_dataset_free(ds);

  /* The missing file fails when it is reached, with NOT_FOUND naming it. */
  CHECK_OK(dinput_dataset_text_lines(&ds, files + 1, 2));
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  e = (dinput_element_t*)(void*)files;
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_NOT_FOUND);
  CHECK_MSG(missing);
  CHECK(e == NULL);
  dinput_iterator_free(it);
  dinput_dataset_free(ds);

  /* No files: an empty dataset. */
  CHECK_OK(dinput_dataset_text_lines(&ds, NULL, 0));
  CHECK(dinput_dataset_cardinality(ds) == 0);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_OUT_OF_RANGE);
  dinput_iterator_free(it);
  dinput_dataset_free(ds);

  remove(a);
  remove(b);
}

/* ---- iterators and optionals ---- */

static void test_end_restart_and_free_order(void) {
  dinput_dataset_t *r = range(0, 6, 1), *b = NULL, *p = NULL;
  dinput_iterator_t *it = NULL, *it2 = NULL;
  dinput_element_t* e = NULL;
  dinput_spec_t* spec = NULL;
  int64_t v[4];
  int i;
  CHECK_OK(dinput_dataset_batch(&b, r, 4, NULL));
  CHECK_OK(dinput_dataset_prefetch(&p, b, 1));
  CHECK_OK(dinput_dataset_iterator(&it, p));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  /* Free every dataset handle before the iterator: it keeps the graph alive. */
  dinput_dataset_free(p);
  dinput_dataset_free(b);
  CHECK_OK(dinput_iterator_element_spec(&spec, it));
  CHECK(dinput_spec_size(spec) == 1 && dinput_spec_dtype(spec, 0) == DINPUT_INT64 &&
        dinput_spec_rank(spec, 0) == 1);
  dinput_spec_free(spec);
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(read_int64(e, 0, v, 4) == 2 && v[0] == 4 && v[1] == 5);
  dinput_element_free(e);
  /* The end is OUT_OF_RANGE on every later call. */
  for (i = 0; i < 3; ++i) {
    e = (dinput_element_t*)(void*)v;
    CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_OUT_OF_RANGE);
    CHECK(e == NULL);
  }
  dinput_iterator_free(it);

  /* A new iterator restarts; two iterators are independent. */
  CHECK_OK(dinput_dataset_iterator(&it, r));
  CHECK_OK(dinput_dataset_iterator(&it2, r));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_get_next(&e, it2));
  CHECK(read_int64(e, 0, v, 1) == 1 && v[0] == 0);
  dinput_element_free(e);
  dinput_dataset_free(r); /* the last dataset handle */
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(read_int64(e, 0, v, 1) == 1 && v[0] == 2);
  dinput_element_free(e);
  dinput_iterator_free(it);
  dinput_iterator_free(it2);

  /* An element outlives its iterator and dataset. */
  r = range(7, 8, 1);
  CHECK_OK(dinput_dataset_iterator(&it, r));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_iterator_free(it);
  dinput_dataset_free(r);
  CHECK(read_int64(e, 0, v, 1) == 1 && v[0] == 7);
  dinput_element_free(e);
}

static void test_optionals(void) {
  dinput_dataset_t* r = range(5, 7, 1);
  dinput_iterator_t* it = NULL;
  dinput_optional_t* opt = NULL;
  dinput_element_t *e = NULL, *e2 = NULL;
  int64_t v = 0;
  int i;
  CHECK_OK(dinput_dataset_iterator(&it, r));
  for (i = 0; i < 2; ++i) {
    CHECK_OK(dinput_iterator_get_next_as_optional(&opt, it));
    CHECK(dinput_optional_has_value(opt) == 1);
    CHECK_OK(dinput_optional_get_value(&e, opt));
    CHECK_OK(dinput_optional_get_value(&e2, opt)); /* a new handle each time */
    CHECK(e != e2);
    CHECK(read_int64(e, 0, &v, 1) == 1 && v == 5 + i);
    dinput_optional_free(opt); /* the element handles stay valid */
    CHECK(read_int64(e2, 0, &v, 1) == 1 && v == 5 + i);
    dinput_element_free(e);
    dinput_element_free(e2);
  }
  /* The end is an empty optional, not an error. */
  CHECK_OK(dinput_iterator_get_next_as_optional(&opt, it));
  CHECK(opt != NULL);
  CHECK(dinput_optional_has_value(opt) == 0);
  e = (dinput_element_t*)(void*)&v;
  CHECK_STATUS(dinput_optional_get_value(&e, opt), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("empty");
  CHECK(e == NULL);
  dinput_optional_free(opt);
  /* And stays at the end. */
  CHECK_OK(dinput_iterator_get_next_as_optional(&opt, it));
  CHECK(dinput_optional_has_value(opt) == 0);
  dinput_optional_free(opt);
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_OUT_OF_RANGE);
  dinput_iterator_free(it);
  dinput_dataset_free(r);
}

/* Shapes that do not stack: the message names both shapes. */
static dinput_status_t ragged_next(dinput_element_t** out, void* state) {
  int* n = (int*)state;
  int64_t values[3] = {1, 2, 3};
  dinput_tensor_t* t;
  if (*n >= 2) return DINPUT_OUT_OF_RANGE;
  t = make_int64(values, *n == 0 ? 2 : 3, 1);
  ++*n;
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static dinput_status_t ragged_init(void** state, void* user_data) {
  (void)user_data;
  *state = calloc(1, sizeof(int));
  return *state ? DINPUT_OK : DINPUT_RESOURCE_EXHAUSTED;
}

static void test_batch_shape_mismatch(void) {
  dinput_spec_t* spec = NULL;
  dinput_dataset_t *gen = NULL, *b = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t dims[1] = {DINPUT_UNKNOWN_DIM};
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, dims, 1));
  CHECK_OK(dinput_dataset_from_generator(&gen, spec, ragged_init, ragged_next, free, NULL, NULL));
  dinput_spec_free(spec);
  CHECK_OK(dinput_dataset_batch(&b, gen, 2, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, b));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("int64[2]");
  CHECK_MSG("int64[3]");
  CHECK(e == NULL);
  dinput_iterator_free(it);
  dinput_dataset_free(b);
  dinput_dataset_free(gen);
}

/* Iterator statistics count the work of file readers; a pipeline without one counts
 * nothing, and unknown names are NOT_FOUND naming the name. */
static void test_statistics_and_reader_options(void) {
  dinput_dataset_t* r = range(0, 4, 1);
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  dinput_options_t* opts = NULL;
  int64_t value = -1;
  CHECK_OK(dinput_dataset_iterator(&it, r));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_statistic(&value, it, "records"));
  CHECK(value == 0);
  value = -1;
  CHECK_OK(dinput_iterator_statistic(&value, it, "record_bytes"));
  CHECK(value == 0);
  value = -1;
  CHECK_OK(dinput_iterator_statistic(&value, it, "corrupt_records_skipped"));
  CHECK(value == 0);
  CHECK_STATUS(dinput_iterator_statistic(&value, it, "no_such_counter"), DINPUT_NOT_FOUND);
  CHECK_MSG("no_such_counter");
  CHECK_STATUS(dinput_iterator_statistic(NULL, it, "records"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  CHECK_STATUS(dinput_iterator_statistic(&value, NULL, "records"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'iterator'");
  CHECK_STATUS(dinput_iterator_statistic(&value, it, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'name'");
  dinput_iterator_free(it);
  dinput_dataset_free(r);

  CHECK_OK(dinput_options_new(&opts));
  CHECK_OK(dinput_options_set_skip_corrupt_records(opts, 1));
  CHECK_OK(dinput_options_set_skip_corrupt_records(opts, 0));
  CHECK_STATUS(dinput_options_set_skip_corrupt_records(NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'options'");
  dinput_options_free(opts);
}

/* Every setter of dinput_options_t and dinput_input_options_t has a getter that returns the
 * value in effect: the default first (also for NULL), then what was set. */
static void test_option_getters(void) {
  dinput_options_t* opts = NULL;
  dinput_input_options_t* in = NULL;

  CHECK(dinput_options_skip_corrupt_records(NULL) == 0);
  CHECK_OK(dinput_options_new(&opts));
  CHECK(dinput_options_skip_corrupt_records(opts) == 0);
  CHECK_OK(dinput_options_set_skip_corrupt_records(opts, 7));
  CHECK(dinput_options_skip_corrupt_records(opts) == 1);
  CHECK_OK(dinput_options_set_skip_corrupt_records(opts, 0));
  CHECK(dinput_options_skip_corrupt_records(opts) == 0);
  dinput_options_free(opts);

  CHECK(dinput_input_options_fetch_to_device(NULL) == 1);
  CHECK(dinput_input_options_replication_mode(NULL) == DINPUT_REPLICATION_PER_WORKER);
  CHECK(dinput_input_options_place_dataset_on_device(NULL) == 0);
  CHECK(dinput_input_options_per_replica_buffer_size(NULL) == 1);
  CHECK_OK(dinput_input_options_new(&in));
  CHECK(dinput_input_options_fetch_to_device(in) == 1);
  CHECK(dinput_input_options_replication_mode(in) == DINPUT_REPLICATION_PER_WORKER);
  CHECK(dinput_input_options_place_dataset_on_device(in) == 0);
  CHECK(dinput_input_options_per_replica_buffer_size(in) == 1);
  CHECK_OK(dinput_input_options_set_fetch_to_device(in, 0));
  CHECK_OK(dinput_input_options_set_replication_mode(in, DINPUT_REPLICATION_PER_REPLICA));
  CHECK_OK(dinput_input_options_set_place_dataset_on_device(in, 5));
  CHECK_OK(dinput_input_options_set_per_replica_buffer_size(in, 3));
  CHECK(dinput_input_options_fetch_to_device(in) == 0);
  CHECK(dinput_input_options_replication_mode(in) == DINPUT_REPLICATION_PER_REPLICA);
  CHECK(dinput_input_options_place_dataset_on_device(in) == 1);
  CHECK(dinput_input_options_per_replica_buffer_size(in) == 3);
  /* A refused value leaves the option as it was. */
  CHECK_STATUS(dinput_input_options_set_per_replica_buffer_size(in, -1), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_input_options_per_replica_buffer_size(in) == 3);
  CHECK_STATUS(dinput_input_options_set_replication_mode(in, (dinput_replication_mode_t)2),
               DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_input_options_replication_mode(in) == DINPUT_REPLICATION_PER_REPLICA);
  dinput_input_options_free(in);
  dinput_error_clear();
}

/* Replica indices and counts are int in every function: a loop over dinput_per_replica_size
 * or dinput_strategy_num_local_replicas uses one int index for both. Negative counts are
 * INVALID_ARGUMENT (checked before the arrays are read), negative indices out of range. */
static void test_replica_indices_and_counts(void) {
  const char* devices[2] = {"CPU:0", "CPU:1"};
  const int64_t shape[1] = {3};
  dinput_collective_t* collective = NULL;
  dinput_strategy_t* s = NULL;
  dinput_per_replica_t* v = NULL;
  dinput_tensor_t* t = NULL;
  dinput_element_t* e = NULL;
  const dinput_element_t* elements[2];
  const dinput_tensor_t* parts[1];
  int n, r;

  CHECK_STATUS(dinput_strategy_new(&s, devices, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("num_devices must be >= 0, got -1");
  CHECK(s == NULL);
  CHECK_OK(dinput_collective_new_in_process(&collective, 1, 0));
  CHECK_STATUS(dinput_strategy_new_multi_worker(&s, collective, 0, devices, -2),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("num_devices must be >= 0, got -2");
  CHECK(s == NULL);
  dinput_collective_free(collective);

  CHECK_OK(dinput_strategy_new(&s, devices, 2));
  n = dinput_strategy_num_local_replicas(s);
  CHECK(n == 2);
  CHECK_OK(dinput_tensor_new(&t, DINPUT_INT64, shape, 1, NULL, 0));
  parts[0] = t;
  CHECK_OK(dinput_element_new(&e, parts, 1));
  elements[0] = e;
  elements[1] = e;
  CHECK_STATUS(dinput_per_replica_new(&v, elements, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("count must be 0..4096");
  CHECK_STATUS(dinput_per_replica_new(&v, elements, 4097), DINPUT_INVALID_ARGUMENT);
  CHECK(v == NULL);
  CHECK_OK(dinput_per_replica_new(&v, elements, n));
  CHECK(dinput_per_replica_size(v) == n);
  for (r = 0; r < dinput_per_replica_size(v); r++) CHECK(dinput_per_replica_get(v, r) != NULL);
  CHECK(dinput_per_replica_get(v, -1) == NULL);
  CHECK(dinput_per_replica_get(v, n) == NULL);
  CHECK(dinput_per_replica_size(NULL) == 0);
  CHECK(dinput_per_replica_get(NULL, 0) == NULL);
  CHECK(strcmp(dinput_strategy_device(s, n - 1), "CPU:1") == 0);
  CHECK(dinput_strategy_device(s, -1) == NULL);
  dinput_per_replica_free(v);
  dinput_element_free(e);
  dinput_tensor_free(t);
  dinput_strategy_free(s);
  dinput_error_clear();
}

/* Whether piece r of a step holds the int64 values first, first + 1, ... (n of them). */
static int piece_holds(const dinput_per_replica_t* v, int r, int64_t first, int64_t n) {
  const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(v, r), 0);
  const int64_t* data = (const int64_t*)dinput_tensor_data(t);
  if (dinput_tensor_num_elements(t) != n) return 0;
  for (int64_t i = 0; i < n; ++i)
    if (data[i] != first + i) return 0;
  return 1;
}

/* Step s of range(40).batch(8) over 4 replicas gives replica r the values 8 s + 2 r and
 * 8 s + 2 r + 1. */
static int step_holds(const dinput_per_replica_t* v, int s) {
  int ok = dinput_per_replica_size(v) == 4;
  for (int r = 0; ok && r < 4; ++r) ok = piece_holds(v, r, 8 * s + 2 * r, 2);
  return ok;
}

/* The storage of a freed step is reused for a later one (dinput_per_replica_free gives it
 * back to its iterator): a value not yet freed, and whatever was taken out of a value with
 * a _ref, keeps its contents through any number of later steps, and after the iterator is
 * freed; values freed after their iterator are released (AddressSanitizer checks both). */
static void test_step_values_outlive_later_steps(void) {
  const char* devices[4] = {"CPU:0", "CPU:1", "CPU:2", "CPU:3"};
  dinput_dataset_t *range = NULL, *batched = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dd = NULL;
  dinput_dist_iterator_t* it = NULL;
  dinput_per_replica_t *v[5] = {NULL}, *kept_value = NULL, *kept_late = NULL, *end = NULL;
  dinput_element_t* kept_element = NULL;
  dinput_tensor_t* kept_tensor = NULL;
  const dinput_tensor_t* t;

  CHECK_OK(dinput_dataset_range(&range, 0, 40, 1));
  CHECK_OK(dinput_dataset_batch(&batched, range, 8, NULL));
  CHECK_OK(dinput_strategy_new(&strategy, devices, 4));
  CHECK_OK(dinput_strategy_distribute_dataset(&dd, strategy, batched, NULL));
  CHECK_OK(dinput_dist_dataset_iterator(&it, dd));

  CHECK_OK(dinput_dist_iterator_get_next(&v[0], it));
  CHECK(step_holds(v[0], 0));
  CHECK_OK(dinput_per_replica_ref(&kept_value, v[0]));
  CHECK_OK(dinput_element_ref(&kept_element, dinput_per_replica_get(v[0], 3)));
  CHECK_OK(dinput_tensor_ref(&kept_tensor, dinput_element_get(dinput_per_replica_get(v[0], 1), 0)));
  CHECK_OK(dinput_dist_iterator_get_next(&v[1], it)); /* v[0] still held: not reused */
  CHECK(step_holds(v[1], 1) && step_holds(v[0], 0));
  dinput_per_replica_free(v[0]);
  CHECK_OK(dinput_dist_iterator_get_next(&v[2], it)); /* may reuse v[0]'s storage */
  CHECK(step_holds(v[2], 2) && step_holds(v[1], 1));
  dinput_per_replica_free(v[1]);
  dinput_per_replica_free(v[2]);
  CHECK_OK(dinput_dist_iterator_get_next(&v[3], it));
  CHECK_OK(dinput_per_replica_ref(&kept_late, v[3])); /* a ref of a pooled value, freed last */
  dinput_per_replica_free(v[3]);
  CHECK_OK(dinput_dist_iterator_get_next(&v[4], it));
  CHECK(step_holds(v[4], 4) && step_holds(kept_late, 3));
  CHECK_STATUS(dinput_dist_iterator_get_next(&end, it), DINPUT_OUT_OF_RANGE);
  CHECK(end == NULL);

  /* What was kept from the first step is unchanged after four more. */
  CHECK(step_holds(kept_value, 0));
  t = dinput_element_get(kept_element, 0);
  CHECK(dinput_tensor_num_elements(t) == 2 && ((const int64_t*)dinput_tensor_data(t))[0] == 6 &&
        ((const int64_t*)dinput_tensor_data(t))[1] == 7);
  CHECK(dinput_tensor_num_elements(kept_tensor) == 2 &&
        ((const int64_t*)dinput_tensor_data(kept_tensor))[0] == 2);

  /* The iterator goes first; the values it handed out stay readable, then are freed. A new
   * iterator may take over the freed one's storage pool: a value of the old iterator freed
   * now gives its storage to the new one's steps, which hold their own values. */
  dinput_dist_iterator_free(it);
  CHECK_OK(dinput_dist_dataset_iterator(&it, dd));
  CHECK_OK(dinput_dist_iterator_get_next(&v[0], it));
  CHECK(step_holds(v[4], 4) && step_holds(kept_value, 0) && step_holds(kept_late, 3));
  dinput_per_replica_free(v[4]);
  for (int s = 1; s < 5; ++s) {
    CHECK_OK(dinput_dist_iterator_get_next(&v[s], it));
    CHECK(step_holds(v[s], s) && step_holds(v[s - 1], s - 1));
    dinput_per_replica_free(v[s - 1]);
  }
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dd);
  dinput_strategy_free(strategy);
  dinput_dataset_free(batched);
  dinput_dataset_free(range);
  CHECK(step_holds(v[4], 4));
  dinput_per_replica_free(v[4]);
  CHECK(step_holds(kept_value, 0));
  dinput_per_replica_free(kept_late);
  dinput_per_replica_free(kept_value);
  CHECK(((const int64_t*)dinput_tensor_data(dinput_element_get(kept_element, 0)))[1] == 7);
  dinput_element_free(kept_element);
  CHECK(((const int64_t*)dinput_tensor_data(kept_tensor))[1] == 3);
  dinput_tensor_free(kept_tensor);
  dinput_error_clear();
}

int main(void) {
  const char* base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/dinput_capi_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  test_range();
  test_from_tensors();
  test_from_tensor_slices();
  test_batch();
  test_batch_of_bytes();
  test_unbatch_repeat_take_skip();
  test_shard();
  test_shuffle();
  test_map_filter_enumerate_prefetch();
  test_rebatch();
  test_options();
  test_text_lines();
  test_end_restart_and_free_order();
  test_optionals();
  test_batch_shape_mismatch();
  test_statistics_and_reader_options();
  test_option_getters();
  test_replica_indices_and_counts();
  test_step_values_outlive_later_steps();
  rmdir(tmpdir);
  return check_finish_();
}
