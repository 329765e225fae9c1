/* bench_autotune — what num_parallel_calls=AUTOTUNE gains (docs/autotune.md).
 *
 * The pipeline: range(N).map(f, num_parallel_calls=P), read to its end through a plain
 * iterator, where f costs a known time per element:
 *  autotune.wait  f sleeps 1 ms (a function that waits on I/O or a remote service), N = 2000;
 *  autotune.cpu   f spins on the CPU for 200 us, N = 1000;
 *  autotune.trivial  f only returns its input, N = 200000 (what the knob and its
 *                 measurements cost where parallelism cannot help).
 * P is each fixed setting of 1, 2, 4, 8 and 16 (wait) or 1, 2 and 4 (cpu), and AUTOTUNE. The
 * rounds interleave the settings, the order rotated every round, 3 rounds by default; the
 * figure of a setting is its best epoch. Each line gives the AUTOTUNE epoch against the best
 * fixed setting (ratio_vs_best: the fixed epoch time over the AUTOTUNE one, 1 = as fast as
 * the best hand-picked value, which AUTOTUNE reaches only after its first steps) and against
 * P = 1 (ratio_vs_1), and the parallelism AUTOTUNE had reached at the end.
 *
 * Usage: bench_autotune [--quick] [--rounds N]
 *          --quick: 100 elements of 1 ms and 50 of 200 us, one round (for the CTest smoke test;
 *                   the figures mean little)
 * Output: one JSON object per workload on stdout, then an "autotune.machine" line with the
 * load average.
 */
#include "bench_util.h"

#define MAX_ROUNDS 16
#define MAX_SETTINGS 8

static int g_rounds = 3;

static void spin_ns(double ns) {
  const double end = bench_now_ns() + ns;
  while (bench_now_ns() < end) {
  }
}

/* user_data: the cost in microseconds, negative to spin rather than sleep. */
static dinput_status_t costly(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  const long us = (long)(intptr_t)user_data;
  if (us <= 0) {
    if (us < 0) spin_ns((double)-us * 1000.0);
  } else {
    struct timespec d = {0, us * 1000L};
    nanosleep(&d, NULL);
  }
  return dinput_element_ref(out, in);
}

/* One epoch of range(n).map(costly, parallel); returns seconds, and the knob's last value
 * into *tuned (-1 without a knob). */
static double epoch(int64_t n, long cost_us, int64_t parallel, int64_t* tuned) {
  dinput_dataset_t *r = NULL, *m = NULL;
  dinput_map_options_t* o = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  char* json = NULL;
  int64_t count = 0;
  bench_check(dinput_dataset_range(&r, 0, n, 1), "dinput_dataset_range");
  bench_check(dinput_map_options_new(&o), "dinput_map_options_new");
  bench_check(dinput_map_options_set_num_parallel_calls(o, parallel),
              "dinput_map_options_set_num_parallel_calls");
  bench_check(dinput_dataset_map(&m, r, costly, (void*)(intptr_t)cost_us, NULL, o),
              "dinput_dataset_map");
  const double begin = bench_now_ns();
  bench_check(dinput_dataset_iterator(&it, m), "dinput_dataset_iterator");
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    ++count;
    dinput_element_free(e);
  }
  const double seconds = (bench_now_ns() - begin) / 1e9;
  if (count != n) {
    fprintf(stderr, "bench_autotune: %lld elements of %lld\n", (long long)count, (long long)n);
    exit(2);
  }
  *tuned = -1;
  bench_check(dinput_iterator_statistics(&json, it), "dinput_iterator_statistics");
  const char* knob = strstr(json, "\"knob\":\"parallelism\",\"value\":");
  if (knob) *tuned = strtoll(knob + strlen("\"knob\":\"parallelism\",\"value\":"), NULL, 10);
  dinput_string_free(json);
  dinput_iterator_free(it);
  dinput_dataset_free(m);
  dinput_map_options_free(o);
  dinput_dataset_free(r);
  return seconds;
}

/* Runs every setting (the last is AUTOTUNE) `g_rounds` times, interleaved, and prints one line. */
static void workload(const char* name, int64_t n, long cost_us, const int64_t* fixed,
                     int num_fixed) {
  double best[MAX_SETTINGS];
  int64_t tuned = -1, reached = -1;
  const int settings = num_fixed + 1;
  for (int s = 0; s < settings; ++s) best[s] = 1e300;
  for (int round = 0; round < g_rounds; ++round) {
    for (int k = 0; k < settings; ++k) {
      const int s = (k + round) % settings;
      const int64_t p = s < num_fixed ? fixed[s] : DINPUT_AUTOTUNE;
      const double t = epoch(n, cost_us, p, &tuned);
      if (t < best[s]) best[s] = t;
      if (s == num_fixed) reached = tuned;
    }
  }
  int best_fixed = 0;
  for (int s = 1; s < num_fixed; ++s)
    if (best[s] < best[best_fixed]) best_fixed = s;
  printf("{\"bench\":\"%s\",\"elements\":%lld,\"cost_us\":%ld,\"cost\":\"%s\",\"fixed_s\":{", name,
         (long long)n, cost_us < 0 ? -cost_us : cost_us,
         cost_us < 0    ? "spin"
         : cost_us == 0 ? "none"
                        : "sleep");
  for (int s = 0; s < num_fixed; ++s)
    printf("%s\"%lld\":%.4f", s ? "," : "", (long long)fixed[s], best[s]);
  printf(
      "},\"best_fixed\":%lld,\"autotune_s\":%.4f,\"autotune_parallelism\":%lld,"
      "\"ratio_vs_best\":%.3f,\"ratio_vs_1\":%.3f,\"rounds\":%d}\n",
      (long long)fixed[best_fixed], best[num_fixed], (long long)reached,
      best[best_fixed] / best[num_fixed], best[0] / best[num_fixed], g_rounds);
  fflush(stdout);
}

int main(int argc, char** argv) {
  int quick = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      g_rounds = atoi(argv[++i]);
      if (g_rounds < 1 || g_rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_autotune: --rounds must be 1..%d\n", MAX_ROUNDS);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: bench_autotune [--quick] [--rounds N]\n");
      return 2;
    }
  }
  if (quick) g_rounds = 1;
  const int64_t wait_settings[] = {1, 2, 4, 8, 16};
  const int64_t cpu_settings[] = {1, 2, 4};
  workload("autotune.wait", quick ? 100 : 2000, 1000, wait_settings, 5);
  workload("autotune.cpu", quick ? 50 : 1000, -200, cpu_settings, 3);
  workload("autotune.trivial", quick ? 2000 : 200000, 0, cpu_settings, 3);
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = load[1] = load[2] = -1;
  printf("{\"bench\":\"autotune.machine\",\"cores\":%ld,\"load1\":%.2f,\"load5\":%.2f}\n",
         sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1]);
  return 0;
}
