/* The C side of the bindings benchmark's map rows: range(N).map(identity).batch(256), every
 * batch's values read, with the element map sequential ("c_map_element_seq", the callback on
 * this thread) and with num_parallel_calls 2 ("c_map_element_par2", library threads; a 16th
 * of N, since every element waits for a thread). Prints one JSON line per variant: ns per
 * element of the whole epoch, median of RUNS epochs after a warm-up one. The identity
 * returns a new handle to its input. The batch keeps the consumer's per-element cost out of
 * the figure; the Go, Rust and Python bench programs print <lang>_map_<variant> lines of the
 * same pipeline through their bindings.
 * Usage: c_map [N [RUNS]]   (defaults 2^20, 3) */
#define _POSIX_C_SOURCE 200809L
#include <dinput.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void ok(dinput_status_t st) {
  if (st != DINPUT_OK) {
    fprintf(stderr, "c_map: %s: %s\n", dinput_status_name(st), dinput_last_error_message());
    exit(1);
  }
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static dinput_status_t identity(dinput_element_t** out, const dinput_element_t* in, void* user) {
  (void)user;
  return dinput_element_ref(out, in);
}

/* One epoch of batches: ns per element; adds the values read to *sum. */
static double epoch(const dinput_dataset_t* ds, int64_t n, int64_t* sum) {
  dinput_iterator_t* it = NULL;
  ok(dinput_dataset_iterator(&it, ds));
  double t0 = now();
  dinput_element_t* e = NULL;
  int64_t count = 0;
  dinput_status_t st;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    const dinput_tensor_t* t = dinput_element_get(e, 0);
    const int64_t* v = (const int64_t*)dinput_tensor_data(t);
    for (int64_t i = 0; i < dinput_tensor_dim(t, 0); i++) *sum += v[i];
    count += dinput_tensor_dim(t, 0);
    dinput_element_free(e);
  }
  double ns = (now() - t0) / (double)n * 1e9;
  if (st != DINPUT_OUT_OF_RANGE || count != n) {
    fprintf(stderr, "c_map: read %lld of %lld elements, then %s\n", (long long)count, (long long)n,
            dinput_status_name(st));
    exit(1);
  }
  dinput_iterator_free(it);
  return ns;
}

int main(int argc, char** argv) {
  const int64_t n_arg = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 20;
  const int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (n_arg < 1 || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: c_map [N >= 1 [RUNS 1..100]]\n");
    return 2;
  }
  const struct {
    const char* name;
    int64_t parallel, n;
  } variants[] = {{"c_map_element_seq", 1, n_arg},
                  {"c_map_element_par2", 2, n_arg / 16 > 0 ? n_arg / 16 : 1}};
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    const int64_t n = variants[v].n;
    dinput_dataset_t *r = NULL, *m = NULL, *b = NULL;
    dinput_map_options_t* o = NULL;
    ok(dinput_dataset_range(&r, 0, n, 1));
    ok(dinput_map_options_new(&o));
    ok(dinput_map_options_set_num_parallel_calls(o, variants[v].parallel));
    ok(dinput_dataset_map(&m, r, identity, NULL, NULL, o));
    dinput_map_options_free(o);
    ok(dinput_dataset_batch(&b, m, 256, NULL));
    double times[100];
    int64_t sum = 0;
    epoch(b, n, &sum); /* warm-up: threads, allocator */
    sum = 0;
    for (int k = 0; k < runs; k++) times[k] = epoch(b, n, &sum);
    qsort(times, (size_t)runs, sizeof times[0], cmp);
    printf(
        "{\"bench\":\"%s\",\"n\":%lld,\"runs\":%d,\"num_parallel_calls\":%lld,"
        "\"ns_per_elem\":%.2f,\"checksum_ok\":%s}\n",
        variants[v].name, (long long)n, runs, (long long)variants[v].parallel, times[runs / 2],
        sum == (int64_t)runs * (n * (n - 1) / 2) ? "true" : "false");
    fflush(stdout);
    dinput_dataset_free(b);
    dinput_dataset_free(m);
    dinput_dataset_free(r);
  }
  return 0;
}
