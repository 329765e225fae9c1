/* The C API's error conventions (dinput.h CONVENTIONS): status names, NULL handles and
 * out-parameters, *out left NULL on failure, the thread-local last error, version and
 * build information, dtype names. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dinput.h"

/* A non-NULL pointer that is never a real handle: a failing call must overwrite it. */
static char sentinel_storage;
#define SENTINEL(type) ((type*)(void*)&sentinel_storage)

static void test_status_names(void) {
  static const char* const names[] = {"OK",
                                      "CANCELLED",
                                      "UNKNOWN",
                                      "INVALID_ARGUMENT",
                                      "DEADLINE_EXCEEDED",
                                      "NOT_FOUND",
                                      "ALREADY_EXISTS",
                                      "PERMISSION_DENIED",
                                      "RESOURCE_EXHAUSTED",
                                      "FAILED_PRECONDITION",
                                      "ABORTED",
                                      "OUT_OF_RANGE",
                                      "UNIMPLEMENTED",
                                      "INTERNAL",
                                      "UNAVAILABLE",
                                      "DATA_LOSS",
                                      "UNAUTHENTICATED"};
  int c;
  for (c = 0; c <= 16; ++c) {
    const char* name = dinput_status_name((dinput_status_t)c);
    CHECK(name != NULL && strcmp(name, names[c]) == 0);
  }
  /* Values outside the enum: see enum_values.c. */
  /* Static text: the same pointer every time. */
  CHECK(dinput_status_name(DINPUT_NOT_FOUND) == dinput_status_name(DINPUT_NOT_FOUND));
}

static void test_version_and_build_info(void) {
  char expected[64];
  const char* info = dinput_build_info();
  size_t i, len;
  int depth = 0, quotes = 0, balanced = 1;
  snprintf(expected, sizeof expected, "%d.%d.%d", DINPUT_VERSION_MAJOR, DINPUT_VERSION_MINOR,
           DINPUT_VERSION_PATCH);
  CHECK(strcmp(dinput_version(), expected) == 0);
  CHECK(dinput_version_number() == DINPUT_VERSION_NUMBER);
  CHECK(DINPUT_VERSION_NUMBER ==
        DINPUT_VERSION_MAJOR * 10000 + DINPUT_VERSION_MINOR * 100 + DINPUT_VERSION_PATCH);

  CHECK(info != NULL);
  if (!info) return;
  len = strlen(info);
  CHECK(len > 2 && info[0] == '{' && info[len - 1] == '}');
  /* JSON-looking: braces nest properly outside strings, quotes pair up. */
  for (i = 0; i < len; ++i) {
    if (info[i] == '"' && (i == 0 || info[i - 1] != '\\')) ++quotes;
    if (quotes % 2) continue;
    if (info[i] == '{') ++depth;
    if (info[i] == '}' && --depth < 0) balanced = 0;
  }
  CHECK(balanced && depth == 0);
  CHECK(quotes % 2 == 0);
  snprintf(expected, sizeof expected, "\"version\":\"%s\"", dinput_version());
  CHECK(strstr(info, expected) != NULL);
  CHECK(strstr(info, "\"cuda\"") != NULL);
  CHECK(strstr(info, "\"nccl\"") != NULL);
  CHECK(strstr(info, "\"gloo\"") != NULL);
  /* Gloo is compiled in exactly when CMake found it (DINPUT_TEST_HAVE_GLOO, from the build). */
#if DINPUT_TEST_HAVE_GLOO
  CHECK(strstr(info, "\"gloo\":{\"compiled\":true,\"available\":true}") != NULL);
#else
  CHECK(strstr(info, "\"gloo\":{\"compiled\":false,\"available\":false}") != NULL);
#endif
  CHECK(strstr(info, "\"zstd\"") != NULL);
  CHECK(strstr(info, "\"zlib\"") != NULL);
  CHECK(strstr(info, "\"compiled\"") != NULL);
  CHECK(strstr(info, "\"available\"") != NULL);
  CHECK(dinput_build_info() == info); /* static */
}

