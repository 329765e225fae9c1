/* The C side of the bindings benchmark: range(N).batch(256) distributed over 2 CPU replicas
 * through dinput.h, every value read; prints ns per element (median of 5 epochs) as one JSON
 * line. The Go and Rust benchmarks run the same loop through their bindings. */
#include "../bench_util.h" /* timing, checked calls, sorting */

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 24;
  const char* devices[2] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* s = NULL;
  dinput_dataset_t *r = NULL, *b = NULL;
  dinput_dist_dataset_t* d = NULL;
  BENCH_CHECK(dinput_strategy_new(&s, devices, 2));
  BENCH_CHECK(dinput_dataset_range(&r, 0, n, 1));
  BENCH_CHECK(dinput_dataset_batch(&b, r, 256, NULL));
  BENCH_CHECK(dinput_strategy_distribute_dataset(&d, s, b, NULL));
  double runs[5];
  int64_t checksum = 0;
  for (int k = 0; k < 5; k++) {
    dinput_dist_iterator_t* it = NULL;
    BENCH_CHECK(dinput_dist_dataset_iterator(&it, d));
    double t0 = (bench_now_ns() * 1e-9);
    dinput_per_replica_t* step = NULL;
    while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
      for (int i = 0; i < dinput_per_replica_size(step); i++) {
        const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, i), 0);
        const int64_t* v = (const int64_t*)dinput_tensor_data(t);
        for (int64_t j = 0; j < dinput_tensor_dim(t, 0); j++) checksum += v[j];
      }
      dinput_per_replica_free(step);
    }
    runs[k] = ((bench_now_ns() * 1e-9) - t0) / (double)n * 1e9;
    dinput_dist_iterator_free(it);
  }
  qsort(runs, 5, sizeof runs[0], bench_cmp_double);
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
