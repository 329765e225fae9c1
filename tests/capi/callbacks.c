/* Callbacks through the C API: generator, map, map_many and filter results and failures
 * (their messages must reach get_next, also from library threads), spec checks on what they
 * produce, and the lifetime of user_data (free_user_data exactly once, also when the
 * constructor fails). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "dinput.h"

/* ---- a counting generator: yields 0..limit-1, optionally failing at one index ---- */

struct gen_config {
  int64_t limit;
  int64_t fail_at;           /* -1: never */
  dinput_status_t fail_code; /* status returned at fail_at */
  const char* fail_message;  /* given to dinput_error_set, or NULL to set none */
  int wrong_shape_at;        /* -1: never; else yields an int64[2] there */
  int no_element_at;         /* -1: never; else returns OK without an element */
  int fail_init;
  /* counters */
  int inits, finalizes, frees;
};

struct gen_state {
  struct gen_config* config;
  int64_t next;
};

static dinput_status_t gen_init(void** state, void* user_data) {
  struct gen_config* c = (struct gen_config*)user_data;
  struct gen_state* s;
  ++c->inits;
  if (c->fail_init) {
    dinput_error_set(DINPUT_PERMISSION_DENIED, "init refused by the test");
    return DINPUT_PERMISSION_DENIED;
  }
  s = (struct gen_state*)malloc(sizeof *s);
  if (!s) return DINPUT_RESOURCE_EXHAUSTED;
  s->config = c;
  s->next = 0;
  *state = s;
  return DINPUT_OK;
}

static dinput_status_t gen_next(dinput_element_t** out, void* state) {
  struct gen_state* s = (struct gen_state*)state;
  struct gen_config* c = s->config;
  int64_t i = s->next++;
  int64_t pair[2];
  dinput_tensor_t* t;
  if (i >= c->limit) return DINPUT_OUT_OF_RANGE;
  if (i == c->fail_at) {
    if (c->fail_message) dinput_error_set(c->fail_code, c->fail_message);
    return c->fail_code;
  }
  if (i == c->no_element_at) return DINPUT_OK;
  if (i == c->wrong_shape_at) {
    pair[0] = pair[1] = i;
    t = make_int64(pair, 2, 1);
  } else {
    t = make_int64(&i, 1, 0);
  }
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static void gen_finalize(void* state) {
  struct gen_state* s = (struct gen_state*)state;
  ++s->config->finalizes;
  free(s);
}

static void count_free(void* user_data) { ++((struct gen_config*)user_data)->frees; }

static struct gen_config config_of(int64_t limit) {
  struct gen_config c;
  memset(&c, 0, sizeof c);
  c.limit = limit;
  c.fail_at = -1;
  c.fail_code = DINPUT_OK;
  c.wrong_shape_at = -1;
  c.no_element_at = -1;
  return c;
}

static dinput_spec_t* scalar_int64_spec(void) {
  dinput_spec_t* spec = NULL;
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  return spec;
}

static dinput_dataset_t* make_gen(struct gen_config* c) {
  dinput_spec_t* spec = scalar_int64_spec();
  dinput_dataset_t* ds = NULL;
  CHECK_OK(
      dinput_dataset_from_generator(&ds, spec, gen_init, gen_next, gen_finalize, c, count_free));
  dinput_spec_free(spec);
  return ds;
}

/* Reads from `it` until it fails; returns the failing status, and the number of elements
 * read before in *n. */
static dinput_status_t read_until_error(dinput_iterator_t* it, int64_t* n) {
  dinput_element_t* e = NULL;
  dinput_status_t st;
  *n = 0;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    dinput_element_free(e);
    ++*n;
    if (*n > 100000) return DINPUT_INTERNAL;
  }
  return st;
}

static void test_generator_lifecycle(void) {
  struct gen_config c = config_of(4);
  dinput_dataset_t* ds = make_gen(&c);
  dinput_iterator_t *it = NULL, *it2 = NULL;
  dinput_element_t* e = NULL;
  int64_t n = 0;
  int64_t values[8];
  CHECK(strcmp(dinput_dataset_name(ds), "from_generator") == 0);
  CHECK(dinput_dataset_cardinality(ds) == DINPUT_UNKNOWN_CARDINALITY);
  CHECK(c.inits == 0); /* building a dataset calls nothing */
  CHECK(drain_int64(ds, values, 8, &n) == 4 && n == 4 && values[3] == 3);
  CHECK(c.inits == 1 && c.finalizes == 1);

  /* One init per iterator; finalize also for an iterator freed mid-stream. */
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_OK(dinput_dataset_iterator(&it2, ds));
  CHECK(c.inits == 3);
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  dinput_iterator_free(it);
  CHECK(c.finalizes == 2);

  /* user_data lives while any dataset or iterator uses it. */
  dinput_dataset_free(ds);
  CHECK(c.frees == 0);
  CHECK_OK(dinput_iterator_get_next(&e, it2));
  dinput_element_free(e);
  dinput_iterator_free(it2);
  CHECK(c.finalizes == 3);
  CHECK(c.frees == 1);
}

