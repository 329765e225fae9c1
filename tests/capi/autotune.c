/* Autotuning (docs/autotune.md) through the C API: the RAM budget option and its errors, the
 * knobs the statistics list, and a slow map given DINPUT_AUTOTUNE running with more than one
 * thread. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "dinput.h"

static dinput_status_t sleepy(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  struct timespec d = {0, 2 * 1000000L};
  (void)user_data;
  nanosleep(&d, NULL);
  return dinput_element_ref(out, in);
}

/* ds with a RAM budget of `bytes`. */
static dinput_dataset_t* with_budget(const dinput_dataset_t* ds, int64_t bytes) {
  dinput_options_t* o = NULL;
  dinput_dataset_t* out = NULL;
  CHECK_OK(dinput_options_new(&o));
  CHECK_OK(dinput_options_set_ram_budget(o, bytes));
  CHECK_OK(dinput_dataset_with_options(&out, ds, o));
  dinput_options_free(o);
  return out;
}

/* Iterates ds to its end, checking the values are 0..n-1 in order; returns its statistics. */
static char* run_in_order(const dinput_dataset_t* ds, int64_t n) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  char* json = NULL;
  int64_t i = 0, ordered = 1;
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    int64_t v = -1;
    read_int64(e, 0, &v, 1);
    ordered = ordered && v == i;
    ++i;
    dinput_element_free(e);
  }
  CHECK(i == n);
  CHECK(ordered);
  CHECK_OK(dinput_iterator_statistics(&json, it));
  dinput_iterator_free(it);
  return json;
}

static void test_bad_budget(void) {
  dinput_options_t* o = NULL;
  CHECK_OK(dinput_options_new(&o));
  CHECK_STATUS(dinput_options_set_ram_budget(o, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_options_set_ram_budget: argument 'bytes'");
  CHECK_MSG("got -1");
  CHECK_OK(dinput_options_set_ram_budget(o, 0)); /* the default */
  CHECK_OK(dinput_options_set_ram_budget(o, 1));
  dinput_options_free(o);
  CHECK_STATUS(dinput_options_set_ram_budget(NULL, 1), DINPUT_INVALID_ARGUMENT);
}

/* range(150).map(sleep 2 ms, AUTOTUNE).prefetch(AUTOTUNE): the map's parallelism rises above
 * one; both knobs are listed with their bounds; the budget shows. */
static void test_slow_map_tunes(void) {
  dinput_dataset_t *r = NULL, *m = NULL, *p = NULL, *b = NULL;
  char* json;
  const char *map, *prefetch;
  CHECK_OK(dinput_dataset_range(&r, 0, 150, 1));
  CHECK_OK(map_with(&m, r, sleepy, NULL, DINPUT_AUTOTUNE, 1, NULL, NULL));
  CHECK_OK(dinput_dataset_prefetch(&p, m, DINPUT_AUTOTUNE));
  b = with_budget(p, (int64_t)1 << 30);
  json = run_in_order(b, 150);
  CHECK(json != NULL);
  CHECK(field(json ? strstr(json, "\"autotune\":{") : NULL, "ram_budget") == (int64_t)1 << 30);
  map = json ? strstr(json, "\"knob\":\"parallelism\"") : NULL;
  prefetch = json ? strstr(json, "\"knob\":\"buffer_size\"") : NULL;
  CHECK(map != NULL && prefetch != NULL);
  CHECK(field(map, "value") > 1);
  CHECK(field(map, "min") == 1);
  CHECK(field(prefetch, "value") >= 1);
  if (field(map, "value") <= 1) fprintf(stderr, "statistics: %s\n", json ? json : "(null)");
  dinput_string_free(json);
  dinput_dataset_free(b);
  dinput_dataset_free(p);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

/* A budget of one byte: nothing is raised, and every element still comes, in order. */
static void test_tiny_budget(void) {
  dinput_dataset_t *r = NULL, *m = NULL, *b = NULL;
  char* json;
  CHECK_OK(dinput_dataset_range(&r, 0, 60, 1));
  CHECK_OK(map_with(&m, r, sleepy, NULL, DINPUT_AUTOTUNE, 1, NULL, NULL));
  b = with_budget(m, 1);
  json = run_in_order(b, 60);
  CHECK(field(json ? strstr(json, "\"knob\":\"parallelism\"") : NULL, "value") == 1);
  CHECK(field(json ? strstr(json, "\"autotune\":{") : NULL, "raises") == 0);
  dinput_string_free(json);
  dinput_dataset_free(b);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

int main(void) {
  test_bad_budget();
  test_slow_map_tunes();
  test_tiny_budget();
  return check_finish_();
}
