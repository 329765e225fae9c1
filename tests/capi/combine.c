/* zip, concatenate, sample_from_datasets, choose_from_datasets, cache and ignore_errors
 * through the C API: their elements, their argument errors, the cache file read back, and
 * the "errors_ignored" statistic. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dinput.h"

#define MAXV 256

static int64_t got[MAXV];

static void expect_values(dinput_dataset_t* ds, const int64_t* expected, int64_t n, int line) {
  int64_t total = drain_int64(ds, got, MAXV, NULL);
  int ok = same_int64(got, total, expected, n);
  if (!ok) {
    int64_t i;
    fprintf(stderr, "line %d: got %" PRId64 " values:", line, total);
    for (i = 0; i < total && i < 40; ++i) fprintf(stderr, " %" PRId64, got[i]);
    fprintf(stderr, "\n");
  }
  check_record_(ok, __FILE__, line, "dataset values");
}
#define EXPECT_VALUES(ds, ...)                                                                   \
  do {                                                                                           \
    static const int64_t expected_[] = {__VA_ARGS__};                                            \
    expect_values((ds), expected_, (int64_t)(sizeof expected_ / sizeof expected_[0]), __LINE__); \
  } while (0)

/* The dataset of the slices of an int64 vector. */
static dinput_dataset_t* slices(const int64_t* values, int64_t n) {
  dinput_dataset_t* ds = NULL;
  dinput_tensor_t* t = make_int64(values, n, 1);
  dinput_element_t* e = make_element(&t, 1);
  CHECK_OK(dinput_dataset_from_tensor_slices(&ds, e));
  dinput_element_free(e);
  return ds;
}

static dinput_dataset_t* range(int64_t start, int64_t stop) {
  dinput_dataset_t* ds = NULL;
  CHECK_OK(dinput_dataset_range(&ds, start, stop, 1));
  return ds;
}

