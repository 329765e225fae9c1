/* dinput_set_thread_launcher: the library starts its threads through the launcher installed
 * (callbacks then run on the launcher's threads, and every body returns once the library is
 * done with it), starts them itself when the launcher declines, and goes back to its own
 * threads when the launcher is removed. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "dinput.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t launched_key; /* set (non-NULL) on the threads our launcher started */

struct counts {
  int launches;        /* bodies our launcher accepted */
  int declines;        /* calls it declined */
  int bodies_returned; /* accepted bodies that have returned */
  int calls_launched;  /* map calls on one of our threads */
  int calls_other;     /* map calls on any other thread */
};
static struct counts counts;

static struct counts snapshot(void) {
  struct counts c;
  pthread_mutex_lock(&mu);
  c = counts;
  pthread_mutex_unlock(&mu);
  return c;
}

struct launch {
  dinput_thread_body_fn body;
  void* arg;
};

static void* run_launched(void* p) {
  struct launch l = *(struct launch*)p;
  free(p);
  pthread_setspecific(launched_key, &launched_key);
  l.body(l.arg);
  pthread_mutex_lock(&mu);
  ++counts.bodies_returned;
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* Starts a detached pthread for each body; user_data is checked to arrive unchanged. */
static int launch_pthread(dinput_thread_body_fn body, void* arg, void* user_data) {
  pthread_t t;
  pthread_attr_t attr;
  struct launch* l;
  int rc;
  if (user_data != &counts) return 1;
  l = malloc(sizeof *l);
  if (!l) return 1;
  l->body = body;
  l->arg = arg;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_mutex_lock(&mu);
  ++counts.launches;
  pthread_mutex_unlock(&mu);
  rc = pthread_create(&t, &attr, run_launched, l);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    free(l);
    pthread_mutex_lock(&mu);
    --counts.launches;
    pthread_mutex_unlock(&mu);
    return 1;
  }
  return 0;
}

static int decline(dinput_thread_body_fn body, void* arg, void* user_data) {
  (void)body;
  (void)arg;
  (void)user_data;
  pthread_mutex_lock(&mu);
  ++counts.declines;
  pthread_mutex_unlock(&mu);
  return 1;
}

/* Negates its input, noting which kind of thread it ran on. */
static dinput_status_t negate(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  int64_t v = 0;
  dinput_tensor_t* t;
  (void)user_data;
  pthread_mutex_lock(&mu);
  if (pthread_getspecific(launched_key))
    ++counts.calls_launched;
  else
    ++counts.calls_other;
  pthread_mutex_unlock(&mu);
  if (dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64) != DINPUT_OK)
    return DINPUT_INTERNAL;
  v = -v;
  t = make_int64(&v, 1, 0);
  *out = make_element(&t, 1);
  return *out ? DINPUT_OK : DINPUT_INTERNAL;
}

enum { kN = 2000 };

/* range(kN).map(negate, parallel) then prefetch(2): values -0 .. -(kN-1) in order. */
static int negated_range_is_right(int64_t parallel) {
  dinput_dataset_t *r = NULL, *m = NULL, *p = NULL;
  static int64_t got[kN];
  int64_t n = -1, i;
  int ok = 1;
  if (dinput_dataset_range(&r, 0, kN, 1) != DINPUT_OK) return 0;
  if (map_with(&m, r, negate, NULL, parallel, 1, NULL, NULL) == DINPUT_OK &&
      dinput_dataset_prefetch(&p, m, 2) == DINPUT_OK)
    n = drain_int64(p, got, kN, NULL);
  dinput_dataset_free(p);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
  if (n != kN) return 0;
  for (i = 0; i < kN; ++i) ok &= got[i] == -i;
  return ok;
}

/* Waits (up to 10 s) until every accepted body has returned: the library ends what it starts. */
static int all_bodies_return(void) {
  int i;
  for (i = 0; i < 10000; ++i) {
    struct counts c = snapshot();
    struct timespec ms = {0, 1000000};
    if (c.bodies_returned == c.launches) return 1;
    nanosleep(&ms, NULL);
  }
  return 0;
}

/* Installs `launcher`, runs negated_range_is_right(parallel), and returns what the counters
 * gained meanwhile. */
static struct counts gained_under(dinput_thread_launcher_fn launcher, void* user_data,
                                  int64_t parallel) {
  struct counts before, after, gained;
  dinput_set_thread_launcher(launcher, user_data);
  before = snapshot();
  CHECK(negated_range_is_right(parallel));
  after = snapshot();
  gained.launches = after.launches - before.launches;
  gained.declines = after.declines - before.declines;
  gained.bodies_returned = after.bodies_returned - before.bodies_returned;
  gained.calls_launched = after.calls_launched - before.calls_launched;
  gained.calls_other = after.calls_other - before.calls_other;
  return gained;
}

static void test_launched_threads_run_the_callbacks(void) {
  struct counts gained = gained_under(launch_pthread, &counts, 4);
  /* The pool's 4 threads and the prefetch thread, at least. */
  CHECK(gained.launches >= 5);
  CHECK(gained.calls_launched > 0);
  CHECK(gained.declines == 0);
  CHECK(all_bodies_return());
}

static void test_a_declining_launcher_leaves_it_to_the_library(void) {
  struct counts gained = gained_under(decline, NULL, 4);
  CHECK(gained.declines >= 5);
  CHECK(gained.launches == 0);
  CHECK(gained.calls_launched == 0);
  CHECK(gained.calls_other == kN);
}

static void test_no_launcher_is_the_default(void) {
  struct counts gained = gained_under(NULL, &counts, 3);
  CHECK(gained.launches == 0);
  CHECK(gained.declines == 0);
  CHECK(gained.calls_other == kN);
}

int main(void) {
  if (pthread_key_create(&launched_key, NULL) != 0) return 2;
  test_launched_threads_run_the_callbacks();
  test_a_declining_launcher_leaves_it_to_the_library();
  test_no_launcher_is_the_default();
  /* And launched again after that: a launcher can come back. */
  test_launched_threads_run_the_callbacks();
  dinput_set_thread_launcher(NULL, NULL);
  return check_finish_();
}
