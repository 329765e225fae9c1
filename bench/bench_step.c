/* bench_step — the cost of one distributed step against the plain iterator, per step and per
 * element, at batch 1 and batch 256 over 1, 2 and 8 CPU replicas of one worker.
 *
 *  step.batch<B>.r<R>
 *      range(N).batch(B) through dinput_dist_iterator_get_next over R CPU replicas (the
 *      default input options: AUTO sharding, which with one worker splits each batch of B
 *      rows among the R replicas), reading every value of every replica's piece. Baseline:
 *      the same range(N).batch(B) through dinput_iterator_get_next, reading every value.
 *      Both sides run 3 interleaved rounds (plain, then each R in turn); the best round of
 *      each is reported. Each pass lasts tens of milliseconds at least, so that with --load
 *      a few lost time slices do not decide a figure. Goals: at batch 1 with 1 replica,
 *      <= 2 us per distributed step; at batch 256, distributed ns per element <= 1.5x the
 *      plain iterator's, for every R. Batch 1 over 2 and 8 replicas is for information (all
 *      but one replica get an empty piece every step).
 *  step.batch256_infos.r<R>
 *      The batch 256 rows again, with a consumer that reads each step through one call
 *      (dinput_element_tensor_infos for the plain iterator, dinput_per_replica_tensor_infos for
 *      the distributed one), as the Rust and Julia bindings read one, instead of the
 *      per-tensor accessors (three calls a step for the plain iterator; dinput_per_replica_get,
 *      dinput_element_get, dinput_tensor_num_elements and dinput_tensor_data a piece for the
 *      distributed one). Same rounds and goal.
 *  step.batch256_per_replica.r<R>
 *      For information: range(N).batch(256 R) over R = 2 and 8 replicas, so that every replica
 *      gets 256 rows a step, against the same range(N).batch(256 R) through the plain
 *      iterator. What a step costs beyond the plain iterator is mostly per piece; here it is
 *      spread over 256 rows a piece instead of 256 / R.
 *
 * Usage: bench_step [--quick] [--load] [--batch1]
 *          --quick: tiny sizes, for the CTest smoke test (the figures mean nothing);
 *          --batch1: only the batch 1 rows (what bench/torch_batch1.py compares with
 *                   PyTorch's DataLoader);
 *          --load:  forks one busy-looping child per online CPU for the whole measurement,
 *                   and kills them at the end: the same figures on a machine with no idle
 *                   core, where a thread hand-off must wait for the scheduler.
 * Output: one JSON object per measurement on stdout, then a "step.machine" line with the
 * load average before and after.
 */
#include "bench_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 3
#define MAX_CHILDREN 256

static pid_t g_children[MAX_CHILDREN];
static int g_num_children;

/* ---- background load ---- */

static void stop_load(void) {
  for (int i = 0; i < g_num_children; ++i) kill(g_children[i], SIGKILL);
  for (int i = 0; i < g_num_children; ++i) waitpid(g_children[i], NULL, 0);
  g_num_children = 0;
}

/* One child per online CPU, each spinning until killed. atexit keeps them from outliving a
 * benchmark that exits early (bench_check exits on a failed call). */
static void start_load(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > MAX_CHILDREN) n = MAX_CHILDREN;
  atexit(stop_load);
  for (long i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      exit(2);
    }
    if (pid == 0) {
      volatile uint64_t x = 0;
      for (;;) x = x + 1;
    }
    g_children[g_num_children++] = pid;
  }
}

