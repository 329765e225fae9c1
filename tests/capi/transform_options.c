/* The option handles of map, interleave, batch, shuffle, records and the record writer:
 * defaults (fresh and NULL handles), every setter with its getter, refused values, the
 * freeze after use, and what the settings do. */
#define _POSIX_C_SOURCE 199309L
#include <stdlib.h>
#include <time.h>

#include "check.h"

static dinput_status_t identity(dinput_element_t** out, const dinput_element_t* in,
                                void* user_data) {
  (void)user_data;
  return dinput_element_ref(out, in);
}

/* Identity, but element 0 takes 300 ms: a map allowed to reorder returns others first. */
static dinput_status_t slow_first(dinput_element_t** out, const dinput_element_t* in,
                                  void* user_data) {
  int64_t v = 0;
  (void)user_data;
  if (dinput_tensor_copy_to(&v, sizeof v, dinput_element_get(in, 0), DINPUT_INT64) != DINPUT_OK)
    return DINPUT_INTERNAL;
  if (v == 0) {
    struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  return dinput_element_ref(out, in);
}

/* The first value of range(8).map(slow_first, 4 threads, deterministic) under
 * with_options(deterministic = pipeline) (pipeline < 0: no with_options). */
static int64_t first_of_parallel_map(dinput_deterministic_t deterministic, int pipeline) {
  dinput_map_options_t* o = NULL;
  dinput_options_t* po = NULL;
  dinput_dataset_t *r = NULL, *m = NULL, *w = NULL;
  int64_t v[8] = {-1};
  CHECK_OK(dinput_map_options_new(&o));
  CHECK_OK(dinput_map_options_set_num_parallel_calls(o, 4));
  CHECK_OK(dinput_map_options_set_deterministic(o, deterministic));
  CHECK_OK(dinput_dataset_range(&r, 0, 8, 1));
  CHECK_OK(dinput_dataset_map(&m, r, slow_first, NULL, NULL, o));
  if (pipeline >= 0) {
    CHECK_OK(dinput_options_new(&po));
    CHECK_OK(dinput_options_set_deterministic(po, pipeline));
    CHECK_OK(dinput_dataset_with_options(&w, m, po));
  }
  CHECK(drain_int64(w ? w : m, v, 8, NULL) == 8);
  dinput_dataset_free(w);
  dinput_options_free(po);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
  dinput_map_options_free(o);
  return v[0];
}

/* UNSET follows with_options' deterministic (default: ordered); TRUE and FALSE win over it. */
static void test_deterministic_three_states(void) {
  CHECK(first_of_parallel_map(DINPUT_DETERMINISTIC_UNSET, -1) == 0);
  CHECK(first_of_parallel_map(DINPUT_DETERMINISTIC_UNSET, 1) == 0);
  CHECK(first_of_parallel_map(DINPUT_DETERMINISTIC_UNSET, 0) != 0);
  CHECK(first_of_parallel_map(DINPUT_DETERMINISTIC_TRUE, 0) == 0);
  CHECK(first_of_parallel_map(DINPUT_DETERMINISTIC_FALSE, -1) != 0);
}

static dinput_status_t two_of(dinput_dataset_t** out, const dinput_element_t* in, void* user_data) {
  (void)in;
  (void)user_data;
  return dinput_dataset_range(out, 0, 2, 1);
}

static void test_map_options(void) {
  dinput_map_options_t* o = NULL;
  dinput_spec_t *spec = NULL, *got = NULL;
  dinput_dataset_t *r = NULL, *m = NULL, *m2 = NULL;
  int64_t v[64];

  /* Defaults, through NULL and through a fresh handle. */
  CHECK(dinput_map_options_num_parallel_calls(NULL) == 1);
  CHECK(dinput_map_options_deterministic(NULL) == DINPUT_DETERMINISTIC_UNSET);
  CHECK_OK(dinput_map_options_out_spec(&got, NULL));
  CHECK(got == NULL);
  CHECK_OK(dinput_map_options_new(&o));
  CHECK(dinput_map_options_num_parallel_calls(o) == 1);
  CHECK(dinput_map_options_deterministic(o) == DINPUT_DETERMINISTIC_UNSET);
  CHECK_OK(dinput_map_options_out_spec(&got, o));
  CHECK(got == NULL);

  /* Setters and getters. */
  CHECK_OK(dinput_spec_new(&spec));
  CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
  CHECK_OK(dinput_map_options_set_out_spec(o, spec));
  dinput_spec_free(spec); /* copied */
  CHECK_OK(dinput_map_options_out_spec(&got, o));
  CHECK(got != NULL && dinput_spec_size(got) == 1 && dinput_spec_dtype(got, 0) == DINPUT_INT64);
  dinput_spec_free(got);
  CHECK_OK(dinput_map_options_set_num_parallel_calls(o, DINPUT_AUTOTUNE));
  CHECK(dinput_map_options_num_parallel_calls(o) == DINPUT_AUTOTUNE);
  CHECK_OK(dinput_map_options_set_num_parallel_calls(o, 4));
  CHECK(dinput_map_options_num_parallel_calls(o) == 4);
  CHECK_OK(dinput_map_options_set_deterministic(o, DINPUT_DETERMINISTIC_FALSE));
  CHECK(dinput_map_options_deterministic(o) == DINPUT_DETERMINISTIC_FALSE);

  /* Refused values name the value and keep the old one. */
  CHECK_STATUS(dinput_map_options_set_num_parallel_calls(o, -2), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_map_options_set_num_parallel_calls: num_parallel_calls must be 0..1024");
  CHECK_MSG("got -2");
  CHECK_STATUS(dinput_map_options_set_num_parallel_calls(o, 1025), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_map_options_num_parallel_calls(o) == 4);
  CHECK_STATUS(dinput_map_options_set_deterministic(o, (dinput_deterministic_t)7),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("invalid deterministic 7");
  CHECK_STATUS(dinput_map_options_set_num_parallel_calls(NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_map_options_new(NULL), DINPUT_INVALID_ARGUMENT);

  /* Used: frozen, still readable and reusable. */
  CHECK_OK(dinput_dataset_range(&r, 0, 40, 1));
  CHECK_OK(dinput_dataset_map(&m, r, identity, NULL, NULL, o));
  CHECK_STATUS(dinput_map_options_set_num_parallel_calls(o, 2), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("used by dinput_dataset_map");
  CHECK_STATUS(dinput_map_options_set_out_spec(o, NULL), DINPUT_FAILED_PRECONDITION);
  CHECK(dinput_map_options_num_parallel_calls(o) == 4);
  CHECK_OK(dinput_dataset_map(&m2, r, identity, NULL, NULL, o));
  /* deterministic FALSE: every element exactly once, in some order. */
  {
    int seen[40] = {0};
    int64_t n = drain_int64(m, v, 64, NULL), i;
    int ok = n == 40;
    for (i = 0; ok && i < 40; ++i) ok = v[i] >= 0 && v[i] < 40 && !seen[v[i]]++;
    CHECK(ok);
  }
  dinput_dataset_free(m);
  dinput_dataset_free(m2);
  dinput_map_options_free(o);
  dinput_map_options_free(NULL);

  /* A failed build does not freeze: the handle can be fixed and used. */
  CHECK_OK(dinput_map_options_new(&o));
  CHECK_STATUS(dinput_dataset_map(&m, r, NULL, NULL, NULL, o), DINPUT_INVALID_ARGUMENT);
  CHECK_OK(dinput_map_options_set_num_parallel_calls(o, 2));
  dinput_map_options_free(o);
  dinput_dataset_free(r);
}

static void test_interleave_options(void) {
  dinput_interleave_options_t* o = NULL;
  CHECK(dinput_interleave_options_cycle_length(NULL) == DINPUT_AUTOTUNE);
  CHECK(dinput_interleave_options_block_length(NULL) == 1);
  CHECK(dinput_interleave_options_num_parallel_calls(NULL) == 1);
  CHECK(dinput_interleave_options_deterministic(NULL) == DINPUT_DETERMINISTIC_UNSET);
  CHECK_OK(dinput_interleave_options_new(&o));
  CHECK(dinput_interleave_options_cycle_length(o) == DINPUT_AUTOTUNE);
  CHECK(dinput_interleave_options_block_length(o) == 1);
  CHECK(dinput_interleave_options_num_parallel_calls(o) == 1);
  CHECK(dinput_interleave_options_deterministic(o) == DINPUT_DETERMINISTIC_UNSET);

  CHECK_OK(dinput_interleave_options_set_cycle_length(o, 3));
  CHECK(dinput_interleave_options_cycle_length(o) == 3);
  CHECK_OK(dinput_interleave_options_set_block_length(o, 2));
  CHECK(dinput_interleave_options_block_length(o) == 2);
  CHECK_OK(dinput_interleave_options_set_num_parallel_calls(o, DINPUT_AUTOTUNE));
  CHECK(dinput_interleave_options_num_parallel_calls(o) == DINPUT_AUTOTUNE);
  CHECK_OK(dinput_interleave_options_set_deterministic(o, DINPUT_DETERMINISTIC_TRUE));
  CHECK(dinput_interleave_options_deterministic(o) == DINPUT_DETERMINISTIC_TRUE);

  CHECK_STATUS(dinput_interleave_options_set_cycle_length(o, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("cycle_length must be 1..4096 or DINPUT_AUTOTUNE (-1), got 0");
  CHECK_STATUS(dinput_interleave_options_set_cycle_length(o, 4097), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_interleave_options_set_block_length(o, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("block_length must be >= 1, got 0");
  CHECK_STATUS(dinput_interleave_options_set_num_parallel_calls(o, -3), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_interleave_options_set_deterministic(o, (dinput_deterministic_t)-2),
               DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_interleave_options_cycle_length(o) == 3 &&
        dinput_interleave_options_block_length(o) == 2);

  /* Used: frozen; the interleave reads 3 inputs of 2 elements each. */
  {
    dinput_dataset_t *r = NULL, *il = NULL;
    dinput_spec_t* spec = NULL;
    int64_t v[8], n;
    CHECK_OK(dinput_spec_new(&spec));
    CHECK_OK(dinput_spec_add(spec, DINPUT_INT64, NULL, 0));
    CHECK_OK(dinput_dataset_range(&r, 0, 3, 1));
    CHECK_OK(dinput_dataset_interleave(&il, r, two_of, spec, NULL, NULL, o));
    CHECK_STATUS(dinput_interleave_options_set_block_length(o, 1), DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("used by dinput_dataset_interleave");
    n = drain_int64(il, v, 8, NULL);
    CHECK(n == 6);
    dinput_dataset_free(il);
    dinput_dataset_free(r);
    dinput_spec_free(spec);
  }
  dinput_interleave_options_free(o);
  dinput_interleave_options_free(NULL);
}

static void test_batch_options(void) {
  dinput_batch_options_t* o = NULL;
  dinput_dataset_t *r = NULL, *seq = NULL, *par = NULL;
  int64_t a[1100], b[1100], na, nb, ea, eb;

  CHECK(dinput_batch_options_drop_remainder(NULL) == 0);
  CHECK(dinput_batch_options_num_parallel_calls(NULL) == 1);
  CHECK(dinput_batch_options_deterministic(NULL) == DINPUT_DETERMINISTIC_UNSET);
  CHECK_OK(dinput_batch_options_new(&o));
  CHECK(dinput_batch_options_drop_remainder(o) == 0);
  CHECK(dinput_batch_options_num_parallel_calls(o) == 1);
  CHECK(dinput_batch_options_deterministic(o) == DINPUT_DETERMINISTIC_UNSET);

  CHECK_OK(dinput_batch_options_set_drop_remainder(o, 5));
  CHECK(dinput_batch_options_drop_remainder(o) == 1);
  CHECK_OK(dinput_batch_options_set_drop_remainder(o, 0));
  CHECK(dinput_batch_options_drop_remainder(o) == 0);
  CHECK_OK(dinput_batch_options_set_num_parallel_calls(o, 8));
  CHECK(dinput_batch_options_num_parallel_calls(o) == 8);
  CHECK_OK(dinput_batch_options_set_deterministic(o, DINPUT_DETERMINISTIC_FALSE));
  CHECK(dinput_batch_options_deterministic(o) == DINPUT_DETERMINISTIC_FALSE);
  CHECK_STATUS(dinput_batch_options_set_num_parallel_calls(o, -7), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_batch_options_set_num_parallel_calls: num_parallel_calls must be 0..1024");
  CHECK_STATUS(dinput_batch_options_set_deterministic(o, (dinput_deterministic_t)2),
               DINPUT_INVALID_ARGUMENT);

  /* Parallel batch assembly gives the same batches as the sequential one. */
  CHECK_OK(dinput_dataset_range(&r, 0, 1000, 1));
  CHECK_OK(dinput_dataset_batch(&seq, r, 7, NULL));
  CHECK_OK(dinput_dataset_batch(&par, r, 7, o));
  na = drain_int64(seq, a, 1100, &ea);
  nb = drain_int64(par, b, 1100, &eb);
  CHECK(na == 1000 && ea == 143);
  CHECK(same_int64(b, nb, a, na) && eb == ea);
  CHECK(dinput_dataset_cardinality(par) == 143);

  /* Frozen by the batch that used it. */
  CHECK_STATUS(dinput_batch_options_set_drop_remainder(o, 1), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("used by dinput_dataset_batch");
  dinput_batch_options_free(o);
  dinput_dataset_free(par);

  /* ... and with drop_remainder, AUTOTUNE threads. */
  CHECK_OK(dinput_batch_options_new(&o));
  CHECK_OK(dinput_batch_options_set_drop_remainder(o, 1));
  CHECK_OK(dinput_batch_options_set_num_parallel_calls(o, DINPUT_AUTOTUNE));
  CHECK_OK(dinput_dataset_batch(&par, r, 7, o));
  nb = drain_int64(par, b, 1100, &eb);
  CHECK(nb == 994 && eb == 142 && same_int64(b, nb, a, 994));
  CHECK(dinput_dataset_cardinality(par) == 142);
  dinput_dataset_free(par);
  dinput_batch_options_free(o);
  dinput_batch_options_free(NULL);
  dinput_dataset_free(seq);
  dinput_dataset_free(r);
}

static int64_t shuffled_order(const dinput_dataset_t* r, const dinput_shuffle_options_t* o,
                              int64_t* dst) {
  dinput_dataset_t* s = NULL;
  int64_t n;
  if (dinput_dataset_shuffle(&s, r, 100, o) != DINPUT_OK) return -1;
  n = drain_int64(s, dst, 100, NULL);
  dinput_dataset_free(s);
  return n;
}

static void test_shuffle_options(void) {
  dinput_shuffle_options_t *a = NULL, *b = NULL, *c = NULL;
  dinput_dataset_t* r = NULL;
  int64_t va[100], vb[100], vc[100];

  CHECK(dinput_shuffle_options_seed(NULL) == -1);
  CHECK(dinput_shuffle_options_seed2(NULL) == -1);
  CHECK(dinput_shuffle_options_reshuffle_each_iteration(NULL) == 1);
  CHECK_OK(dinput_shuffle_options_new(&a));
  CHECK(dinput_shuffle_options_seed(a) == -1 && dinput_shuffle_options_seed2(a) == -1);
  CHECK(dinput_shuffle_options_reshuffle_each_iteration(a) == 1);
  CHECK_OK(dinput_shuffle_options_set_seed(a, 7, 3));
  CHECK(dinput_shuffle_options_seed(a) == 7 && dinput_shuffle_options_seed2(a) == 3);
  CHECK_OK(dinput_shuffle_options_set_reshuffle_each_iteration(a, 0));
  CHECK(dinput_shuffle_options_reshuffle_each_iteration(a) == 0);
  CHECK_STATUS(dinput_shuffle_options_set_seed(a, -1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("seed must be >= 0, got -1");
  CHECK_STATUS(dinput_shuffle_options_set_seed(a, 1, -4), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("seed2 must be >= 0, got -4");
  CHECK(dinput_shuffle_options_seed(a) == 7 && dinput_shuffle_options_seed2(a) == 3);

  /* The same pair gives the same order; another second seed another order. */
  CHECK_OK(dinput_shuffle_options_new(&b));
  CHECK_OK(dinput_shuffle_options_set_seed(b, 7, 3));
  CHECK_OK(dinput_shuffle_options_new(&c));
  CHECK_OK(dinput_shuffle_options_set_seed(c, 7, 4));
  CHECK_OK(dinput_dataset_range(&r, 0, 100, 1));
  CHECK(shuffled_order(r, a, va) == 100);
  CHECK(shuffled_order(r, b, vb) == 100);
  CHECK(shuffled_order(r, c, vc) == 100);
  CHECK(same_int64(va, 100, vb, 100));
  CHECK(!same_int64(va, 100, vc, 100));
  CHECK_STATUS(dinput_shuffle_options_set_seed(c, 1, 1), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("used by dinput_dataset_shuffle");
  dinput_shuffle_options_free(a);
  dinput_shuffle_options_free(b);
  dinput_shuffle_options_free(c);
  dinput_shuffle_options_free(NULL);
  dinput_dataset_free(r);
}

/* The names list_files gives for the pattern, joined. */
static void listed(const char* pattern, const dinput_list_files_options_t* o, char* text,
                   size_t cap) {
  dinput_dataset_t* ds = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  const char* patterns[1];
  patterns[0] = pattern;
  text[0] = '\0';
  CHECK_OK(dinput_dataset_list_files(&ds, patterns, 1, o));
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    const char* s = NULL;
    size_t n = 0;
    CHECK_OK(dinput_tensor_string_view(&s, &n, dinput_element_get(e, 0), 0));
    if (strlen(text) + n + 2 < cap) strncat(strncat(text, s, n), ",", 2);
    dinput_element_free(e);
  }
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
}

static void test_list_files_options(void) {
  dinput_list_files_options_t *a = NULL, *b = NULL;
  char sorted[512], x[512], y[512], name[64];
  int i;
  for (i = 0; i < 8; ++i) {
    FILE* f;
    snprintf(name, sizeof name, "capi_list_files_%d.txt", i);
    f = fopen(name, "w");
    if (f) fclose(f);
  }
  CHECK(dinput_list_files_options_shuffle(NULL) == 0);
  CHECK(dinput_list_files_options_seed(NULL) == -1 && dinput_list_files_options_seed2(NULL) == -1);
  CHECK_OK(dinput_list_files_options_new(&a));
  CHECK(dinput_list_files_options_shuffle(a) == 0 && dinput_list_files_options_seed(a) == -1);
  CHECK_OK(dinput_list_files_options_set_shuffle(a, 1));
  CHECK(dinput_list_files_options_shuffle(a) == 1);
  CHECK_OK(dinput_list_files_options_set_seed(a, 11, 2));
  CHECK(dinput_list_files_options_seed(a) == 11 && dinput_list_files_options_seed2(a) == 2);
  CHECK_STATUS(dinput_list_files_options_set_seed(a, -3, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_list_files_options_set_seed: seed must be >= 0, got -3");
  CHECK_OK(dinput_list_files_options_new(&b));
  CHECK_OK(dinput_list_files_options_set_shuffle(b, 1));
  CHECK_OK(dinput_list_files_options_set_seed(b, 11, 2));

  listed("capi_list_files_*.txt", NULL, sorted, sizeof sorted);
  CHECK(strncmp(sorted, "capi_list_files_0.txt,capi_list_files_1.txt,", 44) == 0);
  listed("capi_list_files_*.txt", a, x, sizeof x);
  listed("capi_list_files_*.txt", b, y, sizeof y);
  CHECK(strcmp(x, y) == 0);      /* the same pair, the same order */
  CHECK(strcmp(x, sorted) != 0); /* shuffled (8 names: 1 chance in 40320 to stay sorted) */
  CHECK(strlen(x) == strlen(sorted));
  CHECK_STATUS(dinput_list_files_options_set_shuffle(a, 0), DINPUT_FAILED_PRECONDITION);
  CHECK_MSG("used by dinput_dataset_list_files");
  dinput_list_files_options_free(a);
  dinput_list_files_options_free(b);
  dinput_list_files_options_free(NULL);
  for (i = 0; i < 8; ++i) {
    snprintf(name, sizeof name, "capi_list_files_%d.txt", i);
    remove(name);
  }
}

static void test_deterministic_default(void) {
  dinput_options_t* o = NULL;
  CHECK(dinput_options_deterministic(NULL) == 1);
  CHECK_OK(dinput_options_new(&o));
  CHECK(dinput_options_deterministic(o) == 1);
  CHECK_OK(dinput_options_set_deterministic(o, 0));
  CHECK(dinput_options_deterministic(o) == 0);
  CHECK_OK(dinput_options_set_deterministic(o, 1));
  CHECK(dinput_options_deterministic(o) == 1);
  dinput_options_free(o);
}

static void test_records_and_writer_options(void) {
  dinput_records_options_t* ro = NULL;
  dinput_record_writer_options_t* wo = NULL;
  dinput_record_writer_t* w = NULL;
  dinput_dataset_t* ds = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  const char* path = "capi_transform_options.rec.zst";
  const char* files[1];
  int i, n = 0;
  files[0] = path;

  CHECK(dinput_record_writer_options_compression(NULL) == DINPUT_COMPRESSION_NONE);
  CHECK(dinput_record_writer_options_level(NULL) == 0);
  CHECK_OK(dinput_record_writer_options_new(&wo));
  CHECK(dinput_record_writer_options_compression(wo) == DINPUT_COMPRESSION_NONE);
  CHECK(dinput_record_writer_options_level(wo) == 0);
  CHECK_OK(dinput_record_writer_options_set_compression(wo, DINPUT_COMPRESSION_ZSTD));
  CHECK(dinput_record_writer_options_compression(wo) == DINPUT_COMPRESSION_ZSTD);
  CHECK_OK(dinput_record_writer_options_set_level(wo, 5));
  CHECK(dinput_record_writer_options_level(wo) == 5);
  CHECK_STATUS(dinput_record_writer_options_set_level(wo, 20), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("level must be 0..19");
  CHECK_STATUS(dinput_record_writer_options_set_compression(wo, (dinput_compression_t)3),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("invalid compression 3");
  CHECK(dinput_record_writer_options_zstd_window_log(NULL) == 0);
  CHECK(dinput_record_writer_options_zstd_window_log(wo) == 0);
  CHECK_OK(dinput_record_writer_options_set_zstd_window_log(wo, 28));
  CHECK(dinput_record_writer_options_zstd_window_log(wo) == 28);
  CHECK_STATUS(dinput_record_writer_options_set_zstd_window_log(wo, 9), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("window_log must be 10..31 (0: the level's), got 9");
  CHECK_STATUS(dinput_record_writer_options_set_zstd_window_log(wo, 32), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_record_writer_options_zstd_window_log(wo) == 28);

  /* A level the codec does not have is refused at open, naming the file (where gzip is built
   * in; otherwise open is UNIMPLEMENTED first). */
  {
    dinput_record_writer_options_t* gzip_options = NULL;
    dinput_record_writer_t* refused = NULL;
    dinput_status_t st;
    CHECK_OK(dinput_record_writer_options_new(&gzip_options));
    CHECK_OK(dinput_record_writer_options_set_compression(gzip_options, DINPUT_COMPRESSION_GZIP));
    CHECK_OK(dinput_record_writer_options_set_level(gzip_options, 12));
    st = dinput_record_writer_open(&refused, "capi_transform_options_level12.rec.gz", gzip_options);
    if (st != DINPUT_UNIMPLEMENTED) {
      CHECK(st == DINPUT_INVALID_ARGUMENT && refused == NULL);
      CHECK_MSG("capi_transform_options_level12.rec.gz");
      CHECK_MSG("gzip level must be 1..9");
    }
    dinput_record_writer_options_free(gzip_options);
  }

  CHECK(dinput_records_options_compression(NULL) == DINPUT_COMPRESSION_NONE);
  CHECK(dinput_records_options_buffer_size(NULL) == 0);
  CHECK_OK(dinput_records_options_new(&ro));
  CHECK(dinput_records_options_compression(ro) == DINPUT_COMPRESSION_NONE);
  CHECK(dinput_records_options_buffer_size(ro) == 0);
  CHECK_OK(dinput_records_options_set_compression(ro, DINPUT_COMPRESSION_ZSTD));
  CHECK(dinput_records_options_compression(ro) == DINPUT_COMPRESSION_ZSTD);
  CHECK_OK(dinput_records_options_set_buffer_size(ro, 4096));
  CHECK(dinput_records_options_buffer_size(ro) == 4096);
  CHECK_STATUS(dinput_records_options_set_buffer_size(ro, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("buffer_size must be >= 0");

  /* Where zstd is built in: write with the writer options (a 2^28 window, as zstd --long=28),
   * read back with the records options; both handles are frozen afterwards. */
  if (dinput_record_writer_open(&w, path, wo) == DINPUT_OK) {
    for (i = 0; i < 5; ++i) CHECK_OK(dinput_record_writer_write(w, "abc", 3));
    CHECK_OK(dinput_record_writer_close(w));
    dinput_record_writer_free(w);
    CHECK_STATUS(dinput_record_writer_options_set_level(wo, 1), DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("used by dinput_record_writer_open");
    CHECK_OK(dinput_dataset_records(&ds, files, 1, ro));
    CHECK_STATUS(dinput_records_options_set_buffer_size(ro, 0), DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("used by dinput_dataset_records");
    CHECK_OK(dinput_dataset_iterator(&it, ds));
    while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
      ++n;
      dinput_element_free(e);
    }
    CHECK(n == 5);
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
    remove(path);
  } else {
    CHECK(dinput_last_error_code() == DINPUT_UNIMPLEMENTED);
  }
  dinput_records_options_free(ro);
  dinput_record_writer_options_free(wo);
  dinput_records_options_free(NULL);
  dinput_record_writer_options_free(NULL);
}

int main(void) {
  test_map_options();
  test_interleave_options();
  test_batch_options();
  test_shuffle_options();
  test_deterministic_default();
  test_list_files_options();
  test_deterministic_three_states();
  test_records_and_writer_options();
  return check_finish_();
}
