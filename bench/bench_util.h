/* Helpers shared by the benchmarks: timing, medians, checked calls, and a compiler barrier.
 * Header-only so that every benchmark stays a single C file that uses only dinput.h. */
#ifndef DINPUT_BENCH_UTIL_H
#define DINPUT_BENCH_UTIL_H

#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dinput.h"

/* Every measurement is repeated this many times and the median is reported: the machine is
 * shared, and the median ignores the runs that another process disturbed. */
#define BENCH_RUNS 5

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Median of n values (sorts them in place). */
static inline double bench_median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline double bench_min(const double* v, int n) {
  double m = v[0];
  for (int i = 1; i < n; ++i)
    if (v[i] < m) m = v[i];
  return m;
}

/* Makes the compiler believe that the memory behind p is read and written here, so that a
 * baseline's malloc/fill/free cannot be folded away while dinput's side (behind a shared
 * library call) obviously cannot be. */
static inline void bench_escape(const void* p) { __asm__ volatile("" : : "g"(p) : "memory"); }

/* Results are accumulated into this so that no read can be optimised out. */
__attribute__((unused)) static volatile int64_t bench_sink;

/* Aborts the benchmark with the library's message: a benchmark that measures a failing call
 * would report nonsense. */
static inline void bench_check(dinput_status_t s, const char* what) {
  if (s != DINPUT_OK) {
    fprintf(stderr, "%s failed: %s: %s\n", what, dinput_status_name(s),
            dinput_last_error_message());
    exit(2);
  }
}
#define BENCH_CHECK(call) bench_check((call), #call)

/* The next element of a plain iterator into *e: 1, or 0 at the end of data; any error ends
 * the benchmark (bench_check). */
static inline int bench_next(dinput_iterator_t* it, dinput_element_t** e) {
  dinput_status_t s = dinput_iterator_get_next(e, it);
  if (s == DINPUT_OUT_OF_RANGE) return 0;
  bench_check(s, "dinput_iterator_get_next");
  return 1;
}

/* The same summation for dinput's values and the baseline's, kept out of line so that both
 * sides run exactly this loop. */
__attribute__((noinline, unused)) static int64_t bench_sum_i64(const int64_t* v, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += v[i];
  return s;
}

/* One byte of each row of a [rows, row_bytes] uint8 matrix: "reads every delivered row" at a
 * cost that does not drown the per-step overheads being measured. */
__attribute__((noinline, unused)) static int64_t bench_sum_rows(const uint8_t* data, int64_t rows,
                                                                int64_t row_bytes) {
  int64_t s = 0;
  for (int64_t r = 0; r < rows; ++r) s += data[r * row_bytes];
  return s;
}

/* Every byte, 8 at a time (for the memory benchmark, which must touch whole batches). */
__attribute__((noinline, unused)) static int64_t bench_sum_bytes(const uint8_t* data, size_t n) {
  uint64_t s = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, data + i, 8);
    s += w;
  }
  for (; i < n; ++i) s += data[i];
  return (int64_t)s;
}

/* A strategy of n CPU replicas, "CPU:0" to "CPU:<n-1>". */
__attribute__((unused)) static dinput_strategy_t* bench_cpu_strategy(int n) {
  char(*names)[16] = malloc((size_t)n * sizeof *names);
  const char** ptrs = malloc((size_t)n * sizeof *ptrs);
  if (!names || !ptrs) exit(2);
  for (int i = 0; i < n; ++i) {
    snprintf(names[i], sizeof names[i], "CPU:%d", i);
    ptrs[i] = names[i];
  }
  dinput_strategy_t* s = NULL;
  BENCH_CHECK(dinput_strategy_new(&s, ptrs, n));
  free(ptrs);
  free(names);
  return s;
}

/* What one epoch of a distributed iterator over int64 values delivered: its steps, the
 * values of every replica's first component, their sum, and the wall time. */
typedef struct {
  int64_t steps, values, sum;
  double ns;
} bench_dist_epoch_t;

/* Runs one epoch of a new iterator over dd, summing component 0 of all `replicas` pieces of
 * every step (the callers check the sum and counts against what the dataset holds). Each
 * piece is read through the per-tensor accessors, or with read_infos each step through one
 * dinput_per_replica_tensor_infos call (as the Rust and Julia bindings read a step). */