static void read_loadavg(char* out, size_t size) {
  snprintf(out, size, "unknown");
  FILE* f = fopen("/proc/loadavg", "r");
  if (!f) return;
  double a = 0, b = 0, c = 0;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(out, size, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

/* ---- setup ---- */

static dinput_dataset_t* make_range_batch(int64_t n, int64_t batch) {
  dinput_dataset_t *range = NULL, *batched = NULL;
  BENCH_CHECK(dinput_dataset_range(&range, 0, n, 1));
  BENCH_CHECK(dinput_dataset_batch(&batched, range, batch, NULL));
  dinput_dataset_free(range);
  return batched;
}

/* The sum of range(n): both sides must deliver every element exactly once. */
static int64_t expected_sum(int64_t n) { return n * (n - 1) / 2; }

/* ---- passes: one epoch each, returning nanoseconds per step ---- */

/* How the consumer reads a step: through the per-tensor accessors, or all of its tensors
 * through one tensor-infos call. */
typedef enum { READ_ACCESSORS, READ_INFOS } read_mode_t;

static double plain_pass(const dinput_dataset_t* ds, int64_t n, int64_t steps, read_mode_t mode) {
  dinput_iterator_t* it = NULL;
  BENCH_CHECK(dinput_dataset_iterator(&it, ds));
  int64_t sum = 0, count = 0;
  dinput_tensor_info_t info; /* the plain iterator's element has one component */
  double t0 = bench_now_ns();
  for (;;) {
    dinput_element_t* e = NULL;
    if (!bench_next(it, &e)) break;
    if (mode == READ_INFOS) {
      size_t k = 0;
      BENCH_CHECK(dinput_element_tensor_infos(&k, &info, 1, e));
      sum += bench_sum_i64((const int64_t*)info.data, info.shape[0]);
    } else {
      const dinput_tensor_t* t = dinput_element_get(e, 0);
      sum += bench_sum_i64((const int64_t*)dinput_tensor_data(t), dinput_tensor_dim(t, 0));
    }
    ++count;
    dinput_element_free(e);
  }
  double t1 = bench_now_ns();
  dinput_iterator_free(it);
  if (count != steps || sum != expected_sum(n)) {
    fprintf(stderr, "plain iterator: %lld steps, sum %lld; expected %lld, %lld\n", (long long)count,
            (long long)sum, (long long)steps, (long long)expected_sum(n));
    exit(2);
  }
  bench_sink = sum;
  return (t1 - t0) / (double)count;
}

static double dist_pass(const dinput_dist_dataset_t* dd, int replicas, int64_t n, int64_t steps,
                        read_mode_t mode) {
  bench_dist_epoch_t r = bench_dist_epoch_i64(dd, replicas, mode == READ_INFOS);
  if (r.steps != steps || r.values != n || r.sum != expected_sum(n)) {
    fprintf(stderr,
            "distributed iterator (%d replicas): %lld steps, %lld values, sum %lld; expected "
            "%lld, %lld, %lld\n",
            replicas, (long long)r.steps, (long long)r.values, (long long)r.sum, (long long)steps,
            (long long)n, (long long)expected_sum(n));
    exit(2);
  }
  return r.ns / (double)r.steps;
}

/* ---- one batch size: the plain iterator and R = 1, 2, 8, interleaved ---- */

static void bench_batch(int64_t batch, int64_t steps, int load, read_mode_t mode) {
  static const int kReplicas[] = {1, 2, 8};
  enum { kNumR = sizeof kReplicas / sizeof kReplicas[0] };
  const int64_t n = steps * batch;
  dinput_dataset_t* ds = make_range_batch(n, batch);
  dinput_strategy_t* strategies[kNumR];
  dinput_dist_dataset_t* dists[kNumR];
  for (int i = 0; i < kNumR; ++i) {
    strategies[i] = bench_cpu_strategy(kReplicas[i]);
    BENCH_CHECK(dinput_strategy_distribute_dataset(&dists[i], strategies[i], ds, NULL));
  }
  double plain[ROUNDS], dist[kNumR][ROUNDS];
  for (int round = 0; round < ROUNDS; ++round) {
    plain[round] = plain_pass(ds, n, steps, mode);
    for (int i = 0; i < kNumR; ++i)
      dist[i][round] = dist_pass(dists[i], kReplicas[i], n, steps, mode);
  }
  const double plain_ns = bench_min(plain, ROUNDS);
  for (int i = 0; i < kNumR; ++i) {
    const double dist_ns = bench_min(dist[i], ROUNDS);
    const double ratio = dist_ns / plain_ns;
    const char* goal = "info";
    int pass = 1;
    if (batch == 1 && kReplicas[i] == 1) {
      goal = "dist_us_per_step <= 2";
      pass = dist_ns <= 2000.0;
    } else if (batch == 256) {
      goal = "ratio <= 1.5";
      pass = ratio <= 1.5;
    }
    printf(
        "{\"bench\":\"step.batch%lld%s.r%d\",\"load\":%s,\"batch\":%lld,\"replicas\":%d,"
        "\"steps\":%lld,\"rounds\":%d,\"plain_us_per_step\":%.3f,\"dist_us_per_step\":%.3f,"
        "\"plain_ns_per_element\":%.2f,\"dist_ns_per_element\":%.2f,\"ratio\":%.2f,"
        "\"goal\":\"%s\",\"pass\":%s}\n",
        (long long)batch, mode == READ_INFOS ? "_infos" : "", kReplicas[i], bench_bool(load),
        (long long)batch, kReplicas[i], (long long)steps, ROUNDS, plain_ns / 1e3, dist_ns / 1e3,
        plain_ns / (double)batch, dist_ns / (double)batch, ratio, goal, bench_bool(pass));
    fflush(stdout);
  }
  for (int i = 0; i < kNumR; ++i) {
    dinput_dist_dataset_free(dists[i]);
    dinput_strategy_free(strategies[i]);
  }
  dinput_dataset_free(ds);
}

/* range(steps * 256 R).batch(256 R) over R replicas against the same through the plain
 * iterator, interleaved. */
static void bench_per_replica_256(int replicas, int64_t steps, int load) {
  const int64_t batch = 256 * (int64_t)replicas, n = steps * batch;
  dinput_dataset_t* ds = make_range_batch(n, batch);
  dinput_strategy_t* strategy = bench_cpu_strategy(replicas);
  dinput_dist_dataset_t* dd = NULL;
  BENCH_CHECK(dinput_strategy_distribute_dataset(&dd, strategy, ds, NULL));
  double plain[ROUNDS], dist[ROUNDS];
  for (int round = 0; round < ROUNDS; ++round) {
    plain[round] = plain_pass(ds, n, steps, READ_ACCESSORS);
    dist[round] = dist_pass(dd, replicas, n, steps, READ_ACCESSORS);
  }
  const double plain_ns = bench_min(plain, ROUNDS), dist_ns = bench_min(dist, ROUNDS);
  printf(
      "{\"bench\":\"step.batch256_per_replica.r%d\",\"load\":%s,\"batch\":%lld,"
      "\"replicas\":%d,\"steps\":%lld,\"rounds\":%d,\"plain_us_per_step\":%.3f,"
      "\"dist_us_per_step\":%.3f,\"plain_ns_per_element\":%.2f,\"dist_ns_per_element\":%.2f,"
      "\"ratio\":%.2f,\"goal\":\"info\",\"pass\":true}\n",
      replicas, bench_bool(load), (long long)batch, replicas, (long long)steps, ROUNDS,
      plain_ns / 1e3, dist_ns / 1e3, plain_ns / (double)batch, dist_ns / (double)batch,
      dist_ns / plain_ns);
  fflush(stdout);
  dinput_dist_dataset_free(dd);
  dinput_strategy_free(strategy);
  dinput_dataset_free(ds);
}

int main(int argc, char** argv) {
  int quick = 0, load = 0, batch1_only = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--batch1") == 0) {
      batch1_only = 1;
    } else if (strcmp(argv[i], "--load") == 0) {
      load = 1;
    } else {
      fprintf(stderr, "usage: %s [--quick] [--load] [--batch1]\n", argv[0]);
      return 2;
    }
  }
  char before[64], after[64];
  read_loadavg(before, sizeof before);
  if (load) start_load();
  bench_batch(1, quick ? 500 : 200000, load, READ_ACCESSORS);
  if (!batch1_only) {
    bench_batch(256, quick ? 50 : 131072, load, READ_ACCESSORS);
    bench_batch(256, quick ? 50 : 131072, load, READ_INFOS);
    bench_per_replica_256(2, quick ? 25 : 65536, load);
    bench_per_replica_256(8, quick ? 8 : 16384, load);
  }
  if (load) stop_load();
  read_loadavg(after, sizeof after);
  printf(
      "{\"bench\":\"step.machine\",\"load\":%s,\"nproc\":%ld,\"loadavg_before\":\"%s\","
      "\"loadavg_after\":\"%s\"}\n",
      bench_bool(load), sysconf(_SC_NPROCESSORS_ONLN), before, after);
  return 0;
}
