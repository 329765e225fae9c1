/* The C side of the map-callback benchmark of the bindings: range(N).map(identity).batch(256)
 * through dinput.h, every batch read and freed, in four variants:
 *
 *   c_map_element_seq    dinput_dataset_map, sequential (the callback on this thread)
 *   c_map_element_par2   dinput_dataset_map, num_parallel_calls = 2 (library threads)
 *   c_map_many64_seq     dinput_dataset_map_many, runs of 64, sequential
 *   c_map_many64_par2    dinput_dataset_map_many, runs of 64, num_parallel_calls = 2
 *
 * Each prints one JSON line: ns_per_elem is the median over 3 epochs (after a warm-up epoch)
 * of the whole pipeline's wall time per element; base_ns_per_elem is range(N).batch(256)
 * without the map, and callback_ns_per_elem the difference. The batch keeps the consumer's
 * per-element cost out of the figure, so that the bindings (Go's bench, Rust's bench.sh,
 * Python's bench.py) measure the same pipeline and differ only in the callback.
 *
 * N is the first argument (default 2^20); c_map_element_par2, whose every element waits for
 * a library thread, iterates a 16th of it. The Go, Rust and Python benchmarks use the same
 * sizes. Usage: c_map [N] */
#include "../bench_util.h" /* timing, checked calls, sorting */

#define RUNS 3

static dinput_status_t identity(dinput_element_t** out, const dinput_element_t* in,
                                void* user_data) {
  (void)user_data;
  return dinput_element_ref(out, in);
}

static dinput_status_t identity_many(dinput_element_t** outs, const dinput_element_t* const* ins,
                                     size_t count, void* user_data) {
  (void)user_data;
  for (size_t i = 0; i < count; i++) {
    dinput_status_t st = dinput_element_ref(&outs[i], ins[i]);
    if (st != DINPUT_OK) return st;
  }
  return DINPUT_OK;
}

/* One epoch of ds (batches of int64); ns per element. Checks that every value came once. */
static double epoch(const dinput_dataset_t* ds, int64_t n) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t sum = 0, count = 0;
  BENCH_CHECK(dinput_dataset_iterator(&it, ds));
  double t0 = (bench_now_ns() * 1e-9);
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    const dinput_tensor_t* t = dinput_element_get(e, 0);
    const int64_t* v = (const int64_t*)dinput_tensor_data(t);
    const int64_t k = dinput_tensor_dim(t, 0);
    for (int64_t j = 0; j < k; j++) sum += v[j];
    count += k;
    dinput_element_free(e);
  }
  double ns = ((bench_now_ns() * 1e-9) - t0) / (double)n * 1e9;
  if (dinput_last_error_code() != DINPUT_OUT_OF_RANGE && dinput_last_error_code() != DINPUT_OK)
    BENCH_CHECK(dinput_last_error_code());
  dinput_iterator_free(it);
  if (count != n || sum != n * (n - 1) / 2) {
    fprintf(stderr, "c_map: %lld values summing to %lld, expected %lld\n", (long long)count,
            (long long)sum, (long long)n);
    exit(2);
  }
  return ns;
}

static double median_epoch(const dinput_dataset_t* ds, int64_t n) {
  double runs[RUNS];
  epoch(ds, n); /* warm-up: threads, allocator, page faults */
  for (int k = 0; k < RUNS; k++) runs[k] = epoch(ds, n);
  qsort(runs, RUNS, sizeof runs[0], bench_cmp_double);
  return runs[RUNS / 2];
}

/* range(n), with or without the map, batched by 256. */
static dinput_dataset_t* pipeline(int64_t n, size_t many, int64_t parallel, int mapped) {
  dinput_dataset_t *r = NULL, *m = NULL, *b = NULL;
  BENCH_CHECK(dinput_dataset_range(&r, 0, n, 1));
  if (mapped) {
    dinput_map_options_t* o = NULL;
    BENCH_CHECK(dinput_map_options_new(&o));
    BENCH_CHECK(dinput_map_options_set_num_parallel_calls(o, parallel));
    if (many)
      BENCH_CHECK(dinput_dataset_map_many(&m, r, many, identity_many, NULL, NULL, o));
    else
      BENCH_CHECK(dinput_dataset_map(&m, r, identity, NULL, NULL, o));
    dinput_map_options_free(o);
  }
  BENCH_CHECK(dinput_dataset_batch(&b, mapped ? m : r, 256, NULL));
  dinput_dataset_free(m);
  dinput_dataset_free(r);
  return b;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 20;
  const struct {
    const char* name;
    size_t many; /* 0: dinput_dataset_map */
    int64_t parallel;
    int64_t n;
  } variants[] = {{"c_map_element_seq", 0, 1, n},
                  {"c_map_element_par2", 0, 2, n / 16 > 0 ? n / 16 : 1},
                  {"c_map_many64_seq", 64, 1, n},
                  {"c_map_many64_par2", 64, 2, n}};
  if (n < 1) {
    fprintf(stderr, "usage: c_map [N > 0]\n");
    return 2;
  }
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
    dinput_dataset_t* plain = pipeline(variants[v].n, 0, 1, 0);
    dinput_dataset_t* mapped = pipeline(variants[v].n, variants[v].many, variants[v].parallel, 1);
    double base = median_epoch(plain, variants[v].n);
    double ns = median_epoch(mapped, variants[v].n);
    printf(
        "{\"bench\":\"%s\",\"n\":%lld,\"ns_per_elem\":%.2f,\"base_ns_per_elem\":%.2f,"
        "\"callback_ns_per_elem\":%.2f}\n",
        variants[v].name, (long long)variants[v].n, ns, base, ns - base);
    fflush(stdout);
    dinput_dataset_free(mapped);
    dinput_dataset_free(plain);
  }
  return 0;
}