__attribute__((unused)) static bench_dist_epoch_t bench_dist_epoch_i64(
    const dinput_dist_dataset_t* dd, int replicas, int read_infos) {
  bench_dist_epoch_t r = {0, 0, 0, 0.0};
  dinput_dist_iterator_t* it = NULL;
  BENCH_CHECK(dinput_dist_dataset_iterator(&it, dd));
  dinput_tensor_info_t* infos = (dinput_tensor_info_t*)calloc((size_t)replicas, sizeof *infos);
  if (!infos) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  double t0 = bench_now_ns();
  for (;;) {
    dinput_per_replica_t* pv = NULL;
    dinput_status_t s = dinput_dist_iterator_get_next(&pv, it);
    if (s == DINPUT_OUT_OF_RANGE) break;
    bench_check(s, "dinput_dist_iterator_get_next");
    if (read_infos) {
      size_t k = 0;
      BENCH_CHECK(dinput_per_replica_tensor_infos(&k, infos, (size_t)replicas, pv));
      if (k != (size_t)replicas) {
        fprintf(stderr, "dinput_per_replica_tensor_infos: %zu tensors, expected %d\n", k, replicas);
        exit(2);
      }
      for (int i = 0; i < replicas; ++i) {
        const int64_t rows = infos[i].shape[0];
        if (rows > 0) r.sum += bench_sum_i64((const int64_t*)infos[i].data, rows);
        r.values += rows;
      }
    } else {
      for (int i = 0; i < replicas; ++i) {
        const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(pv, i), 0);
        int64_t k = dinput_tensor_num_elements(t);
        if (k > 0) r.sum += bench_sum_i64((const int64_t*)dinput_tensor_data(t), k);
        r.values += k;
      }
    }
    ++r.steps;
    dinput_per_replica_free(pv);
  }
  r.ns = bench_now_ns() - t0;
  free(infos);
  dinput_dist_iterator_free(it);
  bench_sink = r.sum;
  return r;
}

static inline const char* bench_bool(int b) { return b ? "true" : "false"; }

/* A set of uncompressed record files DIR/rec-NN.tfrecord in W1's layout, for the benches that
 * write their own data: `files` lists the paths, `dir` is the folder (a new one under /tmp
 * unless the caller named one). */
typedef struct {
  char dir_template[64];
  const char* dir;
  int own_dir; /* dir was made here, and is removed by bench_record_files_free */
  int count;
  char (*paths)[4096];
  const char** files;
} bench_record_files_t;

/* Writes `count` files of `records` records of `bytes` pseudo-random bytes each into `dir`
 * (NULL: a new folder /tmp/dinput_<name>_XXXXXX). Returns 0, or 2 after printing why the
 * folder could not be made. */
static inline int bench_record_files_write(bench_record_files_t* set, const char* dir,
                                           const char* name, int count, int records, int bytes) {
  memset(set, 0, sizeof *set);
  if (!dir) {
    snprintf(set->dir_template, sizeof set->dir_template, "/tmp/dinput_%s_XXXXXX", name);
    dir = mkdtemp(set->dir_template);
    if (!dir) {
      perror("mkdtemp");
      return 2;
    }
    set->own_dir = 1;
  }
  set->dir = dir;
  set->count = count;
  set->paths = (char(*)[4096])calloc((size_t)count, sizeof *set->paths);
  set->files = (const char**)calloc((size_t)count, sizeof *set->files);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint8_t* buf = (uint8_t*)malloc((size_t)bytes);
  for (int f = 0; f < count; ++f) {
    dinput_record_writer_t* w = NULL;
    snprintf(set->paths[f], 4096, "%s/rec-%02d.tfrecord", dir, f);
    set->files[f] = set->paths[f];
    BENCH_CHECK(dinput_record_writer_open(&w, set->paths[f], NULL));
    for (int r = 0; r < records; ++r) {
      for (int i = 0; i < bytes; ++i) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        buf[i] = (uint8_t)s;
      }
      BENCH_CHECK(dinput_record_writer_write(w, buf, (size_t)bytes));
    }
    BENCH_CHECK(dinput_record_writer_close(w));
    dinput_record_writer_free(w);
  }
  free(buf);
  return 0;
}

/* Removes the files when `remove_files` (always those in a folder made here), and the folder
 * when it was made here; frees the lists. */
static inline void bench_record_files_free(bench_record_files_t* set, int remove_files) {
  if (remove_files || set->own_dir)
    for (int f = 0; f < set->count; ++f) unlink(set->paths[f]);
  if (set->own_dir) rmdir(set->dir);
  free(set->files);
  free(set->paths);
}

#endif /* DINPUT_BENCH_UTIL_H */
