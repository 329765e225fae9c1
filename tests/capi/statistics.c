/* Per-stage statistics and traces (docs/statistics.md) through the C API: exact element and
 * byte counts, the slow stage named, consumer waits, buffers, switching them off, traces. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dinput.h"

/* The map sleeps this long per element: far slower than anything else in the pipelines. */
#define SLOW_MS 3

static dinput_status_t sleepy(dinput_element_t** out, const dinput_element_t* in, void* user_data) {
  struct timespec d = {0, SLOW_MS * 1000000L};
  (void)user_data;
  nanosleep(&d, NULL);
  return dinput_element_ref(out, in);
}

/* The text of the stage object whose "name" is `name` (the first one), copied into buf. */
static const char* stage_text(const char* json, const char* name, char* buf, size_t cap) {
  char key[64];
  const char *start, *p, *end;
  snprintf(key, sizeof key, "\"name\":\"%s\"", name);
  p = strstr(json, key);
  if (!p) return NULL;
  start = p;
  while (start > json && *start != '{') --start;
  end = strstr(p, "\"buffer\":");
  if (!end) return NULL;
  end = strchr(end, '}');
  if (!end) return NULL;
  if ((size_t)(end - start + 1) >= cap) return NULL;
  memcpy(buf, start, (size_t)(end - start + 1));
  buf[end - start + 1] = '\0';
  return buf;
}

static double field_double(const char* text, const char* name) {
  char key[64];
  const char* p;
  if (!text) return -1;
  snprintf(key, sizeof key, "\"%s\":", name);
  p = strstr(text, key);
  if (!p) return -1;
  return strtod(p + strlen(key), NULL);
}

static dinput_dataset_t* range(int64_t n) {
  dinput_dataset_t* ds = NULL;
  CHECK_OK(dinput_dataset_range(&ds, 0, n, 1));
  return ds;
}

/* Iterates ds to its end; returns its statistics (free with dinput_string_free). */
static char* run_stats(const dinput_dataset_t* ds, int64_t* elements) {
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  char* json = NULL;
  int64_t n = 0;
  CHECK_OK(dinput_dataset_iterator(&it, ds));
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
    ++n;
    dinput_element_free(e);
  }
  CHECK_OK(dinput_iterator_statistics(&json, it));
  dinput_iterator_free(it);
  if (elements) *elements = n;
  return json;
}

/* range(1000).take(7): take produced exactly 7 elements of 8 bytes, and so did range. */
static void test_take_counts(void) {
  dinput_dataset_t *r = range(1000), *t = NULL;
  char buf[4096];
  char* json;
  const char* s;
  CHECK_OK(dinput_dataset_take(&t, r, 7));
  json = run_stats(t, NULL);
  CHECK(json != NULL && strstr(json, "\"schema\":\"dinput.statistics/1\"") != NULL);
  s = stage_text(json, "take", buf, sizeof buf);
  CHECK(field(s, "elements") == 7);
  CHECK(field(s, "bytes") == 7 * 8);
  CHECK(field(s, "calls") == 7 + 1); /* the last call found the end */
  s = stage_text(json, "range", buf, sizeof buf);
  CHECK(field(s, "elements") == 7);
  CHECK(field(s, "bytes") == 56);
  /* The consumer: 8 get_next calls (the last at the end). */
  CHECK(field(strstr(json, "\"consumer\""), "calls") == 8);
  dinput_string_free(json);
  dinput_dataset_free(t);
  dinput_dataset_free(r);
}

/* A batch counts batches and their bytes; its input counts rows. */
static void test_batch_bytes(void) {
  dinput_dataset_t *r = range(10), *b = NULL;
  char buf[4096];
  char* json;
  CHECK_OK(batch_with(&b, r, 4, 0));
  json = run_stats(b, NULL);
  CHECK(field(stage_text(json, "batch", buf, sizeof buf), "elements") == 3);
  CHECK(field(stage_text(json, "batch", buf, sizeof buf), "bytes") == 80);
  CHECK(field(stage_text(json, "range", buf, sizeof buf), "elements") == 10);
  dinput_string_free(json);
  dinput_dataset_free(b);
  dinput_dataset_free(r);
}

