/* Soak test: the W1 pipeline (record files, shuffle(10000), batch(256)) distributed over
 * in-process workers for a long time, with random worker restarts through the C API.
 *
 * Every attempt at an epoch builds, for each worker thread, a strategy, a distributed dataset
 * and an iterator anew over one shared pipeline. In a restarted attempt one random worker
 * "crashes" at a random step: it aborts the collective and frees its handles, the others
 * must fail promptly (no hang), and the epoch is run again from its start, as a job without
 * checkpoints does. In every completed epoch each record id must be delivered exactly once.
 * At the end it prints one JSON object: epochs completed and restarted, elements delivered,
 * duplicates and losses (both must be 0), RSS after the first epoch and at the end (the
 * drift), and open file descriptors before and after.
 *
 *   soak --dir DIR [--minutes 30] [--workers 4] [--replicas 2] [--files 32]
 *        [--records 8192] [--record-bytes 1024] [--restart-percent 30] [--seed 1]
 *
 * Files are written into DIR when missing; each record starts with its id (8 bytes, little
 * endian). Exit status 1 on any duplicate, loss, unexpected error or hang (a 120 s timeout
 * on every collective wait). bench/README.md has the figures. */
#define _POSIX_C_SOURCE 200809L
#include <dinput.h>

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char* dir;
  double minutes;
  int workers, replicas, files, restart_percent;
  int64_t records, record_bytes;
  unsigned seed;
} config_t;

typedef struct {
  int index;
  dinput_collective_t* collective;
  const dinput_dataset_t* dataset;
  const config_t* config;
  int64_t crash_at_step; /* -1: never */
  uint8_t* seen;         /* shared; one counter per record id, updated under seen_mu */
  pthread_mutex_t* seen_mu;
  int64_t delivered, steps;
  dinput_status_t end; /* OUT_OF_RANGE after a clean epoch */
  char error[512];
} worker_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE* f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int open_fds(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the directory stream itself */
}

static void die(const char* what) {
  fprintf(stderr, "soak: %s: %s: %s\n", what, dinput_status_name(dinput_last_error_code()),
          dinput_last_error_message());
  exit(2);
}

static void write_files(const config_t* c, char** paths) {
  char* record = calloc(1, (size_t)c->record_bytes);
  if (!record) die("calloc");
  for (int f = 0; f < c->files; f++) {
    struct stat st;
    if (stat(paths[f], &st) == 0) continue;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", paths[f]);
    dinput_record_writer_t* w;
    if (dinput_record_writer_open(&w, tmp, NULL) != DINPUT_OK) die("record_writer_open");
    for (int64_t r = 0; r < c->records; r++) {
      uint64_t id = (uint64_t)f * (uint64_t)c->records + (uint64_t)r;
      for (int b = 0; b < 8; b++) record[b] = (char)(id >> (8 * b));
      for (int64_t b = 8; b < c->record_bytes; b++) record[b] = (char)(id * 31 + (uint64_t)b);
      if (dinput_record_writer_write(w, record, (size_t)c->record_bytes) != DINPUT_OK)
        die("record_writer_write");
    }
    if (dinput_record_writer_close(w) != DINPUT_OK) die("record_writer_close");
    dinput_record_writer_free(w);
    if (rename(tmp, paths[f]) != 0) {
      perror("soak: rename");
      exit(2);
    }
  }
  free(record);
}