/* init NULL: the state is user_data itself; finalize NULL is allowed. */
static int64_t plain_counter;
static dinput_status_t plain_next(dinput_element_t** out, void* state) {
  int64_t* counter = (int64_t*)state;
  dinput_tensor_t* t;
  if (*counter >= 3) return DINPUT_OUT_OF_RANGE;
  t = make_int64(counter, 1, 0);
  ++*counter;
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static void test_generator_without_init(void) {
  dinput_spec_t* spec = scalar_int64_spec();
  dinput_dataset_t* ds = NULL;
  int64_t v[4];
  plain_counter = 0;
  CHECK_OK(dinput_dataset_from_generator(&ds, spec, NULL, plain_next, NULL, &plain_counter, NULL));
  dinput_spec_free(spec);
  CHECK(drain_int64(ds, v, 4, NULL) == 3 && v[0] == 0 && v[2] == 2);
  CHECK(plain_counter == 3);
  dinput_dataset_free(ds);
}

static void test_generator_failures(void) {
  dinput_iterator_t* it = NULL;
  dinput_dataset_t* ds;
  int64_t n = 0;
  int i;

  /* The message set with dinput_error_set reaches get_next, after the earlier elements, and
   * every later call repeats the error (the generator would go on). */
  {
    struct gen_config c = config_of(10);
    c.fail_at = 3;
    c.fail_code = DINPUT_DATA_LOSS;
    c.fail_message = "record 3 is corrupt";
    ds = make_gen(&c);
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    CHECK(read_until_error(it, &n) == DINPUT_DATA_LOSS);
    CHECK(n == 3);
    CHECK(strcmp(dinput_last_error_message(), "record 3 is corrupt") == 0);
    for (i = 0; i < 2; ++i) {
      dinput_element_t* e = NULL;
      CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_DATA_LOSS);
      CHECK(strcmp(dinput_last_error_message(), "record 3 is corrupt") == 0);
      CHECK(e == NULL);
    }
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
    CHECK(c.frees == 1 && c.finalizes == c.inits);
  }
  /* Failing without a message: a generic one that says where. */
  {
    struct gen_config c = config_of(10);
    c.fail_at = 0;
    c.fail_code = DINPUT_UNAVAILABLE;
    ds = make_gen(&c);
    dinput_error_set(DINPUT_ABORTED, "stale message from before");
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    CHECK(read_until_error(it, &n) == DINPUT_UNAVAILABLE);
    CHECK_MSG("generator");
    CHECK(strstr(dinput_last_error_message(), "stale") == NULL);
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
  }
  /* An element that does not match the declared spec. */
  {
    struct gen_config c = config_of(10);
    c.wrong_shape_at = 2;
    ds = make_gen(&c);
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    CHECK(read_until_error(it, &n) == DINPUT_INVALID_ARGUMENT);
    CHECK(n == 2);
    CHECK_MSG("int64[2]");
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
  }
  /* OK without an element. */
  {
    struct gen_config c = config_of(10);
    c.no_element_at = 1;
    ds = make_gen(&c);
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    CHECK(read_until_error(it, &n) == DINPUT_INVALID_ARGUMENT);
    CHECK(n == 1);
    CHECK_MSG("without an element");
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
  }
  /* init failing: the iterator is not made, and its message reaches the caller. */
  {
    struct gen_config c = config_of(10);
    c.fail_init = 1;
    ds = make_gen(&c);
    it = (dinput_iterator_t*)(void*)&c;
    CHECK_STATUS(dinput_dataset_iterator(&it, ds), DINPUT_PERMISSION_DENIED);
    CHECK_MSG("init refused by the test");
    CHECK(it == NULL);
    CHECK(c.finalizes == 0); /* nothing to finalize: init did not succeed */
    dinput_dataset_free(ds);
    CHECK(c.frees == 1);
  }
  /* Through prefetch the generator runs on a library thread; its message still arrives. */
  {
    struct gen_config c = config_of(10);
    dinput_dataset_t* p = NULL;
    c.fail_at = 4;
    c.fail_code = DINPUT_INTERNAL;
    c.fail_message = "failed on the prefetch thread";
    ds = make_gen(&c);
    CHECK_OK(dinput_dataset_prefetch(&p, ds, 3));
    CHECK_OK(dinput_dataset_iterator(&it, p));
    CHECK(read_until_error(it, &n) == DINPUT_INTERNAL);
    CHECK(n == 4);
    CHECK(strcmp(dinput_last_error_message(), "failed on the prefetch thread") == 0);
    dinput_iterator_free(it);
    dinput_dataset_free(p);
    dinput_dataset_free(ds);
    CHECK(c.frees == 1);
  }
}

/* ---- map and filter callbacks ---- */

struct map_config {
  int64_t fail_on;
  const char* message;
  int wrong_dtype;
  int frees;
  pthread_mutex_t mu;
  int calls;
};

static void count_map_free(void* user_data) { ++((struct map_config*)user_data)->frees; }

static dinput_status_t negate(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  struct map_config* c = (struct map_config*)user_data;
  int64_t v = 0;
  dinput_tensor_t* t = NULL;
  pthread_mutex_lock(&c->mu);
  ++c->calls;
  pthread_mutex_unlock(&c->mu);
  if (dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64) != DINPUT_OK)
    return dinput_last_error_code();
  if (v == c->fail_on) {
    dinput_error_set(DINPUT_FAILED_PRECONDITION, c->message);
    return DINPUT_FAILED_PRECONDITION;
  }
  if (c->wrong_dtype) {
    double d = (double)v;
    if (dinput_tensor_new(&t, DINPUT_FLOAT64, NULL, 0, &d, sizeof d) != DINPUT_OK)
      return dinput_last_error_code();
  } else {
    v = -v;
    t = make_int64(&v, 1, 0);
  }
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static struct map_config map_config_of(int64_t fail_on, const char* message) {
  struct map_config c;
  memset(&c, 0, sizeof c);
  c.fail_on = fail_on;
  c.message = message;
  pthread_mutex_init(&c.mu, NULL);
  return c;
}

static void test_map_callbacks(void) {
  dinput_dataset_t *r = NULL, *m = NULL, *b = NULL;
  dinput_iterator_t* it = NULL;
  int64_t v[64];
  int64_t n = 0, i;
  int ok;
  long parallel[3] = {1, 4, DINPUT_AUTOTUNE};
  int k;
  CHECK_OK(dinput_dataset_range(&r, 0, 40, 1));

  /* Results in input order, sequential and parallel (deterministic). */
  for (k = 0; k < 3; ++k) {
    struct map_config c = map_config_of(-1, NULL);
    CHECK_OK(map_with(&m, r, negate, NULL, parallel[k], 1, &c, count_map_free));
    ok = drain_int64(m, v, 64, NULL) == 40;
    for (i = 0; ok && i < 40; ++i) ok = v[i] == -i;
    CHECK(ok);
    dinput_dataset_free(m);
    CHECK(c.frees == 1);
  }

  /* deterministic = 0: every element exactly once, in some order. */
  {
    struct map_config c = map_config_of(-1, NULL);
    int seen[40] = {0};
    CHECK_OK(map_with(&m, r, negate, NULL, 4, 0, &c, count_map_free));
    ok = drain_int64(m, v, 64, &n) == 40 && n == 40;
    for (i = 0; ok && i < 40; ++i) {
      if (v[i] > 0 || v[i] < -39 || seen[-v[i]]++) ok = 0;
    }
    CHECK(ok);
    dinput_dataset_free(m);
    CHECK(c.frees == 1);
  }

  /* A failing map callback: its message reaches get_next after the earlier results, from
   * the calling thread (sequential) and from the pool's threads (parallel). */
  for (k = 0; k < 2; ++k) {
    struct map_config c = map_config_of(6, "row 6 is not allowed");
    CHECK_OK(map_with(&m, r, negate, NULL, k == 0 ? 1 : 4, 1, &c, count_map_free));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_FAILED_PRECONDITION);
    CHECK(n == 6);
    CHECK(strcmp(dinput_last_error_message(), "row 6 is not allowed") == 0);
    dinput_iterator_free(it);
    dinput_dataset_free(m);
    CHECK(c.frees == 1);
  }

  /* A result that does not match the spec (NULL out_spec: the input's int64 scalars). */
  {
    struct map_config c = map_config_of(-1, NULL);
    c.wrong_dtype = 1;
    CHECK_OK(map_with(&m, r, negate, NULL, 1, 1, &c, count_map_free));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_INVALID_ARGUMENT);
    CHECK(n == 0);
    CHECK_MSG("float64");
    dinput_iterator_free(it);
    dinput_dataset_free(m);
  }
  /* ... and with an out_spec that says float64, it is accepted and the spec is reported. */
  {
    struct map_config c = map_config_of(-1, NULL);
    dinput_spec_t *spec = NULL, *reported = NULL;
    double d = 0;
    dinput_element_t* e = NULL;
    c.wrong_dtype = 1;
    CHECK_OK(dinput_spec_new(&spec));
    CHECK_OK(dinput_spec_add(spec, DINPUT_FLOAT64, NULL, 0));
    CHECK_OK(map_with(&m, r, negate, spec, 1, 1, &c, NULL));
    dinput_spec_free(spec);
    CHECK_OK(dinput_dataset_element_spec(&reported, m));
    CHECK(dinput_spec_dtype(reported, 0) == DINPUT_FLOAT64);
    dinput_spec_free(reported);
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK_OK(dinput_iterator_get_next(&e, it));
    dinput_element_free(e);
    CHECK_OK(dinput_iterator_get_next(&e, it));
    CHECK_OK(dinput_tensor_copy_to(&d, sizeof d, dinput_element_get(e, 0), DINPUT_FLOAT64));
    CHECK(d == 1.0);
    dinput_element_free(e);
    dinput_iterator_free(it);
    dinput_dataset_free(m);
  }

  /* user_data lives as long as a downstream dataset uses the map. */
  {
    struct map_config c = map_config_of(-1, NULL);
    CHECK_OK(map_with(&m, r, negate, NULL, 2, 1, &c, count_map_free));
    CHECK_OK(dinput_dataset_batch(&b, m, 8, NULL));
    dinput_dataset_free(m);
    CHECK(c.frees == 0);
    CHECK(drain_int64(b, v, 64, &n) == 40 && n == 5 && v[39] == -39);
    dinput_dataset_free(b);
    CHECK(c.frees == 1);
  }
  dinput_dataset_free(r);
}

