/* Workers as processes: each process of a job runs this program, finds its place in the job
 * from what its launcher set (torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, SLURM,
 * TF_CONFIG, Open MPI, or DINPUT_RANK/DINPUT_WORLD_SIZE/DINPUT_RDZV_URL), joins the others
 * over TCP and reads its share of range(20).batch(8) on two replicas, CPU:0 and CPU:1.
 *
 *   DINPUT_RANK=0 DINPUT_WORLD_SIZE=2 DINPUT_RDZV_URL=tcp://127.0.0.1:29400 ./multi_process &
 *   DINPUT_RANK=1 DINPUT_WORLD_SIZE=2 DINPUT_RDZV_URL=tcp://127.0.0.1:29400 ./multi_process
 *
 * With "--threads W" it runs the same W workers as threads of this one process instead (the
 * in-process collective), printing the same lines in worker order: the test of this example
 * checks that both ways print the same. See docs/multi-process.md. */
#include <pthread.h>
#include <string.h>

#include "example_util.h"

/* One worker's epoch, printed into `out` (a buffer of `size` bytes). */
static void run_worker(dinput_collective_t* collective, int rank, char* out, size_t size) {
  static const char* devices[2] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strategy = NULL;
  check(dinput_strategy_new_multi_worker(&strategy, collective, rank, devices, 2));
  dinput_dataset_t *range = NULL, *batched = NULL;
  check(dinput_dataset_range(&range, 0, 20, 1));
  check(dinput_dataset_batch(&batched, range, 8, NULL));
  dinput_dist_dataset_t* dist = NULL;
  check(dinput_strategy_distribute_dataset(&dist, strategy, batched, NULL));
  dinput_dist_iterator_t* it = NULL;
  check(dinput_dist_dataset_iterator(&it, dist));
  dinput_per_replica_t* step = NULL;
  dinput_status_t st;
  size_t used = 0;
  for (int s = 0; (st = dinput_dist_iterator_get_next(&step, it)) == DINPUT_OK; s++) {
    used += (size_t)snprintf(out + used, size - used, "worker %d step %d:", rank, s);
    for (int r = 0; r < dinput_per_replica_size(step); r++) {
      const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, r), 0);
      used += (size_t)snprintf(out + used, size - used, " [");
      for (int64_t i = 0; i < dinput_tensor_dim(t, 0); i++)
        used += (size_t)snprintf(out + used, size - used, "%s%lld", i ? " " : "",
                                 (long long)((const int64_t*)dinput_tensor_data(t))[i]);
      used += (size_t)snprintf(out + used, size - used, "]");
    }
    used += (size_t)snprintf(out + used, size - used, "\n");
    dinput_per_replica_free(step);
  }
  if (st != DINPUT_OUT_OF_RANGE) check(st);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(batched);
  dinput_dataset_free(range);
  dinput_strategy_free(strategy);
}

struct thread_worker {
  dinput_collective_t* collective;
  int rank;
  char out[4096];
};

static void* thread_main(void* arg) {
  struct thread_worker* w = (struct thread_worker*)arg;
  run_worker(w->collective, w->rank, w->out, sizeof w->out);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--threads") == 0) {
    int workers = atoi(argv[2]);
    if (workers < 1 || workers > 16) {
      fprintf(stderr, "--threads takes 1 to 16 workers\n");
      return 2;
    }
    dinput_collective_t* collective = NULL;
    check(dinput_collective_new_in_process(&collective, workers, 30000));
    struct thread_worker w[16];
    pthread_t threads[16];
    for (int i = 0; i < workers; i++) {
      w[i].collective = collective;
      w[i].rank = i;
      pthread_create(&threads[i], NULL, thread_main, &w[i]);
    }
    for (int i = 0; i < workers; i++) {
      pthread_join(threads[i], NULL);
      fputs(w[i].out, stdout);
    }
    dinput_collective_free(collective);
    return 0;
  }
  /* A process of a job: its rank, the number of workers and where they meet. */
  dinput_cluster_t* cluster = NULL;
  check(dinput_cluster_resolve(&cluster, "auto"));
  dinput_collective_options_t* options = NULL;
  check(dinput_collective_options_new(&options));
  check(dinput_collective_options_set_timeout_ms(options, 30000));
  dinput_collective_t* collective = NULL;
  check(dinput_collective_new_from_cluster(&collective, cluster, options));
  dinput_collective_options_free(options);
  char out[4096];
  run_worker(collective, dinput_cluster_rank(cluster), out, sizeof out);
  fputs(out, stdout);
  dinput_collective_free(collective);
  dinput_cluster_free(cluster);
  return 0;
}
