/* distribute_values_from_function (tutorial: value_fn returning 1.0 on every replica).
 *
 * The value function runs once per replica with its ValueContext; the per-replica value is
 * then passed through run four times. */
#include "example_util.h"

static dinput_status_t value_fn(dinput_element_t** out, const dinput_value_context_t* ctx,
                                void* user_data) {
  (void)user_data;
  printf("value_fn on replica %d of %d\n", dinput_value_context_replica_id_in_sync_group(ctx),
         dinput_value_context_num_replicas_in_sync(ctx));
  const float one = 1.0f;
  dinput_tensor_t* t = NULL;
  dinput_status_t st = dinput_tensor_new(&t, DINPUT_FLOAT32, NULL, 0, &one, sizeof one);
  if (st != DINPUT_OK) return st;
  const dinput_tensor_t* parts[1] = {t};
  st = dinput_element_new(out, parts, 1);
  dinput_tensor_free(t);
  return st;
}

int main(void) {
  dinput_strategy_t* strategy = cpu_strategy(2);
  dinput_per_replica_t* distributed_values = NULL;
  check(dinput_strategy_distribute_values_from_function(&distributed_values, strategy, value_fn,
                                                        NULL));
  for (int i = 0; i < 4; i++) {
    dinput_per_replica_t* result = NULL;
    check(dinput_strategy_run(&result, strategy, identity, distributed_values, NULL));
    print_local_results(result, 0);
    printf("\n");
    dinput_per_replica_free(result);
  }
  dinput_per_replica_free(distributed_values);
  dinput_strategy_free(strategy);
  return 0;
}
