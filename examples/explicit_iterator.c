/* An explicit iterator over epochs and steps (tutorial: iter(dist_dataset) and next()).
 *
 * Every epoch makes a new iterator, which starts the dataset from its beginning; each epoch
 * takes 5 steps of the 7 that from_tensors(([1.], [1.])).repeat(100).batch(16) has. */
#include "example_util.h"

static dinput_status_t train_step(dinput_element_t** out, const dinput_replica_context_t* ctx,
                                  const dinput_element_t* inputs, void* user_data) {
  (void)ctx;
  (void)user_data;
  dinput_tensor_t* loss =
      affine(dinput_element_get(inputs, 1), 1.0f, dinput_element_get(inputs, 0), -0.3f);
  const dinput_tensor_t* parts[1] = {loss};
  dinput_status_t st = dinput_element_new(out, parts, 1);
  dinput_tensor_free(loss);
  return st;
}

int main(void) {
  const int num_epochs = 10, steps_per_epoch = 5;
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_dataset_t *one = features_and_labels(), *repeated = NULL, *dataset = NULL;
  check(dinput_dataset_repeat(&repeated, one, 100));
  check(dinput_dataset_batch(&dataset, repeated, 16, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));

  for (int epoch = 0; epoch < num_epochs; epoch++) {
    dinput_dist_iterator_t* it = NULL;
    check(dinput_dist_dataset_iterator(&it, dist));
    for (int step = 0; step < steps_per_epoch; step++) {
      dinput_per_replica_t *x = NULL, *loss = NULL;
      check(dinput_dist_iterator_get_next(&x, it));
      check(dinput_strategy_run(&loss, strategy, train_step, x, NULL));
      printf("epoch %d step %d: Loss is ", epoch, step);
      print_local_results(loss, 0);
      printf("\n");
      dinput_per_replica_free(loss);
      dinput_per_replica_free(x);
    }
    dinput_dist_iterator_free(it); /* stops the epoch's background work early */
  }

  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_dataset_free(repeated);
  dinput_dataset_free(one);
  dinput_strategy_free(strategy);
  return 0;
}
