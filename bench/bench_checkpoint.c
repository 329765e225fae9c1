/* bench_checkpoint — the size and cost of a distributed iterator's state on W1.
 *
 * The pipeline: 32 record files of 8,192 records of 1 KiB (uncompressed, written here),
 * records(files).shuffle(10000, seed).batch(256), distributed over 2 CPU replicas of one
 * worker. Measured:
 *  checkpoint.state_size   the largest state (dinput_dist_iterator_save) over saves at every
 *                          16th step of the epoch, and the slowest and median save.
 *                          Goal: <= 4 KiB at any step, save < 1 ms.
 *  checkpoint.restore      restoring at 50% of the epoch (dinput_dist_dataset_iterator_from_state
 *                          and the first step after it), against reading one shuffle buffer's
 *                          worth of records (records(files).take(10000), every byte, none
 *                          kept) and against replaying the prefix (a new iterator taking the
 *                          steps before the save point). Goal: restore <= 2x one buffer's
 *                          worth plus the index arithmetic (replaying the draws, about 1 ms:
 *                          not measurable through the C API, so "pass" does not subtract it).
 *                          Also against a new iterator's first step, which fills the shuffle
 *                          buffer (reads and holds one buffer's worth, as a restore must).
 * Each time is the best of 5 runs. On a shared machine the wall times wait for the CPU; the
 * restore and the buffer's worth also report the CPU time of the calling thread
 * (restore_cpu_ms: the restore without its first step, whose read-ahead runs on a thread of
 * its own), and the restore the CPU time of the whole process during it
 * (restore_process_cpu_ms): the restore reads by address on a second thread, and a third
 * faults in memory for the records meanwhile (docs/checkpoint.md, "Segments").
 * first_restore_ms and first_one_buffer_ms are the first run's times: the process's first
 * restore, before any memory a restore frees is kept for the next one.
 *
 * Usage: bench_checkpoint [--quick] [--map-files] [DIR]
 *          --quick: 4 files of 512 records of 64 bytes, shuffle(1000), batch(64) (the
 *                   figures mean nothing: for the CTest smoke test)
 *          --map-files: every pipeline (the buffer's worth too) maps the files
 *                   (dinput_options_set_map_files) instead of reading them
 *          DIR:     where the files go (default: a new directory under /tmp, removed after)
 * Output: one JSON object per measurement on stdout, then a "checkpoint.machine" line with
 * the load average.
 */
#include "bench_util.h"

#include <unistd.h>

#define RUNS 5

/* CPU time of the calling thread. */
static double thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of the process, every thread. */
static double process_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int g_files = 32, g_records = 8192, g_bytes = 1024, g_buffer = 10000, g_batch = 256;

static int g_map_files = 0;

/* The record files, read (or, with --map-files, mapped). */
static dinput_dataset_t* records(const char* const* files) {
  dinput_dataset_t* out = NULL;
  BENCH_CHECK(dinput_dataset_records(&out, files, (size_t)g_files, NULL));
  if (!g_map_files) return out;
  dinput_options_t* o = NULL;
  dinput_dataset_t* mapped = NULL;
  BENCH_CHECK(dinput_options_new(&o));
  BENCH_CHECK(dinput_options_set_map_files(o, 1));
  BENCH_CHECK(dinput_dataset_with_options(&mapped, out, o));
  dinput_options_free(o);
  dinput_dataset_free(out);
  return mapped;
}

