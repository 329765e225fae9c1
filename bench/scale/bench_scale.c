/* bench_scale — how W1 scales: throughput and peak memory as one parameter grows.
 *
 * W1 is records(files).shuffle(B, seed 1).batch(256) distributed over R CPU replicas of one
 * worker, one epoch, every byte of every record read (summed in 8-byte words, as
 * bench/w1/w1_dinput.c does). Three curves, each point in a process of its own (so that its
 * peak resident memory, getrusage's ru_maxrss read through wait4, is that point's alone):
 *
 *  scale.files     8, 32 and 128 files, records of 1 KiB and of 64 KiB, the same 256 MiB of
 *                  payload at every point (so the files hold 1/8, 1/32 or 1/128 of it); B =
 *                  10,000, R = 2.
 *  scale.replicas  W1's own data (32 files of 8,192 records of 1 KiB), R = 1, 2, 4, ..., 64
 *                  with the global batch kept at 256 rows (each replica gets 256 / R); B =
 *                  10,000.
 *  scale.shuffle   B = 10^3, 10^4, 10^5 and 10^6 on 64 files of 32,768 records of 1 KiB
 *                  (2 GiB, twice the largest buffer, so that every buffer runs full); R = 2.
 *
 * Each point runs EPOCHS epochs (default 2; the files are in the page cache, written just
 * before and synced) and reports its best epoch's time, with the whole process's user and
 * system CPU time, minor page faults and peak RSS.
 * The data of a curve are written into DIR, then removed.
 *
 * Usage: bench_scale [--quick] [--only files|replicas|shuffle] [--epochs N] [DIR]
 *          --quick: tiny sizes (the figures mean nothing: the CTest smoke test), every point
 *          DIR:     where the files go (default: a new folder under /tmp, removed after)
 * Output: one JSON object per point on stdout, then "scale.machine" with the load average.
 * The point's process is this program run as
 *          bench_scale --child DIR FILES SHUFFLE BATCH REPLICAS EPOCHS
 */
#include "../bench_util.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

static int g_quick = 0, g_epochs = 2;

/* ---- one point, in the child process ---- */

typedef struct {
  double seconds;
  int64_t records, bytes, steps;
  uint64_t checksum;
} epoch_result_t;

static epoch_result_t run_epoch(const dinput_dist_dataset_t* dd) {
  epoch_result_t r = {0, 0, 0, 0, 0};
  dinput_dist_iterator_t* it = NULL;
  const double t0 = bench_now_ns();
  BENCH_CHECK(dinput_dist_dataset_iterator(&it, dd));
  for (;;) {
    dinput_per_replica_t* pr = NULL;
    dinput_status_t st = dinput_dist_iterator_get_next(&pr, it);
    if (st == DINPUT_OUT_OF_RANGE) break;
    BENCH_CHECK(st);
    ++r.steps;
    for (int k = 0; k < dinput_per_replica_size(pr); ++k) {
      const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(pr, k), 0);
      const int64_t n = dinput_tensor_num_elements(t);
      for (int64_t i = 0; i < n; ++i) {
        const char* p = NULL;
        size_t len = 0;
        BENCH_CHECK(dinput_tensor_string_view(&p, &len, t, i));
        r.checksum += (uint64_t)bench_sum_bytes((const uint8_t*)p, len);
        ++r.records;
        r.bytes += (int64_t)len;
      }
    }
    dinput_per_replica_free(pr);
  }
  r.seconds = (bench_now_ns() - t0) / 1e9;
  dinput_dist_iterator_free(it);
  return r;
}