static void test_zip_and_concatenate(void) {
  dinput_dataset_t *a = range(1, 4), *b = range(4, 7), *z = NULL, *c = NULL;
  const dinput_dataset_t* both[2];
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t pair[2];
  both[0] = a;
  both[1] = b;
  CHECK_OK(dinput_dataset_zip(&z, both, 2));
  CHECK(strcmp(dinput_dataset_name(z), "zip") == 0);
  CHECK(dinput_dataset_cardinality(z) == 3);
  CHECK_OK(dinput_dataset_iterator(&it, z));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(dinput_element_size(e) == 2);
  CHECK(read_int64(e, 0, pair, 1) == 1 && read_int64(e, 1, pair + 1, 1) == 1);
  CHECK(pair[0] == 1 && pair[1] == 4);
  dinput_element_free(e);
  dinput_iterator_free(it);
  dinput_dataset_free(z);

  CHECK_OK(dinput_dataset_concatenate(&c, a, b));
  CHECK(dinput_dataset_cardinality(c) == 6);
  EXPECT_VALUES(c, 1, 2, 3, 4, 5, 6);
  dinput_dataset_free(c);

  /* Errors name the argument. */
  CHECK_STATUS(dinput_dataset_zip(&z, both, 0), DINPUT_INVALID_ARGUMENT);
  CHECK(z == NULL);
  CHECK_STATUS(dinput_dataset_zip(&z, NULL, 2), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("datasets");
  both[1] = NULL;
  CHECK_STATUS(dinput_dataset_zip(&z, both, 2), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("datasets[1]");
  CHECK_STATUS(dinput_dataset_concatenate(&c, a, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("other");
  dinput_dataset_free(a);
  dinput_dataset_free(b);
}

static void test_sample_and_choose(void) {
  dinput_dataset_t *a = range(0, 50), *b = range(100, 150), *s = NULL, *s2 = NULL, *sel = NULL,
                   *ch = NULL;
  const dinput_dataset_t* in[2];
  double weights[2] = {3, 1};
  double bad[2] = {1, -1};
  int64_t first[MAXV], n1, n2, i, from_b = 0;
  in[0] = a;
  in[1] = b;
  CHECK_OK(dinput_dataset_sample_from_datasets(&s, in, 2, weights, 42, 0));
  CHECK(strcmp(dinput_dataset_name(s), "sample_from_datasets") == 0);
  n1 = drain_int64(s, first, MAXV, NULL);
  CHECK(n1 == 100); /* not stopping: every element of both */
  CHECK_OK(dinput_dataset_sample_from_datasets(&s2, in, 2, weights, 42, 0));
  n2 = drain_int64(s2, got, MAXV, NULL);
  CHECK(same_int64(got, n2, first, n1)); /* the same seed, the same picks */
  for (i = 0; i < 40; ++i) from_b += first[i] >= 100;
  CHECK(from_b < 20); /* weighted 3:1 towards a */
  dinput_dataset_free(s);
  dinput_dataset_free(s2);

  CHECK_STATUS(dinput_dataset_sample_from_datasets(&s, in, 2, bad, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("weight 1");

  {
    int64_t picks[5] = {1, 0, 1, 1, 0};
    sel = slices(picks, 5);
  }
  CHECK_OK(dinput_dataset_choose_from_datasets(&ch, in, 2, sel, 1));
  EXPECT_VALUES(ch, 100, 0, 101, 102, 1);
  dinput_dataset_free(ch);
  CHECK_STATUS(dinput_dataset_choose_from_datasets(&ch, in, 2, NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("selector");
  dinput_dataset_free(sel);
  {
    /* An index outside the datasets fails get_next, naming it. */
    int64_t picks[2] = {0, 7};
    dinput_iterator_t* it = NULL;
    dinput_element_t* e = NULL;
    sel = slices(picks, 2);
    CHECK_OK(dinput_dataset_choose_from_datasets(&ch, in, 2, sel, 1));
    CHECK_OK(dinput_dataset_iterator(&it, ch));
    CHECK_OK(dinput_iterator_get_next(&e, it));
    dinput_element_free(e);
    CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("index 7");
    dinput_iterator_free(it);
    dinput_dataset_free(ch);
    dinput_dataset_free(sel);
  }
  dinput_dataset_free(a);
  dinput_dataset_free(b);
}

static int calls = 0;

/* Counts its calls; fails with INVALID_ARGUMENT on multiples of 3. */
static dinput_status_t count_or_fail(dinput_element_t** out, const dinput_element_t* in,
                                     void* user_data) {
  int64_t v = 0;
  (void)user_data;
  ++calls;
  dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64);
  if (user_data && v % 3 == 0) return DINPUT_INVALID_ARGUMENT;
  return dinput_element_ref(out, in);
}

static void test_cache_and_ignore_errors(void) {
  char dir[] = "/tmp/dinput_capi_combine_XXXXXX";
  char path[128];
  struct stat st;
  dinput_dataset_t *r = range(0, 5), *m = NULL, *c = NULL, *c2 = NULL, *rep = NULL, *ig = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t ignored = -1;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/cache", dir);
  CHECK_OK(map_with(&m, r, count_or_fail, NULL, 1, 1, NULL, NULL));

  /* In memory: three passes read the input once. */
  CHECK_OK(dinput_dataset_cache(&c, m, NULL));
  CHECK(strcmp(dinput_dataset_name(c), "cache") == 0);
  CHECK_OK(dinput_dataset_repeat(&rep, c, 3));
  calls = 0;
  EXPECT_VALUES(rep, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4);
  CHECK(calls == 5);
  dinput_dataset_free(rep);
  dinput_dataset_free(c);

  /* To a file: written by the first pass, read back by a second dataset. */
  CHECK_OK(dinput_dataset_cache(&c, m, path));
  calls = 0;
  EXPECT_VALUES(c, 0, 1, 2, 3, 4);
  CHECK(calls == 5 && stat(path, &st) == 0);
  CHECK_OK(dinput_dataset_cache(&c2, m, path));
  calls = 0;
  EXPECT_VALUES(c2, 0, 1, 2, 3, 4);
  CHECK(calls == 0);
  dinput_dataset_free(c);
  dinput_dataset_free(c2);
  /* Another pipeline's file. */
  CHECK_OK(dinput_dataset_cache(&c, r, path));
  CHECK_OK(dinput_dataset_iterator(&it, c));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG(path);
  dinput_iterator_free(it);
  dinput_dataset_free(c);
  unlink(path);
  rmdir(dir);

  /* ignore_errors drops 0 and 3 and counts them. */
  dinput_dataset_free(m);
  CHECK_OK(map_with(&m, r, count_or_fail, NULL, 1, 1, &calls, NULL));
  CHECK_OK(dinput_dataset_ignore_errors(&ig, m, 0));
  EXPECT_VALUES(ig, 1, 2, 4);
  CHECK_OK(dinput_dataset_iterator(&it, ig));
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) dinput_element_free(e);
  CHECK_OK(dinput_iterator_statistic(&ignored, it, "errors_ignored"));
  CHECK(ignored == 2);
  dinput_iterator_free(it);
  /* Without it, the first error ends the iteration. */
  CHECK_OK(dinput_dataset_iterator(&it, m));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
  dinput_iterator_free(it);
  {
    dinput_dataset_t* none = NULL; /* a failing call clears its out-parameter */
    CHECK_STATUS(dinput_dataset_ignore_errors(&none, NULL, 0), DINPUT_INVALID_ARGUMENT);
    CHECK(none == NULL);
  }
  dinput_dataset_free(ig);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

int main(void) {
  test_zip_and_concatenate();
  test_sample_and_choose();
  test_cache_and_ignore_errors();
  return check_finish_();
}
