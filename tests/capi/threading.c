/* The threading contract of dinput.h: specs and options freeze when first used (a setter on
 * a used one is FAILED_PRECONDITION naming the function that used it), and iterators can be
 * cancelled from another thread and freed without waiting for a slow upstream. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "dinput.h"

/* ---- freezing ---- */

static dinput_status_t identity_map(dinput_element_t** out, const dinput_element_t* in,
                                    void* user_data) {
  (void)user_data;
  return dinput_element_ref(out, in);
}

static dinput_status_t range_of_element(dinput_dataset_t** out, const dinput_element_t* in,
                                        void* user_data) {
  int64_t n = 0;
  (void)user_data;
  if (dinput_tensor_copy_to(&n, sizeof n, dinput_element_get(in, 0), DINPUT_INT64) != DINPUT_OK)
    return DINPUT_INTERNAL;
  return dinput_dataset_range(out, 0, n, 1);
}

static dinput_status_t one_range(dinput_dataset_t** out, const dinput_input_context_t* context,
                                 void* user_data) {
  (void)context;
  (void)user_data;
  return dinput_dataset_range(out, 0, 4, 1);
}

static dinput_status_t no_more(dinput_element_t** out, void* state) {
  (void)out;
  (void)state;
  return DINPUT_OUT_OF_RANGE;
}

