/* bench_stats — what per-stage statistics (docs/statistics.md) cost on W1.
 *
 * The pipeline: 32 record files of 8,192 records of 1 KiB (uncompressed, written here),
 * records(files).shuffle(10000, seed).batch(256), read
 *  stats.w1_dist   through a distributed iterator over 2 CPU replicas of one worker (W1), and
 *  stats.w1_plain  through a plain dataset iterator (the pipeline alone, where a per-element
 *                  cost shows most),
 * each with statistics off and on (dinput_options_set_statistics on a with_options node at
 * the end). The rounds interleave off and on, 3 of each by default, the order swapped every round;
 * the figure is the best epoch time of each, and the ratio on / off of the same run; also, less
 * sensitive to a busy machine, the median over the rounds of each round's on / off (the two
 * epochs of a round run back to back). Goal: ratio <= 1.02. A last line times the same epoch with a
 * trace of 1,000,000 events, for reference (no goal).
 *
 * Usage: bench_stats [--quick] [--rounds N] [DIR]
 *          --rounds N: N rounds of each side (default 3, at most 64)
 *          --quick: 4 files of 512 records of 64 bytes, shuffle(1000), batch(64) (the
 *                   figures mean nothing: for the CTest smoke test)
 *          DIR:     where the files go (default: a new directory under /tmp, removed after)
 * Output: one JSON object per measurement on stdout, then a "stats.machine" line with the
 * load average.
 */
#include "bench_util.h"

#include <unistd.h>

/* Rounds of each side (--rounds N): an epoch of W1 takes about 0.15 s here, and single epochs
 * move by 5 to 10% on a shared machine, so telling 2% apart takes more than 3 of each. */
#define MAX_ROUNDS 64
static int g_rounds = 3;

/* The process's CPU seconds (every thread): what the statistics add, whatever else the
 * machine runs, where wall-clock time on a shared machine moves by more than 2% between
 * rounds. */
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One epoch's wall-clock and CPU seconds. */
typedef struct {
  double wall, cpu;
} epoch_t;

static int g_files = 32, g_records = 8192, g_bytes = 1024, g_buffer = 10000, g_batch = 256;

/* records(files).shuffle(buffer, seed 7).batch(batch).with_options(statistics / trace). */
static dinput_dataset_t* w1(const char* const* files, int statistics, int64_t trace) {
  dinput_dataset_t *r = NULL, *sh = NULL, *b = NULL, *out = NULL;
  dinput_shuffle_options_t* so = NULL;
  dinput_options_t* o = NULL;
  BENCH_CHECK(dinput_dataset_records(&r, files, (size_t)g_files, NULL));
  BENCH_CHECK(dinput_shuffle_options_new(&so));
  BENCH_CHECK(dinput_shuffle_options_set_seed(so, 7, 0));
  BENCH_CHECK(dinput_dataset_shuffle(&sh, r, g_buffer, so));
  BENCH_CHECK(dinput_dataset_batch(&b, sh, g_batch, NULL));
  BENCH_CHECK(dinput_options_new(&o));
  BENCH_CHECK(dinput_options_set_statistics(o, statistics));
  BENCH_CHECK(dinput_options_set_trace(o, trace));
  BENCH_CHECK(dinput_dataset_with_options(&out, b, o));
  dinput_options_free(o);
  dinput_shuffle_options_free(so);
  dinput_dataset_free(b);
  dinput_dataset_free(sh);
  dinput_dataset_free(r);
  return out;
}

/* One epoch through a distributed iterator over 2 CPU replicas. */
static epoch_t epoch_dist(const dinput_dataset_t* ds) {
  static const char* const kDevices[] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dd = NULL;
  dinput_dist_iterator_t* it = NULL;
  BENCH_CHECK(dinput_strategy_new(&strategy, kDevices, 2));
  BENCH_CHECK(dinput_strategy_distribute_dataset(&dd, strategy, ds, NULL));
  const double t0 = bench_now_ns(), c0 = cpu_seconds();
  BENCH_CHECK(dinput_dist_dataset_iterator(&it, dd));
  for (;;) {
    dinput_per_replica_t* v = NULL;
    dinput_status_t st = dinput_dist_iterator_get_next(&v, it);
    if (st == DINPUT_OUT_OF_RANGE) break;
    BENCH_CHECK(st);
    bench_escape(v);
    dinput_per_replica_free(v);
  }
  const epoch_t t = {(bench_now_ns() - t0) / 1e9, cpu_seconds() - c0};
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dd);
  dinput_strategy_free(strategy);
  return t;
}

/* One epoch through a plain iterator; *stages: the stages its statistics list. */
static epoch_t epoch_plain(const dinput_dataset_t* ds, int* stages) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  const double t0 = bench_now_ns(), c0 = cpu_seconds();
  BENCH_CHECK(dinput_dataset_iterator(&it, ds));
  while (bench_next(it, &e)) {
    bench_escape(e);
    dinput_element_free(e);
  }
  const epoch_t t = {(bench_now_ns() - t0) / 1e9, cpu_seconds() - c0};
  char* json = NULL;
  BENCH_CHECK(dinput_iterator_statistics(&json, it));
  *stages = 0;
  for (const char* p = json; (p = strstr(p, "\"produce_ns\"")) != NULL; ++p) ++*stages;
  dinput_string_free(json);
  dinput_iterator_free(it);
  return t;
}

