/* Partial batches: range(9).batch(4) on 4 replicas.
 *
 * Each global batch of 4 is split into 4 pieces. The last global batch holds only [8], so
 * replicas 1-3 receive empty batches with shape (0,) — same dtype, zero rows — and the
 * iterator ends only when no replica has data. */
#include "example_util.h"

int main(void) {
  dinput_strategy_t* strategy = cpu_strategy(4);
  dinput_dataset_t *range = NULL, *dataset = NULL;
  check(dinput_dataset_range(&range, 0, 9, 1));
  check(dinput_dataset_batch(&dataset, range, 4, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, dataset, NULL));
  dinput_dist_iterator_t* it = NULL;
  check(dinput_dist_dataset_iterator(&it, dist));
  dinput_per_replica_t* x = NULL;
  dinput_status_t st;
  while ((st = dinput_dist_iterator_get_next(&x, it)) == DINPUT_OK) {
    print_local_results(x, 0);
    printf("  shapes");
    for (int r = 0; r < dinput_per_replica_size(x); r++) {
      printf(" ");
      print_shape(dinput_element_get(dinput_per_replica_get(x, r), 0));
    }
    printf("\n");
    dinput_per_replica_free(x);
  }
  printf("%s\n", dinput_status_name(st));
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(dataset);
  dinput_dataset_free(range);
  dinput_strategy_free(strategy);
  return st == DINPUT_OUT_OF_RANGE ? 0 : 1;
}
