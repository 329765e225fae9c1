/* Generator input (tutorial: from_generator yielding np.random.rand(4) forever).
 *
 * A C callback produces float32 [4] elements against a declared spec; the distributed
 * dataset splits each one over 2 replicas (the global batch size is unknown, so every
 * element is cut evenly: 2 rows each). The values are random; the shapes are what to see. */
#include "example_util.h"

static dinput_status_t input_gen(dinput_element_t** out, void* state) {
  unsigned* seed = (unsigned*)state;
  float v[4];
  for (int i = 0; i < 4; i++) {
    *seed = *seed * 1103515245u + 12345u; /* a small LCG: no global RNG state */
    v[i] = (float)((*seed >> 8) & 0xffff) / 65536.0f;
  }
  const int64_t shape[1] = {4};
  dinput_tensor_t* t = NULL;
  dinput_status_t st = dinput_tensor_new(&t, DINPUT_FLOAT32, shape, 1, v, sizeof v);
  if (st != DINPUT_OK) return st;
  const dinput_tensor_t* parts[1] = {t};
  st = dinput_element_new(out, parts, 1);
  dinput_tensor_free(t);
  return st;
}

int main(void) {
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_spec_t* spec = NULL;
  const int64_t shape[1] = {4};
  check(dinput_spec_new(&spec));
  check(dinput_spec_add(spec, DINPUT_FLOAT32, shape, 1));
  unsigned seed = 42;
  dinput_dataset_t* dataset = NULL;
  check(dinput_dataset_from_generator(&dataset, spec, NULL, input_gen, NULL, &seed, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));
  dinput_dist_iterator_t* iterator = NULL;
  check(dinput_dist_dataset_iterator(&iterator, dist));
  for (int i = 0; i < 4; i++) {
    dinput_per_replica_t *x = NULL, *y = NULL;
    check(dinput_dist_iterator_get_next(&x, iterator));
    check(dinput_strategy_run(&y, strategy, identity, x, NULL));
    printf("step %d shapes", i);
    for (int r = 0; r < dinput_per_replica_size(y); r++) {
      printf(" ");
      print_shape(dinput_element_get(dinput_per_replica_get(y, r), 0));
    }
    printf("\n");
    dinput_per_replica_free(y);
    dinput_per_replica_free(x);
  }
  dinput_dist_iterator_free(iterator);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_spec_free(spec);
  dinput_strategy_free(strategy);
  return 0;
}
