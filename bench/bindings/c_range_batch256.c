/* The C side of the bindings benchmark: range(N).batch(256) distributed over 2 CPU replicas
 * through dinput.h, every value read; prints ns per element (median of 5 epochs) as one JSON
 * line. The Go and Rust benchmarks run the same loop through their bindings. */
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
    fprintf(stderr, "%s: %s\n", dinput_status_name(st), dinput_last_error_message());
    exit(1);
  }
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 24;
  const char* devices[2] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* s = NULL;
  dinput_dataset_t *r = NULL, *b = NULL;
  dinput_dist_dataset_t* d = NULL;
  ok(dinput_strategy_new(&s, devices, 2));
  ok(dinput_dataset_range(&r, 0, n, 1));
  ok(dinput_dataset_batch(&b, r, 256, NULL));
  ok(dinput_strategy_distribute_dataset(&d, s, b, NULL));
  double runs[5];
  int64_t checksum = 0;
  for (int k = 0; k < 5; k++) {
    dinput_dist_iterator_t* it = NULL;
    ok(dinput_dist_dataset_iterator(&it, d));
    double t0 = now();
    dinput_per_replica_t* step = NULL;
    while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
      for (int i = 0; i < dinput_per_replica_size(step); i++) {
        const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, i), 0);
        const int64_t* v = (const int64_t*)dinput_tensor_data(t);
        for (int64_t j = 0; j < dinput_tensor_dim(t, 0); j++) checksum += v[j];
      }
      dinput_per_replica_free(step);
    }
    runs[k] = (now() - t0) / (double)n * 1e9;
    dinput_dist_iterator_free(it);
  }
  qsort(runs, 5, sizeof runs[0], cmp);
  printf(
      "{\"bench\":\"c_range_batch256_2replicas\",\"n\":%lld,\"ns_per_elem\":%.2f,\"checksum_ok\":%"
      "s}\n",
      (long long)n, runs[2], checksum == 5 * (n * (n - 1) / 2) ? "true" : "false");
  dinput_dist_dataset_free(d);
  dinput_dataset_free(b);
  dinput_dataset_free(r);
  dinput_strategy_free(s);
  return 0;
}
