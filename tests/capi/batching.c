/* padded_batch, bucket_by_sequence_length, window and flat_map through the C API, and
 * readers as values: list_files(...).interleave(reader) with no callback. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dinput.h"

static char dir[256];

/* map callback: the int64 scalar x becomes x copies of x (tf.fill([x], x)). */
static dinput_status_t fill_fn(dinput_element_t** out, const dinput_element_t* in, void* ud) {
  int64_t x = 0, values[16];
  int64_t i;
  dinput_tensor_t* t;
  (void)ud;
  if (read_int64(in, 0, &x, 1) != 1 || x < 0 || x > 16) return DINPUT_INVALID_ARGUMENT;
  for (i = 0; i < x; ++i) values[i] = x;
  t = make_int64(values, x, 1);
  *out = make_element(&t, 1);
  return *out ? DINPUT_OK : DINPUT_INTERNAL;
}

static dinput_spec_t* vector_spec(int64_t dim) {
  dinput_spec_t* s = NULL;
  CHECK_OK(dinput_spec_new(&s));
  CHECK_OK(dinput_spec_add(s, DINPUT_INT64, &dim, 1));
  return s;
}

/* range(lo, hi).map(fill) */
static dinput_dataset_t* fills(int64_t lo, int64_t hi) {
  dinput_dataset_t *r = NULL, *m = NULL;
  dinput_spec_t* spec = vector_spec(DINPUT_UNKNOWN_DIM);
  CHECK_OK(dinput_dataset_range(&r, lo, hi, 1));
  CHECK_OK(map_with(&m, r, fill_fn, spec, 1, 1, NULL, NULL));
  dinput_spec_free(spec);
  dinput_dataset_free(r);
  return m;
}