static void* run_worker(void* arg) {
  worker_t* w = arg;
  const config_t* c = w->config;
  dinput_strategy_t* strategy = NULL;
  dinput_dist_dataset_t* dist = NULL;
  dinput_dist_iterator_t* it = NULL;
  w->end = DINPUT_OK;
  if (dinput_strategy_new_multi_worker_cpu(&strategy, w->collective, w->index,
                                           c->workers * c->replicas) != DINPUT_OK ||
      dinput_strategy_distribute_dataset(&dist, strategy, w->dataset, NULL) != DINPUT_OK ||
      dinput_dist_dataset_iterator(&it, dist) != DINPUT_OK) {
    w->end = dinput_last_error_code();
    snprintf(w->error, sizeof w->error, "setup: %s", dinput_last_error_message());
    dinput_collective_abort(w->collective, DINPUT_ABORTED, "a worker failed to set up");
    goto done;
  }
  for (;;) {
    if (w->steps == w->crash_at_step) {
      /* The simulated crash: release the peers, drop everything. */
      dinput_collective_abort(w->collective, DINPUT_ABORTED, "worker restarted by the soak test");
      w->end = DINPUT_ABORTED;
      snprintf(w->error, sizeof w->error, "restarted at step %lld", (long long)w->steps);
      goto done;
    }
    dinput_per_replica_t* step;
    dinput_status_t s = dinput_dist_iterator_get_next(&step, it);
    if (s != DINPUT_OK) {
      w->end = s;
      if (s != DINPUT_OUT_OF_RANGE)
        snprintf(w->error, sizeof w->error, "%s", dinput_last_error_message());
      break;
    }
    w->steps++;
    for (int r = 0; r < dinput_per_replica_size(step); r++) {
      const dinput_tensor_t* batch = dinput_element_get(dinput_per_replica_get(step, r), 0);
      int64_t n = dinput_tensor_num_elements(batch);
      pthread_mutex_lock(w->seen_mu);
      for (int64_t i = 0; i < n; i++) {
        const char* bytes;
        size_t len;
        if (dinput_tensor_string_view(&bytes, &len, batch, i) != DINPUT_OK || len < 8)
          die("tensor_string_view");
        uint64_t id = 0;
        for (int b = 0; b < 8; b++) id |= (uint64_t)(uint8_t)bytes[b] << (8 * b);
        if (id < (uint64_t)(c->files * c->records) && w->seen[id] < 255) w->seen[id]++;
      }
      pthread_mutex_unlock(w->seen_mu);
      w->delivered += n;
    }
    dinput_per_replica_free(step);
  }
done:
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_strategy_free(strategy);
  return NULL;
}