/* Elements of two components, a string and two int32: each counts its string's length plus
 * 8 bytes, one element at a time (from_tensor_slices) and in batches of two rows (batch). */
static void test_string_and_tuple_bytes(void) {
  static const char* const kStrings[] = {"a", "bb", "ccc", "dddd", "eeeee"};
  const int64_t shape[] = {5, 2};
  const int32_t numbers[10] = {0};
  dinput_tensor_t *strings = NULL, *ints = NULL;
  const dinput_tensor_t* parts[2];
  dinput_element_t* element = NULL;
  dinput_dataset_t *slices = NULL, *b = NULL;
  char buf[4096];
  char* json;
  CHECK_OK(dinput_tensor_new_bytes(&strings, shape, 1, kStrings, NULL));
  CHECK_OK(dinput_tensor_new(&ints, DINPUT_INT32, shape, 2, numbers, sizeof numbers));
  parts[0] = strings;
  parts[1] = ints;
  CHECK_OK(dinput_element_new(&element, parts, 2));
  CHECK_OK(dinput_dataset_from_tensor_slices(&slices, element));
  CHECK_OK(batch_with(&b, slices, 2, 0));
  json = run_stats(b, NULL);
  CHECK(field(stage_text(json, "from_tensor_slices", buf, sizeof buf), "elements") == 5);
  CHECK(field(stage_text(json, "from_tensor_slices", buf, sizeof buf), "bytes") == 15 + 5 * 8);
  CHECK(field(stage_text(json, "batch", buf, sizeof buf), "elements") == 3);
  CHECK(field(stage_text(json, "batch", buf, sizeof buf), "bytes") == 15 + 5 * 8);
  dinput_string_free(json);
  dinput_dataset_free(b);
  dinput_dataset_free(slices);
  dinput_element_free(element);
  dinput_tensor_free(ints);
  dinput_tensor_free(strings);
}

/* range(12).map(sleep).batch(3): map is the slowest stage, it produced 12 elements in at
 * least 12 sleeps, and the consumer (faster than the map) waited for nearly all of it. */