static void test_padded_batch(void) {
  dinput_dataset_t *a = fills(1, 5), *b = NULL;
  dinput_padded_batch_options_t* o = NULL;
  dinput_spec_t *shapes = vector_spec(5), *got_shapes = NULL;
  dinput_element_t *values = NULL, *got_values = NULL;
  int64_t minus_one = -1, out[64], n = 0, count = 0;
  dinput_tensor_t* t = make_int64(&minus_one, 1, 0);
  const int64_t expected_default[] = {1, 0, 2, 2, 3, 3, 3, 0, 4, 4, 4, 4};
  const int64_t expected[] = {1, -1, -1, -1, -1, 2, 2, -1, -1, -1, 3, 3, 3, -1, -1, 4, 4, 4, 4, -1};
  values = make_element(&t, 1);

  /* Defaults: each batch padded to its longest row with zeros. */
  CHECK_OK(dinput_dataset_padded_batch(&b, a, 2, NULL));
  CHECK(strcmp(dinput_dataset_name(b), "padded_batch") == 0);
  n = drain_int64(b, out, 64, &count);
  CHECK(same_int64(out, n, expected_default, 12) && count == 2);
  dinput_dataset_free(b);

  /* Padded to 5 with -1; the options keep what was set. */
  CHECK_OK(dinput_padded_batch_options_new(&o));
  CHECK_OK(dinput_padded_batch_options_padded_shapes(&got_shapes, o));
  CHECK(got_shapes == NULL);
  CHECK_OK(dinput_padded_batch_options_set_padded_shapes(o, shapes));
  CHECK_OK(dinput_padded_batch_options_set_padding_values(o, values));
  CHECK_OK(dinput_padded_batch_options_padded_shapes(&got_shapes, o));
  CHECK(got_shapes != NULL && dinput_spec_size(got_shapes) == 1);
  CHECK_OK(dinput_padded_batch_options_padding_values(&got_values, o));
  CHECK(got_values != NULL && dinput_element_size(got_values) == 1);
  CHECK_OK(dinput_dataset_padded_batch(&b, a, 2, o));
  n = drain_int64(b, out, 64, NULL);
  CHECK(same_int64(out, n, expected, 20));
  /* A used handle is frozen. */
  CHECK_STATUS(dinput_padded_batch_options_set_drop_remainder(o, 1), DINPUT_FAILED_PRECONDITION);
  dinput_dataset_free(b);
  dinput_padded_batch_options_free(o);

  /* A padded shape smaller than an element names the component and the element. */
  CHECK_OK(dinput_padded_batch_options_new(&o));
  dinput_spec_free(shapes);
  shapes = vector_spec(2);
  CHECK_OK(dinput_padded_batch_options_set_padded_shapes(o, shapes));
  CHECK_OK(dinput_dataset_padded_batch(&b, a, 2, o));
  CHECK(drain_int64(b, out, 64, NULL) < 0);
  CHECK(dinput_last_error_code() == DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("component 0 of input element 2");
  dinput_dataset_free(b);
  dinput_padded_batch_options_free(o);

  /* A padding value of another dtype than its component's. */
  CHECK_OK(dinput_padded_batch_options_new(&o));
  {
    const char* x = "x";
    size_t len = 1;
    dinput_element_free(values);
    t = NULL;
    CHECK_OK(dinput_tensor_new_bytes(&t, NULL, 0, &x, &len));
    values = make_element(&t, 1);
    CHECK_OK(dinput_padded_batch_options_set_padding_values(o, values));
    CHECK_STATUS(dinput_dataset_padded_batch(&b, a, 2, o), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("padding value of component 0");
    CHECK(b == NULL);
    /* A failed call leaves the handle mutable. */
    CHECK_OK(dinput_padded_batch_options_set_padding_values(o, NULL));
    dinput_element_free(values);
  }
  dinput_padded_batch_options_free(o);
  CHECK_STATUS(dinput_dataset_padded_batch(&b, a, 0, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_padded_batch_options_set_drop_remainder(NULL, 1), DINPUT_INVALID_ARGUMENT);
  dinput_padded_batch_options_free(NULL);
  dinput_element_free(got_values);
  dinput_spec_free(got_shapes);
  dinput_spec_free(shapes);
  dinput_dataset_free(a);
}

static void test_bucket(void) {
  /* Lengths 1..6 (x copies of x), boundaries [3, 5], two per bucket. */
  dinput_dataset_t *a = fills(1, 7), *b = NULL;
  const int64_t bounds[] = {3, 5}, sizes[] = {2, 2, 2};
  int64_t out[64], n, count = 0;
  const int64_t expected[] = {1, 0, 2, 2, 3, 3, 3, 0, 4, 4, 4, 4,
                              5, 5, 5, 5, 5, 0, 6, 6, 6, 6, 6, 6};
  CHECK_OK(dinput_dataset_bucket_by_sequence_length(&b, a, 0, bounds, 2, sizes, 3, 0, NULL));
  n = drain_int64(b, out, 64, &count);
  CHECK(same_int64(out, n, expected, 24) && count == 3);
  dinput_dataset_free(b);
  CHECK_STATUS(dinput_dataset_bucket_by_sequence_length(&b, a, 0, bounds, 2, sizes, 2, 0, NULL),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("bucket_batch_sizes");
  CHECK_STATUS(dinput_dataset_bucket_by_sequence_length(&b, a, 3, bounds, 2, sizes, 3, 0, NULL),
               DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_dataset_bucket_by_sequence_length(&b, a, 0, NULL, 2, sizes, 3, 0, NULL),
               DINPUT_INVALID_ARGUMENT);
  dinput_dataset_free(a);
}

/* element_length_func: x % 3, or -1 (refused) for x == 100. */
static dinput_status_t mod3_length(int64_t* length, const dinput_element_t* in, void* ud) {
  int64_t x = 0;
  (void)ud;
  if (read_int64(in, 0, &x, 1) != 1) return DINPUT_INTERNAL;
  if (x == 99) {
    dinput_error_set(DINPUT_INVALID_ARGUMENT, "x == 99 has no length");
    return DINPUT_INVALID_ARGUMENT;
  }
  *length = x == 100 ? -1 : x % 3;
  return DINPUT_OK;
}
static void count_frees(void* ud) { ++*(int*)ud; }

static void test_bucket_with_length_fn(void) {
  /* range(8) by x % 3, boundaries [1, 2], two per bucket: [0, 3] [1, 4] [2, 5], then at the
   * end [6] [7]. */
  dinput_dataset_t *a = NULL, *b = NULL, *bad = NULL;
  const int64_t bounds[] = {1, 2}, sizes[] = {2, 2, 2};
  const int64_t expected[] = {0, 3, 1, 4, 2, 5, 6, 7};
  int64_t out[16], n, count = 0;
  int freed = 0;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  CHECK_OK(dinput_dataset_range(&a, 0, 8, 1));
  CHECK_OK(dinput_dataset_bucket_by_sequence_length_fn(&b, a, mod3_length, &freed, count_frees,
                                                       bounds, 2, sizes, 3, 0, NULL));
  n = drain_int64(b, out, 16, &count);
  CHECK(same_int64(out, n, expected, 8) && count == 5);
  dinput_dataset_free(b);
  CHECK(freed == 1);
  /* NULL fn, bad sizes: refused, user_data released all the same. */
  CHECK_STATUS(dinput_dataset_bucket_by_sequence_length_fn(&b, a, NULL, &freed, count_frees, bounds,
                                                           2, sizes, 3, 0, NULL),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'fn' is NULL");
  CHECK_STATUS(dinput_dataset_bucket_by_sequence_length_fn(&b, a, mod3_length, &freed, count_frees,
                                                           bounds, 2, sizes, 2, 0, NULL),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("bucket_batch_sizes");
  CHECK(freed == 3 && b == NULL);
  dinput_dataset_free(a);
  /* A negative length, and a failing callback, fail get_next naming the element. */
  CHECK_OK(dinput_dataset_range(&a, 98, 101, 1));
  CHECK_OK(dinput_dataset_bucket_by_sequence_length_fn(&bad, a, mod3_length, NULL, NULL, bounds, 2,
                                                       sizes, 3, 0, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, bad));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("x == 99 has no length");
  CHECK_MSG("input element 1");
  dinput_iterator_free(it);
  dinput_dataset_free(a);
  CHECK_OK(dinput_dataset_range(&a, 100, 101, 1));
  dinput_dataset_free(bad);
  CHECK_OK(dinput_dataset_bucket_by_sequence_length_fn(&bad, a, mod3_length, NULL, NULL, bounds, 2,
                                                       sizes, 3, 0, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, bad));
  CHECK_STATUS(dinput_iterator_get_next(&e, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("gave -1 for input element 0");
  dinput_iterator_free(it);
  dinput_dataset_free(bad);
  dinput_dataset_free(a);
}

static void test_window(void) {
  dinput_dataset_t *r = NULL, *w = NULL;
  int64_t out[64], n, count = 0;
  const int64_t expected[] = {0, 1, 2, 2, 3, 4, 4, 5, 6, 6};
  CHECK_OK(dinput_dataset_range(&r, 0, 7, 1));
  CHECK_OK(dinput_dataset_window(&w, r, 3, 2, 1, 0));
  CHECK(dinput_dataset_cardinality(w) == 4);
  n = drain_int64(w, out, 64, &count);
  CHECK(same_int64(out, n, expected, 10) && count == 4);
  dinput_dataset_free(w);
  CHECK_STATUS(dinput_dataset_window(&w, r, 3, 0, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("shift");
  dinput_dataset_free(r);
}

static int frees = 0;
static void count_free(void* ud) {
  (void)ud;
  ++frees;
}

/* flat_map callback: the int64 scalar x becomes range(10x, 10x + x). */
static dinput_status_t range_of(dinput_dataset_t** out, const dinput_element_t* in, void* ud) {
  int64_t x = 0;
  (void)ud;
  if (read_int64(in, 0, &x, 1) != 1) return DINPUT_INVALID_ARGUMENT;
  return dinput_dataset_range(out, 10 * x, 10 * x + x, 1);
}

static void test_flat_map(void) {
  dinput_dataset_t *r = NULL, *f = NULL;
  dinput_spec_t* spec = NULL;
  int64_t out[64], n;
  const int64_t expected[] = {10, 20, 21, 30, 31, 32};
  CHECK_OK(dinput_dataset_range(&r, 0, 4, 1));
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(dinput_dataset_flat_map(&f, r, range_of, spec, NULL, count_free));
  CHECK(strcmp(dinput_dataset_name(f), "flat_map") == 0);
  n = drain_int64(f, out, 64, NULL);
  CHECK(same_int64(out, n, expected, 6));
  dinput_dataset_free(f);
  CHECK(frees == 1);
  CHECK_STATUS(dinput_dataset_flat_map(&f, r, NULL, spec, NULL, count_free),
               DINPUT_INVALID_ARGUMENT);
  CHECK(frees == 2); /* freed also when the call fails */
  dinput_spec_free(spec);
  dinput_dataset_free(r);
}

static void write_file(const char* name, const char* content, size_t size) {
  char path[512];
  FILE* f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fwrite(content, 1, size, f);
  fclose(f);
}

static void write_records(const char* name, const char* const* records, size_t n) {
  char path[512];
  dinput_record_writer_t* w = NULL;
  size_t i;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  CHECK_OK(dinput_record_writer_open(&w, path, NULL));
  for (i = 0; i < n; ++i) CHECK_OK(dinput_record_writer_write(w, records[i], strlen(records[i])));
  CHECK_OK(dinput_record_writer_close(w));
  dinput_record_writer_free(w);
}

static dinput_dataset_t* list(const char* pattern) {
  char p[512];
  const char* patterns[1];
  dinput_dataset_t* names = NULL;
  snprintf(p, sizeof p, "%s/%s", dir, pattern);
  patterns[0] = p;
  CHECK_OK(dinput_dataset_list_files(&names, patterns, 1, NULL));
  return names;
}

static void test_readers(void) {
  const char* a[] = {"a1", "a2", "a3"};
  const char* b[] = {"b1"};
  char got[256];
  dinput_reader_t *records = NULL, *lines = NULL, *fixed = NULL, *bad = NULL;
  dinput_records_options_t* ro = NULL;
  dinput_interleave_options_t* io = NULL;
  dinput_dataset_t *names = NULL, *ds = NULL, *r = NULL;
  write_records("a.rec", a, 3);
  write_records("b.rec", b, 1);
  write_file("a.txt", "x1\nx2\n", 6);
  write_file("b.txt", "y1\n", 3);
  write_file("a.bin", "HHabcdefF", 9);

  /* records with options, interleaved two files at a time. */
  CHECK_OK(dinput_records_options_new(&ro));
  CHECK_OK(dinput_records_options_set_buffer_size(ro, 4096));
  CHECK_OK(dinput_reader_records(&records, ro));
  CHECK_STATUS(dinput_records_options_set_buffer_size(ro, 0), DINPUT_FAILED_PRECONDITION);
  CHECK_OK(dinput_interleave_options_new(&io));
  CHECK_OK(dinput_interleave_options_set_cycle_length(io, 2));
  names = list("*.rec");
  CHECK_OK(dinput_dataset_interleave_reader(&ds, names, records, io));
  CHECK(strcmp(dinput_dataset_name(ds), "interleave") == 0);
  CHECK(join_strings(ds, got, sizeof got) == DINPUT_OUT_OF_RANGE);
  CHECK(strcmp(got, "a1,b1,a2,a3") == 0);
  dinput_dataset_free(ds);
  /* flat_map: each file whole, in order. */
  CHECK_OK(dinput_dataset_flat_map_reader(&ds, names, records));
  CHECK(join_strings(ds, got, sizeof got) == DINPUT_OUT_OF_RANGE);
  CHECK(strcmp(got, "a1,a2,a3,b1") == 0);
  dinput_dataset_free(ds);
  dinput_dataset_free(names);

  CHECK_OK(dinput_reader_text_lines(&lines));
  names = list("*.txt");
  CHECK_OK(dinput_dataset_interleave_reader(&ds, names, lines, NULL));
  CHECK(join_strings(ds, got, sizeof got) == DINPUT_OUT_OF_RANGE);
  CHECK(strcmp(got, "x1,y1,x2") == 0);
  dinput_dataset_free(ds);
  dinput_dataset_free(names);

  CHECK_OK(dinput_reader_fixed_length_records(&fixed, 3, 2, 1));
  names = list("*.bin");
  CHECK_OK(dinput_dataset_flat_map_reader(&ds, names, fixed));
  CHECK(join_strings(ds, got, sizeof got) == DINPUT_OUT_OF_RANGE);
  CHECK(strcmp(got, "abc,def") == 0);
  dinput_dataset_free(ds);

  /* Errors: bad reader arguments, a NULL reader, input that is not file names, a missing
   * file (named). */
  CHECK_STATUS(dinput_reader_fixed_length_records(&bad, 0, 0, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("record_bytes");
  CHECK(bad == NULL);
  CHECK_STATUS(dinput_dataset_interleave_reader(&ds, names, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'reader'");
  CHECK_OK(dinput_dataset_range(&r, 0, 3, 1));
  CHECK_STATUS(dinput_dataset_interleave_reader(&ds, r, lines, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("file names");
  dinput_dataset_free(r);
  dinput_dataset_free(names);
  {
    dinput_tensor_t* t = NULL;
    const char* missing = "/nonexistent/dinput/missing.txt";
    size_t len = strlen(missing);
    dinput_element_t* e;
    CHECK_OK(dinput_tensor_new_bytes(&t, NULL, 0, &missing, &len));
    e = make_element(&t, 1);
    CHECK_OK(dinput_dataset_from_tensors(&names, e));
    dinput_element_free(e);
    CHECK_OK(dinput_dataset_interleave_reader(&ds, names, lines, NULL));
    CHECK(join_strings(ds, got, sizeof got) == DINPUT_NOT_FOUND);
    CHECK_MSG("missing.txt");
    dinput_dataset_free(ds);
    dinput_dataset_free(names);
  }
  dinput_reader_free(records);
  dinput_reader_free(lines);
  dinput_reader_free(fixed);
  dinput_reader_free(NULL);
  dinput_records_options_free(ro);
  dinput_interleave_options_free(io);
}

/* range(40).window(3, shift=2).padded_batch(3, padding -1) or, with bucket, its windows
 * grouped by length. */
static dinput_dataset_t* resumable(int bucket) {
  dinput_dataset_t *r = NULL, *w = NULL, *out = NULL;
  dinput_padded_batch_options_t* o = NULL;
  int64_t minus_one = -1;
  dinput_tensor_t* t = make_int64(&minus_one, 1, 0);
  dinput_element_t* values = make_element(&t, 1);
  const int64_t bounds[] = {3}, sizes[] = {2, 3};
  CHECK_OK(dinput_dataset_range(&r, 0, 40, 1));
  CHECK_OK(dinput_dataset_window(&w, r, 3, 2, 1, 0));
  CHECK_OK(dinput_padded_batch_options_new(&o));
  CHECK_OK(dinput_padded_batch_options_set_padding_values(o, values));
  if (bucket)
    CHECK_OK(dinput_dataset_bucket_by_sequence_length(&out, w, 0, bounds, 1, sizes, 2, 0, o));
  else
    CHECK_OK(dinput_dataset_padded_batch(&out, w, 3, o));
  dinput_padded_batch_options_free(o);
  dinput_element_free(values);
  dinput_dataset_free(w);
  dinput_dataset_free(r);
  return out;
}

/* Saved after every element through the C API, restored into a new pipeline built the same
 * way: the two iterators together give the uninterrupted stream. */
static void test_resume(int bucket) {
  static int64_t expected[256], got[256];
  dinput_dataset_t* reference = resumable(bucket);
  int64_t expected_n = drain_int64(reference, expected, 256, NULL), steps;
  dinput_dataset_free(reference);
  CHECK(expected_n > 0);
  for (steps = 0; steps <= 12; ++steps) {
    dinput_dataset_t *ds = resumable(bucket), *again = resumable(bucket);
    dinput_iterator_t *it = NULL, *restored = NULL;
    dinput_state_t* state = NULL;
    dinput_element_t* e = NULL;
    int64_t got_n = 0, i;
    dinput_status_t st = DINPUT_OK;
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    for (i = 0; i < steps && (st = dinput_iterator_get_next(&e, it)) == DINPUT_OK; ++i) {
      got_n += read_int64(e, 0, got + got_n, 256 - got_n);
      dinput_element_free(e);
    }
    CHECK_OK(dinput_iterator_save(&state, it));
    dinput_iterator_free(it);
    CHECK_OK(dinput_dataset_iterator_from_state(&restored, again, dinput_state_data(state),
                                                dinput_state_size(state)));
    dinput_state_free(state);
    while ((st = dinput_iterator_get_next(&e, restored)) == DINPUT_OK) {
      got_n += read_int64(e, 0, got + got_n, 256 - got_n);
      dinput_element_free(e);
    }
    CHECK(st == DINPUT_OUT_OF_RANGE);
    dinput_iterator_free(restored);
    if (!same_int64(got, got_n, expected, expected_n))
      fprintf(stderr, "%s: resume after %" PRId64 " elements differs\n",
              bucket ? "bucket_by_sequence_length" : "padded_batch", steps);
    CHECK(same_int64(got, got_n, expected, expected_n));
    dinput_dataset_free(ds);
    dinput_dataset_free(again);
  }
}

/* The reader is part of the pipeline's fingerprint: a state saved over records does not
 * restore into the same interleave over text lines. */
static void test_reader_in_fingerprint(void) {
  dinput_reader_t *records = NULL, *lines = NULL;
  dinput_dataset_t *names = list("*.rec"), *a = NULL, *b = NULL;
  dinput_iterator_t *it = NULL, *restored = NULL;
  dinput_state_t* state = NULL;
  dinput_element_t* e = NULL;
  CHECK_OK(dinput_reader_records(&records, NULL));
  CHECK_OK(dinput_reader_text_lines(&lines));
  CHECK_OK(dinput_dataset_interleave_reader(&a, names, records, NULL));
  CHECK_OK(dinput_dataset_interleave_reader(&b, names, lines, NULL));
  CHECK_OK(dinput_dataset_iterator(&it, a));
  CHECK_OK(dinput_iterator_get_next(&e, it));
  dinput_element_free(e);
  CHECK_OK(dinput_iterator_save(&state, it));
  CHECK_OK(dinput_dataset_iterator_from_state(&restored, a, dinput_state_data(state),
                                              dinput_state_size(state)));
  dinput_iterator_free(restored);
  restored = NULL;
  CHECK_STATUS(dinput_dataset_iterator_from_state(&restored, b, dinput_state_data(state),
                                                  dinput_state_size(state)),
               DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("text_lines");
  dinput_state_free(state);
  dinput_iterator_free(it);
  dinput_dataset_free(a);
  dinput_dataset_free(b);
  dinput_dataset_free(names);
  dinput_reader_free(records);
  dinput_reader_free(lines);
}

int main(void) {
  const char* base = getenv("TMPDIR");
  const char* made[] = {"a.rec", "b.rec", "a.txt", "b.txt", "a.bin"};
  char path[512];
  size_t i;
  snprintf(dir, sizeof dir, "%s/dinput_capi_batching_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  test_padded_batch();
  test_bucket();
  test_bucket_with_length_fn();
  test_window();
  test_flat_map();
  test_readers();
  test_resume(0);
  test_resume(1);
  test_reader_in_fingerprint();
  for (i = 0; i < sizeof made / sizeof made[0]; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, made[i]);
    remove(path);
  }
  rmdir(dir);
  return check_finish_();
}