static double best(const epoch_t* e, int cpu) {
  double v[MAX_ROUNDS] = {0};
  for (int r = 0; r < g_rounds; ++r) v[r] = cpu ? e[r].cpu : e[r].wall;
  return bench_min(v, g_rounds);
}

/* The median over the rounds of on / off within each round (the two epochs of a round run
 * back to back, so they share the load of that moment). */
static double paired_median(const epoch_t* off, const epoch_t* on, int cpu) {
  double v[MAX_ROUNDS] = {0};
  for (int r = 0; r < g_rounds; ++r) v[r] = cpu ? on[r].cpu / off[r].cpu : on[r].wall / off[r].wall;
  return bench_median(v, g_rounds);
}

static void report(const char* name, const epoch_t* off, const epoch_t* on, int64_t bytes) {
  const double wall_off = best(off, 0), wall_on = best(on, 0);
  const double cpu_off = best(off, 1), cpu_on = best(on, 1);
  const double ratio = wall_on / wall_off, cpu_ratio = cpu_on / cpu_off;
  printf(
      "{\"bench\":\"%s\",\"off_s\":%.4f,\"on_s\":%.4f,\"off_mb_s\":%.1f,\"on_mb_s\":%.1f,"
      "\"ratio\":%.4f,\"off_cpu_s\":%.4f,\"on_cpu_s\":%.4f,\"cpu_ratio\":%.4f,\"goal\":1.02,"
      "\"pass\":%s,\"cpu_pass\":%s,\"paired_median_ratio\":%.4f,"
      "\"paired_median_cpu_ratio\":%.4f}\n",
      name, wall_off, wall_on, (double)bytes / wall_off / 1e6, (double)bytes / wall_on / 1e6, ratio,
      cpu_off, cpu_on, cpu_ratio, bench_bool(ratio <= 1.02), bench_bool(cpu_ratio <= 1.02),
      paired_median(off, on, 0), paired_median(off, on, 1));
}

int main(int argc, char** argv) {
  const char* dir_arg = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      g_files = 4, g_records = 512, g_bytes = 64, g_buffer = 1000, g_batch = 64;
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      g_rounds = atoi(argv[++i]);
      if (g_rounds < 1 || g_rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_stats: --rounds must be 1..%d\n", MAX_ROUNDS);
        return 2;
      }
    } else {
      dir_arg = argv[i];
    }
  }
  bench_record_files_t data;
  if (bench_record_files_write(&data, dir_arg, "bench_stats", g_files, g_records, g_bytes))
    return 2;
  const char** files = data.files;
  const int64_t bytes = (int64_t)g_files * g_records * g_bytes;

  dinput_dataset_t *off = w1(files, 0, 0), *on = w1(files, 1, 0), *traced = w1(files, 1, 1000000);
  epoch_t dist_off[MAX_ROUNDS], dist_on[MAX_ROUNDS], plain_off[MAX_ROUNDS], plain_on[MAX_ROUNDS];
  int stages_off = 0, stages_on = 0;
  epoch_plain(off, &stages_off); /* warm the page cache */
  /* Odd rounds run "on" first: whatever the previous epoch leaves behind (freed memory to
   * reuse, pages to fault in) then favours neither side. */
  for (int r = 0; r < g_rounds; ++r) {
    if (r % 2 == 0) {
      dist_off[r] = epoch_dist(off);
      dist_on[r] = epoch_dist(on);
      plain_off[r] = epoch_plain(off, &stages_off);
      plain_on[r] = epoch_plain(on, &stages_on);
    } else {
      dist_on[r] = epoch_dist(on);
      dist_off[r] = epoch_dist(off);
      plain_on[r] = epoch_plain(on, &stages_on);
      plain_off[r] = epoch_plain(off, &stages_off);
    }
  }
  report("stats.w1_dist", dist_off, dist_on, bytes);
  report("stats.w1_plain", plain_off, plain_on, bytes);
  int stages_traced = 0;
  const double t_traced = epoch_plain(traced, &stages_traced).wall;
  printf(
      "{\"bench\":\"stats.w1_plain_traced\",\"seconds\":%.4f,\"mb_s\":%.1f,"
      "\"stages_off\":%d,\"stages_on\":%d}\n",
      t_traced, (double)bytes / t_traced / 1e6, stages_off, stages_on);
  dinput_dataset_free(traced);
  dinput_dataset_free(on);
  dinput_dataset_free(off);

  bench_record_files_free(&data, 0);
  double load[3];
  if (getloadavg(load, 3) < 0) load[0] = -1;
  printf("{\"bench\":\"stats.machine\",\"load_average_1min\":%.2f}\n", load[0]);
  return 0;
}
