/* The for-loop over a distributed dataset (tutorial: "for x in dist_dataset").
 *
 * from_tensors(([1.], [1.])).repeat(100).batch(16) is distributed over 2 replicas: each step
 * every replica gets half of a global batch of 16, and train_step computes
 * labels - 0.3 * features on it. 100 = 6 * 16 + 4, so the 7th step is a partial batch of 4
 * rows split 2 + 2. */
#include "example_util.h"

static dinput_status_t train_step(dinput_element_t** out, const dinput_replica_context_t* ctx,
                                  const dinput_element_t* inputs, void* user_data) {
  (void)ctx;
  (void)user_data;
  const dinput_tensor_t* features = dinput_element_get(inputs, 0);
  const dinput_tensor_t* labels = dinput_element_get(inputs, 1);
  dinput_tensor_t* loss = affine(labels, 1.0f, features, -0.3f);
  const dinput_tensor_t* parts[1] = {loss};
  dinput_status_t st = dinput_element_new(out, parts, 1);
  dinput_tensor_free(loss);
  return st;
}

int main(void) {
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_dataset_t *one = features_and_labels(), *repeated = NULL, *dataset = NULL;
  check(dinput_dataset_repeat(&repeated, one, 100));
  check(dinput_dataset_batch(&dataset, repeated, 16, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));

  dinput_dist_iterator_t* it = NULL;
  check(dinput_dist_dataset_iterator(&it, dist));
  dinput_per_replica_t* x = NULL;
  dinput_status_t st;
  while ((st = dinput_dist_iterator_get_next(&x, it)) == DINPUT_OK) {
    dinput_per_replica_t* loss = NULL;
    check(dinput_strategy_run(&loss, strategy, train_step, x, NULL));
    printf("Loss is ");
    print_local_results(loss, 0);
    printf("\n");
    dinput_per_replica_free(loss);
    dinput_per_replica_free(x);
  }
  if (st != DINPUT_OUT_OF_RANGE) check(st);

  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_dataset_free(repeated);
  dinput_dataset_free(one);
  dinput_strategy_free(strategy);
  return 0;
}
