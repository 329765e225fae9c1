/* Stopping a loop at the end of data with get_next_as_optional (tutorial: range(9).batch(4)
 * on two devices, steps_per_loop 5).
 *
 * The devices may be given as arguments (e.g. GPU:0 CPU:0 on a machine with a GPU); the
 * default is two CPU replicas. The third step holds the partial batch [8] and an empty one;
 * the fourth finds the optional empty and leaves the loop. */
#include "example_util.h"

int main(int argc, char** argv) {
  const int global_batch_size = 4, steps_per_loop = 5;
  const char* default_devices[2] = {"CPU:0", "CPU:1"};
  const char* const* devices = argc > 1 ? (const char* const*)(argv + 1) : default_devices;
  int num_devices = argc > 1 ? argc - 1 : 2;
  dinput_strategy_t* strategy = NULL;
  check(dinput_strategy_new(&strategy, devices, num_devices));

  dinput_dataset_t *range = NULL, *dataset = NULL;
  check(dinput_dataset_range(&range, 0, 9, 1));
  check(dinput_dataset_batch(&dataset, range, global_batch_size, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));
  dinput_dist_iterator_t* iterator = NULL;
  check(dinput_dist_dataset_iterator(&iterator, dist));

  for (int i = 0; i < steps_per_loop; i++) {
    dinput_optional_t* optional_data = NULL;
    check(dinput_dist_iterator_get_next_as_optional(&optional_data, iterator));
    if (!dinput_optional_has_value(optional_data)) {
      dinput_optional_free(optional_data);
      break;
    }
    dinput_per_replica_t *value = NULL, *results = NULL;
    check(dinput_optional_get_per_replica(&value, optional_data));
    check(dinput_strategy_run(&results, strategy, identity, value, NULL));
    print_local_results(results, 0);
    printf("\n");
    dinput_per_replica_free(results);
    dinput_per_replica_free(value);
    dinput_optional_free(optional_data);
  }

  dinput_dist_iterator_free(iterator);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_dataset_free(range);
  dinput_strategy_free(strategy);
  return 0;
}
