/* Callbacks through the C API: generator, map and filter results and failures (their
 * messages must reach get_next, also from library threads), spec checks on what they
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
  const char *fail_message;  /* given to dinput_error_set, or NULL to set none */
  int wrong_shape_at;        /* -1: never; else yields an int64[2] there */
  int no_element_at;         /* -1: never; else returns OK without an element */
  int fail_init;
  /* counters */
  int inits, finalizes, frees;
};

struct gen_state {
  struct gen_config *config;
  int64_t next;
};

static dinput_status_t gen_init(void **state, void *user_data) {
  struct gen_config *c = (struct gen_config *)user_data;
  struct gen_state *s;
  ++c->inits;
  if (c->fail_init) {
    dinput_error_set(DINPUT_PERMISSION_DENIED, "init refused by the test");
    return DINPUT_PERMISSION_DENIED;
  }
  s = (struct gen_state *)malloc(sizeof *s);
  if (!s) return DINPUT_RESOURCE_EXHAUSTED;
  s->config = c;
  s->next = 0;
  *state = s;
  return DINPUT_OK;
}

static dinput_status_t gen_next(dinput_element_t **out, void *state) {
  struct gen_state *s = (struct gen_state *)state;
  struct gen_config *c = s->config;
  int64_t i = s->next++;
  int64_t pair[2];
  dinput_tensor_t *t;
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

static void gen_finalize(void *state) {
  struct gen_state *s = (struct gen_state *)state;
  ++s->config->finalizes;
  free(s);
}

static void count_free(void *user_data) { ++((struct gen_config *)user_data)->frees; }

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

static dinput_spec_t *scalar_int64_spec(void) {
  dinput_spec_t *spec = NULL;
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  return spec;
}

static dinput_dataset_t *make_gen(struct gen_config *c) {
  dinput_spec_t *spec = scalar_int64_spec();
  dinput_dataset_t *ds = NULL;
  CHECK_OK(dinput_dataset_from_generator(&ds, spec, gen_init, gen_next, gen_finalize, c, count_free));
  dinput_spec_free(spec);
  return ds;
}

/* Reads from `it` until it fails; returns the failing status, and the number of elements
 * read before in *n. */
static dinput_status_t read_until_error(dinput_iterator_t *it, int64_t *n) {
  dinput_element_t *e = NULL;
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
  dinput_dataset_t *ds = make_gen(&c);
  dinput_iterator_t *it = NULL, *it2 = NULL;
  dinput_element_t *e = NULL;
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
static dinput_status_t plain_next(dinput_element_t **out, void *state) {
  int64_t *counter = (int64_t *)state;
  dinput_tensor_t *t;
  if (*counter >= 3) return DINPUT_OUT_OF_RANGE;
  t = make_int64(counter, 1, 0);
  ++*counter;
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static void test_generator_without_init(void) {
  dinput_spec_t *spec = scalar_int64_spec();
  dinput_dataset_t *ds = NULL;
  int64_t v[4];
  plain_counter = 0;
  CHECK_OK(dinput_dataset_from_generator(&ds, spec, NULL, plain_next, NULL, &plain_counter, NULL));
  dinput_spec_free(spec);
  CHECK(drain_int64(ds, v, 4, NULL) == 3 && v[0] == 0 && v[2] == 2);
  CHECK(plain_counter == 3);
  dinput_dataset_free(ds);
}

static void test_generator_failures(void) {
  dinput_iterator_t *it = NULL;
  dinput_dataset_t *ds;
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
      dinput_element_t *e = NULL;
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
    it = (dinput_iterator_t *)(void *)&c;
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
    dinput_dataset_t *p = NULL;
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
  const char *message;
  int wrong_dtype;
  int frees;
  pthread_mutex_t mu;
  int calls;
};

static void count_map_free(void *user_data) { ++((struct map_config *)user_data)->frees; }

static dinput_status_t negate(dinput_element_t **out, const dinput_element_t *in, void *user_data) {
  struct map_config *c = (struct map_config *)user_data;
  int64_t v = 0;
  dinput_tensor_t *t = NULL;
  pthread_mutex_lock(&c->mu);
  ++c->calls;
  pthread_mutex_unlock(&c->mu);
  if (dinput_tensor_copy_to(dinput_element_get(in, 0), DINPUT_INT64, &v, sizeof v) != DINPUT_OK)
    return dinput_last_error_code();
  if (v == c->fail_on) {
    dinput_error_set(DINPUT_FAILED_PRECONDITION, c->message);
    return DINPUT_FAILED_PRECONDITION;
  }
  if (c->wrong_dtype) {
    double d = (double)v;
    if (dinput_tensor_new(&t, DINPUT_FLOAT64, NULL, 0, &d, sizeof d) != DINPUT_OK) return dinput_last_error_code();
  } else {
    v = -v;
    t = make_int64(&v, 1, 0);
  }
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

static struct map_config map_config_of(int64_t fail_on, const char *message) {
  struct map_config c;
  memset(&c, 0, sizeof c);
  c.fail_on = fail_on;
  c.message = message;
  pthread_mutex_init(&c.mu, NULL);
  return c;
}

static void test_map_callbacks(void) {
  dinput_dataset_t *r = NULL, *m = NULL, *b = NULL;
  dinput_iterator_t *it = NULL;
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
    dinput_element_t *e = NULL;
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
    CHECK_OK(dinput_tensor_copy_to(dinput_element_get(e, 0), DINPUT_FLOAT64, &d, sizeof d));
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

struct filter_config {
  int frees;
};

static void count_filter_free(void *user_data) { ++((struct filter_config *)user_data)->frees; }

static dinput_status_t keep_multiples_of_three(int *keep, const dinput_element_t *in, void *user_data) {
  int64_t v = 0;
  (void)user_data;
  dinput_tensor_copy_to(dinput_element_get(in, 0), DINPUT_INT64, &v, sizeof v);
  if (v == 10) {
    dinput_error_set(DINPUT_ABORTED, "the predicate gave up at 10");
    return DINPUT_ABORTED;
  }
  *keep = v % 3 == 0;
  return DINPUT_OK;
}

static void test_filter_callbacks(void) {
  dinput_dataset_t *r = NULL, *f = NULL;
  dinput_iterator_t *it = NULL;
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
  dinput_spec_t *spec = scalar_int64_spec();
  struct gen_config g = config_of(1);
  struct map_config m = map_config_of(-1, NULL);
  struct filter_config f = {0};
  CHECK_OK(dinput_dataset_range(&r, 0, 3, 1));

  CHECK_STATUS(dinput_dataset_from_generator(&out, NULL, gen_init, gen_next, gen_finalize, &g, count_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK(g.frees == 1);
  CHECK_STATUS(dinput_dataset_from_generator(&out, spec, gen_init, NULL, gen_finalize, &g, count_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'next'");
  CHECK(g.frees == 2);
  CHECK_STATUS(dinput_dataset_from_generator(NULL, spec, gen_init, gen_next, gen_finalize, &g, count_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK(g.frees == 3);
  CHECK(g.inits == 0);

  CHECK_STATUS(map_with(&out, NULL, negate, NULL, 1, 1, &m, count_map_free), DINPUT_INVALID_ARGUMENT);
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
  CHECK_STATUS(dinput_dataset_filter(&out, r, NULL, &f, count_filter_free), DINPUT_INVALID_ARGUMENT);
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

static dinput_status_t gated_identity(dinput_element_t **out, const dinput_element_t *in, void *user_data) {
  struct gate *g = (struct gate *)user_data;
  struct timespec deadline;
  int64_t v = 0;
  dinput_tensor_t *t = NULL;
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
  if (dinput_tensor_copy_to(dinput_element_get(in, 0), DINPUT_INT64, &v, sizeof v) != DINPUT_OK)
    return dinput_last_error_code();
  t = make_int64(&v, 1, 0);
  *out = make_element(&t, 1);
  return DINPUT_OK;
}

struct second_caller {
  struct gate *gate;
  dinput_iterator_t *it;
  dinput_status_t status;
  char message[256];
};

static void *call_while_first_runs(void *arg) {
  struct second_caller *s = (struct second_caller *)arg;
  dinput_element_t *e = NULL;
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
  dinput_iterator_t *it;
  int64_t *values;
  int64_t count;
  int64_t busy;     /* FAILED_PRECONDITION answers */
  int other_errors; /* anything but OK, FAILED_PRECONDITION and the end */
};

static void *hammer_iterator(void *arg) {
  struct hammer *h = (struct hammer *)arg;
  dinput_element_t *e = NULL;
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
    dinput_tensor_copy_to(dinput_element_get(e, 0), DINPUT_INT64, &h->values[h->count++], sizeof(int64_t));
    dinput_element_free(e);
  }
  return NULL;
}

static void test_concurrent_iterator_use(void) {
  dinput_dataset_t *r = NULL, *s = NULL, *m = NULL;
  dinput_iterator_t *it = NULL;
  dinput_element_t *e = NULL;
  dinput_spec_t *spec = scalar_int64_spec();
  struct gate g;
  struct second_caller second;
  struct hammer h[2];
  pthread_t thread, threads[2];
  char *seen = NULL;
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
    h[k].values = (int64_t *)calloc(HAMMER_N, sizeof(int64_t));
    CHECK(pthread_create(&threads[k], NULL, hammer_iterator, &h[k]) == 0);
  }
  for (k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
  seen = (char *)calloc(HAMMER_N, 1);
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
  struct gate *gate;
  dinput_dist_iterator_t *it;
  int wait_for_gate;
  dinput_status_t status;
  char message[256];
};

static void *call_dist(void *arg) {
  struct dist_caller *c = (struct dist_caller *)arg;
  dinput_per_replica_t *v = NULL;
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
  dinput_strategy_t *strategy = NULL;
  dinput_dist_dataset_t *dist = NULL;
  dinput_dist_iterator_t *it = NULL;
  dinput_spec_t *spec = scalar_int64_spec();
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
  if (refused != 1) fprintf(stderr, "dist calls: %s (%s), %s (%s)\n", dinput_status_name(a.status), a.message,
                            dinput_status_name(b.status), b.message);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_strategy_free(strategy);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
  dinput_spec_free(spec);
}

int main(void) {
  test_generator_lifecycle();
  test_generator_without_init();
  test_generator_failures();
  test_map_callbacks();
  test_filter_callbacks();
  test_user_data_freed_when_constructors_fail();
  test_concurrent_iterator_use();
  test_concurrent_dist_iterator_use();
  return check_finish_();
}
