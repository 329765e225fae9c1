/* Tensors, elements, specs and DLPack export through the C API. */
#define _POSIX_C_SOURCE 200809L

#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dinput.h"

static void test_new_and_accessors(void) {
  int32_t values[6] = {1, 2, 3, 4, 5, 6};
  int32_t back[6] = {0};
  int64_t shape[2] = {2, 3};
  dinput_tensor_t* t = NULL;
  const int64_t* s;
  CHECK_OK(dinput_tensor_new(&t, DINPUT_INT32, shape, 2, values, sizeof values));
  CHECK(t != NULL);
  CHECK(dinput_tensor_dtype(t) == DINPUT_INT32);
  CHECK(dinput_tensor_rank(t) == 2);
  s = dinput_tensor_shape(t);
  CHECK(s != NULL && s[0] == 2 && s[1] == 3);
  CHECK(dinput_tensor_dim(t, 0) == 2);
  CHECK(dinput_tensor_dim(t, 1) == 3);
  CHECK(dinput_tensor_dim(t, 2) == -1);
  CHECK(dinput_tensor_dim(t, -1) == -1);
  CHECK(dinput_tensor_num_elements(t) == 6);
  CHECK(dinput_tensor_byte_size(t) == sizeof values);
  /* The data was copied: changing the source afterwards does not change the tensor. */
  CHECK(dinput_tensor_data(t) != (const void*)values);
  values[0] = 100;
  CHECK(((const int32_t*)dinput_tensor_data(t))[0] == 1);
  CHECK_OK(dinput_tensor_copy_to(back, sizeof back, t, DINPUT_INT32));
  CHECK(back[0] == 1 && back[5] == 6);
  dinput_tensor_free(t);
}

static void test_scalars_zeros_and_empty(void) {
  double pi = 3.25;
  double got = 0;
  int64_t shape[2] = {3, 0};
  float zeros[4] = {1, 1, 1, 1};
  int64_t four[1] = {4};
  dinput_tensor_t* t = NULL;

  CHECK_OK(dinput_tensor_new(&t, DINPUT_FLOAT64, NULL, 0, &pi, sizeof pi));
  CHECK(dinput_tensor_rank(t) == 0);
  CHECK(dinput_tensor_num_elements(t) == 1);
  CHECK_OK(dinput_tensor_copy_to(&got, sizeof got, t, DINPUT_FLOAT64));
  CHECK(got == 3.25);
  dinput_tensor_free(t);

  /* data NULL: a tensor of zeros, whatever nbytes says. */
  CHECK_OK(dinput_tensor_new(&t, DINPUT_FLOAT32, four, 1, NULL, 12345));
  CHECK_OK(dinput_tensor_copy_to(zeros, sizeof zeros, t, DINPUT_FLOAT32));
  CHECK(zeros[0] == 0.0f && zeros[3] == 0.0f);
  dinput_tensor_free(t);

  /* No elements: nbytes 0, and copy_to accepts a NULL destination of 0 bytes. */
  CHECK_OK(dinput_tensor_new(&t, DINPUT_UINT8, shape, 2, NULL, 0));
  CHECK(dinput_tensor_num_elements(t) == 0);
  CHECK(dinput_tensor_byte_size(t) == 0);
  CHECK_OK(dinput_tensor_copy_to(NULL, 0, t, DINPUT_UINT8));
  dinput_tensor_free(t);
}