static void test_dtype_names(void) {
  int d;
  for (d = DINPUT_BOOL; d <= DINPUT_BYTES; ++d) {
    const char* name = dinput_dtype_name((dinput_dtype_t)d);
    CHECK(strcmp(name, "invalid") != 0);
    CHECK(dinput_dtype_from_name(name) == (dinput_dtype_t)d);
  }
  CHECK(strcmp(dinput_dtype_name(DINPUT_INT64), "int64") == 0);
  CHECK(strcmp(dinput_dtype_name(DINPUT_FLOAT32), "float32") == 0);
  CHECK(strcmp(dinput_dtype_name(DINPUT_BFLOAT16), "bfloat16") == 0);
  CHECK(strcmp(dinput_dtype_name(DINPUT_BYTES), "bytes") == 0);
  CHECK(strcmp(dinput_dtype_name(DINPUT_DTYPE_INVALID), "invalid") == 0);
  CHECK(dinput_dtype_size(DINPUT_FLOAT64) == 8);
  CHECK(dinput_dtype_size(DINPUT_BOOL) == 1);
  CHECK(dinput_dtype_size(DINPUT_FLOAT16) == 2);
  CHECK(dinput_dtype_size(DINPUT_BYTES) == 0);
  CHECK(dinput_dtype_from_name("int") == DINPUT_DTYPE_INVALID);
  CHECK(dinput_dtype_from_name("") == DINPUT_DTYPE_INVALID);
  CHECK(dinput_dtype_from_name(NULL) == DINPUT_DTYPE_INVALID);
}

/* Every NULL handle or out-parameter is INVALID_ARGUMENT with a message naming the argument,
 * and a pointer out-parameter is left NULL. */