/* ---- map_many: one callback call per run of elements ---- */

struct many_config {
  int64_t fail_on; /* fail the run holding this value */
  dinput_status_t fail_status;
  int64_t null_at;  /* leave this value's output NULL and return OK */
  int64_t wrong_at; /* give this value's output as float64 */
  int frees;
  pthread_mutex_t mu;
  size_t counts[64]; /* the count of each call, in call order */
  int calls;
};

static void count_many_free(void* user_data) { ++((struct many_config*)user_data)->frees; }

static struct many_config many_config_of(void) {
  struct many_config c;
  memset(&c, 0, sizeof c);
  c.fail_on = c.null_at = c.wrong_at = INT64_MAX; /* no value is */
  c.fail_status = DINPUT_FAILED_PRECONDITION;
  pthread_mutex_init(&c.mu, NULL);
  return c;
}

/* negate over a run. Before failing it sets the outputs of the run's earlier inputs, which
 * the library must release. */
static dinput_status_t negate_many(dinput_element_t** outs, const dinput_element_t* const* ins,
                                   size_t count, void* user_data) {
  struct many_config* c = (struct many_config*)user_data;
  size_t i;
  pthread_mutex_lock(&c->mu);
  if (c->calls < 64) c->counts[c->calls] = count;
  ++c->calls;
  pthread_mutex_unlock(&c->mu);
  for (i = 0; i < count; ++i) {
    int64_t v = 0;
    dinput_tensor_t* t = NULL;
    if (outs[i] != NULL) return DINPUT_INTERNAL; /* the slots arrive empty */
    if (dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(ins[i], 0), DINPUT_INT64) !=
        DINPUT_OK)
      return dinput_last_error_code();
    if (v == c->fail_on) {
      dinput_error_set(c->fail_status, "value 20 is not allowed");
      return c->fail_status;
    }
    if (v == c->null_at) continue;
    if (v == c->wrong_at) {
      double d = (double)v;
      if (dinput_tensor_new(&t, DINPUT_FLOAT64, NULL, 0, &d, sizeof d) != DINPUT_OK)
        return dinput_last_error_code();
    } else {
      v = -v;
      t = make_int64(&v, 1, 0);
    }
    outs[i] = make_element(&t, 1);
  }
  return DINPUT_OK;
}

static dinput_status_t map_many_with(dinput_dataset_t** out, const dinput_dataset_t* input,
                                     size_t max_count, int64_t num_parallel_calls,
                                     int deterministic, struct many_config* c) {
  dinput_map_options_t* o = NULL;
  dinput_status_t st = dinput_map_options_new(&o);
  if (st == DINPUT_OK) st = dinput_map_options_set_num_parallel_calls(o, num_parallel_calls);
  if (st == DINPUT_OK)
    st = dinput_map_options_set_deterministic(o, deterministic_of(deterministic));
  if (st == DINPUT_OK)
    st = dinput_dataset_map_many(out, input, max_count, negate_many, c, count_many_free, o);
  dinput_map_options_free(o);
  return st;
}

