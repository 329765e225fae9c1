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

static inline const char* bench_bool(int b) { return b ? "true" : "false"; }

#endif /* DINPUT_BENCH_UTIL_H */