static void test_null_arguments(void) {
  dinput_dataset_t *ds = NULL, *out = NULL;
  dinput_iterator_t* it = NULL;
  dinput_tensor_t* t = NULL;
  dinput_element_t* e = NULL;
  dinput_spec_t* spec = NULL;
  dinput_optional_t* opt = NULL;
  const char* str = NULL;
  size_t len = 0;
  int64_t shape[1] = {2};
  int64_t buf[2];

  CHECK_OK(dinput_dataset_range(&ds, 0, 4, 1));

  CHECK_STATUS(dinput_dataset_range(NULL, 0, 4, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  CHECK_STATUS(dinput_dataset_batch(NULL, ds, 2, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_batch(&out, NULL, 2, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'input'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_from_tensors(&out, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'element'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_from_tensor_slices(&out, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'element'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_with_options(&out, ds, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'options'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_text_lines(&out, NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'files'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_rebatch(&out, ds, NULL, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'sizes'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(map_with(&out, ds, NULL, NULL, 1, 1, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'fn'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_filter(&out, ds, NULL, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'fn'");
  CHECK(out == NULL);

  out = SENTINEL(dinput_dataset_t);
  CHECK_STATUS(dinput_dataset_from_generator(&out, NULL, NULL, NULL, NULL, NULL, NULL),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'spec'");
  CHECK(out == NULL);

  CHECK_STATUS(dinput_dataset_element_spec(NULL, ds), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  spec = SENTINEL(dinput_spec_t);
  CHECK_STATUS(dinput_dataset_element_spec(&spec, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'dataset'");
  CHECK(spec == NULL);

  CHECK_STATUS(dinput_dataset_iterator(NULL, ds), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  it = SENTINEL(dinput_iterator_t);
  CHECK_STATUS(dinput_dataset_iterator(&it, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'dataset'");
  CHECK(it == NULL);

  e = SENTINEL(dinput_element_t);
  CHECK_STATUS(dinput_iterator_get_next(&e, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'iterator'");
  CHECK(e == NULL);
  opt = SENTINEL(dinput_optional_t);
  CHECK_STATUS(dinput_iterator_get_next_as_optional(&opt, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'iterator'");
  CHECK(opt == NULL);
  spec = SENTINEL(dinput_spec_t);
  CHECK_STATUS(dinput_iterator_element_spec(&spec, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'iterator'");
  CHECK(spec == NULL);

  CHECK_OK(dinput_dataset_iterator(&it, ds));
  CHECK_STATUS(dinput_iterator_get_next(NULL, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  CHECK_STATUS(dinput_iterator_get_next_as_optional(NULL, it), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  /* A call rejected for its arguments consumes nothing: the iterator still starts at 0. */
  CHECK_OK(dinput_iterator_get_next(&e, it));
  CHECK(read_int64(e, 0, buf, 1) == 1 && buf[0] == 0);
  dinput_element_free(e);
  dinput_iterator_free(it);

  e = SENTINEL(dinput_element_t);
  CHECK_STATUS(dinput_optional_get_value(&e, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'optional'");
  CHECK(e == NULL);

  t = SENTINEL(dinput_tensor_t);
  CHECK_STATUS(dinput_tensor_ref(&t, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'tensor'");
  CHECK(t == NULL);
  CHECK_STATUS(dinput_tensor_new(NULL, DINPUT_INT64, shape, 1, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  CHECK_STATUS(dinput_tensor_new_bytes(NULL, shape, 1, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  t = SENTINEL(dinput_tensor_t);
  CHECK_STATUS(dinput_tensor_new_bytes(&t, shape, 1, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'strings'");
  CHECK(t == NULL);
  CHECK_STATUS(dinput_tensor_copy_to(buf, sizeof buf, NULL, DINPUT_INT64), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'tensor'");
  CHECK_STATUS(dinput_tensor_string_view(NULL, &len, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  str = "x";
  CHECK_STATUS(dinput_tensor_string_view(&str, NULL, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out_len'");
  CHECK(str == NULL);
  str = "x";
  len = 7;
  CHECK_STATUS(dinput_tensor_string_view(&str, &len, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'tensor'");
  CHECK(str == NULL && len == 0);
  CHECK_STATUS(dinput_tensor_to_dlpack(NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");

  CHECK_STATUS(dinput_element_new(NULL, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  e = SENTINEL(dinput_element_t);
  CHECK_STATUS(dinput_element_new(&e, NULL, 2), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'tensors'");
  CHECK(e == NULL);

  CHECK_STATUS(dinput_spec_new(NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  CHECK_STATUS(dinput_spec_add(NULL, DINPUT_INT64, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'spec'");
  CHECK_STATUS(dinput_options_new(NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'out'");
  CHECK_STATUS(dinput_options_set_auto_shard_policy(NULL, DINPUT_AUTO_SHARD_OFF),
               DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("'options'");

  /* Accessors on NULL return their documented neutral values. */
  CHECK(dinput_tensor_dtype(NULL) == DINPUT_DTYPE_INVALID);
  CHECK(dinput_tensor_rank(NULL) == -1);
  CHECK(dinput_tensor_shape(NULL) == NULL);
  CHECK(dinput_tensor_dim(NULL, 0) == -1);
  CHECK(dinput_tensor_num_elements(NULL) == 0);
  CHECK(dinput_tensor_byte_size(NULL) == 0);
  CHECK(dinput_tensor_data(NULL) == NULL);
  CHECK(dinput_element_size(NULL) == 0);
  CHECK(dinput_element_get(NULL, 0) == NULL);
  CHECK(dinput_spec_size(NULL) == 0);
  CHECK(dinput_spec_dtype(NULL, 0) == DINPUT_DTYPE_INVALID);
  CHECK(dinput_spec_rank(NULL, 0) == -1);
  CHECK(dinput_spec_shape(NULL, 0) == NULL);
  CHECK(dinput_dataset_cardinality(NULL) == DINPUT_UNKNOWN_CARDINALITY);
  CHECK(strcmp(dinput_dataset_name(NULL), "") == 0);
  CHECK(dinput_optional_has_value(NULL) == 0);
  CHECK(dinput_options_auto_shard_policy(NULL) == DINPUT_AUTO_SHARD_AUTO);

  /* Every _free accepts NULL. */
  dinput_tensor_free(NULL);
  dinput_element_free(NULL);
  dinput_spec_free(NULL);
  dinput_options_free(NULL);
  dinput_dataset_free(NULL);
  dinput_iterator_free(NULL);
  dinput_optional_free(NULL);
  CHECK(1);

  dinput_dataset_free(ds);
}

/* DINPUT_REQUIRE's contract (src/capi/firewall.h): the message names the function as well
 * as the argument, so that a user can tell which call of a chain failed. */
static void test_messages_name_the_function(void) {
  dinput_tensor_t* t = NULL;
  dinput_iterator_t* it = NULL;
  int64_t shape[1] = {-3};
  CHECK_STATUS(dinput_tensor_ref(&t, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_tensor_ref");
  CHECK_STATUS(dinput_dataset_iterator(&it, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_dataset_iterator");
  CHECK_STATUS(dinput_iterator_get_next(NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_iterator_get_next");
  CHECK_STATUS(dinput_spec_new(NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_spec_new");
  CHECK_STATUS(dinput_tensor_new(&t, DINPUT_INT64, shape, 1, NULL, 0), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_tensor_new");
  CHECK_STATUS(dinput_dataset_batch(NULL, NULL, 1, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_dataset_batch");
  /* Checks made inside the body of a call name the exported function too, never the
   * lambda the body runs in ("operator()"). */
  {
    dinput_dataset_t* ds = NULL;
    const char* files[1] = {NULL};
    const char* one[1] = {"x.rec"};
    CHECK_STATUS(dinput_dataset_records(&ds, NULL, 1, NULL), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("dinput_dataset_records: argument 'files' is NULL");
    CHECK(strstr(dinput_last_error_message(), "operator") == NULL);
    CHECK_STATUS(dinput_dataset_fixed_length_records(&ds, files, 1, 4, 0, 0),
                 DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("dinput_dataset_fixed_length_records: files[0] is NULL");
    {
      dinput_records_options_t* o = NULL;
      CHECK_OK(dinput_records_options_new(&o));
      CHECK_STATUS(dinput_records_options_set_compression(o, (dinput_compression_t)77),
                   DINPUT_INVALID_ARGUMENT);
      CHECK_MSG("dinput_records_options_set_compression: invalid compression 77");
      CHECK(strstr(dinput_last_error_message(), "operator") == NULL);
      dinput_records_options_free(o);
    }
    (void)one;
    {
      dinput_record_writer_t* w = NULL;
      const char* path = "capi_errors_messages.rec";
      dinput_record_writer_options_t* o = NULL;
      CHECK_OK(dinput_record_writer_options_new(&o));
      CHECK_OK(dinput_record_writer_options_set_compression(o, DINPUT_COMPRESSION_GZIP));
      CHECK_OK(dinput_record_writer_options_set_level(o, 15));
      CHECK_STATUS(dinput_record_writer_open(&w, path, o), DINPUT_INVALID_ARGUMENT);
      CHECK_MSG("gzip level");
      CHECK(strstr(dinput_last_error_message(), "operator") == NULL);
      dinput_record_writer_options_free(o);
      CHECK_OK(dinput_record_writer_open(&w, path, NULL));
      CHECK_STATUS(dinput_record_writer_write(w, NULL, 3), DINPUT_INVALID_ARGUMENT);
      CHECK_MSG("dinput_record_writer_write: argument 'data' is NULL");
      dinput_record_writer_free(w);
      remove(path);
    }
  }
}

/* The last error: set by failures, kept by successful calls, settable by callbacks. */
static void test_last_error(void) {
  dinput_dataset_t* ds = NULL;
  dinput_error_clear();
  CHECK(dinput_last_error_code() == DINPUT_OK);
  CHECK(strcmp(dinput_last_error_message(), "") == 0);

  CHECK_STATUS(dinput_dataset_range(&ds, 0, 1, 0), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_last_error_code() == DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("step");
  /* "until that thread's next failing call": a successful call keeps it. */
  CHECK_OK(dinput_dataset_range(&ds, 0, 1, 1));
  CHECK(dinput_last_error_code() == DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("step");
  dinput_dataset_free(ds);

  dinput_error_set(DINPUT_NOT_FOUND, "no such thing");
  CHECK(dinput_last_error_code() == DINPUT_NOT_FOUND);
  CHECK(strcmp(dinput_last_error_message(), "no such thing") == 0);
  dinput_error_set(DINPUT_DATA_LOSS, NULL);
  CHECK(dinput_last_error_code() == DINPUT_DATA_LOSS);
  CHECK(strcmp(dinput_last_error_message(), "") == 0);
  dinput_error_clear();
  CHECK(dinput_last_error_code() == DINPUT_OK);
  CHECK(strcmp(dinput_last_error_message(), "") == 0);
}

/* ---- the last error is per thread ---- */

enum { kRounds = 2000 };

struct thread_arg {
  pthread_barrier_t* barrier;
  dinput_status_t code;
  const char* message;
  int mismatches;
  int fresh_was_clean;
};

static void* error_thread(void* p) {
  struct thread_arg* arg = (struct thread_arg*)p;
  int i;
  /* A new thread starts without an error, whatever other threads did. */
  arg->fresh_was_clean =
      dinput_last_error_code() == DINPUT_OK && strcmp(dinput_last_error_message(), "") == 0;
  pthread_barrier_wait(arg->barrier);
  for (i = 0; i < kRounds; ++i) {
    dinput_dataset_t* ds = NULL;
    if (i % 2 == 0) {
      dinput_error_set(arg->code, arg->message);
    } else if (arg->code == DINPUT_INVALID_ARGUMENT) {
      /* A real failure on this thread, with the library's own message. */
      if (dinput_dataset_range(&ds, 0, 1, 0) != DINPUT_INVALID_ARGUMENT) ++arg->mismatches;
      dinput_error_set(arg->code, arg->message);
    } else {
      dinput_error_set(arg->code, arg->message);
    }
    if (dinput_last_error_code() != arg->code ||
        strcmp(dinput_last_error_message(), arg->message) != 0)
      ++arg->mismatches;
  }
  return NULL;
}

static void test_last_error_is_thread_local(void) {
  pthread_barrier_t barrier;
  pthread_t threads[2];
  struct thread_arg args[2];
  int i;
  dinput_error_set(DINPUT_ABORTED, "main thread's error");
  CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
  args[0].barrier = &barrier;
  args[0].code = DINPUT_INVALID_ARGUMENT;
  args[0].message = "thread zero";
  args[1].barrier = &barrier;
  args[1].code = DINPUT_UNAVAILABLE;
  args[1].message = "thread one";
  for (i = 0; i < 2; ++i) {
    args[i].mismatches = 0;
    args[i].fresh_was_clean = 0;
    CHECK(pthread_create(&threads[i], NULL, error_thread, &args[i]) == 0);
  }
  for (i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);
  for (i = 0; i < 2; ++i) {
    CHECK(args[i].fresh_was_clean);
    CHECK(args[i].mismatches == 0);
  }
  /* Nothing the threads did reached this thread. */
  CHECK(dinput_last_error_code() == DINPUT_ABORTED);
  CHECK(strcmp(dinput_last_error_message(), "main thread's error") == 0);
  dinput_error_clear();
}

/* dinput_error_set(DINPUT_OK, ...) would record a "failure" whose code says success: a
 * caller reading the last error after a failing call would see OK. It is refused, and the
 * refusal itself is what the last error then holds. */
static void test_error_set_rejects_ok(void) {
  dinput_error_set(DINPUT_OK, "not really an error");
  CHECK(dinput_last_error_code() == DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("dinput_error_set: code must not be DINPUT_OK");
  CHECK(strstr(dinput_last_error_message(), "not really an error") == NULL);
  dinput_error_set(DINPUT_OK, NULL);
  CHECK(dinput_last_error_code() == DINPUT_INVALID_ARGUMENT);
  dinput_error_clear();
}

int main(void) {
  test_status_names();
  test_version_and_build_info();
  test_dtype_names();
  test_null_arguments();
  test_messages_name_the_function();
  test_last_error();
  test_last_error_is_thread_local();
  test_error_set_rejects_ok();
  return check_finish_();
}