static void test_slow_map(void) {
  dinput_dataset_t *r = range(12), *m = NULL, *b = NULL;
  char buf[4096];
  char* json;
  const char* s;
  int64_t map_id;
  CHECK_OK(map_with(&m, r, sleepy, NULL, 1, 1, NULL, NULL));
  CHECK_OK(batch_with(&b, m, 3, 0));
  json = run_stats(b, NULL);
  s = stage_text(json, "map", buf, sizeof buf);
  map_id = field(s, "id");
  CHECK(field(s, "elements") == 12);
  /* Timed on a sample of calls and scaled: allow a wide margin below the true sleep. */
  CHECK(field(s, "produce_ns") >= 12 * SLOW_MS * 1000000LL / 2);
  CHECK(field(json, "slowest_stage") == map_id);
  s = stage_text(json, "batch", buf, sizeof buf);
  CHECK(field(s, "input_wait_ns") >= 12 * SLOW_MS * 1000000LL / 2);
  CHECK(field(s, "input_wait_ns") > field(s, "produce_ns"));
  s = strstr(json, "\"consumer\"");
  CHECK(field(s, "wait_ns") >= 12 * SLOW_MS * 1000000LL);
  CHECK(field_double(s, "input_bound_percent") > 50.0);
  dinput_string_free(json);
  dinput_dataset_free(b);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

/* prefetch after a slow map: prefetch waits for its background input, its buffer has a
 * capacity; shuffle's buffer fills to its size. */
static void test_buffers(void) {
  dinput_dataset_t *r = range(10), *m = NULL, *p = NULL, *r2 = range(100), *sh = NULL;
  char buf[4096];
  char* json;
  const char* s;
  CHECK_OK(map_with(&m, r, sleepy, NULL, 1, 1, NULL, NULL));
  CHECK_OK(dinput_dataset_prefetch(&p, m, 4));
  json = run_stats(p, NULL);
  s = stage_text(json, "prefetch", buf, sizeof buf);
  CHECK(field(s, "elements") == 10);
  CHECK(field(s, "input_wait_ns") >= 5 * SLOW_MS * 1000000LL);
  CHECK(field(s, "capacity") == 4);
  s = stage_text(json, "map", buf, sizeof buf);
  CHECK(s != NULL && strstr(s, "\"background\":true") != NULL);
  dinput_string_free(json);

  CHECK_OK(shuffle_with(&sh, r2, 10, 1, 0));
  json = run_stats(sh, NULL);
  s = stage_text(json, "shuffle", buf, sizeof buf);
  CHECK(field(s, "elements") == 100);
  CHECK(field(s, "capacity") == 10);
  CHECK(field(s, "max_fill") == 10);    /* each draw refills its hole while the input lasts */
  CHECK(field(s, "copied_bytes") == 0); /* integers: no read buffers behind them */
  dinput_string_free(json);
  dinput_dataset_free(sh);
  dinput_dataset_free(r2);
  dinput_dataset_free(p);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

/* Sleeps 1 ms on the elements whose value is a multiple of *(int64_t*)user_data (0: on
 * element 0 alone, for 60 ms). */
static dinput_status_t sleep_on(dinput_element_t** out, const dinput_element_t* in,
                                void* user_data) {
  const int64_t every = *(const int64_t*)user_data;
  const int64_t v = *(const int64_t*)dinput_tensor_data(dinput_element_get(in, 0));
  struct timespec d = {0, every == 0 ? 60000000L : 1000000L};
  if (every == 0 ? v == 0 : v % every == 0) nanosleep(&d, NULL);
  return dinput_element_ref(out, in);
}

/* A stage's times are sampled, about one call in 64, and scaled, but its first call is
 * counted once as it is: a first call that sets up (here: sleeps 60 ms) is not taken for a
 * sample of the 6,399 calls after it. And the samples are not in step with a cost that comes
 * every 48 calls (a reader's group of records): 1 ms every 48 elements of 9,216 is 192 ms,
 * where timing every 64th call saw one slow call in three samples and made it 3 s. */
static void test_sampling_is_unbiased(void) {
  static const int64_t first_only = 0, every_48 = 48;
  dinput_dataset_t *r = range(6400), *m = NULL, *r2 = range(9216), *m2 = NULL;
  char buf[4096];
  char* json;
  int64_t produce;
  CHECK_OK(map_with(&m, r, sleep_on, NULL, 1, 1, (void*)&first_only, NULL));
  json = run_stats(m, NULL);
  produce = field(stage_text(json, "map", buf, sizeof buf), "produce_ns");
  CHECK(produce >= 60000000LL && produce < 180000000LL);
  produce = field(strstr(json, "\"consumer\""), "wait_ns");
  CHECK(produce >= 60000000LL && produce < 180000000LL);
  dinput_string_free(json);
  CHECK_OK(map_with(&m2, r2, sleep_on, NULL, 1, 1, (void*)&every_48, NULL));
  json = run_stats(m2, NULL);
  produce = field(stage_text(json, "map", buf, sizeof buf), "produce_ns");
  CHECK(produce < 1000000000LL);
  dinput_string_free(json);
  dinput_dataset_free(m2);
  dinput_dataset_free(r2);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

/* Statistics off: the document lists no stages and no consumer calls. */
static void test_off(void) {
  dinput_dataset_t *r = range(5), *w = NULL;
  dinput_options_t* o = NULL;
  char* json;
  CHECK_OK(dinput_options_new(&o));
  CHECK_OK(dinput_options_set_statistics(o, 0));
  CHECK_OK(dinput_dataset_with_options(&w, r, o));
  json = run_stats(w, NULL);
  CHECK(json != NULL && strstr(json, "\"stages\":[]") != NULL);
  CHECK(field(strstr(json, "\"consumer\""), "calls") == 0);
  dinput_string_free(json);
  dinput_options_free(o);
  dinput_dataset_free(w);
  dinput_dataset_free(r);
}

/* A trace: slices of stages and get_next waits; a small ring counts what it dropped. */
static void test_trace(void) {
  dinput_dataset_t *r = range(50), *w = NULL;
  dinput_options_t* o = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  char *trace = NULL, *json = NULL;
  CHECK_OK(dinput_options_new(&o));
  CHECK_STATUS(dinput_options_set_trace(o, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("max_events");
  CHECK_OK(dinput_options_set_trace(o, 30));
  CHECK_OK(dinput_dataset_with_options(&w, r, o));
  CHECK_OK(dinput_dataset_iterator(&it, w));
  while (dinput_iterator_get_next(&e, it) == DINPUT_OK) dinput_element_free(e);
  CHECK_OK(dinput_iterator_trace(&trace, it));
  CHECK(trace != NULL && strstr(trace, "\"traceEvents\"") != NULL);
  CHECK(trace != NULL && strstr(trace, "get_next wait") != NULL);
  CHECK(trace != NULL && strstr(trace, "\"ph\":\"X\"") != NULL);
  /* 51 calls of each of 2 stages and 51 get_next calls: 153 events, 30 kept. */
  CHECK(field(trace, "dropped_events") == 153 - 30);
  CHECK_OK(dinput_iterator_statistics(&json, it));
  CHECK(field(json, "dropped_events") == 153 - 30);
  dinput_string_free(json);
  dinput_string_free(trace);
  dinput_iterator_free(it);
  dinput_options_free(o);
  dinput_dataset_free(w);
  dinput_dataset_free(r);
  dinput_string_free(NULL);
  CHECK_STATUS(dinput_iterator_statistics(NULL, NULL), DINPUT_INVALID_ARGUMENT);
}

/* A record file source counts the elements and bytes it hands out itself
 * (Iterator::count_output_into): one at a time (shuffle reads it) and in batches (batch reads
 * it directly). */
static void test_record_bytes(void) {
  char dir[] = "/tmp/dinput_capi_statistics_XXXXXX", path[256], buf[4096];
  const char* files[1];
  dinput_record_writer_t* w = NULL;
  dinput_dataset_t *rec = NULL, *b = NULL, *sh = NULL;
  char* json;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/five.rec", dir);
  files[0] = path;
  CHECK_OK(dinput_record_writer_open(&w, path, NULL));
  CHECK_OK(dinput_record_writer_write(w, "a", 1));
  CHECK_OK(dinput_record_writer_write(w, "bb", 2));
  CHECK_OK(dinput_record_writer_write(w, "ccc", 3));
  CHECK_OK(dinput_record_writer_write(w, "", 0));
  CHECK_OK(dinput_record_writer_write(w, "eeeee", 5));
  CHECK_OK(dinput_record_writer_close(w));
  dinput_record_writer_free(w);
  CHECK_OK(dinput_dataset_records(&rec, files, 1, NULL));
  CHECK_OK(batch_with(&b, rec, 2, 0));
  json = run_stats(b, NULL);
  CHECK(field(stage_text(json, "records", buf, sizeof buf), "elements") == 5);
  CHECK(field(stage_text(json, "records", buf, sizeof buf), "bytes") == 11);
  CHECK(field(stage_text(json, "batch", buf, sizeof buf), "elements") == 3);
  CHECK(field(stage_text(json, "batch", buf, sizeof buf), "bytes") == 11);
  dinput_string_free(json);
  CHECK_OK(dinput_dataset_shuffle(&sh, rec, 3, NULL));
  json = run_stats(sh, NULL);
  CHECK(field(stage_text(json, "records", buf, sizeof buf), "elements") == 5);
  CHECK(field(stage_text(json, "records", buf, sizeof buf), "bytes") == 11);
  CHECK(field(stage_text(json, "shuffle", buf, sizeof buf), "bytes") == 11);
  dinput_string_free(json);
  dinput_dataset_free(sh);
  dinput_dataset_free(b);
  dinput_dataset_free(rec);
  remove(path);
  rmdir(dir);
}

/* A shuffle copies out the records it has held longest, so that the read buffers they view
 * can go (docs/records.md, "Memory behind a shuffle"): its buffer reports the bytes copied.
 * 20,000 records of 100 bytes fill 2 read buffers of 2 MiB; a buffer of 3,000 (seed 1) copies
 * 1,651 of them. Elements of a mapped file (whose pages are the page cache's) are not copied,
 * and nothing is reported. */
static void test_shuffle_copies(void) {
  char dir[] = "/tmp/dinput_capi_statistics_XXXXXX", path[256], buf[4096], record[100];
  const char* files[1];
  dinput_record_writer_t* w = NULL;
  dinput_dataset_t *rec = NULL, *sh = NULL, *mapped = NULL;
  dinput_options_t* o = NULL;
  char* json;
  const char* s;
  int64_t copied, n = 0;
  int i;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/many.rec", dir);
  files[0] = path;
  CHECK_OK(dinput_record_writer_open(&w, path, NULL));
  for (i = 0; i < 20000; ++i) {
    memset(record, 'a' + i % 26, sizeof record);
    CHECK_OK(dinput_record_writer_write(w, record, sizeof record));
  }
  CHECK_OK(dinput_record_writer_close(w));
  dinput_record_writer_free(w);
  CHECK_OK(dinput_dataset_records(&rec, files, 1, NULL));
  CHECK_OK(shuffle_with(&sh, rec, 3000, 1, 0));
  json = run_stats(sh, &n);
  CHECK(n == 20000);
  s = stage_text(json, "shuffle", buf, sizeof buf);
  copied = field(s, "copied_bytes");
  CHECK(copied % 100 == 0);
  CHECK(copied >= 100 * 1000 && copied <= 100 * 5000);
  dinput_string_free(json);

  CHECK_OK(dinput_options_new(&o));
  CHECK_OK(dinput_options_set_map_files(o, 1));
  CHECK_OK(dinput_dataset_with_options(&mapped, sh, o));
  json = run_stats(mapped, &n);
  CHECK(n == 20000);
  CHECK(field(stage_text(json, "shuffle", buf, sizeof buf), "copied_bytes") == 0);
  dinput_string_free(json);
  dinput_options_free(o);
  dinput_dataset_free(mapped);
  dinput_dataset_free(sh);
  dinput_dataset_free(rec);
  remove(path);
  rmdir(dir);
}

/* A damaged record skipped under skip_corrupt_records counts on the records stage; the
 * stage's bytes are the payload bytes of the records delivered. */
static void test_corrupt_records(void) {
  char dir[] = "/tmp/dinput_capi_statistics_XXXXXX", path[256], buf[4096];
  const char* files[1];
  dinput_record_writer_t* w = NULL;
  dinput_dataset_t *rec = NULL, *opt = NULL;
  dinput_options_t* o = NULL;
  const char* s;
  char* json;
  FILE* f;
  int i;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/three.rec", dir);
  files[0] = path;
  CHECK_OK(dinput_record_writer_open(&w, path, NULL));
  for (i = 0; i < 3; ++i) CHECK_OK(dinput_record_writer_write(w, "abcd", 4));
  CHECK_OK(dinput_record_writer_close(w));
  dinput_record_writer_free(w);
  /* Each record is 8 (length) + 4 (its CRC) + 4 (data) + 4 (data CRC) bytes: damage the
   * second record's data. */
  f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (f) {
    fseek(f, 20 + 12, SEEK_SET);
    fputc('X', f);
    fclose(f);
  }
  CHECK_OK(dinput_dataset_records(&rec, files, 1, NULL));
  CHECK_OK(dinput_options_new(&o));
  CHECK_OK(dinput_options_set_skip_corrupt_records(o, 1));
  CHECK_OK(dinput_dataset_with_options(&opt, rec, o));
  json = run_stats(opt, NULL);
  s = stage_text(json, "records", buf, sizeof buf);
  CHECK(field(s, "elements") == 2);
  CHECK(field(s, "bytes") == 8);
  CHECK(field(s, "corrupt_records_skipped") == 1);
  s = stage_text(json, "with_options", buf, sizeof buf);
  CHECK(field(s, "corrupt_records_skipped") == 0);
  dinput_string_free(json);
  dinput_dataset_free(opt);
  dinput_dataset_free(rec);
  dinput_options_free(o);
  remove(path);
  rmdir(dir);
}

/* Two in-process workers, worker 1's pipeline with a sleeping map: gathered through the
 * collective, both workers name worker 1 and its map as the slowest. */
struct worker_run {
  dinput_dist_iterator_t* it;
  int steps;
  dinput_status_t status;
  char* job;
};

static void* run_worker(void* arg) {
  struct worker_run* w = (struct worker_run*)arg;
  dinput_per_replica_t* v = NULL;
  while (dinput_dist_iterator_get_next(&v, w->it) == DINPUT_OK) {
    ++w->steps;
    dinput_per_replica_free(v);
  }
  w->status = dinput_dist_iterator_statistics(&w->job, w->it, 1);
  return NULL;
}

static void test_gathered(void) {
  dinput_collective_t* collective = NULL;
  dinput_strategy_t* strategy[2] = {NULL, NULL};
  dinput_dist_dataset_t* dist[2] = {NULL, NULL};
  dinput_dataset_t *r = range(8), *m = NULL, *fast = NULL, *slow = NULL;
  struct worker_run runs[2];
  pthread_t threads[2];
  char* mine = NULL;
  int w;
  memset(runs, 0, sizeof runs);
  CHECK_OK(dinput_collective_new_in_process(&collective, 2, 60000));
  CHECK_OK(batch_with(&fast, r, 2, 0));
  CHECK_OK(map_with(&m, r, sleepy, NULL, 1, 1, NULL, NULL));
  CHECK_OK(batch_with(&slow, m, 2, 0));
  for (w = 0; w < 2; ++w) {
    CHECK_OK(dinput_strategy_new_multi_worker_cpu(&strategy[w], collective, w, 2));
    CHECK_OK(dinput_strategy_distribute_dataset(&dist[w], strategy[w], w == 0 ? fast : slow, NULL));
    CHECK_OK(dinput_dist_dataset_iterator(&runs[w].it, dist[w]));
  }
  for (w = 0; w < 2; ++w) CHECK(pthread_create(&threads[w], NULL, run_worker, &runs[w]) == 0);
  for (w = 0; w < 2; ++w) pthread_join(threads[w], NULL);
  for (w = 0; w < 2; ++w) {
    CHECK(runs[w].steps == 4); /* 4 batches of 2 rows, one row per worker per step */
    CHECK(runs[w].status == DINPUT_OK);
    CHECK(runs[w].job != NULL && strstr(runs[w].job, "\"schema\":\"dinput.job_statistics/1\""));
    CHECK(runs[w].job != NULL && strstr(runs[w].job, "\"slowest_worker\":1") != NULL);
    CHECK(runs[w].job != NULL &&
          strstr(runs[w].job, "\"slowest_stage\":{\"worker\":1,\"pipeline\":0,") != NULL);
    CHECK(runs[w].job != NULL &&
          strstr(strstr(runs[w].job, "\"slowest_stage\""), "\"name\":\"map\"") != NULL);
  }
  CHECK(runs[0].job && runs[1].job && strcmp(runs[0].job, runs[1].job) == 0);
  /* This worker's own figures: its one pipeline, the map producing its 4 elements. */
  CHECK_OK(dinput_dist_iterator_statistics(&mine, runs[1].it, 0));
  CHECK(mine != NULL && strstr(mine, "\"schema\":\"dinput.dist_statistics/1\"") != NULL);
  CHECK(mine != NULL && strstr(mine, "\"worker\":1") != NULL);
  dinput_string_free(mine);
  for (w = 0; w < 2; ++w) {
    dinput_string_free(runs[w].job);
    dinput_dist_iterator_free(runs[w].it);
    dinput_dist_dataset_free(dist[w]);
    dinput_strategy_free(strategy[w]);
  }
  dinput_collective_free(collective);
  dinput_dataset_free(slow);
  dinput_dataset_free(fast);
  dinput_dataset_free(m);
  dinput_dataset_free(r);
}

/* A chain of image operations runs as one map, and so counts as one stage named by its last
 * operation (docs/statistics.md); its input and the stage after it are counted as usual. */
static void test_image_chain_is_one_stage(void) {
  const float px[6] = {0, 1, 2, 10, 11, 12}, mean[1] = {1}, stddev[1] = {2};
  const int64_t shape[3] = {2, 3, 1};
  dinput_tensor_t* t = NULL;
  dinput_element_t* e;
  dinput_dataset_t *img = NULL, *rep = NULL, *flip = NULL, *norm = NULL;
  char buf[4096];
  char* json;
  int64_t n = 0;
  CHECK_OK(dinput_tensor_new(&t, DINPUT_FLOAT32, shape, 3, px, sizeof px));
  e = make_element(&t, 1);
  CHECK_OK(dinput_dataset_from_tensors(&img, e));
  dinput_element_free(e);
  CHECK_OK(dinput_dataset_repeat(&rep, img, 4));
  CHECK_OK(dinput_dataset_random_flip_left_right(&flip, rep, 12, NULL));
  CHECK_OK(dinput_dataset_normalize(&norm, flip, mean, stddev, 1, DINPUT_FLOAT32, NULL));
  json = run_stats(norm, &n);
  CHECK(n == 4);
  CHECK(field(stage_text(json, "normalize", buf, sizeof buf), "elements") == 4);
  CHECK(field(stage_text(json, "normalize", buf, sizeof buf), "bytes") == 4 * 6 * 4);
  CHECK(stage_text(json, "random_flip_left_right", buf, sizeof buf) == NULL);
  CHECK(field(stage_text(json, "repeat", buf, sizeof buf), "elements") == 4);
  dinput_string_free(json);
  dinput_dataset_free(norm);
  dinput_dataset_free(flip);
  dinput_dataset_free(rep);
  dinput_dataset_free(img);
}

/* The state of records(file).shuffle(...) saved with statistics on and off: the same size.
 * The statistics' wrapper between the shuffle and the records must pass on the records'
 * addresses, which the shuffle saves for its oldest elements (docs/checkpoint.md); without
 * them the state is smaller and its restore reads more. Both states restore to the same
 * rest of the data. `restored_json`, if given, gets the restored iterator's statistics. */
static dinput_state_t* shuffle_state(const char* path, dinput_compression_t compression,
                                     int statistics, int64_t* rest, char** restored_json) {
  const char* files[1] = {path};
  dinput_dataset_t *rec = NULL, *sh = NULL, *opt = NULL;
  dinput_records_options_t* ro = NULL;
  dinput_options_t* o = NULL;
  dinput_iterator_t *it = NULL, *again = NULL;
  dinput_element_t* e = NULL;
  dinput_state_t* state = NULL;
  int i;
  CHECK_OK(dinput_records_options_new(&ro));
  CHECK_OK(dinput_records_options_set_compression(ro, compression));
  CHECK_OK(dinput_dataset_records(&rec, files, 1, ro));
  dinput_records_options_free(ro);
  CHECK_OK(shuffle_with(&sh, rec, 64, 3, 0));
  CHECK_OK(dinput_options_new(&o));
  CHECK_OK(dinput_options_set_statistics(o, statistics));
  CHECK_OK(dinput_dataset_with_options(&opt, sh, o));
  CHECK_OK(dinput_dataset_iterator(&it, opt));
  for (i = 0; i < 700; ++i) {
    CHECK_OK(dinput_iterator_get_next(&e, it));
    dinput_element_free(e);
  }
  CHECK_OK(dinput_iterator_save(&state, it));
  *rest = 0;
  CHECK_OK(dinput_dataset_iterator_from_state(&again, opt, dinput_state_data(state),
                                              dinput_state_size(state)));
  while (dinput_iterator_get_next(&e, again) == DINPUT_OK) {
    ++*rest;
    dinput_element_free(e);
  }
  if (restored_json) CHECK_OK(dinput_iterator_statistics(restored_json, again));
  dinput_iterator_free(again);
  dinput_iterator_free(it);
  dinput_options_free(o);
  dinput_dataset_free(opt);
  dinput_dataset_free(sh);
  dinput_dataset_free(rec);
  return state;
}

/* Over uncompressed records the restore reads the shuffle's elements by address; over ZSTD
 * records it reads the file again and keeps them (select): neither counts as production. */
static void test_state_same_with_statistics(void) {
  char dir[] = "/tmp/dinput_capi_statistics_XXXXXX", path[256], rec[16], buf[4096];
  const dinput_compression_t compressions[2] = {DINPUT_COMPRESSION_NONE, DINPUT_COMPRESSION_ZSTD};
  dinput_record_writer_options_t* wo = NULL;
  dinput_record_writer_t* w = NULL;
  dinput_state_t *on, *off;
  char* json = NULL;
  int64_t rest_on = -1, rest_off = -1;
  int i, c;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/many.rec", dir);
  for (c = 0; c < 2; ++c) {
    CHECK_OK(dinput_record_writer_options_new(&wo));
    CHECK_OK(dinput_record_writer_options_set_compression(wo, compressions[c]));
    CHECK_OK(dinput_record_writer_open(&w, path, wo));
    dinput_record_writer_options_free(wo);
    for (i = 0; i < 1000; ++i) {
      snprintf(rec, sizeof rec, "r%04d", i);
      CHECK_OK(dinput_record_writer_write(w, rec, strlen(rec)));
    }
    CHECK_OK(dinput_record_writer_close(w));
    dinput_record_writer_free(w);
    on = shuffle_state(path, compressions[c], 1, &rest_on, &json);
    off = shuffle_state(path, compressions[c], 0, &rest_off, NULL);
    CHECK(dinput_state_size(on) > 0);
    CHECK(dinput_state_size(on) == dinput_state_size(off));
    CHECK(rest_on == 300 && rest_off == 300);
    /* At the save the shuffle had read 64 + 700 records. The restore reads the 64 it held
     * again, which is not production (docs/statistics.md); the records stage then hands out
     * the other 236, 5 bytes each, and the shuffle all 300. */
    CHECK(field(stage_text(json, "records", buf, sizeof buf), "elements") == 236);
    CHECK(field(stage_text(json, "records", buf, sizeof buf), "bytes") == 236 * 5);
    CHECK(field(stage_text(json, "shuffle", buf, sizeof buf), "elements") == 300);
    CHECK(field(stage_text(json, "shuffle", buf, sizeof buf), "bytes") == 300 * 5);
    dinput_string_free(json);
    dinput_state_free(on);
    dinput_state_free(off);
  }
  remove(path);
  rmdir(dir);
}

int main(void) {
  test_take_counts();
  test_batch_bytes();
  test_string_and_tuple_bytes();
  test_slow_map();
  test_buffers();
  test_sampling_is_unbiased();
  test_off();
  test_trace();
  test_corrupt_records();
  test_record_bytes();
  test_shuffle_copies();
  test_gathered();
  test_image_chain_is_one_stage();
  test_state_same_with_statistics();
  return check_finish_();
}