static void test_specs_freeze_when_used(void) {
  const int64_t scalar_shape[1] = {0};
  dinput_dataset_t *range = NULL, *mapped = NULL, *interleaved = NULL, *generated = NULL;
  dinput_spec_t *map_spec = NULL, *interleave_spec = NULL, *generator_spec = NULL, *got = NULL;
  (void)scalar_shape;
  CHECK_OK(dinput_dataset_range(&range, 0, 3, 1));

  /* Mutable until used: a failed use does not freeze either. */
  CHECK_OK(dinput_spec_new(&map_spec));
  CHECK_OK(dinput_spec_add(map_spec, DINPUT_INT64, NULL, 0));
  CHECK_STATUS(map_with(&mapped, range, identity_map, map_spec, 0, 1, NULL, NULL), DINPUT_OK);
  CHECK_STATUS(dinput_spec_add(map_spec, DINPUT_INT64, NULL, 0), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("dinput_spec_add: spec already used by dinput_map_options_set_out_spec");
  CHECK_MSG("make a new one");
  CHECK(dinput_spec_size(map_spec) == 1); /* unchanged, still readable */
  /* A frozen spec may be used again. */
  dinput_dataset_free(mapped);
  mapped = NULL;
  CHECK_OK(map_with(&mapped, range, identity_map, map_spec, 0, 1, NULL, NULL));

  CHECK_OK(dinput_spec_new(&interleave_spec));
  CHECK_OK(dinput_spec_add(interleave_spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(interleave_with(&interleaved, range, range_of_element, interleave_spec, 2, 1, 1, 1, NULL,
                           NULL));
  CHECK_STATUS(dinput_spec_add(interleave_spec, DINPUT_INT64, NULL, 0), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("spec already used by dinput_dataset_interleave");

  CHECK_OK(dinput_spec_new(&generator_spec));
  CHECK_OK(dinput_spec_add(generator_spec, DINPUT_INT64, NULL, 0));
  /* A failing call (no next function) leaves the spec mutable. */
  CHECK_STATUS(
      dinput_dataset_from_generator(&generated, generator_spec, NULL, NULL, NULL, NULL, NULL),
      DINPUT_INVALID_ARGUMENT);
  CHECK_OK(dinput_spec_add(generator_spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(
      dinput_dataset_from_generator(&generated, generator_spec, NULL, no_more, NULL, NULL, NULL));
  CHECK_STATUS(dinput_spec_add(generator_spec, DINPUT_INT64, NULL, 0), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("spec already used by dinput_dataset_from_generator");

  /* A spec the library hands out is a new, mutable one. */
  CHECK_OK(dinput_dataset_element_spec(&got, mapped));
  CHECK_OK(dinput_spec_add(got, DINPUT_FLOAT32, NULL, 0));

  dinput_spec_free(got);
  dinput_spec_free(generator_spec);
  dinput_spec_free(interleave_spec);
  dinput_spec_free(map_spec);
  dinput_dataset_free(generated);
  dinput_dataset_free(interleaved);
  dinput_dataset_free(mapped);
  dinput_dataset_free(range);
}

static void test_options_freeze_when_used(void) {
  dinput_dataset_t *range = NULL, *with = NULL, *batched = NULL;
  dinput_options_t* options = NULL;
  dinput_input_options_t *input_options = NULL, *fn_options = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dist = NULL;

  CHECK_OK(dinput_dataset_range(&range, 0, 8, 1));
  CHECK_OK(dinput_options_new(&options));
  CHECK_OK(dinput_options_set_auto_shard_policy(options, DINPUT_AUTO_SHARD_DATA));
  CHECK_OK(dinput_dataset_with_options(&with, range, options));
  CHECK_STATUS(dinput_options_set_auto_shard_policy(options, DINPUT_AUTO_SHARD_OFF),
               DINPUT_FAILED_PRECONDITION);
  CHECK_MSG(
      "dinput_options_set_auto_shard_policy: options already used by dinput_dataset_with_options");
  CHECK_STATUS(dinput_options_set_skip_corrupt_records(options, 1), DINPUT_FAILED_PRECONDITION);
  CHECK_STATUS(dinput_options_set_max_record_bytes(options, 1024), DINPUT_FAILED_PRECONDITION);
  CHECK_STATUS(dinput_options_set_map_files(options, 1), DINPUT_FAILED_PRECONDITION);
  CHECK_STATUS(dinput_options_set_allow_nonregular_files(options, 1), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("dinput_options_set_allow_nonregular_files: options already used");
  CHECK(dinput_options_auto_shard_policy(options) == DINPUT_AUTO_SHARD_DATA);
  CHECK(dinput_options_map_files(options) == 0);

  CHECK_OK(dinput_dataset_batch(&batched, with, 2, NULL));
  CHECK_OK(dinput_strategy_new(&strategy, NULL, 0));
  CHECK_OK(dinput_input_options_new(&input_options));
  CHECK_OK(dinput_input_options_set_per_replica_buffer_size(input_options, 2));
  CHECK_OK(dinput_strategy_distribute_dataset(&dist, strategy, batched, input_options));
  CHECK_STATUS(dinput_input_options_set_per_replica_buffer_size(input_options, 3),
               DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("input options already used by dinput_strategy_distribute_dataset");
  CHECK_STATUS(dinput_input_options_set_fetch_to_device(input_options, 0),
               DINPUT_FAILED_PRECONDITION);
  CHECK_STATUS(dinput_input_options_set_place_dataset_on_device(input_options, 1),
               DINPUT_FAILED_PRECONDITION);
  CHECK_STATUS(
      dinput_input_options_set_replication_mode(input_options, DINPUT_REPLICATION_PER_REPLICA),
      DINPUT_FAILED_PRECONDITION);
  dinput_dist_dataset_free(dist);
  dist = NULL;

  CHECK_OK(dinput_input_options_new(&fn_options));
  CHECK_OK(dinput_strategy_distribute_datasets_from_function(&dist, strategy, one_range, NULL, NULL,
                                                             fn_options));
  CHECK_STATUS(dinput_input_options_set_fetch_to_device(fn_options, 0), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("input options already used by dinput_strategy_distribute_datasets_from_function");

  dinput_dist_dataset_free(dist);
  dinput_input_options_free(fn_options);
  dinput_input_options_free(input_options);
  dinput_strategy_free(strategy);
  dinput_options_free(options);
  dinput_dataset_free(batched);
  dinput_dataset_free(with);
  dinput_dataset_free(range);
}

/* ---- cancellation and free ---- */

/* Sanitizers slow thread hand-offs down by an order of magnitude. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifdef UNDER_SANITIZER
static const double kCancelLimitMs = 200.0;
static const double kFreeLimitMs = 250.0;
#else
/* The blocked callback waits at its gate until the test opens it, so any prompt return
 * shows that nothing waited for it; the limits only leave room for a loaded 2-core machine,
 * where a woken thread can wait tens of milliseconds for a core (10 ms failed there). */
static const double kCancelLimitMs = 100.0;
static const double kFreeLimitMs = 250.0;
#endif

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* A gate that callbacks block on until the test opens it, counting the calls inside and
 * the release of user_data. */
struct gate {
  pthread_mutex_t mu;
  int open;
  int inside; /* callbacks blocked right now */
  int calls;  /* callbacks entered */
  int frees;  /* free_user_data calls */
  int calls_after_free;
};

static void gate_init(struct gate* g) {
  memset(g, 0, sizeof *g);
  pthread_mutex_init(&g->mu, NULL);
}

static void gate_open(struct gate* g) {
  pthread_mutex_lock(&g->mu);
  g->open = 1;
  pthread_mutex_unlock(&g->mu);
}

static int gate_read(struct gate* g, const int* field) {
  int v;
  pthread_mutex_lock(&g->mu);
  v = *field;
  pthread_mutex_unlock(&g->mu);
  return v;
}

/* Waits (up to 5 s) until *field reaches at least `want`. */
static int gate_wait(struct gate* g, const int* field, int want) {
  int i;
  for (i = 0; i < 5000; ++i) {
    if (gate_read(g, field) >= want) return 1;
    sleep_ms(1);
  }
  return 0;
}

static void gate_pass(struct gate* g) {
  pthread_mutex_lock(&g->mu);
  if (g->frees) ++g->calls_after_free;
  ++g->calls;
  ++g->inside;
  while (!g->open) {
    pthread_mutex_unlock(&g->mu);
    sleep_ms(1);
    pthread_mutex_lock(&g->mu);
  }
  --g->inside;
  pthread_mutex_unlock(&g->mu);
}

static void gate_free(void* user_data) {
  struct gate* g = (struct gate*)user_data;
  pthread_mutex_lock(&g->mu);
  ++g->frees;
  pthread_mutex_unlock(&g->mu);
}

static dinput_status_t gated_map(dinput_element_t** out, const dinput_element_t* in,
                                 void* user_data) {
  gate_pass((struct gate*)user_data);
  return dinput_element_ref(out, in);
}

static dinput_status_t gated_next(dinput_element_t** out, void* state) {
  int64_t v = 7;
  dinput_tensor_t* t;
  gate_pass((struct gate*)state);
  t = make_int64(&v, 1, 0);
  *out = make_element(&t, 1);
  return *out ? DINPUT_OK : DINPUT_INTERNAL;
}

/* interleave: each input element opens a generator that blocks at the gate (user_data);
 * the gate's free function is the interleave's, so it runs once. */
static dinput_status_t gated_generator(dinput_dataset_t** out, const dinput_element_t* in,
                                       void* user_data) {
  dinput_spec_t* spec = NULL;
  dinput_status_t st;
  (void)in;
  if ((st = dinput_spec_new(&spec)) != DINPUT_OK) return st;
  if ((st = dinput_spec_add(spec, DINPUT_INT64, NULL, 0)) == DINPUT_OK)
    st = dinput_dataset_from_generator(out, spec, NULL, gated_next, NULL, user_data, NULL);
  dinput_spec_free(spec);
  return st;
}

/* get_next (or get_next_as_optional) on another thread, recording when it returned. */
struct blocked_call {
  dinput_iterator_t* it;
  dinput_dist_iterator_t* dist;
  int optional;
  dinput_status_t status;
  char message[256];
  double returned_ms;
};

static void* blocked_call_run(void* arg) {
  struct blocked_call* c = (struct blocked_call*)arg;
  if (c->dist) {
    dinput_per_replica_t* value = NULL;
    c->status = dinput_dist_iterator_get_next(&value, c->dist);
    dinput_per_replica_free(value);
  } else if (c->optional) {
    dinput_optional_t* opt = NULL;
    c->status = dinput_iterator_get_next_as_optional(&opt, c->it);
    dinput_optional_free(opt);
  } else {
    dinput_element_t* e = NULL;
    c->status = dinput_iterator_get_next(&e, c->it);
    dinput_element_free(e);
  }
  c->returned_ms = now_ms();
  snprintf(c->message, sizeof c->message, "%s", dinput_last_error_message());
  return NULL;
}

/* Cancels `it` while another thread's get_next waits for a callback blocked at `g`, then
 * frees it while the callback is still blocked; user_data is released only after the
 * callback has returned. */
static void check_cancel_and_free(const char* what, dinput_dataset_t* ds, struct gate* g,
                                  int optional) {
  dinput_iterator_t* it = NULL;
  struct blocked_call call;
  pthread_t thread;
  double cancelled_at, freed_in;
  dinput_element_t* e = NULL;
  printf("cancel: %s\n", what);
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  dinput_dataset_free(ds); /* the iterator keeps the pipeline */
  memset(&call, 0, sizeof call);
  call.it = it;
  call.optional = optional;
  CHECK(pthread_create(&thread, NULL, blocked_call_run, &call) == 0);
  CHECK(gate_wait(g, &g->inside, 1));
  sleep_ms(20); /* let get_next settle into its wait */
  cancelled_at = now_ms();
  CHECK_OK(dinput_iterator_cancel(it));
  pthread_join(thread, NULL);
  CHECK(call.status == DINPUT_CANCELLED);
  CHECK(strstr(call.message, "cancelled") != NULL);
  printf("  get_next returned %.2f ms after the cancel (limit %.0f)\n",
         call.returned_ms - cancelled_at, kCancelLimitMs);
  CHECK(call.returned_ms - cancelled_at < kCancelLimitMs);
  /* Every later call is CANCELLED, and cancelling again is fine. */
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_CANCELLED);
  CHECK_MSG("dinput_iterator_get_next: the iterator was cancelled");
  CHECK(e == NULL);
  CHECK_OK(dinput_iterator_cancel(it));
  /* The callback is still blocked: free must not wait for it. */
  CHECK(gate_read(g, &g->inside) >= 1);
  freed_in = now_ms();
  dinput_iterator_free(it);
  freed_in = now_ms() - freed_in;
  printf("  free took %.2f ms with a callback still blocked (limit %.0f)\n", freed_in,
         kFreeLimitMs);
  CHECK(freed_in < kFreeLimitMs);
  CHECK(gate_read(g, &g->frees) == 0); /* the callback still runs: its user_data lives */
  gate_open(g);
  CHECK(gate_wait(g, &g->frees, 1));
  sleep_ms(20);
  CHECK(gate_read(g, &g->frees) == 1);
  CHECK(gate_read(g, &g->calls_after_free) == 0);
  CHECK(gate_read(g, &g->inside) == 0);
}

static void test_cancel_blocked_get_next(void) {
  struct gate g;
  dinput_dataset_t *range = NULL, *mapped = NULL, *gen = NULL, *prefetched = NULL;
  dinput_spec_t* spec = NULL;

  /* A prefetch thread inside a blocked generator. */
  gate_init(&g);
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(dinput_dataset_from_generator(&gen, spec, NULL, gated_next, NULL, &g, gate_free));
  CHECK_OK(dinput_dataset_prefetch(&prefetched, gen, 2));
  dinput_dataset_free(gen);
  check_cancel_and_free("generator behind prefetch", prefetched, &g, 0);

  /* Parallel map workers inside a blocked map function (as one that sleeps for seconds). */
  gate_init(&g);
  CHECK_OK(dinput_dataset_range(&range, 0, 1000, 1));
  CHECK_OK(map_with(&mapped, range, gated_map, NULL, 4, 1, &g, gate_free));
  check_cancel_and_free("parallel map", mapped, &g, 1);

  /* A prefetch over a sequential map: get_next_as_optional too. */
  gate_init(&g);
  mapped = prefetched = NULL;
  CHECK_OK(map_with(&mapped, range, gated_map, NULL, 1, 1, &g, gate_free));
  CHECK_OK(dinput_dataset_prefetch(&prefetched, mapped, 1));
  dinput_dataset_free(mapped);
  check_cancel_and_free("sequential map behind prefetch", prefetched, &g, 1);

  /* Parallel interleave readers inside blocked generators. */
  gate_init(&g);
  mapped = NULL;
  CHECK_OK(interleave_with(&mapped, range, gated_generator, spec, 2, 1, 2, 1, &g, gate_free));
  check_cancel_and_free("parallel interleave", mapped, &g, 0);

  dinput_dataset_free(range);
  dinput_spec_free(spec);
  CHECK_STATUS(dinput_iterator_cancel(NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dist_iterator_cancel(NULL), DINPUT_INVALID_ARGUMENT);
}

/* Freeing an iterator whose prefetch thread is inside a slow map function, with no cancel
 * and no get_next waiting: free returns at once. */
static void test_free_with_slow_upstream(void) {
  struct gate g;
  dinput_dataset_t *range = NULL, *mapped = NULL, *prefetched = NULL;
  dinput_iterator_t* it = NULL;
  double took;
  gate_init(&g);
  CHECK_OK(dinput_dataset_range(&range, 0, 10, 1));
  CHECK_OK(map_with(&mapped, range, gated_map, NULL, 1, 1, &g, gate_free));
  CHECK_OK(dinput_dataset_prefetch(&prefetched, mapped, 2));
  dinput_dataset_free(range);
  dinput_dataset_free(mapped);
  CHECK_OK(dinput_dataset_iterator(&it, prefetched));
  dinput_dataset_free(prefetched);
  CHECK(gate_wait(&g, &g.inside, 1));
  took = now_ms();
  dinput_iterator_free(it);
  took = now_ms() - took;
  printf("free with a slow upstream took %.2f ms (limit %.0f)\n", took, kFreeLimitMs);
  CHECK(took < kFreeLimitMs);
  CHECK(gate_read(&g, &g.frees) == 0);
  gate_open(&g);
  CHECK(gate_wait(&g, &g.frees, 1));
  sleep_ms(20);
  CHECK(gate_read(&g, &g.frees) == 1);
  CHECK(gate_read(&g, &g.calls_after_free) == 0);

  /* An ordinary free still releases user_data before it returns. */
  gate_init(&g);
  gate_open(&g);
  range = mapped = prefetched = NULL;
  CHECK_OK(dinput_dataset_range(&range, 0, 10, 1));
  CHECK_OK(map_with(&mapped, range, gated_map, NULL, 2, 1, &g, gate_free));
  CHECK_OK(dinput_dataset_prefetch(&prefetched, mapped, 2));
  dinput_dataset_free(range);
  dinput_dataset_free(mapped);
  it = NULL;
  CHECK_OK(dinput_dataset_iterator(&it, prefetched));
  dinput_dataset_free(prefetched);
  dinput_iterator_free(it);
  CHECK(gate_read(&g, &g.frees) == 1);
}

/* Two in-process workers: a cancel on one fails the other's blocked step at once (not after
 * the collective's 60 s timeout), and the collective stays usable. */
struct drain {
  dinput_dist_iterator_t* it;
  int steps;
  dinput_status_t end;
};

static void* drain_run(void* arg) {
  struct drain* d = (struct drain*)arg;
  dinput_per_replica_t* v = NULL;
  while ((d->end = dinput_dist_iterator_get_next(&v, d->it)) == DINPUT_OK) {
    ++d->steps;
    dinput_per_replica_free(v);
    v = NULL;
  }
  return NULL;
}

/* Starts a get_next on `blocked` in another thread, waits until it is blocked in the step,
 * then cancels `stopped` (free_it 0) or frees it (free_it 1), and waits for the get_next to
 * return into *call. Returns the milliseconds from the cancel or free to that return. */
static double stop_while_blocked(struct blocked_call* call, dinput_dist_iterator_t* blocked,
                                 dinput_dist_iterator_t* stopped, int free_it) {
  pthread_t thread;
  double stopped_at;
  memset(call, 0, sizeof *call);
  call->dist = blocked;
  CHECK(pthread_create(&thread, NULL, blocked_call_run, call) == 0);
  sleep_ms(50);
  stopped_at = now_ms();
  if (free_it)
    dinput_dist_iterator_free(stopped);
  else
    CHECK_OK(dinput_dist_iterator_cancel(stopped));
  pthread_join(thread, NULL);
  return call->returned_ms - stopped_at;
}

static void test_cancel_dist_iterator(void) {
  dinput_collective_t* collective = NULL;
  dinput_strategy_t* strategy[2] = {NULL, NULL};
  dinput_dist_dataset_t* dist[2] = {NULL, NULL};
  dinput_dist_iterator_t* it[2] = {NULL, NULL};
  dinput_dataset_t *range = NULL, *batched = NULL;
  struct blocked_call call;
  struct drain drains[2];
  pthread_t threads[2];
  dinput_per_replica_t* v = NULL;
  double latency;
  int w;

  CHECK_OK(dinput_collective_new_in_process(&collective, 2, 60000));
  CHECK_OK(dinput_dataset_range(&range, 0, 16, 1));
  CHECK_OK(dinput_dataset_batch(&batched, range, 2, NULL));
  for (w = 0; w < 2; ++w) {
    CHECK_OK(dinput_strategy_new_multi_worker_cpu(&strategy[w], collective, w, 2));
    CHECK_OK(dinput_strategy_distribute_dataset(&dist[w], strategy[w], batched, NULL));
    CHECK_OK(dinput_dist_dataset_iterator(&it[w], dist[w]));
  }
  /* Worker 1 waits in a step for worker 0, which cancels instead of taking it. */
  latency = stop_while_blocked(&call, it[1], it[0], 0);
  CHECK(call.status == DINPUT_CANCELLED);
  CHECK(strstr(call.message, "worker 0 cancelled") != NULL);
  printf("dist: worker 1's step failed %.2f ms after worker 0 cancelled (limit %.0f): %s\n",
         latency, kCancelLimitMs, call.message);
  CHECK(latency < kCancelLimitMs);
  CHECK_STATUS(dinput_dist_iterator_get_next(&v, it[0]), DINPUT_CANCELLED);
  CHECK_MSG("dinput_dist_iterator_get_next: the iterator was cancelled");
  CHECK_STATUS(dinput_dist_iterator_get_next(&v, it[1]), DINPUT_CANCELLED);
  CHECK_OK(dinput_dist_iterator_cancel(it[0]));
  for (w = 0; w < 2; ++w) {
    dinput_dist_iterator_free(it[w]);
    it[w] = NULL;
  }
  /* The next epoch runs normally: 8 batches of 2 rows, one row per replica per step. */
  for (w = 0; w < 2; ++w) {
    CHECK_OK(dinput_dist_dataset_iterator(&it[w], dist[w]));
    memset(&drains[w], 0, sizeof drains[w]);
    drains[w].it = it[w];
    CHECK(pthread_create(&threads[w], NULL, drain_run, &drains[w]) == 0);
  }
  for (w = 0; w < 2; ++w) {
    pthread_join(threads[w], NULL);
    CHECK(drains[w].end == DINPUT_OUT_OF_RANGE);
    CHECK(drains[w].steps == 8);
    dinput_dist_iterator_free(it[w]);
  }
  /* Worker 0 cancels its own step while it waits for worker 1; worker 1 then fails too. */
  for (w = 0; w < 2; ++w) CHECK_OK(dinput_dist_dataset_iterator(&it[w], dist[w]));
  latency = stop_while_blocked(&call, it[0], it[0], 0);
  CHECK(call.status == DINPUT_CANCELLED);
  CHECK(strstr(call.message, "dinput_dist_iterator_get_next: the iterator was cancelled") != NULL);
  CHECK(latency < kCancelLimitMs);
  CHECK_STATUS(dinput_dist_iterator_get_next(&v, it[1]), DINPUT_CANCELLED);
  CHECK_MSG("worker 0 cancelled");
  for (w = 0; w < 2; ++w) dinput_dist_iterator_free(it[w]);

  /* Freeing one worker's iterator mid-epoch releases the other's waiting step too. */
  for (w = 0; w < 2; ++w) CHECK_OK(dinput_dist_dataset_iterator(&it[w], dist[w]));
  latency = stop_while_blocked(&call, it[1], it[0], 1);
  CHECK(call.status == DINPUT_CANCELLED);
  CHECK(latency < kCancelLimitMs);
  dinput_dist_iterator_free(it[1]);

  for (w = 0; w < 2; ++w) {
    dinput_dist_dataset_free(dist[w]);
    dinput_strategy_free(strategy[w]);
  }
  dinput_dataset_free(batched);
  dinput_dataset_free(range);
  dinput_collective_free(collective);
}

int main(void) {
  test_specs_freeze_when_used();
  test_options_freeze_when_used();
  test_cancel_blocked_get_next();
  test_free_with_slow_upstream();
  test_cancel_dist_iterator();
  return check_finish_();
}
