/* Helpers shared by the examples: fail loudly on an error, print tensors like NumPy does. */
#ifndef DINPUT_EXAMPLE_UTIL_H
#define DINPUT_EXAMPLE_UTIL_H

#include <dinput.h>
#include <stdio.h>
#include <stdlib.h>

/* Every dinput call returns a status; the examples stop at the first failure and show it. */
static inline void check(dinput_status_t status) {
  if (status != DINPUT_OK) {
    fprintf(stderr, "%s: %s\n", dinput_status_name(status), dinput_last_error_message());
    exit(1);
  }
}

static inline void print_scalar(const dinput_tensor_t* t, int64_t i) {
  const void* p = dinput_tensor_data(t);
  switch (dinput_tensor_dtype(t)) {
    case DINPUT_INT64:
      printf("%lld", (long long)((const int64_t*)p)[i]);
      break;
    case DINPUT_INT32:
      printf("%d", ((const int32_t*)p)[i]);
      break;
    case DINPUT_FLOAT32:
      printf("%g", ((const float*)p)[i]);
      break;
    case DINPUT_FLOAT64:
      printf("%g", ((const double*)p)[i]);
      break;
    case DINPUT_BYTES: {
      const char* s;
      size_t n;
      check(dinput_tensor_string_view(&s, &n, t, i));
      printf("b'%.*s'", (int)n, s);
      break;
    }
    default:
      printf("?");
      break;
  }
}

/* Prints dimension `dim` onwards of the rows starting at scalar `offset`: [[1 2] [3 4]]. */
static inline void print_dims(const dinput_tensor_t* t, int dim, int64_t offset) {
  int rank = dinput_tensor_rank(t);
  if (dim == rank) {
    print_scalar(t, offset);
    return;
  }
  int64_t stride = 1;
  for (int d = dim + 1; d < rank; d++) stride *= dinput_tensor_dim(t, d);
  printf("[");
  for (int64_t i = 0; i < dinput_tensor_dim(t, dim); i++) {
    if (i) printf(" ");
    print_dims(t, dim + 1, offset + i * stride);
  }
  printf("]");
}

static inline void print_tensor(const dinput_tensor_t* t) { print_dims(t, 0, 0); }

/* Prints the first component of every replica: ([0 1], [2 3]) — like local_results. */
static inline void print_local_results(const dinput_per_replica_t* value, size_t component) {
  printf("(");
  for (int r = 0; r < dinput_per_replica_size(value); r++) {
    if (r) printf(", ");
    print_tensor(dinput_element_get(dinput_per_replica_get(value, r), component));
  }
  printf(")");
}

static inline void print_shape(const dinput_tensor_t* t) {
  printf("(");
  for (int d = 0; d < dinput_tensor_rank(t); d++)
    printf(d ? ", %lld" : "%lld", (long long)dinput_tensor_dim(t, d));
  printf(dinput_tensor_rank(t) == 1 ? ",)" : ")");
}

/* A CPU strategy of n replicas: CPU:0 .. CPU:n-1. */
static inline dinput_strategy_t* cpu_strategy(int n) {
  static const char* names[] = {"CPU:0", "CPU:1", "CPU:2", "CPU:3",
                                "CPU:4", "CPU:5", "CPU:6", "CPU:7"};
  dinput_strategy_t* s = NULL;
  check(dinput_strategy_new(&s, names, n > 8 ? 8 : n));
  return s;
}

/* from_tensors(([1.], [1.])): one element of two float32 [1] tensors. */
static inline dinput_dataset_t* features_and_labels(void) {
  const int64_t shape[1] = {1};
  const float one = 1.0f;
  dinput_tensor_t *f = NULL, *l = NULL;
  check(dinput_tensor_new(&f, DINPUT_FLOAT32, shape, 1, &one, sizeof one));
  check(dinput_tensor_new(&l, DINPUT_FLOAT32, shape, 1, &one, sizeof one));
  const dinput_tensor_t* parts[2] = {f, l};
  dinput_element_t* e = NULL;
  check(dinput_element_new(&e, parts, 2));
  dinput_dataset_t* ds = NULL;
  check(dinput_dataset_from_tensors(&ds, e));
  dinput_element_free(e);
  dinput_tensor_free(f);
  dinput_tensor_free(l);
  return ds;
}

/* A float32 tensor shaped like `like` whose values are a*x + b*y elementwise (y may be NULL). */
static inline dinput_tensor_t* affine(const dinput_tensor_t* x, float a, const dinput_tensor_t* y,
                                      float b) {
  int64_t n = dinput_tensor_num_elements(x);
  float* v = (float*)malloc(sizeof(float) * (size_t)(n ? n : 1));
  const float* px = (const float*)dinput_tensor_data(x);
  const float* py = y ? (const float*)dinput_tensor_data(y) : NULL;
  for (int64_t i = 0; i < n; i++) v[i] = a * px[i] + (py ? b * py[i] : 0.0f);
  dinput_tensor_t* out = NULL;
  check(dinput_tensor_new(&out, DINPUT_FLOAT32, dinput_tensor_shape(x), dinput_tensor_rank(x), v,
                          sizeof(float) * (size_t)n));
  free(v);
  return out;
}

/* A replica function for run() that returns its input's first component: the tutorial's
 * `strategy.run(lambda x: x, args=(x,))`. */
static inline dinput_status_t identity(dinput_element_t** out, const dinput_replica_context_t* ctx,
                                       const dinput_element_t* x, void* user_data) {
  (void)ctx;
  (void)user_data;
  const dinput_tensor_t* parts[1] = {dinput_element_get(x, 0)};
  return dinput_element_new(out, parts, 1);
}

#endif