static int child_main(char** argv) {
  const char* dir = argv[0];
  const int files = atoi(argv[1]), replicas = atoi(argv[4]), epochs = atoi(argv[5]);
  const int64_t shuffle = atoll(argv[2]), batch = atoll(argv[3]);
  char(*paths)[4096] = calloc((size_t)files, sizeof *paths);
  const char** names = calloc((size_t)files, sizeof *names);
  if (!paths || !names) return 2;
  for (int f = 0; f < files; ++f) {
    snprintf(paths[f], sizeof paths[f], "%s/rec-%02d.tfrecord", dir, f);
    names[f] = paths[f];
  }
  dinput_dataset_t *rec = NULL, *shuf = NULL, *bat = NULL;
  dinput_shuffle_options_t* so = NULL;
  BENCH_CHECK(dinput_dataset_records(&rec, names, (size_t)files, NULL));
  BENCH_CHECK(dinput_shuffle_options_new(&so));
  BENCH_CHECK(dinput_shuffle_options_set_seed(so, 1, 0));
  BENCH_CHECK(dinput_dataset_shuffle(&shuf, rec, shuffle, so));
  BENCH_CHECK(dinput_dataset_batch(&bat, shuf, batch, NULL));
  dinput_strategy_t* strategy = bench_cpu_strategy(replicas);
  dinput_dist_dataset_t* dd = NULL;
  BENCH_CHECK(dinput_strategy_distribute_dataset(&dd, strategy, bat, NULL));
  epoch_result_t best = {1e30, 0, 0, 0, 0};
  for (int e = 0; e < epochs; ++e) {
    epoch_result_t r = run_epoch(dd);
    if (e > 0 && (r.records != best.records || r.checksum != best.checksum)) {
      fprintf(stderr, "bench_scale: epoch %d delivered other records than epoch 0\n", e);
      return 2;
    }
    if (r.seconds < best.seconds) best = r;
  }
  printf(
      "{\"seconds\":%.6f,\"records\":%lld,\"bytes\":%lld,\"steps\":%lld,\"checksum\":%llu,"
      "\"plan\":%s}\n",
      best.seconds, (long long)best.records, (long long)best.bytes, (long long)best.steps,
      (unsigned long long)best.checksum, dinput_dist_dataset_plan(dd));
  dinput_dist_dataset_free(dd);
  dinput_strategy_free(strategy);
  dinput_dataset_free(bat);
  dinput_dataset_free(shuf);
  dinput_dataset_free(rec);
  dinput_shuffle_options_free(so);
  free(names);
  free(paths);
  return 0;
}

/* ---- the parent: data, one child per point, the report ---- */

/* Runs one point in a child process: its JSON line into `line`, its rusage into `ru`; exits
 * when the child fails. */
static void run_point(const char* dir, int files, int64_t shuffle, int64_t batch, int replicas,
                      char* line, size_t cap, struct rusage* ru) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    exit(2);
  }
  char a_files[32], a_shuffle[32], a_batch[32], a_replicas[32], a_epochs[32];
  snprintf(a_files, sizeof a_files, "%d", files);
  snprintf(a_shuffle, sizeof a_shuffle, "%lld", (long long)shuffle);
  snprintf(a_batch, sizeof a_batch, "%lld", (long long)batch);
  snprintf(a_replicas, sizeof a_replicas, "%d", replicas);
  snprintf(a_epochs, sizeof a_epochs, "%d", g_epochs);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    char* const args[] = {"bench_scale", "--child",  (char*)dir, a_files, a_shuffle,
                          a_batch,       a_replicas, a_epochs,   NULL};
    execv("/proc/self/exe", args);
    perror("execv /proc/self/exe");
    _exit(127);
  }
  close(fds[1]);
  size_t used = 0;
  for (;;) {
    ssize_t n = read(fds[0], line + used, cap - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += (size_t)n;
    if (used == cap - 1) break;
  }
  line[used] = '\0';
  close(fds[0]);
  int status = 0;
  if (wait4(pid, &status, 0, ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr,
            "bench_scale: the point (%d files, shuffle %lld, batch %lld, %d replicas) "
            "failed\n",
            files, (long long)shuffle, (long long)batch, replicas);
    exit(2);
  }
  char* nl = strchr(line, '\n');
  if (nl) *nl = '\0';
}

/* A number field of the child's line. */
static double num(const char* line, const char* name) {
  char key[64];
  snprintf(key, sizeof key, "\"%s\":", name);
  const char* p = strstr(line, key);
  return p ? strtod(p + strlen(key), NULL) : -1;
}

static void report(const char* curve, const char* dir, int files, int record_bytes, int64_t shuffle,
                   int64_t batch, int replicas) {
  char line[8192];
  struct rusage ru;
  run_point(dir, files, shuffle, batch, replicas, line, sizeof line, &ru);
  const double seconds = num(line, "seconds"), bytes = num(line, "bytes");
  const double records = num(line, "records");
  const double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
  const double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  const char* plan = strstr(line, "\"plan\":");
  printf(
      "{\"bench\":\"%s\",\"files\":%d,\"record_bytes\":%d,\"shuffle\":%lld,\"batch\":%lld,"
      "\"replicas\":%d,\"records\":%.0f,\"bytes\":%.0f,\"seconds\":%.4f,\"mb_s\":%.1f,"
      "\"records_per_s\":%.0f,\"epochs\":%d,\"user_s\":%.3f,\"sys_s\":%.3f,\"minor_faults\":%ld,"
      "\"peak_rss_mib\":%.1f,%s\n",
      curve, files, record_bytes, (long long)shuffle, (long long)batch, replicas, records, bytes,
      seconds, bytes / seconds / 1e6, records / seconds, g_epochs, user, sys, ru.ru_minflt,
      (double)ru.ru_maxrss / 1024.0, plan ? plan : "\"plan\":null}");
  fflush(stdout);
}