static void test_map_many(void) {
  dinput_dataset_t *r = NULL, *m = NULL, *up = NULL;
  dinput_iterator_t* it = NULL;
  int64_t v[64], w[64];
  int64_t n = 0, i;
  int ok;
  long parallel[3] = {1, 4, DINPUT_AUTOTUNE};
  int k;
  CHECK_OK(dinput_dataset_range(&r, 0, 40, 1));

  /* Runs of 7 over 40 elements: five full runs and a short last one; results in input order
   * and equal to dinput_dataset_map's, sequential and parallel. */
  for (k = 0; k < 3; ++k) {
    struct many_config c = many_config_of();
    struct map_config mc = map_config_of(-1, NULL);
    int full = 0, short_runs = 0;
    CHECK_OK(map_many_with(&m, r, 7, parallel[k], 1, &c));
    ok = drain_int64(m, v, 64, NULL) == 40;
    dinput_dataset_free(m);
    CHECK_OK(map_with(&m, r, negate, NULL, parallel[k], 1, &mc, NULL));
    ok = ok && drain_int64(m, w, 64, NULL) == 40 && same_int64(v, 40, w, 40);
    CHECK(ok);
    dinput_dataset_free(m);
    CHECK(c.frees == 1);
    CHECK(c.calls == 6);
    for (i = 0; i < c.calls && i < 64; ++i) {
      if (c.counts[i] == 7) ++full;
      if (c.counts[i] == 5) ++short_runs;
    }
    CHECK(full == 5 && short_runs == 1);
    if (parallel[k] == 1) CHECK(c.counts[5] == 5);
  }

  /* deterministic = 0: every element exactly once, in some order. */
  {
    struct many_config c = many_config_of();
    int seen[40] = {0};
    CHECK_OK(map_many_with(&m, r, 3, 4, 0, &c));
    ok = drain_int64(m, v, 64, &n) == 40 && n == 40;
    for (i = 0; ok && i < 40; ++i) {
      if (v[i] > 0 || v[i] < -39 || seen[-v[i]]++) ok = 0;
    }
    CHECK(ok);
    dinput_dataset_free(m);
    CHECK(c.frees == 1);
  }

  /* A failing run (16..23 holds 20) fails get_next at its first element, after every
   * element of the runs before it; the outputs it set are released (ASan checks). */
  for (k = 0; k < 2; ++k) {
    struct many_config c = many_config_of();
    c.fail_on = 20;
    CHECK_OK(map_many_with(&m, r, 8, k == 0 ? 1 : 4, 1, &c));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_FAILED_PRECONDITION);
    CHECK(n == 16);
    CHECK(strcmp(dinput_last_error_message(), "value 20 is not allowed") == 0);
    dinput_iterator_free(it);
    dinput_dataset_free(m);
    CHECK(c.frees == 1);
  }
  /* OUT_OF_RANGE from the callback is an error, not the end. */
  {
    struct many_config c = many_config_of();
    c.fail_on = 20;
    c.fail_status = DINPUT_OUT_OF_RANGE;
    CHECK_OK(map_many_with(&m, r, 8, 1, 1, &c));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_INVALID_ARGUMENT);
    CHECK(n == 16);
    CHECK_MSG("map_many callback returned OUT_OF_RANGE");
    dinput_iterator_free(it);
    dinput_dataset_free(m);
  }

  /* DINPUT_OK with a NULL output (index 2 of the run 8..11), and an output that does not
   * match the spec (index 1 of the run 12..15): INVALID_ARGUMENT naming the index. */
  for (k = 0; k < 2; ++k) {
    struct many_config c = many_config_of();
    c.null_at = 10;
    CHECK_OK(map_many_with(&m, r, 4, k == 0 ? 1 : 4, 1, &c));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_INVALID_ARGUMENT);
    CHECK(n == 8);
    CHECK_MSG("without output 2");
    dinput_iterator_free(it);
    dinput_dataset_free(m);

    c = many_config_of();
    c.wrong_at = 13;
    CHECK_OK(map_many_with(&m, r, 4, k == 0 ? 1 : 4, 1, &c));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_INVALID_ARGUMENT);
    CHECK(n == 12);
    CHECK_MSG("output 1");
    CHECK_MSG("float64");
    dinput_iterator_free(it);
    dinput_dataset_free(m);
  }

  /* An input error inside a run: the elements read before it are mapped and delivered, then
   * the error (upstream map fails at 10; runs of 4 read 8, 9 and then the error). */
  for (k = 0; k < 2; ++k) {
    struct map_config mc = map_config_of(10, "input 10 failed");
    struct many_config c = many_config_of();
    CHECK_OK(map_with(&up, r, negate, NULL, 1, 1, &mc, NULL));
    CHECK_OK(map_many_with(&m, up, 4, k == 0 ? 1 : 4, 1, &c));
    CHECK_OK(dinput_dataset_iterator(&it, m));
    CHECK(read_until_error(it, &n) == DINPUT_FAILED_PRECONDITION);
    CHECK(n == 10);
    CHECK_MSG("input 10 failed");
    dinput_iterator_free(it);
    dinput_dataset_free(m);
    dinput_dataset_free(up);
  }

  /* max_count 0 and a NULL fn are refused; user_data is released once all the same. */
  {
    struct many_config c = many_config_of();
    m = NULL;
    CHECK_STATUS(dinput_dataset_map_many(&m, r, 0, negate_many, &c, count_many_free, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("max_count");
    CHECK(m == NULL && c.frees == 1);
    CHECK_STATUS(dinput_dataset_map_many(&m, r, 4, NULL, &c, count_many_free, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK(c.frees == 2);
    CHECK_STATUS(dinput_dataset_map_many(&m, NULL, 4, negate_many, &c, count_many_free, NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK(c.frees == 3);
  }
  dinput_dataset_free(r);
}

struct filter_config {
  int frees;
};

static void count_filter_free(void* user_data) { ++((struct filter_config*)user_data)->frees; }

static dinput_status_t keep_multiples_of_three(int* keep, const dinput_element_t* in,
                                               void* user_data) {
  int64_t v = 0;
  (void)user_data;
  dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64);
  if (v == 10) {
    dinput_error_set(DINPUT_ABORTED, "the predicate gave up at 10");
    return DINPUT_ABORTED;
  }
  *keep = v % 3 == 0;
  return DINPUT_OK;
}

static void test_filter_callbacks(void) {
  dinput_dataset_t *r = NULL, *f = NULL;
  dinput_iterator_t* it = NULL;
  struct filter_config c = {0};
  int64_t v[8];
  int64_t n = 0;
  CHECK_OK(dinput_dataset_range(&r, 0, 10, 1));
  CHECK_OK(dinput_dataset_filter(&f, r, keep_multiples_of_three, &c, count_filter_free));
  CHECK(drain_int64(f, v, 8, NULL) == 4 && v[0] == 0 && v[3] == 9);
  dinput_dataset_free(f);
  dinput_dataset_free(r);
  CHECK(c.frees == 1);

  CHECK_OK(dinput_dataset_range(&r, 0, 20, 1));
  CHECK_OK(dinput_dataset_filter(&f, r, keep_multiples_of_three, NULL, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, f));
  CHECK(read_until_error(it, &n) == DINPUT_ABORTED);
  CHECK(n == 4);
  CHECK(strcmp(dinput_last_error_message(), "the predicate gave up at 10") == 0);
  dinput_iterator_free(it);
  dinput_dataset_free(f);
  dinput_dataset_free(r);
}

/* free_user_data runs exactly once even when the constructor fails, whatever the reason. */
static void test_user_data_freed_when_constructors_fail(void) {
  dinput_dataset_t *r = NULL, *out = NULL;
  dinput_spec_t* spec = scalar_int64_spec();
  struct gen_config g = config_of(1);
  struct map_config m = map_config_of(-1, NULL);
  struct filter_config f = {0};
  CHECK_OK(dinput_dataset_range(&r, 0, 3, 1));

  CHECK_STATUS(
      dinput_dataset_from_generator(&out, NULL, gen_init, gen_next, gen_finalize, &g, count_free),
      DINPUT_INVALID_ARGUMENT);
  CHECK(g.frees == 1);
  CHECK_STATUS(
      dinput_dataset_from_generator(&out, spec, gen_init, NULL, gen_finalize, &g, count_free),
      DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'next'");
  CHECK(g.frees == 2);
  CHECK_STATUS(
      dinput_dataset_from_generator(NULL, spec, gen_init, gen_next, gen_finalize, &g, count_free),
      DINPUT_INVALID_ARGUMENT);
  CHECK(g.frees == 3);
  CHECK(g.inits == 0);

  CHECK_STATUS(map_with(&out, NULL, negate, NULL, 1, 1, &m, count_map_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK(m.frees == 1);
  CHECK_STATUS(map_with(&out, r, negate, NULL, -9, 1, &m, count_map_free), DINPUT_INVALID_ARGUMENT);
  CHECK(m.frees == 2);
  CHECK_STATUS(map_with(&out, r, NULL, NULL, 1, 1, &m, count_map_free), DINPUT_INVALID_ARGUMENT);
  CHECK(m.frees == 3);
  CHECK_STATUS(map_with(NULL, r, negate, NULL, 1, 1, &m, count_map_free), DINPUT_INVALID_ARGUMENT);
  CHECK(m.frees == 4);
  CHECK(m.calls == 0);

  CHECK_STATUS(dinput_dataset_filter(&out, NULL, keep_multiples_of_three, &f, count_filter_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK(f.frees == 1);
  CHECK_STATUS(dinput_dataset_filter(&out, r, NULL, &f, count_filter_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK(f.frees == 2);
  CHECK(out == NULL);

  dinput_spec_free(spec);
  dinput_dataset_free(r);
}

/* ---- one iterator used from two threads at once (a documented misuse) ----
 * The second, overlapping call must fail with FAILED_PRECONDITION rather than run the
 * (not thread-safe) iterators underneath concurrently. */

struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int entered;   /* the first map call is running */
  int attempted; /* the other thread has made its overlapping call */
};

static dinput_status_t gated_identity(dinput_element_t** out, const dinput_element_t* in,
                                      void* user_data) {
  struct gate* g = (struct gate*)user_data;
  struct timespec deadline;
  int64_t v = 0;
  dinput_tensor_t* t = NULL;
  pthread_mutex_lock(&g->mu);
  if (!g->entered) {
    g->entered = 1;
    pthread_cond_broadcast(&g->cv);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10; /* never hang the test if the other call does not return */
    while (!g->attempted && pthread_cond_timedwait(&g->cv, &g->mu, &deadline) == 0) {
    }
  }
  pthread_mutex_unlock(&g->mu);
  if (dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64) != DINPUT_OK)
    return dinput_last_error_code();
  t = make_int64(&v, 1, 0);
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

struct second_caller {
  struct gate* gate;
  dinput_iterator_t* it;
  dinput_status_t status;
  char message[256];
};

static void* call_while_first_runs(void* arg) {
  struct second_caller* s = (struct second_caller*)arg;
  dinput_element_t* e = NULL;
  pthread_mutex_lock(&s->gate->mu);
  while (!s->gate->entered) pthread_cond_wait(&s->gate->cv, &s->gate->mu);
  pthread_mutex_unlock(&s->gate->mu);
  s->status = dinput_iterator_get_next(&e, s->it);
  snprintf(s->message, sizeof s->message, "%s", dinput_last_error_message());
  dinput_element_free(e);
  pthread_mutex_lock(&s->gate->mu);
  s->gate->attempted = 1;
  pthread_cond_broadcast(&s->gate->cv);
  pthread_mutex_unlock(&s->gate->mu);
  return NULL;
}

#define HAMMER_N 100000

struct hammer {
  dinput_iterator_t* it;
  int64_t* values;
  int64_t count;
  int64_t busy;     /* FAILED_PRECONDITION answers */
  int other_errors; /* anything but OK, FAILED_PRECONDITION and the end */
};

static void* hammer_iterator(void* arg) {
  struct hammer* h = (struct hammer*)arg;
  dinput_element_t* e = NULL;
  for (;;) {
    dinput_status_t st = dinput_iterator_get_next(&e, h->it);
    if (st == DINPUT_OUT_OF_RANGE) break;
    if (st == DINPUT_FAILED_PRECONDITION) {
      ++h->busy;
      continue;
    }
    if (st != DINPUT_OK || h->count >= HAMMER_N) {
      ++h->other_errors;
      dinput_element_free(e);
      break;
    }
    dinput_tensor_copy_to(&h->values[h->count++], sizeof(int64_t), dinput_element_get(e, 0),
                          DINPUT_INT64);
    dinput_element_free(e);
  }
  return NULL;
}

static void test_concurrent_iterator_use(void) {
  dinput_dataset_t *r = NULL, *s = NULL, *m = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  dinput_spec_t* spec = scalar_int64_spec();
  struct gate g;
  struct second_caller second;
  struct hammer h[2];
  pthread_t thread, threads[2];
  char* seen = NULL;
  int64_t i, total = 0, duplicates = 0;
  int k;

  /* Deterministic: the second call is made while the first is inside the map callback. */
  memset(&g, 0, sizeof g);
  pthread_mutex_init(&g.mu, NULL);
  pthread_cond_init(&g.cv, NULL);
  CHECK_OK(dinput_dataset_range(&r, 0, 1000, 1));
  CHECK_OK(shuffle_with(&s, r, 100, 3, 1));
  CHECK_OK(map_with(&m, s, gated_identity, spec, 1, 1, &g, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, m));
  memset(&second, 0, sizeof second);
  second.gate = &g;
  second.it = it;
  CHECK(pthread_create(&thread, NULL, call_while_first_runs, &second) == 0);
  CHECK_OK(dinput_iterator_get_next(&e, it));
  pthread_join(thread, NULL);
  CHECK(second.status == DINPUT_FAILED_PRECONDITION);
  CHECK(strstr(second.message, "already in use by another thread") != NULL);
  if (strstr(second.message, "already in use by another thread") == NULL)
    fprintf(stderr, "second caller's message: %s\n", second.message);
  dinput_element_free(e);
  /* The iterator is unharmed: the refused call consumed nothing. */
  {
    int64_t n = 1;
    while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
      ++n;
      dinput_element_free(e);
    }
    CHECK(n == 1000);
  }
  dinput_iterator_free(it);
  dinput_dataset_free(m);
  dinput_dataset_free(s);
  dinput_dataset_free(r);
  it = NULL;
  r = s = NULL;

  /* Hammering: two threads pull from one shuffled iterator as fast as they can. Every
   * element must come out exactly once (a refused call loses nothing), and nothing crashes. */
  CHECK_OK(dinput_dataset_range(&r, 0, HAMMER_N, 1));
  CHECK_OK(shuffle_with(&s, r, 1000, 5, 1));
  CHECK_OK(dinput_dataset_iterator(&it, s));
  for (k = 0; k < 2; ++k) {
    memset(&h[k], 0, sizeof h[k]);
    h[k].it = it;
    h[k].values = (int64_t*)calloc(HAMMER_N, sizeof(int64_t));
    CHECK(pthread_create(&threads[k], NULL, hammer_iterator, &h[k]) == 0);
  }
  for (k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
  seen = (char*)calloc(HAMMER_N, 1);
  for (k = 0; k < 2; ++k) {
    CHECK(h[k].other_errors == 0);
    for (i = 0; i < h[k].count; ++i) {
      int64_t v = h[k].values[i];
      if (v < 0 || v >= HAMMER_N || seen[v]) {
        ++duplicates;
      } else {
        seen[v] = 1;
      }
    }
    total += h[k].count;
    free(h[k].values);
  }
  CHECK(duplicates == 0);
  CHECK(total == HAMMER_N);
  free(seen);
  dinput_iterator_free(it);
  dinput_dataset_free(s);
  dinput_dataset_free(r);
  dinput_spec_free(spec);
}

/* The same check on a distributed iterator: of two overlapping get_next calls on one
 * handle, exactly one runs and the other is refused with FAILED_PRECONDITION. (Its step
 * producer may start the gated map before either call, so which of the two is refused is
 * up to the scheduler; the other call still gets its step.) */
struct dist_caller {
  struct gate* gate;
  dinput_dist_iterator_t* it;
  int wait_for_gate;
  dinput_status_t status;
  char message[256];
};

static void* call_dist(void* arg) {
  struct dist_caller* c = (struct dist_caller*)arg;
  dinput_per_replica_t* v = NULL;
  if (c->wait_for_gate) {
    struct timespec pause = {0, 50 * 1000 * 1000};
    pthread_mutex_lock(&c->gate->mu);
    while (!c->gate->entered) pthread_cond_wait(&c->gate->cv, &c->gate->mu);
    pthread_mutex_unlock(&c->gate->mu);
    nanosleep(&pause, NULL); /* let the other call get under way */
  }
  c->status = dinput_dist_iterator_get_next(&v, c->it);
  snprintf(c->message, sizeof c->message, "%s", dinput_last_error_message());
  dinput_per_replica_free(v);
  if (c->wait_for_gate) {
    pthread_mutex_lock(&c->gate->mu);
    c->gate->attempted = 1;
    pthread_cond_broadcast(&c->gate->cv);
    pthread_mutex_unlock(&c->gate->mu);
  }
  return NULL;
}

static void test_concurrent_dist_iterator_use(void) {
  dinput_dataset_t *r = NULL, *m = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dist = NULL;
  dinput_dist_iterator_t* it = NULL;
  dinput_spec_t* spec = scalar_int64_spec();
  struct gate g;
  struct dist_caller a, b;
  pthread_t ta, tb;
  int refused;

  memset(&g, 0, sizeof g);
  pthread_mutex_init(&g.mu, NULL);
  pthread_cond_init(&g.cv, NULL);
  CHECK_OK(dinput_dataset_range(&r, 0, 100, 1));
  CHECK_OK(map_with(&m, r, gated_identity, spec, 1, 1, &g, NULL));
  CHECK_OK(dinput_strategy_new(&strategy, NULL, 0));
  CHECK_OK(dinput_strategy_distribute_dataset(&dist, strategy, m, NULL));
  CHECK_OK(dinput_dist_dataset_iterator(&it, dist));
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.gate = b.gate = &g;
  a.it = b.it = it;
  b.wait_for_gate = 1;
  CHECK(pthread_create(&ta, NULL, call_dist, &a) == 0);
  CHECK(pthread_create(&tb, NULL, call_dist, &b) == 0);
  pthread_join(tb, NULL);
  pthread_join(ta, NULL);
  refused = (a.status == DINPUT_FAILED_PRECONDITION) + (b.status == DINPUT_FAILED_PRECONDITION);
  CHECK(refused == 1);
  CHECK((a.status == DINPUT_OK) + (b.status == DINPUT_OK) == 1);
  CHECK(strstr(a.status == DINPUT_FAILED_PRECONDITION ? a.message : b.message,
               "already in use by another thread") != NULL);
  if (refused != 1)
    fprintf(stderr, "dist calls: %s (%s), %s (%s)\n", dinput_status_name(a.status), a.message,
            dinput_status_name(b.status), b.message);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_strategy_free(strategy);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
  dinput_spec_free(spec);
}

/* ---- OUT_OF_RANGE from a callback is an error, never end of data ---- */

/* Every callback kind but the generator's next: OUT_OF_RANGE (what an exhausted inner
 * iterator returns) must fail the caller with INVALID_ARGUMENT naming the callback, not end
 * the data early and silently. */
struct oor_config {
  int64_t at;          /* the input value (or call number) that returns OUT_OF_RANGE */
  const char* message; /* given to dinput_error_set first, or NULL */
  int calls;
};

static dinput_status_t oor_status(struct oor_config* c, int64_t v) {
  if (v != c->at) return DINPUT_OK;
  if (c->message) dinput_error_set(DINPUT_OUT_OF_RANGE, c->message);
  return DINPUT_OUT_OF_RANGE;
}

static int64_t scalar_of(const dinput_element_t* in) {
  int64_t v = -1;
  dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64);
  return v;
}

static dinput_status_t oor_map(dinput_element_t** out, const dinput_element_t* in,
                               void* user_data) {
  dinput_status_t st = oor_status((struct oor_config*)user_data, scalar_of(in));
  if (st != DINPUT_OK) return st;
  return dinput_element_ref(out, in);
}

static dinput_status_t oor_filter(int* keep, const dinput_element_t* in, void* user_data) {
  *keep = 1;
  return oor_status((struct oor_config*)user_data, scalar_of(in));
}

static dinput_status_t oor_interleave(dinput_dataset_t** out, const dinput_element_t* in,
                                      void* user_data) {
  dinput_status_t st = oor_status((struct oor_config*)user_data, scalar_of(in));
  if (st != DINPUT_OK) return st;
  return dinput_dataset_from_tensors(out, in);
}

static dinput_status_t oor_gen_init(void** state, void* user_data) {
  *state = user_data;
  return oor_status((struct oor_config*)user_data, 0);
}

static dinput_status_t oor_dataset_fn(dinput_dataset_t** out, const dinput_input_context_t* context,
                                      void* user_data) {
  dinput_status_t st =
      oor_status((struct oor_config*)user_data, dinput_input_context_input_pipeline_id(context));
  if (st != DINPUT_OK) return st;
  return dinput_dataset_range(out, 0, 4, 1);
}

/* value_fn and replica_fn: OUT_OF_RANGE for replica `at`. */
static dinput_status_t oor_replica_value(dinput_element_t** out, int64_t replica,
                                         struct oor_config* c) {
  dinput_tensor_t* t;
  dinput_status_t st = oor_status(c, replica);
  if (st != DINPUT_OK) return st;
  t = make_int64(&replica, 1, 0);
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static dinput_status_t oor_value_fn(dinput_element_t** out, const dinput_value_context_t* context,
                                    void* user_data) {
  return oor_replica_value(out, dinput_value_context_replica_id_in_sync_group(context),
                           (struct oor_config*)user_data);
}

static dinput_status_t oor_replica_fn(dinput_element_t** out,
                                      const dinput_replica_context_t* context,
                                      const dinput_element_t* args, void* user_data) {
  (void)args;
  return oor_replica_value(out, dinput_replica_context_replica_id_in_sync_group(context),
                           (struct oor_config*)user_data);
}

/* Reads `it` until a failure: the number of elements before it, and the failure's status. */
static dinput_status_t count_until_failure(dinput_iterator_t* it, int64_t* n) {
  dinput_element_t* e = NULL;
  dinput_status_t st;
  *n = 0;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    ++*n;
    dinput_element_free(e);
  }
  return st;
}

/* Checks that iterating ds gives `before` elements, then INVALID_ARGUMENT whose message
 * names `what` and carries `message` (when given); get_next_as_optional fails the same way
 * instead of giving an empty optional. */
static void check_oor_becomes_error(const dinput_dataset_t* ds, int64_t before, const char* what,
                                    const char* message) {
  dinput_iterator_t* it = NULL;
  dinput_optional_t* opt = NULL;
  int64_t n = -1, i;
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_STATUS(count_until_failure(it, &n), DINPUT_INVALID_ARGUMENT);
  CHECK(n == before);
  CHECK_MSG(what);
  CHECK_MSG("returned OUT_OF_RANGE");
  if (message) CHECK_MSG(message);
  dinput_iterator_free(it);

  CHECK_OK(dinput_dataset_iterator(&it, ds));
  for (i = 0; i < before; ++i) {
    CHECK_OK(dinput_iterator_get_next_as_optional(&opt, it));
    CHECK(dinput_optional_has_value(opt));
    dinput_optional_free(opt);
  }
  opt = (dinput_optional_t*)(void*)&n;
  CHECK_STATUS(dinput_iterator_get_next_as_optional(&opt, it), DINPUT_INVALID_ARGUMENT);
  CHECK(opt == NULL);
  CHECK_MSG(what);
  dinput_iterator_free(it);
}

static void test_out_of_range_from_callbacks_is_an_error(void) {
  dinput_dataset_t *r = NULL, *ds = NULL;
  dinput_spec_t* spec = scalar_int64_spec();
  int k;
  CHECK_OK(dinput_dataset_range(&r, 0, 10, 1));

  /* map: sequential (on the caller's thread) and parallel (on the pool), with and without
   * a message of its own. */
  for (k = 0; k < 4; ++k) {
    struct oor_config c = {3, NULL, 0};
    if (k % 2) c.message = "the inner iterator ran out";
    CHECK_OK(map_with(&ds, r, oor_map, NULL, k < 2 ? 1 : 4, 1, &c, NULL));
    check_oor_becomes_error(ds, 3, "map callback", c.message);
    dinput_dataset_free(ds);
  }
  {
    struct oor_config c = {5, "no more to keep", 0};
    CHECK_OK(dinput_dataset_filter(&ds, r, oor_filter, &c, NULL));
    check_oor_becomes_error(ds, 5, "filter callback", c.message);
    dinput_dataset_free(ds);
  }
  for (k = 0; k < 2; ++k) {
    struct oor_config c = {2, "no reader for 2", 0};
    CHECK_OK(interleave_with(&ds, r, oor_interleave, spec, 1, 1, k == 0 ? 1 : 2, 1, &c, NULL));
    check_oor_becomes_error(ds, 2, "interleave callback", c.message);
    dinput_dataset_free(ds);
  }
  /* The generator's init has no "no more" meaning either; only its next does. */
  {
    struct oor_config c = {0, "init ran out", 0};
    dinput_iterator_t* it = NULL;
    CHECK_OK(dinput_dataset_from_generator(&ds, spec, oor_gen_init, plain_next, NULL, &c, NULL));
    CHECK_STATUS(dinput_dataset_iterator(&it, ds), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("generator's init callback");
    CHECK_MSG("init ran out");
    dinput_dataset_free(ds);
  }
  dinput_dataset_free(r);
  dinput_spec_free(spec);
}

static void test_out_of_range_from_distribute_callbacks_is_an_error(void) {
  const char* devices[2] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dist = NULL;
  dinput_per_replica_t* values = NULL;
  dinput_input_options_t* per_replica = NULL;
  dinput_collective_t* collective = NULL;
  int k;
  CHECK_OK(dinput_strategy_new(&strategy, devices, 2));
  CHECK_OK(dinput_input_options_new(&per_replica));
  CHECK_OK(dinput_input_options_set_replication_mode(per_replica, DINPUT_REPLICATION_PER_REPLICA));

  /* dataset_fn, for the only pipeline and for the second of two. */
  for (k = 0; k < 2; ++k) {
    struct oor_config c = {k, k ? "no dataset for pipeline 1" : NULL, 0};
    CHECK_STATUS(dinput_strategy_distribute_datasets_from_function(
                     &dist, strategy, oor_dataset_fn, &c, NULL, k ? per_replica : NULL),
                 DINPUT_INVALID_ARGUMENT);
    CHECK(dist == NULL);
    CHECK_MSG("dataset_fn returned OUT_OF_RANGE");
    if (c.message) CHECK_MSG(c.message);
  }
  /* value_fn and replica_fn, for replica 0 (on the caller's thread) and replica 1. */
  for (k = 0; k < 2; ++k) {
    struct oor_config c = {k, k ? "replica 1 has no value" : NULL, 0};
    CHECK_STATUS(
        dinput_strategy_distribute_values_from_function(&values, strategy, oor_value_fn, &c),
        DINPUT_INVALID_ARGUMENT);
    CHECK(values == NULL);
    CHECK_MSG("value_fn returned OUT_OF_RANGE");
    if (c.message) CHECK_MSG(c.message);
    CHECK_STATUS(dinput_strategy_run(&values, strategy, oor_replica_fn, NULL, &c),
                 DINPUT_INVALID_ARGUMENT);
    CHECK(values == NULL);
    CHECK_MSG("replica_fn");
    CHECK_MSG("returned OUT_OF_RANGE");
    if (c.message) CHECK_MSG(c.message);
  }
  /* An abort with OUT_OF_RANGE would make the peers' get_next read it as end of data. */
  CHECK_OK(dinput_collective_new_in_process(&collective, 2, 0));
  CHECK_STATUS(dinput_collective_abort(collective, DINPUT_OUT_OF_RANGE, "done"),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("OUT_OF_RANGE");
  dinput_collective_free(collective);
  dinput_input_options_free(per_replica);
  dinput_strategy_free(strategy);
}

/* ---- the last error survives callbacks ---- */

/* A callback that makes a failing dinput call of its own, then succeeds anyway: run on the
 * caller's thread, it must not change what the caller's last error says. */
static dinput_status_t noisy_value(dinput_element_t** out, int64_t v) {
  dinput_tensor_t* t = NULL;
  dinput_dataset_t* bad = NULL;
  /* No CHECK here: replica 1 of run calls this on another thread. */
  if (dinput_dataset_range(&bad, 0, 1, 0) != DINPUT_INVALID_ARGUMENT)
    return DINPUT_INTERNAL; /* step 0 */
  if (dinput_last_error_code() != DINPUT_INVALID_ARGUMENT) return DINPUT_INTERNAL;
  dinput_error_set(DINPUT_UNAVAILABLE, "noise from a callback that then succeeds");
  t = make_int64(&v, 1, 0);
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static dinput_status_t noisy_map(dinput_element_t** out, const dinput_element_t* in,
                                 void* user_data) {
  (void)user_data;
  return noisy_value(out, scalar_of(in));
}

static dinput_status_t noisy_value_fn(dinput_element_t** out, const dinput_value_context_t* context,
                                      void* user_data) {
  (void)user_data;
  return noisy_value(out, dinput_value_context_replica_id_in_sync_group(context));
}

static dinput_status_t noisy_replica_fn(dinput_element_t** out,
                                        const dinput_replica_context_t* context,
                                        const dinput_element_t* args, void* user_data) {
  (void)args;
  (void)user_data;
  return noisy_value(out, dinput_replica_context_replica_id_in_sync_group(context));
}

static dinput_status_t noisy_dataset_fn(dinput_dataset_t** out,
                                        const dinput_input_context_t* context, void* user_data) {
  dinput_element_t* e = NULL;
  dinput_status_t st;
  (void)context;
  (void)user_data;
  st = noisy_value(&e, 0);
  dinput_element_free(e);
  return st != DINPUT_OK ? st : dinput_dataset_range(out, 0, 4, 1);
}

/* A generator's finalize and a free_user_data are callbacks too, run by the free calls. */
static void noisy_free(void* user_data) {
  dinput_dataset_t* bad = NULL;
  (void)user_data;
  dinput_dataset_range(&bad, 0, 1, 0); /* fails: step 0 */
  dinput_error_set(DINPUT_UNAVAILABLE, "noise from a free callback");
}

static void noisy_finalize(void* state) { noisy_free(state); }

/* The caller's last error is still the failure of `expected_message`, at the same address. */
static void check_last_error_kept(const char* held, const char* expected_message) {
  CHECK(dinput_last_error_code() == DINPUT_NOT_FOUND);
  CHECK(strcmp(dinput_last_error_message(), expected_message) == 0);
  CHECK(held == dinput_last_error_message() && strcmp(held, expected_message) == 0);
}

static void test_last_error_survives_callbacks(void) {
  const char* devices[2] = {"CPU:0", "CPU:1"};
  const char* missing[1] = {"/nonexistent-dinput-test-dir/*.txt"};
  char expected[512];
  const char* held;
  dinput_dataset_t *r = NULL, *m = NULL, *names = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dist = NULL;
  dinput_per_replica_t* values = NULL;
  dinput_dataset_t* gen = NULL;
  dinput_iterator_t* gen_it = NULL;
  dinput_spec_t* spec = scalar_int64_spec();
  int64_t counter = 0;
  int i;

  CHECK_OK(dinput_strategy_new(&strategy, devices, 2));
  CHECK_OK(dinput_dataset_from_generator(&gen, spec, NULL, plain_next, noisy_finalize, &counter,
                                         noisy_free));
  CHECK_OK(dinput_dataset_iterator(&gen_it, gen));
  dinput_spec_free(spec);
  CHECK_OK(dinput_dataset_range(&r, 0, 10, 1));
  CHECK_OK(map_with(&m, r, noisy_map, NULL, 1, 1, NULL, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, m));

  /* A failure the caller has not read yet. */
  CHECK_STATUS(dinput_dataset_list_files(&names, missing, 1, NULL), DINPUT_NOT_FOUND);
  snprintf(expected, sizeof expected, "%s", dinput_last_error_message());
  CHECK(strstr(expected, "nonexistent-dinput-test-dir") != NULL);
  held = dinput_last_error_message();

  /* Successful calls leave it alone ... */
  CHECK_OK(dinput_dataset_range(&names, 0, 3, 1));
  dinput_dataset_free(names);
  check_last_error_kept(held, expected);
  /* ... and so do callbacks on the caller's own thread, whatever they set or fail inside:
   * a sequential map, ... */
  for (i = 0; i < 3; ++i) {
    CHECK_OK(dinput_iterator_get_next(&e, it));
    dinput_element_free(e);
  }
  check_last_error_kept(held, expected);
  /* ... value_fn, ... */
  CHECK_OK(
      dinput_strategy_distribute_values_from_function(&values, strategy, noisy_value_fn, NULL));
  dinput_per_replica_free(values);
  check_last_error_kept(held, expected);
  /* ... replica 0 of run, ... */
  CHECK_OK(dinput_strategy_run(&values, strategy, noisy_replica_fn, NULL, NULL));
  dinput_per_replica_free(values);
  check_last_error_kept(held, expected);
  /* ... and dataset_fn. */
  CHECK_OK(dinput_strategy_distribute_datasets_from_function(&dist, strategy, noisy_dataset_fn,
                                                             NULL, NULL, NULL));
  dinput_dist_dataset_free(dist);
  check_last_error_kept(held, expected);
  /* ... and a generator's finalize and a free_user_data. */
  dinput_iterator_free(gen_it);
  dinput_dataset_free(gen);
  check_last_error_kept(held, expected);

  /* The next failing call replaces it; dinput_error_clear clears it. */
  CHECK_STATUS(dinput_dataset_range(&names, 0, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK(strstr(dinput_last_error_message(), "nonexistent") == NULL);
  dinput_error_clear();
  CHECK(dinput_last_error_code() == DINPUT_OK);
  CHECK(strcmp(dinput_last_error_message(), "") == 0);

  dinput_iterator_free(it);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
  dinput_strategy_free(strategy);
}

int main(void) {
  test_generator_lifecycle();
  test_generator_without_init();
  test_generator_failures();
  test_map_callbacks();
  test_map_many();
  test_filter_callbacks();
  test_user_data_freed_when_constructors_fail();
  test_concurrent_iterator_use();
  test_concurrent_dist_iterator_use();
  test_out_of_range_from_callbacks_is_an_error();
  test_out_of_range_from_distribute_callbacks_is_an_error();
  test_last_error_survives_callbacks();
  return check_finish_();
}