/* records(files).shuffle(buffer, seed 7).batch(batch), over 2 CPU replicas. */
static dinput_dist_dataset_t* w1(const char* const* files) {
  static const char* const kDevices[] = {"CPU:0", "CPU:1"};
  dinput_dataset_t *r = records(files), *sh = NULL, *b = NULL;
  dinput_shuffle_options_t* so = NULL;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* out = NULL;
  BENCH_CHECK(dinput_shuffle_options_new(&so));
  BENCH_CHECK(dinput_shuffle_options_set_seed(so, 7, 0));
  BENCH_CHECK(dinput_dataset_shuffle(&sh, r, g_buffer, so));
  BENCH_CHECK(dinput_dataset_batch(&b, sh, g_batch, NULL));
  BENCH_CHECK(dinput_strategy_new(&strategy, kDevices, 2));
  BENCH_CHECK(dinput_strategy_distribute_dataset(&out, strategy, b, NULL));
  dinput_shuffle_options_free(so);
  dinput_strategy_free(strategy);
  dinput_dataset_free(b);
  dinput_dataset_free(sh);
  dinput_dataset_free(r);
  return out;
}

/* Takes one step and reads a byte of every replica's piece. Returns 0 at the end. */
static int step(dinput_dist_iterator_t* it) {
  dinput_per_replica_t* v = NULL;
  dinput_status_t st = dinput_dist_iterator_get_next(&v, it);
  if (st == DINPUT_OUT_OF_RANGE) return 0;
  BENCH_CHECK(st);
  bench_escape(v);
  dinput_per_replica_free(v);
  return 1;
}