static void test_new_rejects_bad_input(void) {
  int64_t shape[2] = {2, 3};
  int64_t negative[2] = {2, -1};
  int32_t values[6] = {0};
  dinput_tensor_t* t = NULL;

  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_INT32, shape, 2, values, 20), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("24");
  CHECK_MSG("20");
  CHECK(t == NULL);
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_BYTES, shape, 2, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_tensor_new_bytes");
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_DTYPE_INVALID, shape, 2, NULL, 0),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_INT32, negative, 2, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("negative");
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_INT32, shape, -1, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_INT32, NULL, 2, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'shape'");
  CHECK(t == NULL);
  {
    /* A bool byte other than 0 or 1 would read as neither true nor false. */
    const unsigned char flags[2] = {1, 7};
    const int64_t two[1] = {2};
    CHECK_STATUS(dinput_tensor_new(&t, DINPUT_BOOL, two, 1, flags, 2), DINPUT_INVALID_ARGUMENT);
    CHECK(strstr(dinput_last_error_message(), "bool element 1 is 7") != NULL);
  }
}

/* A shape whose byte size does not fit in size_t (2^61 int64 values = 2^64 bytes) cannot be
 * a tensor: it must fail instead of wrapping to a tiny buffer behind a huge shape. */
static void test_new_rejects_overflowing_sizes(void) {
  int64_t huge[1] = {(int64_t)1 << 61};
  dinput_tensor_t* t = NULL;
  dinput_status_t st = dinput_tensor_new(&t, DINPUT_INT64, huge, 1, NULL, 0);
  CHECK(st == DINPUT_INVALID_ARGUMENT || st == DINPUT_RESOURCE_EXHAUSTED);
  CHECK(t == NULL);
  if (t) {
    fprintf(stderr, "  got a tensor of %" PRId64 " elements and %zu bytes\n",
            dinput_tensor_num_elements(t), dinput_tensor_byte_size(t));
    dinput_tensor_free(t);
  }
}

