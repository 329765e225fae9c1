/* Opens the built libdinput.so.<major> with dlopen (as the Julia binding and other FFI users
 * do), looks up the functions by name and iterates range(10).batch(4). dinput.h is included
 * for its types and constants only: nothing is linked against the library. */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dinput.h"

/* Its own check counter: check.h calls into the library, which is not linked here. */
static int passed, failed;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)
static int finish(void) {
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

typedef const char* (*version_fn)(void);
typedef int (*version_number_fn)(void);
typedef const char* (*status_name_fn)(dinput_status_t);
typedef const char* (*last_error_fn)(void);
typedef dinput_status_t (*range_fn)(dinput_dataset_t**, int64_t, int64_t, int64_t);
typedef dinput_status_t (*batch_fn)(dinput_dataset_t**, const dinput_dataset_t*, int64_t,
                                    const dinput_batch_options_t*);
typedef dinput_status_t (*iterator_fn)(dinput_iterator_t**, const dinput_dataset_t*);
typedef dinput_status_t (*get_next_fn)(dinput_element_t**, dinput_iterator_t*);
typedef const dinput_tensor_t* (*element_get_fn)(const dinput_element_t*, size_t);
typedef int64_t (*num_elements_fn)(const dinput_tensor_t*);
typedef dinput_status_t (*copy_to_fn)(void*, size_t, const dinput_tensor_t*, dinput_dtype_t);

static void* lib;

/* dlsym returns an object pointer; copying its bits into a function pointer is the POSIX way
 * that strict C accepts. */
static void lookup(void* fn_out, size_t size, const char* name) {
  void* sym = dlsym(lib, name);
  if (!sym) fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
  CHECK(sym != NULL);
  memcpy(fn_out, &sym, size);
}
#define LOOKUP(var, name) lookup(&(var), sizeof(var), name)

int main(int argc, char** argv) {
  version_fn version = NULL;
  version_number_fn version_number = NULL;
  status_name_fn status_name = NULL;
  last_error_fn last_error = NULL;
  range_fn range = NULL;
  batch_fn batch = NULL;
  iterator_fn iterator = NULL;
  get_next_fn get_next = NULL;
  element_get_fn element_get = NULL;
  num_elements_fn num_elements = NULL;
  copy_to_fn copy_to = NULL;
  void (*dataset_free)(dinput_dataset_t*) = NULL;
  void (*iterator_free)(dinput_iterator_t*) = NULL;
  void (*element_free)(dinput_element_t*) = NULL;
  dinput_dataset_t *r = NULL, *b = NULL;
  dinput_iterator_t* it = NULL;
  dinput_element_t* e = NULL;
  int64_t values[16], sizes[8];
  int64_t total = 0, batches = 0, i;
  char expected_version[32];
  dinput_status_t st;
  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/libdinput.so.N\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen(%s): %s\n", argv[1], dlerror());
    CHECK(lib != NULL);
    return finish();
  }
  /* Nothing C++ is visible through the handle: the core stays hidden. */
  CHECK(dlsym(lib, "_ZN6dinput10make_rangeElll") == NULL);

  LOOKUP(version, "dinput_version");
  LOOKUP(version_number, "dinput_version_number");
  LOOKUP(status_name, "dinput_status_name");
  LOOKUP(last_error, "dinput_last_error_message");
  LOOKUP(range, "dinput_dataset_range");
  LOOKUP(batch, "dinput_dataset_batch");
  LOOKUP(iterator, "dinput_dataset_iterator");
  LOOKUP(get_next, "dinput_iterator_get_next");
  LOOKUP(element_get, "dinput_element_get");
  LOOKUP(num_elements, "dinput_tensor_num_elements");
  LOOKUP(copy_to, "dinput_tensor_copy_to");
  LOOKUP(dataset_free, "dinput_dataset_free");
  LOOKUP(iterator_free, "dinput_iterator_free");
  LOOKUP(element_free, "dinput_element_free");
  if (failed) return finish();

  snprintf(expected_version, sizeof expected_version, "%d.%d.%d", DINPUT_VERSION_MAJOR,
           DINPUT_VERSION_MINOR, DINPUT_VERSION_PATCH);
  CHECK(strcmp(version(), expected_version) == 0);
  CHECK(version_number() == DINPUT_VERSION_NUMBER);
  CHECK(strcmp(status_name(DINPUT_OUT_OF_RANGE), "OUT_OF_RANGE") == 0);

  CHECK(range(&r, 0, 10, 1) == DINPUT_OK);
  CHECK(batch(&b, r, 4, NULL) == DINPUT_OK);
  CHECK(batch(&b, r, 0, 0) == DINPUT_INVALID_ARGUMENT &&
        strstr(last_error(), "batch_size") != NULL);
  CHECK(b == NULL);
  CHECK(batch(&b, r, 4, NULL) == DINPUT_OK);
  CHECK(iterator(&it, b) == DINPUT_OK);
  while ((st = get_next(&e, it)) == DINPUT_OK && batches < 8) {
    const dinput_tensor_t* t = element_get(e, 0);
    int64_t n = num_elements(t);
    CHECK(copy_to(values + total, (size_t)(16 - total) * sizeof(int64_t), t, DINPUT_INT64) ==
          DINPUT_OK);
    sizes[batches++] = n;
    total += n;
    element_free(e);
  }
  CHECK(st == DINPUT_OUT_OF_RANGE);
  CHECK(batches == 3 && sizes[0] == 4 && sizes[1] == 4 && sizes[2] == 2);
  CHECK(total == 10);
  for (i = 0; i < total && i < 10; ++i) CHECK(values[i] == i);
  iterator_free(it);
  dataset_free(b);
  dataset_free(r);
  CHECK(dlclose(lib) == 0);
  return finish();
}
