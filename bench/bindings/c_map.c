/* The C side of the bindings benchmark's map rows: range(N).map(identity) read element by
 * element (dinput_iterator_get_next, every value read), with the map sequential
 * (num_parallel_calls 1: "c_map_seq") and on 2 library threads ("c_map_par2"). Prints one
 * JSON line per variant: ns per element of the whole epoch, median of RUNS epochs after a
 * warm-up one. The identity returns a new handle to its input, so the figure is what a map
 * with a trivial function costs per element; the Go, Rust and Python bench programs print
 * <lang>_map_<variant> lines of the same pipeline through their bindings.
 * Usage: c_map [N [RUNS]]   (defaults 2^19, 5) */
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

/* One epoch: ns per element; adds the values read to *sum. */
static double epoch(const dinput_dataset_t* ds, int64_t n, int64_t* sum) {
  dinput_iterator_t* it = NULL;
  ok(dinput_dataset_iterator(&it, ds));
  double t0 = now();
  dinput_element_t* e = NULL;
  int64_t count = 0;
  dinput_status_t st;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    *sum += *(const int64_t*)dinput_tensor_data(dinput_element_get(e, 0));
    count++;
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
  const int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 19;
  const int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 1 || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: c_map [N >= 1 [RUNS 1..100]]\n");
    return 2;
  }
  static const struct {
    const char* name;
    int64_t parallel;
  } variants[] = {{"c_map_seq", 1}, {"c_map_par2", 2}};
  dinput_dataset_t* r = NULL;
  ok(dinput_dataset_range(&r, 0, n, 1));
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    dinput_map_options_t* o = NULL;
    dinput_dataset_t* m = NULL;
    ok(dinput_map_options_new(&o));
    ok(dinput_map_options_set_num_parallel_calls(o, variants[v].parallel));
    ok(dinput_dataset_map(&m, r, identity, NULL, NULL, o));
    dinput_map_options_free(o);
    double times[100];
    int64_t sum = 0;
    epoch(m, n, &sum); /* warm-up: threads, allocator */
    sum = 0;
    for (int k = 0; k < runs; k++) times[k] = epoch(m, n, &sum);
    qsort(times, (size_t)runs, sizeof times[0], cmp);
    printf(
        "{\"bench\":\"%s\",\"n\":%lld,\"runs\":%d,\"num_parallel_calls\":%lld,"
        "\"ns_per_elem\":%.2f,\"checksum_ok\":%s}\n",
        variants[v].name, (long long)n, runs, (long long)variants[v].parallel, times[runs / 2],
        sum == (int64_t)runs * (n * (n - 1) / 2) ? "true" : "false");
    fflush(stdout);
    dinput_dataset_free(m);
  }
  dinput_dataset_free(r);
  return 0;
}