static void test_bytes_tensors(void) {
  const char* words[3] = {"alpha", "", "c"};
  const char* raw[2] = {"a\0b", "xyz"};
  size_t lengths[2] = {3, 2};
  int64_t shape[1] = {3};
  int64_t two[1] = {2};
  int64_t zero[1] = {0};
  const char* null_words[2] = {"ok", NULL};
  dinput_tensor_t* t = NULL;
  const char* s = NULL;
  size_t len = 99;
  int64_t ints[1];

  CHECK_OK(dinput_tensor_new_bytes(&t, shape, 1, words, NULL));
  CHECK(dinput_tensor_dtype(t) == DINPUT_BYTES);
  CHECK(dinput_tensor_num_elements(t) == 3);
  CHECK(dinput_tensor_byte_size(t) == 6);
  CHECK(dinput_tensor_data(t) == NULL);
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 0));
  CHECK(len == 5 && memcmp(s, "alpha", 5) == 0);
  CHECK(s != words[0]); /* copied */
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 1));
  CHECK(len == 0);
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 2));
  CHECK(len == 1 && s[0] == 'c');

  /* Out-of-range indexes are argument errors (never OUT_OF_RANGE, which is end of data),
   * naming the index, and leave the outputs cleared. */
  s = "x";
  CHECK_STATUS(dinput_tensor_string_view(&s, &len, t, 3), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("3");
  CHECK(s == NULL && len == 0);
  CHECK_STATUS(dinput_tensor_string_view(&s, &len, t, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("-1");
  /* A successful read (the path that skips the error bookkeeping) keeps the last error, as
   * every successful call does, and reads the last string too. */
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 2));
  CHECK(len == 1 && s[0] == 'c');
  CHECK(dinput_last_error_code() == DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_tensor_string_view: index -1");
  /* Bytes tensors are not read with copy_to, nor exported to DLPack. */
  CHECK_STATUS(dinput_tensor_copy_to(ints, sizeof ints, t, DINPUT_BYTES), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_tensor_string_view");
  dinput_tensor_free(t);

  /* Explicit lengths keep embedded NULs and cut longer strings. */
  CHECK_OK(dinput_tensor_new_bytes(&t, two, 1, raw, lengths));
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 0));
  CHECK(len == 3 && memcmp(s, "a\0b", 3) == 0);
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 1));
  CHECK(len == 2 && memcmp(s, "xy", 2) == 0);
  CHECK(dinput_tensor_byte_size(t) == 5);
  dinput_tensor_free(t);

  /* A scalar string. */
  CHECK_OK(dinput_tensor_new_bytes(&t, NULL, 0, words, NULL));
  CHECK(dinput_tensor_rank(t) == 0);
  CHECK_OK(dinput_tensor_string_view(&s, &len, t, 0));
  CHECK(len == 5);
  dinput_tensor_free(t);

  t = NULL;
  CHECK_STATUS(dinput_tensor_new_bytes(&t, two, 1, null_words, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("strings[1]");
  CHECK(t == NULL);
  CHECK_OK(dinput_tensor_new_bytes(&t, zero, 1, NULL, NULL)); /* nothing to read */
  CHECK(dinput_tensor_num_elements(t) == 0);
  dinput_tensor_free(t);
}

/* String i of the read-ahead test: its length (empty, a line, around a cache line, around the
 * 4 KiB that dinput_tensor_string_view reads ahead, longer) and its bytes. */
enum { kAheadStrings = 41 };
static size_t ahead_length(int i) {
  static const size_t lengths[] = {0, 1, 63, 64, 65, 4095, 4096, 4097, 10000, 3};
  return lengths[i % 10];
}
static char ahead_byte(int i, size_t k) { return (char)('a' + (i * 7 + (int)k) % 26); }
static int ahead_string_ok(const char* s, size_t len, int i) {
  if (len != ahead_length(i)) return 0;
  for (size_t k = 0; k < len; k++)
    if (s[k] != ahead_byte(i, k)) return 0;
  return 1;
}

/* dinput_tensor_string_view reads the strings after the one asked for ahead of time. Every
 * order of reading, and the rows of a batch split among replicas (views into a larger
 * tensor, whose read-ahead must stop at the view's end), gives each string's own bytes. */
static void test_strings_read_ahead(void) {
  char* strings[kAheadStrings];
  size_t lengths[kAheadStrings];
  for (int i = 0; i < kAheadStrings; i++) {
    lengths[i] = ahead_length(i);
    strings[i] = malloc(lengths[i] + 1);
    for (size_t k = 0; k < lengths[i]; k++) strings[i][k] = ahead_byte(i, k);
  }
  int64_t shape[1] = {kAheadStrings};
  dinput_tensor_t* t = NULL;
  CHECK_OK(dinput_tensor_new_bytes(&t, shape, 1, (const char* const*)strings, lengths));
  const char* s;
  size_t len;
  int good = 0;
  for (int i = 0; i < kAheadStrings; i++) /* in order */
    good += dinput_tensor_string_view(&s, &len, t, i) == DINPUT_OK && ahead_string_ok(s, len, i);
  for (int i = kAheadStrings - 1; i >= 0; i--) /* backwards */
    good += dinput_tensor_string_view(&s, &len, t, i) == DINPUT_OK && ahead_string_ok(s, len, i);
  for (int i = 0; i < kAheadStrings; i++) { /* jumping about */
    int j = (i * 17) % kAheadStrings;
    good += dinput_tensor_string_view(&s, &len, t, j) == DINPUT_OK && ahead_string_ok(s, len, j);
  }
  CHECK(good == 3 * kAheadStrings);

  /* Batches of 13 over 3 replicas: each replica's rows are a view into the batch. */
  const dinput_tensor_t* parts[1] = {t};
  dinput_element_t* e;
  dinput_dataset_t *slices, *batched;
  CHECK_OK(dinput_element_new(&e, parts, 1));
  CHECK_OK(dinput_dataset_from_tensor_slices(&slices, e));
  CHECK_OK(dinput_dataset_batch(&batched, slices, 13, NULL));
  const char* devices[] = {"CPU:0", "CPU:1", "CPU:2"};
  dinput_strategy_t* strategy;
  dinput_dist_dataset_t* dd;
  dinput_dist_iterator_t* it;
  CHECK_OK(dinput_strategy_new(&strategy, devices, 3));
  CHECK_OK(dinput_strategy_distribute_dataset(&dd, strategy, batched, NULL));
  CHECK_OK(dinput_dist_dataset_iterator(&it, dd));
  int next = 0, read = 0;
  dinput_per_replica_t* pr;
  dinput_status_t st;
  while ((st = dinput_dist_iterator_get_next(&pr, it)) == DINPUT_OK) {
    for (int r = 0; r < dinput_per_replica_size(pr); r++) {
      const dinput_tensor_t* rows = dinput_element_get(dinput_per_replica_get(pr, r), 0);
      for (int64_t i = 0; i < dinput_tensor_num_elements(rows); i++, next++)
        read += dinput_tensor_string_view(&s, &len, rows, i) == DINPUT_OK &&
                ahead_string_ok(s, len, next);
    }
    dinput_per_replica_free(pr);
  }
  CHECK(st == DINPUT_OUT_OF_RANGE);
  CHECK(next == kAheadStrings && read == kAheadStrings);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dd);
  dinput_strategy_free(strategy);
  dinput_dataset_free(batched);
  dinput_dataset_free(slices);
  dinput_element_free(e);
  dinput_tensor_free(t);
  for (int i = 0; i < kAheadStrings; i++) free(strings[i]);
}

