/* W1 dinput side: records(files).shuffle(10000, seed=1).batch(256) distributed over CPU:0 and
 * CPU:1 (default options), one full epoch; sums every byte of every record through
 * dinput_tensor_string_view. Prints one JSON object: seconds, records, bytes, checksum, statistics,
 * and consumer_cpu_s: the CPU time of the thread that calls get_next and sums the bytes.
 * W1_MAP_FILES=1 memory-maps the files (dinput_options_set_map_files) instead of the default
 * pread() into the library's buffers. W1_STATS=1 prints the iterator's statistics (JSON) on
 * stderr. */
#include <dinput.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                     \
  do {                                                                               \
    dinput_status_t st_ = (x);                                                       \
    if (st_ != DINPUT_OK) {                                                          \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, dinput_status_name(st_), \
              dinput_last_error_message());                                          \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static double clock_s(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: w1_dinput none|zstd FILE...\n");
    return 2;
  }
  dinput_compression_t comp =
      strcmp(argv[1], "zstd") == 0 ? DINPUT_COMPRESSION_ZSTD : DINPUT_COMPRESSION_NONE;
  const char* const* files = (const char* const*)(argv + 2);
  size_t nfiles = (size_t)(argc - 2);
  double t0 = now();
  double cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  dinput_dataset_t *rec, *shuf, *bat;
  const char* bs = getenv("W1_BUFFER_SIZE"); /* diagnosis only; default 0 */
  dinput_records_options_t* rec_opts;
  CHECK(dinput_records_options_new(&rec_opts));
  CHECK(dinput_records_options_set_compression(rec_opts, comp));
  CHECK(dinput_records_options_set_buffer_size(rec_opts, bs ? atoll(bs) : 0));
  CHECK(dinput_dataset_records(&rec, files, nfiles, rec_opts));
  dinput_records_options_free(rec_opts);
  const char* map_env = getenv("W1_MAP_FILES");
  int map_files = map_env && strcmp(map_env, "1") == 0;
  if (map_files) {
    dinput_options_t* opts;
    dinput_dataset_t* mapped;
    CHECK(dinput_options_new(&opts));
    CHECK(dinput_options_set_map_files(opts, 1));
    CHECK(dinput_dataset_with_options(&mapped, rec, opts));
    dinput_options_free(opts);
    dinput_dataset_free(rec);
    rec = mapped;
  }
  dinput_shuffle_options_t* shuf_opts;
  CHECK(dinput_shuffle_options_new(&shuf_opts));
  CHECK(dinput_shuffle_options_set_seed(shuf_opts, 1, 0));
  CHECK(dinput_shuffle_options_set_reshuffle_each_iteration(shuf_opts, 0));
  CHECK(dinput_dataset_shuffle(&shuf, rec, 10000, shuf_opts));
  dinput_shuffle_options_free(shuf_opts);
  CHECK(dinput_dataset_batch(&bat, shuf, 256, NULL));
  const char* devs[] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strat;
  CHECK(dinput_strategy_new(&strat, devs, 2));
  dinput_dist_dataset_t* dd;
  CHECK(dinput_strategy_distribute_dataset(&dd, strat, bat, NULL));
  dinput_dist_iterator_t* it;
  CHECK(dinput_dist_dataset_iterator(&it, dd));
  uint64_t sum = 0;
  int64_t nrec = 0, nbytes = 0, steps = 0;
  for (;;) {
    dinput_per_replica_t* pr;
    dinput_status_t st = dinput_dist_iterator_get_next(&pr, it);
    if (st == DINPUT_OUT_OF_RANGE) break;
    CHECK(st);
    steps++;
    for (int r = 0; r < dinput_per_replica_size(pr); r++) {
      const dinput_element_t* e = dinput_per_replica_get(pr, r);
      const dinput_tensor_t* t = dinput_element_get(e, 0);
      int64_t n = dinput_tensor_num_elements(t);
      for (int64_t i = 0; i < n; i++) {
        const char* p;
        size_t len;
        CHECK(dinput_tensor_string_view(&p, &len, t, i));
        const unsigned char* u = (const unsigned char*)p;
        uint64_t s8 = 0;
        size_t k = 0;
        for (; k + 8 <= len; k += 8) {
          uint64_t v;
          memcpy(&v, u + k, 8);
          s8 += v;
        }
        for (; k < len; k++) s8 += u[k];
        sum += s8;
        nrec++;
        nbytes += (int64_t)len;
      }
    }
    dinput_per_replica_free(pr);
  }
  double t1 = now();
  double consumer_cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  if (getenv("W1_STATS")) { /* diagnosis: the statistics document, on stderr */
    char* stats;
    CHECK(dinput_dist_iterator_statistics(&stats, it, 0));
    fprintf(stderr, "%s\n", stats);
    dinput_string_free(stats);
  }
  int64_t srec = -1, sbytes = -1;
  dinput_dist_iterator_statistic(&srec, it, "records");
  dinput_dist_iterator_statistic(&sbytes, it, "record_bytes");
  printf(
      "{\"seconds\":%.6f,\"consumer_cpu_s\":%.6f,\"records\":%lld,\"bytes\":%lld,\"steps\":%lld,"
      "\"checksum\":%llu,"
      "\"stat_records\":%lld,\"stat_record_bytes\":%lld,\"map_files\":%d,\"plan\":%s}\n",
      t1 - t0, consumer_cpu, (long long)nrec, (long long)nbytes, (long long)steps,
      (unsigned long long)sum, (long long)srec, (long long)sbytes, map_files,
      dinput_dist_dataset_plan(dd));
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dd);
  dinput_strategy_free(strat);
  dinput_dataset_free(bat);
  dinput_dataset_free(shuf);
  dinput_dataset_free(rec);
  return 0;
}