int main(int argc, char** argv) {
  config_t c = {NULL, 30, 4, 2, 32, 30, 8192, 1024, 1};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--dir"))
      c.dir = argv[i + 1];
    else if (!strcmp(argv[i], "--minutes"))
      c.minutes = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--workers"))
      c.workers = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--replicas"))
      c.replicas = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--files"))
      c.files = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--records"))
      c.records = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--record-bytes"))
      c.record_bytes = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--restart-percent"))
      c.restart_percent = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed"))
      c.seed = (unsigned)atoi(argv[i + 1]);
    else {
      fprintf(stderr, "soak: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (!c.dir || c.workers < 1 || c.replicas < 1 || c.files < 1 || c.records < 1 ||
      c.record_bytes < 8) {
    fprintf(stderr,
            "usage: soak --dir DIR [--minutes M] [--workers W] [--replicas R] [--files F] "
            "[--records N] [--record-bytes B>=8] [--restart-percent P] [--seed S]\n");
    return 2;
  }
  char** paths = calloc((size_t)c.files, sizeof *paths);
  for (int f = 0; f < c.files; f++) {
    paths[f] = malloc(strlen(c.dir) + 32);
    sprintf(paths[f], "%s/soak-%03d.rec", c.dir, f);
  }
  write_files(&c, paths);

  /* records(files).shuffle(10000).batch(256): AUTO shards by FILE when files >= workers. */
  dinput_dataset_t *records, *shuffled, *dataset;
  dinput_shuffle_options_t* shuffle_options;
  if (dinput_shuffle_options_new(&shuffle_options) != DINPUT_OK ||
      dinput_shuffle_options_set_seed(shuffle_options, (int64_t)c.seed, 0) != DINPUT_OK)
    die("shuffle options");
  if (dinput_dataset_records(&records, (const char* const*)paths, (size_t)c.files, NULL) !=
          DINPUT_OK ||
      dinput_dataset_shuffle(&shuffled, records, 10000, shuffle_options) != DINPUT_OK ||
      dinput_dataset_batch(&dataset, shuffled, 256, NULL) != DINPUT_OK)
    die("building the pipeline");
  dinput_shuffle_options_free(shuffle_options);
  dinput_dataset_free(records);
  dinput_dataset_free(shuffled);

  const int64_t total = (int64_t)c.files * c.records;
  uint8_t* seen = malloc((size_t)total);
  pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
  worker_t* workers = calloc((size_t)c.workers, sizeof *workers);
  pthread_t* threads = calloc((size_t)c.workers, sizeof *threads);
  srand(c.seed);

  const int fds_before = open_fds();
  long rss_first = -1;
  int64_t epochs = 0, restarts = 0, delivered = 0, duplicates = 0, losses = 0, unexpected = 0;
  double slowest_abort_s = 0;
  const double start = now_s();
  while (now_s() - start < c.minutes * 60) {
    const int restart = rand() % 100 < c.restart_percent;
    const int victim = rand() % c.workers;
    /* Steps per worker are about total / (256 * workers); crash somewhere in the first 90%. */
    const int64_t steps_guess = total / 256 / c.workers;
    const int64_t crash_step = steps_guess > 1 ? rand() % (steps_guess * 9 / 10 + 1) : 0;
    dinput_collective_t* collective;
    if (dinput_collective_new_in_process(&collective, c.workers, 120000) != DINPUT_OK)
      die("collective");
    memset(seen, 0, (size_t)total);
    const double attempt_start = now_s();
    for (int w = 0; w < c.workers; w++) {
      workers[w] = (worker_t){.index = w,
                              .collective = collective,
                              .dataset = dataset,
                              .config = &c,
                              .crash_at_step = restart && w == victim ? crash_step : -1,
                              .seen = seen,
                              .seen_mu = &seen_mu};
      pthread_create(&threads[w], NULL, run_worker, &workers[w]);
    }
    for (int w = 0; w < c.workers; w++) pthread_join(threads[w], NULL);
    dinput_collective_free(collective);
    if (restart) {
      restarts++;
      /* Every peer of the crashed worker must have been released with the abort's code
       * (or have reached its end before the crash): never hung, never finished alone. */
      for (int w = 0; w < c.workers; w++) {
        if (w == victim || workers[w].end == DINPUT_ABORTED ||
            workers[w].end == DINPUT_OUT_OF_RANGE)
          continue;
        fprintf(stderr, "soak: worker %d, peer of restarted worker %d, ended with %s: %s\n", w,
                victim, dinput_status_name(workers[w].end), workers[w].error);
        unexpected++;
      }
      double took = now_s() - attempt_start;
      if (took > slowest_abort_s) slowest_abort_s = took;
      continue;
    }
    for (int w = 0; w < c.workers; w++) {
      if (workers[w].end != DINPUT_OUT_OF_RANGE) {
        fprintf(stderr, "soak: worker %d ended with %s: %s\n", w,
                dinput_status_name(workers[w].end), workers[w].error);
        unexpected++;
      }
      delivered += workers[w].delivered;
    }
    for (int64_t id = 0; id < total; id++) {
      if (seen[id] == 0)
        losses++;
      else if (seen[id] > 1)
        duplicates += seen[id] - 1;
    }
    epochs++;
    if (rss_first < 0) rss_first = rss_kib();
  }
  const long rss_end = rss_kib();
  const int fds_after = open_fds();
  printf(
      "{\"bench\":\"soak\",\"minutes\":%.1f,\"workers\":%d,\"replicas_per_worker\":%d,\"files\":%d,"
      "\"records\":%lld,\"epochs_completed\":%lld,\"epochs_restarted\":%lld,\"elements_delivered\":"
      "%lld,"
      "\"duplicates\":%lld,\"losses\":%lld,\"unexpected_errors\":%lld,\"rss_kib_after_first_"
      "epoch\":%ld,"
      "\"rss_kib_end\":%ld,\"rss_drift_kib\":%ld,\"open_fds_before\":%d,\"open_fds_after\":%d,"
      "\"slowest_restarted_attempt_s\":%.2f,\"pass\":%s}\n",
      (now_s() - start) / 60, c.workers, c.replicas, c.files, (long long)total, (long long)epochs,
      (long long)restarts, (long long)delivered, (long long)duplicates, (long long)losses,
      (long long)unexpected, rss_first, rss_end, rss_first < 0 ? 0 : rss_end - rss_first,
      fds_before, fds_after, slowest_abort_s,
      duplicates == 0 && losses == 0 && unexpected == 0 && fds_after == fds_before ? "true"
                                                                                   : "false");
  dinput_dataset_free(dataset);
  for (int f = 0; f < c.files; f++) free(paths[f]);
  free(paths);
  free(seen);
  free(workers);
  free(threads);
  return duplicates == 0 && losses == 0 && unexpected == 0 && fds_after == fds_before ? 0 : 1;
}