static void test_string_access_on_numbers(void) {
  int64_t v[2] = {1, 2};
  dinput_tensor_t* t = make_int64(v, 2, 1);
  const char* s = NULL;
  size_t len = 0;
  CHECK_STATUS(dinput_tensor_string_view(&s, &len, t, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("int64");
  dinput_tensor_free(t);
}

static void test_copy_to_checks(void) {
  int64_t v[3] = {7, 8, 9};
  int64_t dst[3] = {0};
  float f[3];
  dinput_tensor_t* t = make_int64(v, 3, 1);
  CHECK_OK(dinput_tensor_copy_to(dst, sizeof dst, t, DINPUT_INT64));
  CHECK(dst[0] == 7 && dst[2] == 9);
  /* Wrong dtype: both dtypes named, nothing written. */
  f[0] = -1.0f;
  CHECK_STATUS(dinput_tensor_copy_to(f, sizeof f * 2, t, DINPUT_FLOAT32), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("int64");
  CHECK_MSG("float32");
  CHECK(f[0] == -1.0f);
  /* Too small a destination: the sizes are named. */
  CHECK_STATUS(dinput_tensor_copy_to(dst, 16, t, DINPUT_INT64), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("24");
  CHECK_MSG("16");
  CHECK_STATUS(dinput_tensor_copy_to(NULL, 24, t, DINPUT_INT64), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  dinput_tensor_free(t);
}

/* A ref is a second handle to the same data, valid after the first is freed. */
static void test_ref(void) {
  int64_t v[2] = {41, 42};
  dinput_tensor_t* t = make_int64(v, 2, 1);
  dinput_tensor_t* r = NULL;
  const void* data = dinput_tensor_data(t);
  CHECK_OK(dinput_tensor_ref(&r, t));
  CHECK(r != t);
  CHECK(dinput_tensor_data(r) == data);
  dinput_tensor_free(t);
  CHECK(((const int64_t*)dinput_tensor_data(r))[1] == 42);
  CHECK(dinput_tensor_dim(r, 0) == 2);
  dinput_tensor_free(r);
}

static void test_elements(void) {
  int64_t v[2] = {1, 2};
  int64_t back[2];
  double d = 0.5;
  dinput_tensor_t* parts[2];
  dinput_tensor_t* with_null[2];
  dinput_element_t* e = NULL;
  const dinput_tensor_t* got;

  parts[0] = make_int64(v, 2, 1);
  CHECK_OK(dinput_tensor_new(&parts[1], DINPUT_FLOAT64, NULL, 0, &d, sizeof d));
  CHECK_OK(dinput_element_new(&e, (const dinput_tensor_t* const*)parts, 2));
  /* The element holds its own references: the caller's tensors can go. */
  dinput_tensor_free(parts[0]);
  dinput_tensor_free(parts[1]);
  CHECK(dinput_element_size(e) == 2);
  got = dinput_element_get(e, 0);
  CHECK(got != NULL && read_int64(e, 0, back, 2) == 2 && back[1] == 2);
  got = dinput_element_get(e, 1);
  CHECK(got != NULL && dinput_tensor_dtype(got) == DINPUT_FLOAT64);
  CHECK(dinput_element_get(e, 2) == NULL);
  dinput_element_free(e);

  with_null[0] = make_int64(v, 2, 1);
  with_null[1] = NULL;
  e = NULL;
  CHECK_STATUS(dinput_element_new(&e, (const dinput_tensor_t* const*)with_null, 2),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("tensors[1]");
  CHECK(e == NULL);
  dinput_tensor_free(with_null[0]);

  CHECK_OK(dinput_element_new(&e, NULL, 0));
  CHECK(dinput_element_size(e) == 0);
  dinput_element_free(e);
}

/* One call gives what the per-tensor accessors give, component by component; a short array
 * is filled as far as it goes and the count still says how many there are. */
static void check_info(const dinput_tensor_info_t* info, const dinput_tensor_t* t) {
  CHECK(info->tensor == t);
  CHECK(info->data == dinput_tensor_data(t));
  CHECK(info->shape == dinput_tensor_shape(t));
  CHECK(info->byte_size == dinput_tensor_byte_size(t));
  CHECK(info->rank == dinput_tensor_rank(t));
  CHECK(info->dtype == dinput_tensor_dtype(t));
  CHECK(info->device_type == dinput_tensor_device_type(t));
  CHECK(info->device_index == dinput_tensor_device_index(t));
}

static void test_tensor_infos(void) {
  int64_t v[6] = {1, 2, 3, 4, 5, 6};
  float f = 2.5f;
  const char* strs[2] = {"ab", "cde"};
  size_t lens[2] = {2, 3};
  int64_t two = 2, shape[2] = {3, 2};
  dinput_tensor_t* parts[3];
  dinput_element_t* e = NULL;
  dinput_tensor_info_t infos[4];
  size_t count = 99;

  CHECK_OK(dinput_tensor_new(&parts[0], DINPUT_INT64, shape, 2, v, sizeof v));
  CHECK_OK(dinput_tensor_new(&parts[1], DINPUT_FLOAT32, NULL, 0, &f, sizeof f));
  CHECK_OK(dinput_tensor_new_bytes(&parts[2], &two, 1, strs, lens));
  CHECK_OK(dinput_element_new(&e, (const dinput_tensor_t* const*)parts, 3));
  memset(infos, 0, sizeof infos);
  CHECK_OK(dinput_element_tensor_infos(&count, infos, 4, e));
  CHECK(count == 3);
  for (size_t i = 0; i < 3; ++i) check_info(&infos[i], dinput_element_get(e, i));
  CHECK(infos[0].rank == 2 && infos[0].shape[0] == 3 && infos[0].shape[1] == 2);
  CHECK(((const int64_t*)infos[0].data)[5] == 6);
  CHECK(infos[1].rank == 0 && infos[1].dtype == DINPUT_FLOAT32);
  CHECK(infos[2].data == NULL && infos[2].byte_size == 5);
  CHECK(infos[3].tensor == NULL); /* past the count: untouched */

  /* Asking for the count, then a short array: filled as far as it goes. */
  CHECK_OK(dinput_element_tensor_infos(&count, NULL, 0, e));
  CHECK(count == 3);
  memset(infos, 0, sizeof infos);
  CHECK_OK(dinput_element_tensor_infos(&count, infos, 1, e));
  CHECK(count == 3 && infos[0].tensor == dinput_element_get(e, 0) && infos[1].tensor == NULL);

  CHECK_STATUS(dinput_element_tensor_infos(&count, NULL, 2, e), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("infos");
  CHECK(count == 0);
  CHECK_STATUS(dinput_element_tensor_infos(&count, infos, 4, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("element");
  CHECK_STATUS(dinput_element_tensor_infos(NULL, infos, 4, e), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("count");

  /* A per-replica value: replica-major, and replicas must agree on their components. */
  {
    dinput_element_t* one = NULL;
    const dinput_element_t* elems[2];
    dinput_per_replica_t* pv = NULL;
    dinput_tensor_info_t step[6];
    CHECK_OK(dinput_element_new(&one, (const dinput_tensor_t* const*)parts, 1));
    elems[0] = e;
    elems[1] = e;
    CHECK_OK(dinput_per_replica_new(&pv, elems, 2));
    CHECK_OK(dinput_per_replica_tensor_infos(&count, step, 6, pv));
    CHECK(count == 6);
    for (int r = 0; r < 2; ++r)
      for (size_t c = 0; c < 3; ++c)
        check_info(&step[r * 3 + c], dinput_element_get(dinput_per_replica_get(pv, r), c));
    CHECK_OK(dinput_per_replica_tensor_infos(&count, NULL, 0, pv));
    CHECK(count == 6);
    dinput_per_replica_free(pv);

    elems[1] = one;
    CHECK_OK(dinput_per_replica_new(&pv, elems, 2));
    CHECK_STATUS(dinput_per_replica_tensor_infos(&count, step, 6, pv), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("replica 1 has 1 components where replica 0 has 3");
    CHECK(count == 0);
    dinput_per_replica_free(pv);
    dinput_element_free(one);
  }
  for (int i = 0; i < 3; ++i) dinput_tensor_free(parts[i]);
  dinput_element_free(e);
}

static void test_specs(void) {
  dinput_spec_t* spec = NULL;
  int64_t shape[2] = {DINPUT_UNKNOWN_DIM, 3};
  int64_t bad[1] = {-2};
  const int64_t* s;
  CHECK_OK(dinput_spec_new(&spec));
  CHECK(dinput_spec_size(spec) == 0);
  CHECK_OK(dinput_spec_add(spec, DINPUT_FLOAT32, shape, 2));
  CHECK_OK(dinput_spec_add(spec, DINPUT_BYTES, NULL, 0));
  CHECK(dinput_spec_size(spec) == 2);
  CHECK(dinput_spec_dtype(spec, 0) == DINPUT_FLOAT32);
  CHECK(dinput_spec_rank(spec, 0) == 2);
  s = dinput_spec_shape(spec, 0);
  CHECK(s != NULL && s[0] == DINPUT_UNKNOWN_DIM && s[1] == 3);
  CHECK(dinput_spec_dtype(spec, 1) == DINPUT_BYTES);
  CHECK(dinput_spec_rank(spec, 1) == 0);
  CHECK(dinput_spec_dtype(spec, 2) == DINPUT_DTYPE_INVALID);
  CHECK(dinput_spec_rank(spec, 2) == -1);
  CHECK(dinput_spec_shape(spec, 2) == NULL);

  CHECK_STATUS(dinput_spec_add(spec, DINPUT_INT64, bad, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("-2");
  CHECK_STATUS(dinput_spec_add(spec, DINPUT_DTYPE_INVALID, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_spec_add(spec, DINPUT_INT64, NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_spec_add(spec, DINPUT_INT64, NULL, -1), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_spec_size(spec) == 2); /* failed adds change nothing */
  dinput_spec_free(spec);
}

/* ---- DLPack ---- */

static void check_dl_dtype(dinput_dtype_t dtype, uint8_t code, uint8_t bits) {
  int64_t shape[1] = {3};
  dinput_tensor_t* t = NULL;
  DLManagedTensor* m = NULL;
  CHECK_OK(dinput_tensor_new(&t, dtype, shape, 1, NULL, 0));
  CHECK_OK(dinput_tensor_to_dlpack(&m, t));
  CHECK(m != NULL);
  if (m) {
    if (m->dl_tensor.dtype.code != code || m->dl_tensor.dtype.bits != bits)
      fprintf(stderr, "  %s exported as code %d bits %d\n", dinput_dtype_name(dtype),
              m->dl_tensor.dtype.code, m->dl_tensor.dtype.bits);
    CHECK(m->dl_tensor.dtype.code == code);
    CHECK(m->dl_tensor.dtype.bits == bits);
    CHECK(m->dl_tensor.dtype.lanes == 1);
    m->deleter(m);
  }
  dinput_tensor_free(t);
}

static void test_dlpack_fields(void) {
  float values[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  dinput_tensor_t* t = NULL;
  DLManagedTensor* m = NULL;
  CHECK_OK(dinput_tensor_new(&t, DINPUT_FLOAT32, shape, 2, values, sizeof values));
  CHECK_OK(dinput_tensor_to_dlpack(&m, t));
  CHECK(m != NULL);
  if (!m) return;
  CHECK(m->dl_tensor.data == dinput_tensor_data(t)); /* no copy */
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  CHECK(m->dl_tensor.device.device_id == 0);
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.shape != NULL && m->dl_tensor.shape[0] == 2 && m->dl_tensor.shape[1] == 3);
  CHECK(m->dl_tensor.strides == NULL); /* compact row-major */
  CHECK(m->dl_tensor.byte_offset == 0);
  CHECK(m->dl_tensor.dtype.code == kDLFloat && m->dl_tensor.dtype.bits == 32 &&
        m->dl_tensor.dtype.lanes == 1);
  CHECK(m->deleter != NULL);
  /* The exported tensor outlives the dinput handle. */
  dinput_tensor_free(t);
  CHECK(((const float*)m->dl_tensor.data)[5] == 5.0f);
  m->deleter(m);

  check_dl_dtype(DINPUT_BOOL, kDLUInt, 8);
  check_dl_dtype(DINPUT_INT8, kDLInt, 8);
  check_dl_dtype(DINPUT_INT16, kDLInt, 16);
  check_dl_dtype(DINPUT_INT32, kDLInt, 32);
  check_dl_dtype(DINPUT_INT64, kDLInt, 64);
  check_dl_dtype(DINPUT_UINT8, kDLUInt, 8);
  check_dl_dtype(DINPUT_UINT16, kDLUInt, 16);
  check_dl_dtype(DINPUT_UINT32, kDLUInt, 32);
  check_dl_dtype(DINPUT_UINT64, kDLUInt, 64);
  check_dl_dtype(DINPUT_FLOAT16, kDLFloat, 16);
  check_dl_dtype(DINPUT_BFLOAT16, kDLBfloat, 16);
  check_dl_dtype(DINPUT_FLOAT64, kDLFloat, 64);
}

static void test_dlpack_scalar_and_errors(void) {
  int64_t v = 77;
  const char* w[1] = {"text"};
  dinput_tensor_t* t = NULL;
  DLManagedTensor* m = NULL;
  CHECK_OK(dinput_tensor_new(&t, DINPUT_INT64, NULL, 0, &v, sizeof v));
  CHECK_OK(dinput_tensor_to_dlpack(&m, t));
  if (m) {
    CHECK(m->dl_tensor.ndim == 0);
    CHECK(*(const int64_t*)m->dl_tensor.data == 77);
    m->deleter(m);
  }
  dinput_tensor_free(t);

  CHECK_OK(dinput_tensor_new_bytes(&t, NULL, 0, w, NULL));
  m = (DLManagedTensor*)(void*)w; /* a non-NULL value that must be cleared */
  CHECK_STATUS(dinput_tensor_to_dlpack(&m, t), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("bytes");
  CHECK(m == NULL);
  dinput_tensor_free(t);
  CHECK_STATUS(dinput_tensor_to_dlpack(&m, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'tensor'");
}

/* A batch produced by a pipeline, exported, and then everything else freed: the DLPack
 * tensor alone must keep the data alive until its deleter runs. */
static void test_dlpack_outlives_the_pipeline(void) {
  dinput_dataset_t *range = NULL, *batched = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  DLManagedTensor* m = NULL;
  const int64_t* data;
  CHECK_OK(dinput_dataset_range(&range, 10, 20, 1));
  CHECK_OK(dinput_dataset_batch(&batched, range, 4, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, batched));
  CHECK_OK(dinput_iterator_get_next(&e, it)); /* [10..13] */
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_get_next(&e, it)); /* [14..17] */
  CHECK_OK(dinput_tensor_to_dlpack(&m, dinput_element_get(e, 0)));
  CHECK(m != NULL && m->dl_tensor.data == dinput_tensor_data(dinput_element_get(e, 0)));
  dinput_element_free(e);
  dinput_iterator_free(it);
  dinput_dataset_free(batched);
  dinput_dataset_free(range);
  if (!m) return;
  data = (const int64_t*)m->dl_tensor.data;
  CHECK(m->dl_tensor.shape[0] == 4);
  CHECK(data[0] == 14 && data[3] == 17);
  m->deleter(m);
}

/* The GPU memory functions work in every build. Where no GPU is usable (always on CI), a
 * pinned tensor is FAILED_PRECONDITION naming pinned memory and the pools hold nothing;
 * where one is, the tensor is page-locked and holds the values given. */
static void test_gpu_memory_functions(void) {
  int64_t values[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  dinput_tensor_t* t = NULL;
  size_t limit = 0, saved = 0, held = 7, cached = 7;
  dinput_status_t st = dinput_tensor_new_pinned(&t, DINPUT_INT64, shape, 1, values, sizeof values);
  if (st == DINPUT_OK) {
    CHECK(dinput_tensor_device_type(t) == DINPUT_DEVICE_CUDA_HOST);
    CHECK(((const int64_t*)dinput_tensor_data(t))[3] == 4);
  } else {
    CHECK(st == DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("pinned host memory");
    CHECK(t == NULL);
  }
  dinput_tensor_free(t);
  /* The same argument checks as dinput_tensor_new, before any allocation. */
  CHECK_STATUS(dinput_tensor_new_pinned(&t, DINPUT_INT64, shape, 1, values, 3),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_tensor_new_pinned");
  CHECK_OK(dinput_cuda_cache_limit(&saved));
  CHECK_OK(dinput_cuda_set_cache_limit(12345));
  CHECK_OK(dinput_cuda_cache_limit(&limit));
  CHECK(limit == 12345);
  CHECK_OK(dinput_cuda_set_cache_limit(saved));
  CHECK_STATUS(dinput_cuda_cache_limit(NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_OK(dinput_cuda_pool_bytes(&held, &cached, 0));
  if (st != DINPUT_OK) CHECK(held == 0 && cached == 0);
  CHECK_OK(dinput_cuda_pool_bytes(NULL, NULL, 1000));
  CHECK_STATUS(dinput_cuda_pool_bytes(&held, &cached, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("device must be >= 0");
  CHECK_OK(dinput_cuda_empty_cache());
}

int main(void) {
  test_new_and_accessors();
  test_scalars_zeros_and_empty();
  test_new_rejects_bad_input();
  test_new_rejects_overflowing_sizes();
  test_bytes_tensors();
  test_strings_read_ahead();
  test_string_access_on_numbers();
  test_copy_to_checks();
  test_ref();
  test_elements();
  test_tensor_infos();
  test_specs();
  test_dlpack_fields();
  test_dlpack_scalar_and_errors();
  test_dlpack_outlives_the_pipeline();
  test_gpu_memory_functions();
  return check_finish_();
}