int main(int argc, char** argv) {
  const char* dir_arg = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      g_files = 4, g_records = 512, g_bytes = 64, g_buffer = 1000, g_batch = 64;
    } else if (strcmp(argv[i], "--map-files") == 0) {
      g_map_files = 1;
    } else {
      dir_arg = argv[i];
    }
  }
  bench_record_files_t data;
  if (bench_record_files_write(&data, dir_arg, "bench_checkpoint", g_files, g_records, g_bytes))
    return 2;
  const char** files = data.files;
  const int64_t total = (int64_t)g_files * g_records;
  const int64_t steps = (total + g_batch - 1) / g_batch;
  const int64_t half = steps / 2;

  /* State size and save time over the epoch; the state at 50% is kept. */
  dinput_dist_dataset_t* ds = w1(files);
  dinput_dist_iterator_t* it = NULL;
  BENCH_CHECK(dinput_dist_dataset_iterator(&it, ds));
  size_t largest = 0, saves = 0;
  double save_ns[4096], slowest = 0;
  char* at_half = NULL;
  size_t at_half_size = 0;
  for (int64_t s = 0;; ++s) {
    if (s % 16 == 0 || s == half) {
      dinput_state_t* state = NULL;
      double t0 = bench_now_ns();
      BENCH_CHECK(dinput_dist_iterator_save(&state, it));
      double t = bench_now_ns() - t0;
      if (saves < 4096) save_ns[saves++] = t;
      if (t > slowest) slowest = t;
      if (dinput_state_size(state) > largest) largest = dinput_state_size(state);
      if (s == half) {
        at_half_size = dinput_state_size(state);
        at_half = malloc(at_half_size);
        memcpy(at_half, dinput_state_data(state), at_half_size);
      }
      dinput_state_free(state);
    }
    if (!step(it)) break;
  }
  dinput_dist_iterator_free(it);
  printf(
      "{\"bench\":\"checkpoint.state_size\",\"steps\":%lld,\"saves\":%zu,"
      "\"largest_bytes\":%zu,\"save_us_max\":%.1f,\"save_us_median\":%.1f,\"pass\":%s}\n",
      (long long)steps, saves, largest, slowest / 1e3, bench_median(save_ns, (int)saves) / 1e3,
      bench_bool(largest <= 4096 && slowest < 1e6));

  /* Restore at 50% against one buffer's worth of records and against the replay. */
  double restore[RUNS], buffer[RUNS], replay[RUNS], first[RUNS], restore_cpu[RUNS],
      buffer_cpu[RUNS], restore_process_cpu[RUNS];
  for (int run = 0; run < RUNS; ++run) {
    dinput_dist_dataset_t* again = w1(files);
    double t0 = bench_now_ns(), c0 = thread_cpu_ns(), p0 = process_cpu_ns();
    dinput_dist_iterator_t* restored = NULL;
    BENCH_CHECK(dinput_dist_dataset_iterator_from_state(&restored, again, at_half, at_half_size));
    restore_cpu[run] = thread_cpu_ns() - c0;
    restore_process_cpu[run] = process_cpu_ns() - p0;
    step(restored);
    restore[run] = bench_now_ns() - t0;
    dinput_dist_iterator_free(restored);

    dinput_dataset_t *r = records(files), *take = NULL;
    dinput_iterator_t* plain = NULL;
    dinput_element_t* e = NULL;
    BENCH_CHECK(dinput_dataset_take(&take, r, g_buffer));
    t0 = bench_now_ns();
    c0 = thread_cpu_ns();
    BENCH_CHECK(dinput_dataset_iterator(&plain, take));
    while (bench_next(plain, &e)) {
      const dinput_tensor_t* t = dinput_element_get(e, 0);
      const char* data = NULL;
      size_t len = 0;
      BENCH_CHECK(dinput_tensor_string_view(&data, &len, t, 0));
      bench_sink += bench_sum_bytes((const uint8_t*)data, len);
      dinput_element_free(e);
    }
    buffer[run] = bench_now_ns() - t0;
    buffer_cpu[run] = thread_cpu_ns() - c0;
    dinput_iterator_free(plain);
    dinput_dataset_free(take);
    dinput_dataset_free(r);

    t0 = bench_now_ns();
    dinput_dist_iterator_t* fresh = NULL;
    BENCH_CHECK(dinput_dist_dataset_iterator(&fresh, again));
    step(fresh);
    first[run] = bench_now_ns() - t0;
    for (int64_t s = 1; s <= half; ++s) step(fresh);
    replay[run] = bench_now_ns() - t0;
    dinput_dist_iterator_free(fresh);
    dinput_dist_dataset_free(again);
  }
  const double r_ms = bench_min(restore, RUNS) / 1e6, b_ms = bench_min(buffer, RUNS) / 1e6,
               p_ms = bench_min(replay, RUNS) / 1e6, f_ms = bench_min(first, RUNS) / 1e6,
               rc_ms = bench_min(restore_cpu, RUNS) / 1e6,
               bc_ms = bench_min(buffer_cpu, RUNS) / 1e6,
               rp_ms = bench_min(restore_process_cpu, RUNS) / 1e6;
  printf(
      "{\"bench\":\"checkpoint.restore\",\"at_step\":%lld,\"state_bytes\":%zu,"
      "\"restore_ms\":%.2f,\"one_buffer_ms\":%.2f,\"replay_prefix_ms\":%.2f,"
      "\"first_step_ms\":%.2f,\"restore_over_buffer\":%.2f,\"restore_over_replay\":%.3f,"
      "\"restore_over_first_step\":%.2f,\"restore_cpu_ms\":%.2f,\"one_buffer_cpu_ms\":%.2f,"
      "\"restore_cpu_over_buffer_cpu\":%.2f,\"restore_process_cpu_ms\":%.2f,"
      "\"first_restore_ms\":%.2f,\"first_one_buffer_ms\":%.2f,\"map_files\":%s,\"pass\":%s}\n",
      (long long)half, at_half_size, r_ms, b_ms, p_ms, f_ms, r_ms / b_ms, r_ms / p_ms, r_ms / f_ms,
      rc_ms, bc_ms, rc_ms / bc_ms, rp_ms, restore[0] / 1e6, buffer[0] / 1e6,
      bench_bool(g_map_files), bench_bool(r_ms <= 2 * b_ms));
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = -1;
  printf("{\"bench\":\"checkpoint.machine\",\"load_average_1min\":%.2f}\n", load[0]);
  free(at_half);
  dinput_dist_dataset_free(ds);
  bench_record_files_free(&data, 1);
  return 0;
}