/* Writes `files` files of `records` records of `bytes` bytes into a new folder under `base`. */
static void write_set(bench_record_files_t* set, const char* base, int files, int records,
                      int bytes) {
  static char dirs[4][4096]; /* set->dir points here: at most one set exists at a time */
  static int serial = 0;
  char* dir = dirs[serial % 4];
  snprintf(dir, sizeof dirs[0], "%s/set%d", base, serial++);
  if (mkdir(dir, 0755) != 0) {
    perror(dir);
    exit(2);
  }
  if (bench_record_files_write(set, dir, "scale", files, records, bytes)) exit(2);
  /* The kernel's write-back of what was just written must not run during the epochs. */
  sync();
}

static void remove_set(bench_record_files_t* set) {
  const char* dir = set->dir;
  bench_record_files_free(set, 1);
  rmdir(dir);
}

static void curve_files(const char* base) {
  static const int kFiles[] = {8, 32, 128};
  static const int kRecordBytes[] = {1024, 65536};
  const int64_t total = g_quick ? ((int64_t)8 << 20) : ((int64_t)256 << 20);
  for (size_t b = 0; b < 2; ++b)
    for (size_t f = 0; f < 3; ++f) {
      const int records = (int)(total / kRecordBytes[b] / kFiles[f]);
      bench_record_files_t set;
      write_set(&set, base, kFiles[f], records, kRecordBytes[b]);
      report("scale.files", set.dir, kFiles[f], kRecordBytes[b], g_quick ? 1000 : 10000,
             g_quick ? 64 : 256, 2);
      remove_set(&set);
    }
}

static void curve_replicas(const char* base) {
  bench_record_files_t set;
  write_set(&set, base, 32, g_quick ? 256 : 8192, 1024);
  for (int r = 1; r <= 64; r *= 2)
    report("scale.replicas", set.dir, 32, 1024, g_quick ? 1000 : 10000, g_quick ? 64 : 256, r);
  remove_set(&set);
}

static void curve_shuffle(const char* base) {
  bench_record_files_t set;
  /* --quick: 64 files of 128 records (8,192 in all), buffers of 10 to 10^4. */
  write_set(&set, base, 64, g_quick ? 128 : 32768, g_quick ? 64 : 1024);
  for (int64_t b = g_quick ? 10 : 1000; b <= (g_quick ? 10000 : 1000000); b *= 10)
    report("scale.shuffle", set.dir, 64, g_quick ? 64 : 1024, b, g_quick ? 64 : 256, 2);
  remove_set(&set);
}

int main(int argc, char** argv) {
  if (argc == 8 && strcmp(argv[1], "--child") == 0) return child_main(argv + 2);
  const char *dir_arg = NULL, *only = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      g_quick = 1;
      g_epochs = 1;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) {
      g_epochs = atoi(argv[++i]);
      if (g_epochs < 1) g_epochs = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: %s [--quick] [--only files|replicas|shuffle] [--epochs N] [DIR]\n",
              argv[0]);
      return 2;
    } else {
      dir_arg = argv[i];
    }
  }
  char tmpl[] = "/tmp/dinput_scale_XXXXXX";
  const char* base = dir_arg ? dir_arg : mkdtemp(tmpl);
  if (!base) {
    perror("mkdtemp");
    return 2;
  }
  double load[3] = {-1, -1, -1};
  getloadavg(load, 3);
  const double load_before = load[0];
  if (!only || strcmp(only, "files") == 0) curve_files(base);
  if (!only || strcmp(only, "replicas") == 0) curve_replicas(base);
  if (!only || strcmp(only, "shuffle") == 0) curve_shuffle(base);
  if (!dir_arg) rmdir(base);
  getloadavg(load, 3);
  printf(
      "{\"bench\":\"scale.machine\",\"nproc\":%ld,\"loadavg_before\":%.2f,"
      "\"loadavg_after\":%.2f}\n",
      sysconf(_SC_NPROCESSORS_ONLN), load_before, load[0]);
  return 0;
}
