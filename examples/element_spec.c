/* The element_spec of a distributed dataset (tutorial: a train_step with an input signature).
 *
 * On 2 replicas the per-replica spec of from_tensors(([1.], [1.])).repeat(100).batch(16) has
 * an unknown batch dimension, because the last global batch is partial. The steps then double
 * every input, 5 epochs of 5 steps. */
#include "example_util.h"

static dinput_status_t step_fn(dinput_element_t** out, const dinput_replica_context_t* ctx,
                               const dinput_element_t* inputs, void* user_data) {
  (void)ctx;
  (void)user_data;
  dinput_tensor_t* a = affine(dinput_element_get(inputs, 0), 2.0f, NULL, 0.0f);
  dinput_tensor_t* b = affine(dinput_element_get(inputs, 1), 2.0f, NULL, 0.0f);
  const dinput_tensor_t* parts[2] = {a, b};
  dinput_status_t st = dinput_element_new(out, parts, 2);
  dinput_tensor_free(a);
  dinput_tensor_free(b);
  return st;
}

static void print_spec(const dinput_spec_t* spec) {
  printf("(");
  for (size_t i = 0; i < dinput_spec_size(spec); i++) {
    printf(i ? ", TensorSpec(shape=(" : "TensorSpec(shape=(");
    for (int d = 0; d < dinput_spec_rank(spec, i); d++) {
      int64_t dim = dinput_spec_shape(spec, i)[d];
      if (d) printf(", ");
      if (dim == DINPUT_UNKNOWN_DIM)
        printf("None");
      else
        printf("%lld", (long long)dim);
    }
    printf("), dtype=%s)", dinput_dtype_name(dinput_spec_dtype(spec, i)));
  }
  printf(")\n");
}

int main(void) {
  const int epochs = 5, steps_per_epoch = 5;
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_dataset_t *one = features_and_labels(), *rep = NULL, *dataset = NULL;
  check(dinput_dataset_repeat(&rep, one, 100));
  check(dinput_dataset_batch(&dataset, rep, 16, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));
  dinput_spec_t* spec = NULL;
  check(dinput_dist_dataset_element_spec(&spec, dist));
  printf("element_spec: ");
  print_spec(spec);
  dinput_spec_free(spec);

  for (int e = 0; e < epochs; e++) {
    dinput_dist_iterator_t* it = NULL;
    check(dinput_dist_dataset_iterator(&it, dist));
    for (int s = 0; s < steps_per_epoch; s++) {
      dinput_per_replica_t *x = NULL, *output = NULL;
      check(dinput_dist_iterator_get_next(&x, it));
      check(dinput_strategy_run(&output, strategy, step_fn, x, NULL));
      print_local_results(output, 0);
      printf("\n");
      dinput_per_replica_free(output);
      dinput_per_replica_free(x);
    }
    dinput_dist_iterator_free(it);
  }
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_dataset_free(rep);
  dinput_dataset_free(one);
  dinput_strategy_free(strategy);
  return 0;
}
