/* distribute_datasets_from_function with an InputContext (tutorial: dataset_fn).
 *
 * dataset_fn is called once per input pipeline (once per worker here: one). It shards by the
 * input context and batches by the per-replica batch size itself; dinput neither shards nor
 * rebatches. As in the tutorial the data is batched twice (16, then 8), so each replica's
 * element has shape (batch, 16, 1); 64 rows make one element of 4 batches, which replica 0
 * receives while replica 1 gets an empty (0-row) batch. */
#include "example_util.h"

static const int64_t global_batch_size = 16;

static dinput_status_t dataset_fn(dinput_dataset_t** out, const dinput_input_context_t* ctx,
                                  void* user_data) {
  (void)user_data;
  int64_t batch_size = 0;
  dinput_status_t st =
      dinput_input_context_get_per_replica_batch_size(&batch_size, ctx, global_batch_size);
  if (st != DINPUT_OK) return st;
  printf("input pipeline %d of %d, %d replicas in sync, per-replica batch size %lld\n",
         dinput_input_context_input_pipeline_id(ctx), dinput_input_context_num_input_pipelines(ctx),
         dinput_input_context_num_replicas_in_sync(ctx), (long long)batch_size);
  dinput_dataset_t *one = features_and_labels(), *rep = NULL, *b16 = NULL, *sharded = NULL,
                   *b = NULL;
  check(dinput_dataset_repeat(&rep, one, 64));
  check(dinput_dataset_batch(&b16, rep, 16, NULL));
  check(dinput_dataset_shard(&sharded, b16, dinput_input_context_num_input_pipelines(ctx),
                             dinput_input_context_input_pipeline_id(ctx)));
  check(dinput_dataset_batch(&b, sharded, batch_size, NULL));
  st = dinput_dataset_prefetch(out, b, 2); /* prefetch 2 batches per device */
  dinput_dataset_free(b);
  dinput_dataset_free(sharded);
  dinput_dataset_free(b16);
  dinput_dataset_free(rep);
  dinput_dataset_free(one);
  return st;
}

int main(void) {
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_datasets_from_function(&dist, strategy, dataset_fn, NULL, NULL,
                                                          NULL));
  dinput_dist_iterator_t* it = NULL;
  check(dinput_dist_dataset_iterator(&it, dist));
  dinput_per_replica_t* x = NULL;
  dinput_status_t st;
  int step = 0;
  while ((st = dinput_dist_iterator_get_next(&x, it)) == DINPUT_OK) {
    printf("step %d:", step++);
    for (int r = 0; r < dinput_per_replica_size(x); r++) {
      printf(" replica %zu features ", r);
      print_shape(dinput_element_get(dinput_per_replica_get(x, r), 0));
    }
    printf("\n");
    dinput_per_replica_free(x);
  }
  if (st != DINPUT_OUT_OF_RANGE) check(st);
  printf("end after %d step(s)\n", step);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_strategy_free(strategy);
  return 0;
}
