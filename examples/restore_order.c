/* Restoring the order of predictions (tutorial: range(24).enumerate().batch(6)).
 *
 * The replicas process pieces of each batch in parallel; carrying each element's index
 * through the step lets the results be put back in dataset order: {0: 0, 1: 2, ..., 23: 46}. */
#include "example_util.h"

static dinput_status_t predict(dinput_element_t** out, const dinput_replica_context_t* ctx,
                               const dinput_element_t* args, void* user_data) {
  (void)ctx;
  (void)user_data;
  const dinput_tensor_t* index = dinput_element_get(args, 0);
  const dinput_tensor_t* inputs = dinput_element_get(args, 1);
  int64_t n = dinput_tensor_num_elements(inputs);
  int64_t outputs[64];
  const int64_t* x = (const int64_t*)dinput_tensor_data(inputs);
  for (int64_t i = 0; i < n && i < 64; i++) outputs[i] = 2 * x[i];
  dinput_tensor_t* out_tensor = NULL;
  dinput_status_t st = dinput_tensor_new(&out_tensor, DINPUT_INT64, dinput_tensor_shape(inputs), 1,
                                         outputs, sizeof(int64_t) * (size_t)n);
  if (st != DINPUT_OK) return st;
  const dinput_tensor_t* parts[2] = {index, out_tensor};
  st = dinput_element_new(out, parts, 2);
  dinput_tensor_free(out_tensor);
  return st;
}

int main(void) {
  enum { dataset_size = 24, batch_size = 6 };
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_dataset_t *range = NULL, *enumerated = NULL, *dataset = NULL;
  check(dinput_dataset_range(&range, 0, dataset_size, 1));
  check(dinput_dataset_enumerate(&enumerated, range, 0));
  check(dinput_dataset_batch(&dataset, enumerated, batch_size, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));

  int64_t result[dataset_size];
  int seen[dataset_size] = {0};
  dinput_dist_iterator_t* it = NULL;
  check(dinput_dist_dataset_iterator(&it, dist));
  dinput_per_replica_t* x = NULL;
  while (dinput_dist_iterator_get_next(&x, it) == DINPUT_OK) {
    dinput_per_replica_t* outputs = NULL;
    check(dinput_strategy_run(&outputs, strategy, predict, x, NULL));
    for (int r = 0; r < dinput_per_replica_size(outputs); r++) {
      const dinput_element_t* e = dinput_per_replica_get(outputs, r);
      const int64_t* idx = (const int64_t*)dinput_tensor_data(dinput_element_get(e, 0));
      const int64_t* val = (const int64_t*)dinput_tensor_data(dinput_element_get(e, 1));
      for (int64_t i = 0; i < dinput_tensor_dim(dinput_element_get(e, 0), 0); i++) {
        result[idx[i]] = val[i];
        seen[idx[i]]++;
      }
    }
    dinput_per_replica_free(outputs);
    dinput_per_replica_free(x);
  }
  printf("{");
  for (int i = 0; i < dataset_size; i++) {
    if (seen[i] != 1) {
      fprintf(stderr, "index %d was seen %d times\n", i, seen[i]);
      return 1;
    }
    printf(i ? ", %d: %lld" : "%d: %lld", i, (long long)result[i]);
  }
  printf("}\n");
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_dataset_free(enumerated);
  dinput_dataset_free(range);
  dinput_strategy_free(strategy);
  return 0;
}
